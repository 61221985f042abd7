import { Migration } from '@mikro-orm/migrations';

/**
 * One outbox (docs/outbox.md; src/modules/outbox/):
 *
 * - `delivery_attempt`: the attempts of every channel's messages (`channel` + `message_id`). The
 *   rows of `webhook_attempt` (channel `webhook`) and `credit_event_attempt` (channel `credit`)
 *   move there with their ids; both tables go.
 * - `outbox_email_due_index`: the email claim walks the pending emails by `next_attempt_at`.
 * - The credit claim only looks at wallet heads: a `credit_event` written behind a pending event
 *   of its wallet gets `next_attempt_at` = 9999-12-31 (`WAITING_AT`, src/domain/outbox.ts) from the
 *   insert trigger `credit_event_outbox_order`, which first locks the wallet's current head (`FOR
 *   NO KEY UPDATE`): a delivery ending that head concurrently either commits first (the new event is
 *   then the head, due now) or waits for this insert and then makes the new event due (it is the
 *   next pending event). Up marks the pending events already waiting behind a head the same way,
 *   so a claim's index scan never walks over a wallet's later events. Down clears the mark and
 *   moves the webhook and credit attempts back (the mail attempts, new here, are dropped).
 */
export class Migration20261126040000_outbox extends Migration {

  override name = 'Migration20261126040000_outbox';

  override up(): void | Promise<void> {
    this.addSql(`create table "delivery_attempt" ("id" uuid not null, "channel" varchar(16) not null, "message_id" uuid not null, "attempted_at" timestamptz not null, "http_status" int null, "duration_ms" int not null, "error" text null, primary key ("id"));`);
    this.addSql(`create index "delivery_attempt_message_index" on "delivery_attempt" ("channel", "message_id", "attempted_at");`);
    this.addSql(`insert into "delivery_attempt" ("id", "channel", "message_id", "attempted_at", "http_status", "duration_ms", "error")
      select "id", 'webhook', "delivery_id", "attempted_at", "http_status", "duration_ms", "error" from "webhook_attempt";`);
    this.addSql(`insert into "delivery_attempt" ("id", "channel", "message_id", "attempted_at", "http_status", "duration_ms", "error")
      select "id", 'credit', "event_id", "attempted_at", "http_status", "duration_ms", "error" from "credit_event_attempt";`);
    this.addSql(`drop table "webhook_attempt";`);
    this.addSql(`drop table "credit_event_attempt";`);

    this.addSql(`create index "outbox_email_due_index" on "outbox_email" ("next_attempt_at") where "status" = 'pending';`);

    this.addSql(`create or replace function "credit_event_outbox_order"() returns trigger language plpgsql as $$
      begin
        if new.delivery_status = 'pending' then
          perform 1 from credit_event p
            where p.wallet_id = new.wallet_id and p.delivery_status = 'pending' and p.sequence < new.sequence
            order by p.sequence limit 1
            for no key update;
          if found then
            new.next_attempt_at := '9999-12-31T00:00:00Z';
          end if;
        end if;
        return new;
      end $$;`);
    this.addSql(`create trigger "credit_event_outbox_order" before insert on "credit_event" for each row execute function "credit_event_outbox_order"();`);
    this.addSql(`update "credit_event" e set "next_attempt_at" = '9999-12-31T00:00:00Z'
      where e."delivery_status" = 'pending'
        and exists (select 1 from "credit_event" p where p."wallet_id" = e."wallet_id" and p."delivery_status" = 'pending' and p."sequence" < e."sequence");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger "credit_event_outbox_order" on "credit_event";`);
    this.addSql(`drop function "credit_event_outbox_order"();`);
    this.addSql(`update "credit_event" set "next_attempt_at" = null where "delivery_status" = 'pending' and "next_attempt_at" = '9999-12-31T00:00:00Z';`);

    this.addSql(`drop index "outbox_email_due_index";`);

    this.addSql(`create table "webhook_attempt" ("id" uuid not null, "delivery_id" uuid not null, "attempted_at" timestamptz not null, "http_status" int null, "duration_ms" int not null, "error" text null, primary key ("id"));`);
    this.addSql(`create index "webhook_attempt_delivery_index" on "webhook_attempt" ("delivery_id", "attempted_at");`);
    this.addSql(`alter table "webhook_attempt" add constraint "webhook_attempt_delivery_id_foreign" foreign key ("delivery_id") references "webhook_delivery" ("id") on delete cascade;`);
    this.addSql(`create table "credit_event_attempt" ("id" uuid not null, "event_id" uuid not null, "attempted_at" timestamptz not null, "http_status" int null, "duration_ms" int not null, "error" text null, primary key ("id"));`);
    this.addSql(`create index "credit_event_attempt_event_index" on "credit_event_attempt" ("event_id", "attempted_at");`);
    this.addSql(`alter table "credit_event_attempt" add constraint "credit_event_attempt_event_id_foreign" foreign key ("event_id") references "credit_event" ("id") on delete cascade;`);
    this.addSql(`insert into "webhook_attempt" ("id", "delivery_id", "attempted_at", "http_status", "duration_ms", "error")
      select "id", "message_id", "attempted_at", "http_status", "duration_ms", "error" from "delivery_attempt" where "channel" = 'webhook';`);
    this.addSql(`insert into "credit_event_attempt" ("id", "event_id", "attempted_at", "http_status", "duration_ms", "error")
      select "id", "message_id", "attempted_at", "http_status", "duration_ms", "error" from "delivery_attempt" where "channel" = 'credit';`);
    this.addSql(`drop table "delivery_attempt";`);
  }

}
