import { Migration } from '@mikro-orm/migrations';

/**
 * Credit notifications delivered like the platform webhooks (docs/decisions/notifications.md "Credit
 * notifications"; src/modules/credit/notifications/delivery.ts):
 * each `credit_event` gets its delivery state (status `pending` by default, so every event written
 * is a pending delivery without its writer knowing; attempts; the next attempt or the lease), a
 * partial index on the pending events per (wallet, sequence) to find each wallet's next event, and
 * `credit_event_attempt`, the attempts (time, HTTP status, duration, error).
 */
export class Migration20261123175731_credit_notification_delivery extends Migration {

  override name = 'Migration20261123175731_credit_notification_delivery';

  override up(): void | Promise<void> {
    this.addSql(`create table "credit_event_attempt" ("id" uuid not null, "event_id" uuid not null, "attempted_at" timestamptz not null, "http_status" int null, "duration_ms" int not null, "error" text null, primary key ("id"));`);
    this.addSql(`create index "credit_event_attempt_event_index" on "credit_event_attempt" ("event_id", "attempted_at");`);

    this.addSql(`alter table "credit_event" add "delivery_status" varchar(16) not null default 'pending', add "attempt_count" int not null default 0, add "next_attempt_at" timestamptz null;`);
    this.addSql(`create index "credit_event_pending_delivery_index" on "credit_event" ("wallet_id", "sequence") where delivery_status = 'pending';`);

    this.addSql(`alter table "credit_event_attempt" add constraint "credit_event_attempt_event_id_foreign" foreign key ("event_id") references "credit_event" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "credit_event_attempt" cascade;`);

    this.addSql(`drop index "credit_event_pending_delivery_index";`);
    this.addSql(`alter table "credit_event" drop column "delivery_status", drop column "attempt_count", drop column "next_attempt_at";`);
  }

}
