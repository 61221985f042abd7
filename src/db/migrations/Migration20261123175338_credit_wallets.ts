import { Migration } from '@mikro-orm/migrations';

/**
 * Credit wallets and what hangs off them (docs/decisions/credit.md "Wallets";
 * src/modules/credit/accounts/entities.ts): statements
 * unique per (wallet, cut), the event log and notification outbox unique per (wallet, sequence),
 * charges, payments, idempotency keys per tenant, and the tenants' sandbox clocks.
 */
export class Migration20261123175338_credit_wallets extends Migration {

  override name = 'Migration20261123175338_credit_wallets';

  override up(): void | Promise<void> {
    this.addSql(`create table "credit_idempotency_key" ("customer_id" varchar(48) not null, "key" varchar(255) not null, "operation" varchar(16) not null, "wallet_id" uuid not null, "request_hash" varchar(64) not null, "result_id" uuid not null, "created_at" timestamptz not null, primary key ("customer_id", "key"));`);

    this.addSql(`create table "credit_clock" ("customer_id" varchar(48) not null, "now" timestamptz not null, "updated_at" timestamptz not null, primary key ("customer_id"));`);

    this.addSql(`create table "credit_wallet" ("wallet_id" uuid not null, "customer_id" varchar(48) not null, "user_id" uuid not null, "product_id" uuid not null, "currency" varchar(3) not null, "description" varchar(255) null, "status" varchar(16) not null, "status_before_default" varchar(16) null, "credit_limit" bigint not null, "available_amount" bigint not null, "principal_outstanding" bigint not null, "interest_outstanding" bigint not null, "first_cut_date" timestamptz not null, "time" int null, "expires_at" timestamptz null, "cycle_start" timestamptz not null, "sum_of_daily_balance" bigint not null, "last_close_at" timestamptz null, "next_cut_at" timestamptz null, "interest_rate_nominal" numeric(9,4) not null, "interest_rate_moroso" numeric(9,4) not null, "fixed_interest_nominal" bigint not null, "fixed_interest_moroso" bigint not null, "minimum_payment_rate" numeric(9,4) not null, "fixed_minimum_payment" bigint not null, "specs_overridden" boolean not null, "pending_specs" jsonb null, "sequence" bigint not null, "as_of" timestamptz not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("wallet_id"));`);
    this.addSql(`create index "credit_wallet_customer_created_index" on "credit_wallet" ("customer_id", "created_at");`);
    this.addSql(`create index "credit_wallet_next_cut_index" on "credit_wallet" ("next_cut_at");`);
    this.addSql(`create index "credit_wallet_product_index" on "credit_wallet" ("product_id");`);

    this.addSql(`create table "credit_statement" ("id" uuid not null, "wallet_id" uuid not null, "ordinal" int not null, "cut_date" timestamptz not null, "cycle_start" timestamptz not null, "days_in_cycle" int not null, "sum_of_daily_balance" bigint not null, "principal_at_cut" bigint not null, "interest_outstanding_at_cut" bigint not null, "interest_accrual_method" varchar(3) not null, "compound" boolean not null, "interest_basis" bigint not null, "interest_rate_nominal" numeric(9,4) not null, "daily_rate_divisor" int not null, "fixed_interest_nominal" bigint not null, "minimum_payment_rate" numeric(9,4) not null, "fixed_minimum_payment" bigint not null, "interest_generated" bigint not null, "minimum_payment" bigint not null, "payment_due_date" timestamptz not null, "paid_in_cycle" bigint not null, "status" varchar(16) not null, "interest_applied" bigint not null, "interest_applied_at" timestamptz null, "penal_interest" bigint not null, "interest_rate_moroso" numeric(9,4) null, "fixed_interest_moroso" bigint null, "cured_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "credit_statement_due_index" on "credit_statement" ("payment_due_date");`);
    this.addSql(`alter table "credit_statement" add constraint "credit_statement_wallet_cut_unique" unique ("wallet_id", "cut_date");`);

    this.addSql(`create table "credit_payment" ("id" uuid not null, "wallet_id" uuid not null, "amount" bigint not null, "applied_to_interest" bigint not null, "applied_to_principal" bigint not null, "applied_to_overdraft" bigint not null, "idempotency_key" varchar(255) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "credit_payment_wallet_index" on "credit_payment" ("wallet_id", "created_at");`);

    this.addSql(`create table "credit_event" ("id" uuid not null, "wallet_id" uuid not null, "customer_id" varchar(48) not null, "sequence" bigint not null, "type" varchar(32) not null, "amount" bigint not null, "direction" varchar(6) not null, "affects_balance" boolean not null, "wallet_details_after" jsonb not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "credit_event" add constraint "credit_event_wallet_sequence_unique" unique ("wallet_id", "sequence");`);

    this.addSql(`create table "credit_charge" ("id" uuid not null, "wallet_id" uuid not null, "amount" bigint not null, "description" varchar(255) not null, "idempotency_key" varchar(255) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "credit_charge_wallet_index" on "credit_charge" ("wallet_id", "created_at");`);

    this.addSql(`alter table "credit_clock" add constraint "credit_clock_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id") on update cascade on delete cascade;`);

    this.addSql(`alter table "credit_wallet" add constraint "credit_wallet_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id");`);
    this.addSql(`alter table "credit_wallet" add constraint "credit_wallet_user_id_foreign" foreign key ("user_id") references "app_user" ("user_id");`);
    this.addSql(`alter table "credit_wallet" add constraint "credit_wallet_product_id_foreign" foreign key ("product_id") references "credit_product" ("id");`);
    this.addSql(`alter table "credit_wallet" add constraint "credit_wallet_counters_non_negative" check (credit_limit >= 0 and available_amount >= 0 and principal_outstanding >= 0 and interest_outstanding >= 0 and sum_of_daily_balance >= 0 and sequence >= 0);`);

    this.addSql(`alter table "credit_statement" add constraint "credit_statement_wallet_id_foreign" foreign key ("wallet_id") references "credit_wallet" ("wallet_id");`);

    this.addSql(`alter table "credit_payment" add constraint "credit_payment_wallet_id_foreign" foreign key ("wallet_id") references "credit_wallet" ("wallet_id");`);

    this.addSql(`alter table "credit_event" add constraint "credit_event_wallet_id_foreign" foreign key ("wallet_id") references "credit_wallet" ("wallet_id");`);

    this.addSql(`alter table "credit_charge" add constraint "credit_charge_wallet_id_foreign" foreign key ("wallet_id") references "credit_wallet" ("wallet_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "credit_statement" drop constraint "credit_statement_wallet_id_foreign";`);
    this.addSql(`alter table "credit_payment" drop constraint "credit_payment_wallet_id_foreign";`);
    this.addSql(`alter table "credit_event" drop constraint "credit_event_wallet_id_foreign";`);
    this.addSql(`alter table "credit_charge" drop constraint "credit_charge_wallet_id_foreign";`);

    this.addSql(`drop table if exists "credit_idempotency_key" cascade;`);
    this.addSql(`drop table if exists "credit_clock" cascade;`);
    this.addSql(`drop table if exists "credit_wallet" cascade;`);
    this.addSql(`drop table if exists "credit_statement" cascade;`);
    this.addSql(`drop table if exists "credit_payment" cascade;`);
    this.addSql(`drop table if exists "credit_event" cascade;`);
    this.addSql(`drop table if exists "credit_charge" cascade;`);
  }

}
