import { Migration } from '@mikro-orm/migrations';

/**
 * Sandbox Mail (`GET /sandbox/mail`, docs/decisions/provider-and-sandbox.md "Test helpers") reads a customer's sandbox outbox newest first,
 * optionally for one address compared case-insensitively. The old ("customer_id", "to") index served
 * neither: the address filter was an `ilike` (no index use) and the order needed a sort of every
 * sandbox email of the customer, so the read grew with the outbox. Two partial indexes over the
 * sandbox rows now match both statements (src/modules/mail/service.ts SANDBOX_MAIL, SANDBOX_MAIL_TO)
 * in their order, so each reads at most 100 index entries.
 */
export class Migration20261123223000_sandbox_mail_indexes extends Migration {

  override name = 'Migration20261123223000_sandbox_mail_indexes';

  override up(): void | Promise<void> {
    this.addSql(`drop index "outbox_email_customer_to_index";`);
    this.addSql(`create index "outbox_email_sandbox_index" on "outbox_email" ("customer_id", "created_at" desc, "id") where "status" = 'sandbox';`);
    this.addSql(`create index "outbox_email_sandbox_to_index" on "outbox_email" ("customer_id", lower("to"), "created_at" desc, "id") where "status" = 'sandbox';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "outbox_email_sandbox_to_index";`);
    this.addSql(`drop index "outbox_email_sandbox_index";`);
    this.addSql(`create index "outbox_email_customer_to_index" on "outbox_email" ("customer_id", "to");`);
  }

}
