import { Migration } from '@mikro-orm/migrations';

/**
 * Card authorizations on credit wallets (docs/decisions/credit.md "Authorizations";
 * src/modules/credit/authorizations/entities.ts): table `credit_authorization`, one row per
 * authorization (approved or declined), and the wallet's `amount_held` (the sum of its open holds,
 * 0 for every existing wallet), kept non-negative by the wallet's counters check. Down drops the
 * table, the column and the authorizations' Idempotency-Keys (scope `credit`, result ids of
 * dropped rows); notifications already written stay in the event log.
 */
export class Migration20261126090000_credit_authorizations extends Migration {

  override name = 'Migration20261126090000_credit_authorizations';

  override up(): void | Promise<void> {
    this.addSql(`alter table "credit_wallet" add column "amount_held" bigint not null default 0;`);
    this.addSql(`alter table "credit_wallet" drop constraint "credit_wallet_counters_non_negative";`);
    this.addSql(`alter table "credit_wallet" add constraint "credit_wallet_counters_non_negative" check (credit_limit >= 0 and available_amount >= 0 and principal_outstanding >= 0 and interest_outstanding >= 0 and sum_of_daily_balance >= 0 and sequence >= 0 and amount_held >= 0);`);
    this.addSql(`create table "credit_authorization" ("authorization_id" uuid not null, "wallet_id" uuid not null, "customer_id" varchar(48) not null, "status" varchar(16) not null, "decline_reason" varchar(32) null, "amount" bigint not null, "captured_amount" bigint not null default 0, "released_amount" bigint not null default 0, "merchant_name" varchar(255) not null, "merchant_mcc" varchar(4) null, "merchant_country" varchar(2) null, "reference" varchar(255) null, "idempotency_key" varchar(255) not null, "expires_at" timestamptz null, "closed_at" timestamptz null, "created_at" timestamptz not null, primary key ("authorization_id"), constraint "credit_authorization_amounts" check (amount > 0 and captured_amount >= 0 and released_amount >= 0 and captured_amount + released_amount <= amount));`);
    this.addSql(`create index "credit_authorization_wallet_created_index" on "credit_authorization" ("wallet_id", "created_at");`);
    this.addSql(`create index "credit_authorization_open_wallet_index" on "credit_authorization" ("wallet_id") where status = 'approved';`);
    this.addSql(`create index "credit_authorization_open_expiry_index" on "credit_authorization" ("expires_at") where status = 'approved';`);
    this.addSql(`alter table "credit_authorization" add constraint "credit_authorization_wallet_id_foreign" foreign key ("wallet_id") references "credit_wallet" ("wallet_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "idempotency_key" k using "credit_authorization" a where k."scope" = 'credit' and k."result_id" = a."authorization_id"::text;`);
    this.addSql(`drop table if exists "credit_authorization" cascade;`);
    this.addSql(`alter table "credit_wallet" drop constraint "credit_wallet_counters_non_negative";`);
    this.addSql(`alter table "credit_wallet" add constraint "credit_wallet_counters_non_negative" check (credit_limit >= 0 and available_amount >= 0 and principal_outstanding >= 0 and interest_outstanding >= 0 and sum_of_daily_balance >= 0 and sequence >= 0);`);
    this.addSql(`alter table "credit_wallet" drop column "amount_held";`);
  }

}
