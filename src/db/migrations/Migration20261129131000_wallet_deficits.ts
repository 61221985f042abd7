import { Migration } from '@mikro-orm/migrations';

/**
 * What a wallet owes after a reorg took back a credited live deposit its available could not cover
 * (docs/decisions/live-chains.md "Reorgs"): one `wallet_deficit` row per wallet, currency and network.
 */
export class Migration20261129131000_wallet_deficits extends Migration {

  override name = 'Migration20261129131000_wallet_deficits';

  override up(): void | Promise<void> {
    this.addSql(`create table "wallet_deficit" ("wallet_id" uuid not null, "currency" varchar(16) not null, "network" varchar(32) not null, "amount" numeric(38,18) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("wallet_id", "currency", "network"));`);

    this.addSql(`alter table "wallet_deficit" add constraint "wallet_deficit_amount_check" check (amount > 0);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "wallet_deficit" cascade;`);
  }

}
