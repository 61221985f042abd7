import { Migration } from '@mikro-orm/migrations';

/**
 * One Idempotency-Key mechanism (docs/idempotency.md; src/modules/idempotency/): table
 * `idempotency_key`, unique per (tenant, scope, key), with the request's fingerprint and the
 * result's id. Up copies every key already used: each withdrawal's (scope `withdrawal`, its
 * `request_fingerprint`, the withdrawal's id) and each `credit_idempotency_key` row (scope `credit`,
 * its `request_hash`, which already names the operation and the wallet, and its `result_id`), so
 * repeats keep their first answers. The withdrawal's own fingerprint column and its unique key go
 * (the new table holds both); `withdrawal.idempotency_key` stays (answered as
 * `withdraw.idempotency_key`), and `credit_idempotency_key` goes once its rows are copied. Down
 * restores the withdrawal columns from the table, re-creates `credit_idempotency_key` and copies the
 * credit keys back (operation and wallet from the payment or charge they point to), then drops it.
 */
export class Migration20261126050000_idempotency_keys extends Migration {

  override name = 'Migration20261126050000_idempotency_keys';

  override up(): void | Promise<void> {
    this.addSql(`create table "idempotency_key" ("customer_id" varchar(48) not null, "scope" varchar(32) not null, "key" varchar(255) not null, "request_fingerprint" varchar(64) not null, "result_id" varchar(255) not null, "created_at" timestamptz not null, primary key ("customer_id", "scope", "key"));`);
    this.addSql(`insert into "idempotency_key" ("customer_id", "scope", "key", "request_fingerprint", "result_id", "created_at")
      select "customer_id", 'withdrawal', "idempotency_key", "request_fingerprint", "id"::text, "created_at" from "withdrawal";`);
    this.addSql(`insert into "idempotency_key" ("customer_id", "scope", "key", "request_fingerprint", "result_id", "created_at")
      select "customer_id", 'credit', "key", "request_hash", "result_id"::text, "created_at" from "credit_idempotency_key";`);
    this.addSql(`drop table "credit_idempotency_key";`);
    this.addSql(`alter table "withdrawal" drop constraint "withdrawal_customer_idempotency_key_unique";`);
    this.addSql(`alter table "withdrawal" drop column "request_fingerprint";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "withdrawal" add column "request_fingerprint" varchar(255) null;`);
    this.addSql(`update "withdrawal" w set "request_fingerprint" = k."request_fingerprint" from "idempotency_key" k
      where k."scope" = 'withdrawal' and k."customer_id" = w."customer_id" and k."key" = w."idempotency_key";`);
    this.addSql(`alter table "withdrawal" alter column "request_fingerprint" set not null;`);
    this.addSql(`alter table "withdrawal" add constraint "withdrawal_customer_idempotency_key_unique" unique ("customer_id", "idempotency_key");`);
    this.addSql(`create table "credit_idempotency_key" ("customer_id" varchar(48) not null, "key" varchar(255) not null, "operation" varchar(16) not null, "wallet_id" uuid not null, "request_hash" varchar(64) not null, "result_id" uuid not null, "created_at" timestamptz not null, primary key ("customer_id", "key"));`);
    this.addSql(`insert into "credit_idempotency_key" ("customer_id", "key", "operation", "wallet_id", "request_hash", "result_id", "created_at")
      select k."customer_id", k."key", case when p."id" is not null then 'payment' else 'charge' end, coalesce(p."wallet_id", c."wallet_id"),
             k."request_fingerprint", coalesce(p."id", c."id"), k."created_at"
        from "idempotency_key" k
        left join "credit_payment" p on p."id"::text = k."result_id"
        left join "credit_charge" c on c."id"::text = k."result_id"
       where k."scope" = 'credit' and coalesce(p."id", c."id") is not null
      on conflict ("customer_id", "key") do nothing;`);
    this.addSql(`drop table if exists "idempotency_key" cascade;`);
  }

}
