import { Migration } from '@mikro-orm/migrations';

/**
 * Cards on credit wallets (docs/decisions/cards.md): table `credit_card`, the card number sealed
 * at rest with a keyed fingerprint unique per tenant, listed newest first per wallet.
 */
export class Migration20261129080000_cards extends Migration {

  override name = 'Migration20261129080000_cards';

  override up(): void | Promise<void> {
    this.addSql(`create table "credit_card" ("card_id" uuid not null, "wallet_id" uuid not null, "customer_id" varchar(48) not null, "state" varchar(8) not null, "cardholder_name" varchar(100) not null, "last4" varchar(4) not null, "exp_month" smallint not null, "exp_year" smallint not null, "pan_sealed" text not null, "pan_fingerprint" varchar(64) not null, "spend_controls" jsonb null, "memo" varchar(255) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "closed_at" timestamptz null, primary key ("card_id"));`);
    this.addSql(`create index "credit_card_wallet_created_index" on "credit_card" ("wallet_id", "created_at");`);
    this.addSql(`alter table "credit_card" add constraint "credit_card_customer_fingerprint_unique" unique ("customer_id", "pan_fingerprint");`);
    this.addSql(`alter table "credit_card" add constraint "credit_card_wallet_id_foreign" foreign key ("wallet_id") references "credit_wallet" ("wallet_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "credit_card" cascade;`);
  }

}
