import { Migration } from '@mikro-orm/migrations';

/**
 * Trading (docs/decisions/trading.md; src/modules/trading/entities.ts): tables `trade_quote` and
 * `trade_order` (one order per quote at most: unique `quote_id`), the sandbox's per-customer prices
 * (`sandbox_price`), and `wallet_transaction.symbol`, a trade's pair (null for other movements).
 * Down drops them and the orders' Idempotency-Keys (scope `order`); the ledger entries of kind
 * `trade` and their wallet transactions stay, so the ledger stays balanced.
 */
export class Migration20261126110000_trading extends Migration {

  override name = 'Migration20261126110000_trading';

  override up(): void | Promise<void> {
    this.addSql(`create table "trade_quote" ("quote_id" uuid not null, "customer_id" varchar(48) not null, "user_id" uuid not null, "wallet_id" uuid not null, "symbol" varchar(32) not null, "base" varchar(16) not null, "quote" varchar(16) not null, "side" varchar(4) not null, "quantity" numeric(38,18) not null, "price" numeric(38,18) not null, "fees" numeric(38,18) not null, "total" numeric(38,18) not null, "expires_at" timestamptz not null, "created_at" timestamptz not null, primary key ("quote_id"));`);
    this.addSql(`create table "trade_order" ("order_id" uuid not null, "quote_id" uuid not null, "trade_id" uuid not null, "customer_id" varchar(48) not null, "user_id" uuid not null, "wallet_id" uuid not null, "symbol" varchar(32) not null, "base" varchar(16) not null, "quote" varchar(16) not null, "side" varchar(4) not null, "quantity" numeric(38,18) not null, "price" numeric(38,18) not null, "fees" numeric(38,18) not null, "total" numeric(38,18) not null, "status" varchar(16) not null, "idempotency_key" varchar(255) not null, "created_at" timestamptz not null, primary key ("order_id"));`);
    this.addSql(`alter table "trade_order" add constraint "trade_order_quote_id_unique" unique ("quote_id");`);
    this.addSql(`create index "trade_order_user_created_index" on "trade_order" ("user_id", "created_at");`);
    this.addSql(`alter table "trade_order" add constraint "trade_order_quote_id_foreign" foreign key ("quote_id") references "trade_quote" ("quote_id");`);
    this.addSql(`create table "sandbox_price" ("customer_id" varchar(48) not null, "pair" varchar(33) not null, "price" numeric(38,18) not null, "updated_at" timestamptz not null, primary key ("customer_id", "pair"));`);
    this.addSql(`alter table "wallet_transaction" add column "symbol" varchar(32) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "idempotency_key" where "scope" = 'order';`);
    this.addSql(`alter table "wallet_transaction" drop column "symbol";`);
    this.addSql(`drop table if exists "sandbox_price" cascade;`);
    this.addSql(`drop table if exists "trade_order" cascade;`);
    this.addSql(`drop table if exists "trade_quote" cascade;`);
  }

}
