import { Migration } from '@mikro-orm/migrations';

/**
 * Authorizations on cards (docs/decisions/cards.md "Authorize on a card"): the card, the processor's
 * reference (unique per tenant: its idempotency) and the decline's detail on `credit_authorization`,
 * the card on `credit_event`, and the index of a card's spend windows.
 */
export class Migration20261129090000_card_authorizations extends Migration {

  override name = 'Migration20261129090000_card_authorizations';

  override up(): void | Promise<void> {
    this.addSql(`alter table "credit_event" add "card_id" uuid null;`);

    this.addSql(`alter table "credit_authorization" add "card_id" uuid null, add "decline_detail" jsonb null, add "processor_reference" varchar(64) null;`);
    this.addSql(`alter table "credit_authorization" add constraint "credit_authorization_card_id_foreign" foreign key ("card_id") references "credit_card" ("card_id") on delete set null;`);
    this.addSql(`create index "credit_authorization_card_created_index" on "credit_authorization" ("card_id", "created_at") where card_id is not null;`);
    this.addSql(`create unique index "credit_authorization_processor_reference_unique" on "credit_authorization" ("customer_id", "processor_reference") where processor_reference is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "credit_authorization" drop constraint "credit_authorization_card_id_foreign";`);

    this.addSql(`drop index "credit_authorization_card_created_index";`);
    this.addSql(`drop index "credit_authorization_processor_reference_unique";`);
    this.addSql(`alter table "credit_authorization" drop column "card_id", drop column "decline_detail", drop column "processor_reference";`);

    this.addSql(`alter table "credit_event" drop column "card_id";`);
  }

}
