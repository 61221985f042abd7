import { Migration } from '@mikro-orm/migrations';

/**
 * Refunds of captured card authorizations (docs/decisions/cards.md "Refunds"): table
 * `credit_refund` (one row per refund, its applied and unapplied cents, indexed by authorization),
 * `refunded_amount` on `credit_authorization` (never above `captured_amount`), and
 * `unapplied_amount` on `credit_event` (only `Reembolso` events have it).
 */
export class Migration20261129100000_credit_refunds extends Migration {

  override name = 'Migration20261129100000_credit_refunds';

  override up(): void | Promise<void> {
    this.addSql(`create table "credit_refund" ("refund_id" uuid not null, "wallet_id" uuid not null, "customer_id" varchar(48) not null, "authorization_id" uuid not null, "amount" bigint not null, "applied_amount" bigint not null, "unapplied_amount" bigint not null, "idempotency_key" varchar(255) not null, "created_at" timestamptz not null, primary key ("refund_id"));`);
    this.addSql(`create index "credit_refund_authorization_index" on "credit_refund" ("authorization_id");`);

    this.addSql(`alter table "credit_event" add "unapplied_amount" bigint null;`);

    this.addSql(`alter table "credit_authorization" add "refunded_amount" bigint not null default 0;`);
    this.addSql(`alter table "credit_authorization" add constraint "credit_authorization_refunded_amount" check (refunded_amount >= 0 and refunded_amount <= captured_amount);`);

    this.addSql(`alter table "credit_refund" add constraint "credit_refund_wallet_id_foreign" foreign key ("wallet_id") references "credit_wallet" ("wallet_id");`);
    this.addSql(`alter table "credit_refund" add constraint "credit_refund_authorization_id_foreign" foreign key ("authorization_id") references "credit_authorization" ("authorization_id");`);
    this.addSql(`alter table "credit_refund" add constraint "credit_refund_amounts" check (amount > 0 and applied_amount >= 0 and unapplied_amount >= 0 and applied_amount + unapplied_amount = amount);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "credit_refund" cascade;`);

    this.addSql(`alter table "credit_authorization" drop constraint "credit_authorization_refunded_amount";`);
    this.addSql(`alter table "credit_authorization" drop column "refunded_amount";`);

    this.addSql(`alter table "credit_event" drop column "unapplied_amount";`);
  }

}
