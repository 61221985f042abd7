import { Migration } from '@mikro-orm/migrations';

/**
 * Live EVM networks (docs/decisions/live-chains.md): the follower's cursor per network, the window
 * of followed blocks, and the deposits found on chain, once per (network, transaction, log).
 */
export class Migration20261129110000_live_chains extends Migration {

  override name = 'Migration20261129110000_live_chains';

  override up(): void | Promise<void> {
    this.addSql(`create table "chain_block" ("network" varchar(32) not null, "height" bigint not null, "hash" varchar(66) not null, "parent_hash" varchar(66) not null, primary key ("network", "height"));`);

    this.addSql(`create table "chain_cursor" ("network" varchar(32) not null, "chain_id" bigint not null, "head" bigint not null, "scanned" bigint not null, "scanned_hash" varchar(66) not null, "last_error" text null, "last_error_at" timestamptz null, "updated_at" timestamptz not null, primary key ("network"));`);

    this.addSql(`create table "chain_deposit" ("id" bigserial primary key, "network" varchar(32) not null, "tx_hash" varchar(66) not null, "log_index" int not null, "block_height" bigint not null, "block_hash" varchar(66) not null, "address" varchar(42) not null, "currency" varchar(16) not null, "amount" numeric(38,8) not null, "wallet_id" uuid not null, "wallet_transaction_id" bigint not null, "status" varchar(16) not null, "created_at" timestamptz not null, "credited_at" timestamptz null);`);
    this.addSql(`create index "chain_deposit_pending_index" on "chain_deposit" ("network", "block_height") where status = 'pending';`);
    this.addSql(`create index "chain_deposit_wallet_transaction_index" on "chain_deposit" ("wallet_transaction_id");`);
    this.addSql(`alter table "chain_deposit" add constraint "chain_deposit_network_tx_log_unique" unique ("network", "tx_hash", "log_index");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "chain_block" cascade;`);
    this.addSql(`drop table if exists "chain_cursor" cascade;`);
    this.addSql(`drop table if exists "chain_deposit" cascade;`);
  }

}
