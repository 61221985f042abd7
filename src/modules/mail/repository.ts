/**
 * The mail module's SQL (docs/architecture.md "Reaching the database"): the email outbox
 * (`outbox_email`), owned here. Its delivery statements (claim, lease, outcome) are the outbox's
 * (src/modules/outbox/repository/), built from `MAIL_TABLE` (./service.ts). A change that writes
 * an email together with rows of its own in one statement composes {@link OUTBOX_EMAIL_COLUMNS}
 * (src/modules/withdrawals/repository.ts).
 */
import type { PreparedStatement, Sql } from "../../db/sql.js";

/** The columns of an `outbox_email` row, in the order of `MailService.outboxValues` (./service.ts). */
export const OUTBOX_EMAIL_COLUMNS = ["id", "customer_id", "to", "subject", "text", "status", "attempts", "next_attempt_at", "last_error", "reference", "created_at", "sent_at"] as const;

/** Inserts one email: its {@link OUTBOX_EMAIL_COLUMNS}, `$1…$12`. */
export const INSERT_EMAIL: PreparedStatement = {
  name: "mail_insert",
  text: `insert into outbox_email (${OUTBOX_EMAIL_COLUMNS.map((c) => `"${c}"`).join(", ")})
         values (${OUTBOX_EMAIL_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`,
};

/** Writes an email's row (`values` in {@link OUTBOX_EMAIL_COLUMNS} order) on `on`: a `Tx`, the pool, or an EntityManager (in its transaction, if any). */
export async function insertEmail(on: Sql, values: readonly unknown[]): Promise<void> {
  await on.rows(INSERT_EMAIL, values);
}

/** A sandbox outbox email as `GET /sandbox/mail` shows it (schema `SandboxMail`). */
export interface SandboxMailView {
  to: string;
  subject: string;
  text: string;
  sent_at: string;
}

/** `sent_at` as `Date.prototype.toISOString` writes it (UTC, milliseconds). */
const SENT_AT = `to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as sent_at`;

/** A customer's sandbox outbox (`$1` customer id), newest first, at most 100: Sandbox Mail's rows. */
export const SANDBOX_MAIL: PreparedStatement = {
  name: "mail_sandbox",
  text: `select "to", subject, text, ${SENT_AT} from outbox_email
          where customer_id = $1 and status = 'sandbox' order by created_at desc, id asc limit 100`,
};

/**
 * {@link SANDBOX_MAIL} for one address (`$2`), compared case-insensitively as `lower()` of both sides:
 * the form index `outbox_email_sandbox_to_index` answers in order.
 */
export const SANDBOX_MAIL_TO: PreparedStatement = {
  name: "mail_sandbox_to",
  text: `select "to", subject, text, ${SENT_AT} from outbox_email
          where customer_id = $1 and status = 'sandbox' and lower("to") = lower($2) order by created_at desc, id asc limit 100`,
};

/** A customer's sandbox outbox, newest first (at most 100), optionally for one address (case-insensitive). */
export function sandboxMail(sql: Sql, customerId: string, to?: string): Promise<SandboxMailView[]> {
  return to === undefined ? sql.rows<SandboxMailView>(SANDBOX_MAIL, [customerId]) : sql.rows<SandboxMailView>(SANDBOX_MAIL_TO, [customerId, to]);
}
