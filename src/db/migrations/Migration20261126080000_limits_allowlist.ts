import { Migration } from '@mikro-orm/migrations';

/**
 * Customer limits and the withdrawal allowlist (docs/decisions/limits-and-allowlist.md): table
 * `customer_limits` (a customer's own caps per kind as JSON, and its `allowlist_required` policy;
 * one row per customer that called Set Limits) and table `allowlist_address` (a user's
 * destinations, unique per user, currency and address key; listed newest first per user).
 */
export class Migration20261126080000_limits_allowlist extends Migration {

  override name = 'Migration20261126080000_limits_allowlist';

  override up(): void | Promise<void> {
    this.addSql(`create table "customer_limits" ("customer_id" varchar(48) not null, "allowlist_required" boolean not null, "withdrawal_caps" jsonb not null, "transfer_caps" jsonb not null, "updated_at" timestamptz not null, primary key ("customer_id"));`);
    this.addSql(`alter table "customer_limits" add constraint "customer_limits_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id") on update cascade on delete cascade;`);

    this.addSql(`create table "allowlist_address" ("id" uuid not null, "customer_id" varchar(48) not null, "user_id" uuid not null, "currency" varchar(16) not null, "address" varchar(128) not null, "address_key" varchar(128) not null, "label" varchar(100) not null, "created_at" timestamptz not null, "activates_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "allowlist_address_user_created_index" on "allowlist_address" ("user_id", "created_at");`);
    this.addSql(`alter table "allowlist_address" add constraint "allowlist_address_user_currency_address_unique" unique ("user_id", "currency", "address_key");`);
    this.addSql(`alter table "allowlist_address" add constraint "allowlist_address_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id");`);
    this.addSql(`alter table "allowlist_address" add constraint "allowlist_address_user_id_foreign" foreign key ("user_id") references "app_user" ("user_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "allowlist_address" cascade;`);
    this.addSql(`drop table if exists "customer_limits" cascade;`);
  }

}
