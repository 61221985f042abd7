import { Migration } from '@mikro-orm/migrations';

/**
 * The customer's inbound webhook (docs/decisions/withdrawals.md "PINs pushed by the provider"):
 * table `inbound_webhook` (one row per customer: the sealed `whsec_` secret and, after a rotation,
 * the previous one with the end of its overlap; deleted with its customer) and table
 * `inbound_webhook_message` (the `webhook-id`s a customer's provider sent, each with the answer it
 * got; purged by the customer's received time).
 */
export class Migration20261129020000_inbound_webhooks extends Migration {

  override name = 'Migration20261129020000_inbound_webhooks';

  override up(): void | Promise<void> {
    this.addSql(`create table "inbound_webhook" ("customer_id" varchar(48) not null, "secret_sealed" text not null, "created_at" timestamptz not null, "previous_secret_sealed" text null, "previous_secret_expires_at" timestamptz null, primary key ("customer_id"));`);
    this.addSql(`alter table "inbound_webhook" add constraint "inbound_webhook_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id") on update cascade on delete cascade;`);

    this.addSql(`create table "inbound_webhook_message" ("customer_id" varchar(48) not null, "webhook_id" varchar(255) not null, "received_at" timestamptz not null, "answer_status" smallint null, "answer_code" varchar(32) null, "answer_field" varchar(32) null, "answer_message" text null, primary key ("customer_id", "webhook_id"));`);
    this.addSql(`create index "inbound_webhook_message_customer_received_index" on "inbound_webhook_message" ("customer_id", "received_at");`);
    this.addSql(`alter table "inbound_webhook_message" add constraint "inbound_webhook_message_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "inbound_webhook_message" cascade;`);
    this.addSql(`drop table if exists "inbound_webhook" cascade;`);
  }

}
