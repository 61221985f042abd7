import { Migration } from '@mikro-orm/migrations';

/**
 * Users' bank accounts (docs/decisions/fiat.md "Bank accounts"): table `bank_account`, its numbers
 * sealed at rest, a keyed fingerprint unique per user among the accounts not deleted (a partial
 * unique index, so a deleted account may be added again), listed newest first per user.
 */
export class Migration20261129030000_bank_accounts extends Migration {

  override name = 'Migration20261129030000_bank_accounts';

  override up(): void | Promise<void> {
    this.addSql(`create table "bank_account" ("id" uuid not null, "customer_id" varchar(48) not null, "user_id" uuid not null, "currency" varchar(16) not null, "holder_name" varchar(140) not null, "label" varchar(100) null, "account_mask" varchar(8) not null, "numbers_sealed" text not null, "fingerprint" varchar(64) not null, "created_at" timestamptz not null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "bank_account_user_created_index" on "bank_account" ("user_id", "created_at");`);
    this.addSql(`create unique index "bank_account_user_fingerprint_unique" on "bank_account" ("user_id", "fingerprint") where "deleted_at" is null;`);
    this.addSql(`alter table "bank_account" add constraint "bank_account_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id");`);
    this.addSql(`alter table "bank_account" add constraint "bank_account_user_id_foreign" foreign key ("user_id") references "app_user" ("user_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "bank_account" cascade;`);
  }

}
