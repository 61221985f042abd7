import { Migration } from '@mikro-orm/migrations';

/**
 * On-chain sends of live networks (docs/decisions/live-chains.md "Sends"): one `chain_send` per
 * withdrawal, and the next nonce of each sending address.
 */
export class Migration20261129130000_chain_sends extends Migration {

  override name = 'Migration20261129130000_chain_sends';

  override up(): void | Promise<void> {
    this.addSql(`create table "chain_nonce" ("network" varchar(32) not null, "address" varchar(42) not null, "next_nonce" bigint not null, primary key ("network", "address"));`);

    this.addSql(`create table "chain_send" ("id" bigserial primary key, "network" varchar(32) not null, "kind" varchar(16) not null default 'withdrawal', "withdrawal_id" uuid null, "customer_id" varchar(255) null, "from_address" varchar(42) not null, "to_address" varchar(42) not null, "currency" varchar(16) not null, "contract" varchar(42) null, "amount_units" numeric(78,0) not null, "state" varchar(16) not null, "nonce" bigint null, "raw_tx" text null, "tx_hash" varchar(66) null, "tx_hashes" text[] not null default '{}', "max_fee_per_gas" numeric(78,0) null, "max_priority_fee_per_gas" numeric(78,0) null, "gas_limit" numeric(78,0) null, "broadcast_height" bigint null, "mined_height" bigint null, "fee" numeric(38,8) null, "fee_wait_since" timestamptz null, "last_error" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "chain_send" add constraint "chain_send_withdrawal_unique" unique ("withdrawal_id");`);
    this.addSql(`create index "chain_send_open_index" on "chain_send" ("network", "id") where state in ('queued', 'broadcast');`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "chain_nonce" cascade;`);
    this.addSql(`drop table if exists "chain_send" cascade;`);
  }

}
