import { Migration } from '@mikro-orm/migrations';

/**
 * The gas wallet's balance per live network, stored by the gas watcher so that `/metrics` reads it
 * without asking the node (docs/decisions/live-chains.md "The operators' view").
 */
export class Migration20261129132000_chain_gas_balance extends Migration {

  override name = 'Migration20261129132000_chain_gas_balance';

  override up(): void | Promise<void> {
    this.addSql(`create table "chain_gas_balance" ("network" varchar(32) not null, "address" varchar(42) not null, "balance" numeric(38,8) not null, "height" bigint not null, "asked_at" timestamptz not null, primary key ("network"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "chain_gas_balance" cascade;`);
  }

}
