/**
 * The inbound webhook module's SQL (docs/architecture.md "Reaching the database"): the customer's
 * inbound secrets (`inbound_webhook`) and the `webhook-id`s already answered
 * (`inbound_webhook_message`), both owned here. {@link SELECT_SECRETS} also reads
 * `customer.is_active` (identity's table): a deleted customer's secrets verify nothing.
 */
import type { PreparedStatement, Sql, Tx } from "../../db/sql.js";

/** The sealed secrets of customer `$1`'s inbound webhook, when the customer is active. At most one row. */
export const SELECT_SECRETS: PreparedStatement = {
  name: "inbound_select_secrets",
  text: `select i.secret_sealed, i.created_at, i.previous_secret_sealed, i.previous_secret_expires_at
           from inbound_webhook i join customer c on c.customer_id = i.customer_id
          where i.customer_id = $1 and c.is_active`,
};

/** A customer's inbound webhook as stored: sealed secrets, when the current one was made, the previous one's end. */
export interface InboundSecrets {
  secretSealed: string;
  createdAt: Date;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
}

/** The inbound webhook of an active customer ({@link SELECT_SECRETS}). @returns undefined when it has none. */
export async function selectSecrets(sql: Sql, customerId: string): Promise<InboundSecrets | undefined> {
  // a timestamp may arrive as text (the driver's parsers are set by the ORM): read through new Date
  const [row] = await sql.rows<{ secret_sealed: string; created_at: string; previous_secret_sealed: string | null; previous_secret_expires_at: string | null }>(SELECT_SECRETS, [customerId]);
  if (!row) return undefined;
  const expiresAt = row.previous_secret_expires_at === null ? null : new Date(row.previous_secret_expires_at);
  return { secretSealed: row.secret_sealed, createdAt: new Date(row.created_at), previousSecretSealed: row.previous_secret_sealed, previousSecretExpiresAt: expiresAt };
}

/** The current sealed secret of customer `$1`'s inbound webhook, its row locked for a rotation. */
export const LOCK_SECRET: PreparedStatement = {
  name: "inbound_lock_secret",
  text: `select secret_sealed from inbound_webhook where customer_id = $1 for update`,
};

/** The sealed current secret of a customer's inbound webhook, locked in `tx` until it ends. @returns undefined when it has none. */
export async function lockSecret(tx: Tx, customerId: string): Promise<string | undefined> {
  const [row] = await tx.rows<{ secret_sealed: string }>(LOCK_SECRET, [customerId]);
  return row?.secret_sealed;
}

/**
 * Writes customer `$1`'s inbound webhook: `$2` the new sealed secret, `$3` now (its creation), `$4`
 * the previous secret sealed and `$5` the end of its overlap (both null without one). Inserts, or
 * overwrites a row a concurrent first create wrote meanwhile (the last create wins).
 */
export const UPSERT_SECRETS: PreparedStatement = {
  name: "inbound_upsert_secrets",
  text: `insert into inbound_webhook (customer_id, secret_sealed, created_at, previous_secret_sealed, previous_secret_expires_at)
         values ($1, $2, $3, $4, $5)
       on conflict (customer_id) do update set secret_sealed = excluded.secret_sealed, created_at = excluded.created_at,
         previous_secret_sealed = excluded.previous_secret_sealed, previous_secret_expires_at = excluded.previous_secret_expires_at`,
};

/** What {@link writeSecrets} stores. */
export interface SecretsWrite {
  customerId: string;
  secretSealed: string;
  now: Date;
  previousSealed: string | null;
  previousExpiresAt: Date | null;
}

/** Writes a customer's inbound secrets ({@link UPSERT_SECRETS}) in `tx`. */
export async function writeSecrets(tx: Tx, w: SecretsWrite): Promise<void> {
  await tx.run(UPSERT_SECRETS, [w.customerId, w.secretSealed, w.now, w.previousSealed, w.previousExpiresAt]);
}

/** Deletes customer `$1`'s inbound webhook, every secret with it. */
export const DELETE_SECRETS: PreparedStatement = {
  name: "inbound_delete_secrets",
  text: `delete from inbound_webhook where customer_id = $1`,
};

