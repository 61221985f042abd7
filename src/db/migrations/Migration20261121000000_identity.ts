import { Migration } from "@mikro-orm/migrations";

/** Identity slice: service settings, customers, credentials, users (docs/decisions/credentials-and-tokens.md, docs/decisions/customers-users-and-wallets.md). */
export class Migration20261121000000_identity extends Migration {
  override up(): void {
    this.addSql(`
      create table "service_setting" (
        "key" varchar(255) not null primary key,
        "value" text not null,
        "created_at" timestamptz not null
      );`);
    this.addSql(`
      create table "customer" (
        "customer_id" varchar(48) not null primary key,
        "email" varchar(255) not null,
        "account_type" varchar(255) not null,
        "account_role" varchar(255) not null,
        "account_purpose" text not null,
        "first_name" varchar(255) not null,
        "last_name" varchar(255) not null,
        "phone_country_code" varchar(255) not null,
        "phone_number" varchar(255) not null,
        "business" jsonb not null,
        "status" varchar(255) not null,
        "is_active" boolean not null,
        "deleted_at" timestamptz null,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null
      );`);
    this.addSql(`create index "customer_created_at_index" on "customer" ("created_at" desc);`);
    this.addSql(`
      create table "credential" (
        "credential_id" uuid not null primary key,
        "customer_id" varchar(48) not null,
        "secret_hash" varchar(255) not null,
        "secret_prefix" varchar(255) not null,
        "is_owner" boolean not null,
        "user_email" varchar(255) not null,
        "user_name" varchar(255) not null,
        "is_active" boolean not null,
        "revoked_at" timestamptz null,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        constraint "credential_secret_hash_unique" unique ("secret_hash"),
        constraint "credential_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id")
      );`);
    this.addSql(`create index "credential_customer_id_index" on "credential" ("customer_id");`);
    this.addSql(`
      create table "app_user" (
        "user_id" uuid not null primary key,
        "customer_id" varchar(48) not null,
        "account_type" varchar(255) not null,
        "account_role" varchar(255) not null,
        "account_purpose" varchar(255) not null,
        "first_name" varchar(255) not null,
        "last_name" varchar(255) not null,
        "email" varchar(255) not null,
        "email_normalized" varchar(255) not null,
        "phone_country_code" varchar(255) not null,
        "phone_number" varchar(255) not null,
        "phone_e164" varchar(255) not null,
        "status" varchar(255) not null,
        "verification_status" varchar(255) not null,
        "is_active" boolean not null,
        "individual" jsonb not null,
        "deleted_at" timestamptz null,
        "tokens_revoked_at" timestamptz null,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        constraint "app_user_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id")
      );`);
    this.addSql(
      `create unique index "app_user_email_per_customer_unique" on "app_user" ("customer_id", "email_normalized") where "deleted_at" is null;`,
    );
    this.addSql(
      `create unique index "app_user_phone_per_customer_unique" on "app_user" ("customer_id", "phone_e164") where "deleted_at" is null;`,
    );
    this.addSql(`create index "app_user_customer_created_index" on "app_user" ("customer_id", "created_at" desc);`);
  }

  override down(): void {
    this.addSql(`drop table if exists "app_user";`);
    this.addSql(`drop table if exists "credential";`);
    this.addSql(`drop table if exists "customer";`);
    this.addSql(`drop table if exists "service_setting";`);
  }
}
