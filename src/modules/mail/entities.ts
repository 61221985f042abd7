/**
 * The email outbox: every email the service sends is written here in the transaction that causes
 * it; the outbox's `mail` channel delivers it (docs/outbox.md).
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * `pending` waits for SMTP delivery (at `nextAttemptAt`), `sent` was delivered, `failed` gave up
 * after the attempts (the text of both is then dropped, so no confirmation code stays at rest),
 * `sandbox` is kept for `GET /sandbox/mail` because no `SMTP_URL` is configured.
 */
export type OutboxEmailStatus = "pending" | "sent" | "failed" | "sandbox";

/** One email of the outbox. */
export const OutboxEmail = defineEntity({
  name: "OutboxEmail",
  tableName: "outbox_email",
  indexes: [
    { name: "outbox_email_status_index", properties: ["status", "createdAt"] },
    // The outbox's claim (docs/outbox.md "Claim and lease"): the pending emails by when they are due (migration 20261126040000).
    {
      name: "outbox_email_due_index",
      expression: `create index "outbox_email_due_index" on "outbox_email" ("next_attempt_at") where "status" = 'pending'`,
    },
    // Sandbox Mail's two reads, newest first, over the sandbox rows only (migration 20261123223000).
    {
      name: "outbox_email_sandbox_index",
      expression: `create index "outbox_email_sandbox_index" on "outbox_email" ("customer_id", "created_at" desc, "id") where "status" = 'sandbox'`,
    },
    {
      name: "outbox_email_sandbox_to_index",
      expression: `create index "outbox_email_sandbox_to_index" on "outbox_email" ("customer_id", lower("to"), "created_at" desc, "id") where "status" = 'sandbox'`,
    },
  ],
  properties: {
    id: p.uuid().primary(),
    customerId: p.string(),
    to: p.string(),
    subject: p.string(),
    text: p.text(),
    status: p.string().$type<OutboxEmailStatus>(),
    attempts: p.integer(),
    /** When a delivery round may next take it: backoff after a failure, or a lease while one round sends it. */
    nextAttemptAt: p.datetime(),
    lastError: p.text().nullable(),
    /** What caused the email, e.g. `withdrawal:<id>`. */
    reference: p.string().nullable(),
    createdAt: p.datetime(),
    sentAt: p.datetime().nullable(),
  },
});
export type OutboxEmail = InferEntity<typeof OutboxEmail>;