/** Deletes a customer's inbound webhook (autocommit on `sql`). @returns whether there was one. */
export async function deleteSecrets(sql: Sql, customerId: string): Promise<boolean> {
  return (await sql.run(DELETE_SECRETS, [customerId])) > 0;
}

/**
 * Claims `webhook-id` `$2` of customer `$1` (`$3` now), `on conflict do nothing`. While another
 * transaction holds the same id uncommitted, PostgreSQL makes this wait on the primary key until
 * that transaction ends: concurrent copies of one message are answered one after the other.
 */
export const CLAIM_MESSAGE: PreparedStatement = {
  name: "inbound_claim_message",
  text: `insert into inbound_webhook_message (customer_id, webhook_id, received_at) values ($1, $2, $3)
       on conflict (customer_id, webhook_id) do nothing returning webhook_id`,
};

/** Claims a message id in `tx` ({@link CLAIM_MESSAGE}). @returns whether this call inserted it (a new message). */
export async function claimMessage(tx: Tx, customerId: string, webhookId: string, now: Date): Promise<boolean> {
  return (await tx.rows<{ webhook_id: string }>(CLAIM_MESSAGE, [customerId, webhookId, now])).length > 0;
}

/** The answer stored for customer `$1`'s `webhook-id` `$2`. At most one row. */
export const SELECT_ANSWER: PreparedStatement = {
  name: "inbound_select_answer",
  text: `select answer_status, answer_code, answer_field, answer_message from inbound_webhook_message where customer_id = $1 and webhook_id = $2`,
};

/**
 * The answer a message got: 200 with its message, or 400 with its error code, the field it names
 * (null for none) and its message.
 */
export type StoredAnswer =
  | { status: 200; message: string }
  | { status: 400; code: "BAD_REQUEST" | "PIN_NOTIFICATION_FAILED"; field: string | null; message: string };

/**
 * The answer stored for a message id, as committed or written by `sql`'s own transaction.
 * @returns undefined when the id is not stored (or not answered yet, which only its own claiming
 *   transaction can see).
 */
export async function selectAnswer(sql: Sql, customerId: string, webhookId: string): Promise<StoredAnswer | undefined> {
  const [row] = await sql.rows<{ answer_status: number | null; answer_code: string | null; answer_field: string | null; answer_message: string | null }>(SELECT_ANSWER, [customerId, webhookId]);
  if (!row || row.answer_status === null || row.answer_message === null) return undefined;
  if (row.answer_status === 200) return { status: 200, message: row.answer_message };
  return { status: 400, code: row.answer_code === "BAD_REQUEST" ? "BAD_REQUEST" : "PIN_NOTIFICATION_FAILED", field: row.answer_field, message: row.answer_message };
}

/** Stores the answer of customer `$1`'s claimed `webhook-id` `$2`: `$3` status, `$4` code, `$5` field, `$6` message. */
export const STORE_ANSWER: PreparedStatement = {
  name: "inbound_store_answer",
  text: `update inbound_webhook_message set answer_status = $3, answer_code = $4, answer_field = $5, answer_message = $6 where customer_id = $1 and webhook_id = $2`,
};

/** Stores a claimed message's answer ({@link STORE_ANSWER}) in the transaction that claimed it. */
export async function storeAnswer(tx: Tx, customerId: string, webhookId: string, answer: StoredAnswer): Promise<void> {
  const error = answer.status === 400 ? answer : { code: null, field: null };
  await tx.run(STORE_ANSWER, [customerId, webhookId, answer.status, error.code, error.field, answer.message]);
}

/** Deletes customer `$1`'s message ids received before `$2`. */
export const PURGE_MESSAGES: PreparedStatement = {
  name: "inbound_purge_messages",
  text: `delete from inbound_webhook_message where customer_id = $1 and received_at < $2`,
};

/** Forgets a customer's message ids received before `before` (autocommit on `sql`). */
export async function purgeMessages(sql: Sql, customerId: string, before: Date): Promise<void> {
  await sql.run(PURGE_MESSAGES, [customerId, before]);
}
