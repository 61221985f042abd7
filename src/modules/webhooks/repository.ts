/**
 * The webhooks module's SQL (docs/architecture.md "Reaching the database"): the customer's webhook
 * (`webhook`) and the PIN webhook's outbox (`webhook_delivery`), both owned here. The outbox's
 * generic statements over `webhook_delivery` (claim, lease, outcome) are the outbox's
 * (src/modules/outbox/repository/), built from {@link WEBHOOK_TABLE} in ./channel.ts.
 */
import type { PreparedStatement, Sql, Tx } from "../../db/sql.js";
import type { Webhook, WebhookDelivery } from "./entities.js";

/**
 * Creates or overwrites tenant `$1`'s webhook (`$2` URL, `$3` sealed headers, `$4` sealed secret,
 * `$5` now), enabled, without a previous secret: one statement, so concurrent creates of one
 * customer both succeed and the last one wins.
 */
export const UPSERT_WEBHOOK: PreparedStatement = {
  name: "webhooks_upsert",
  text: `insert into webhook (customer_id, url, headers_sealed, secret_sealed, previous_secret_sealed, previous_secret_expires_at, disabled_at, disabled_reason, created_at, updated_at)
         values ($1, $2, $3, $4, null, null, null, null, $5, $5)
       on conflict (customer_id) do update set url = excluded.url, headers_sealed = excluded.headers_sealed, secret_sealed = excluded.secret_sealed,
         previous_secret_sealed = null, previous_secret_expires_at = null, disabled_at = null, disabled_reason = null, updated_at = excluded.updated_at`,
};

/** The values of a webhook written by {@link UPSERT_WEBHOOK}. */
export interface WebhookWrite {
  customerId: string;
  url: string;
  headersSealed: string;
  secretSealed: string;
  now: Date;
}

/** Creates or overwrites a customer's webhook ({@link UPSERT_WEBHOOK}), autocommit on `sql`. */
export async function upsertWebhook(sql: Sql, w: WebhookWrite): Promise<void> {
  await sql.run(UPSERT_WEBHOOK, [w.customerId, w.url, w.headersSealed, w.secretSealed, w.now]);
}

/** The current sealed secret of customer `$1`'s webhook, its row locked for the rotation. */
export const LOCK_SECRET: PreparedStatement = {
  name: "webhooks_lock_secret",
  text: `select secret_sealed from webhook where customer_id = $1 for update`,
};

/** A rotation of customer `$1`'s secret: `$2` the new sealed secret, `$3` the previous one sealed, `$4` until when it signs, `$5` now. */
export const ROTATE_SECRET: PreparedStatement = {
  name: "webhooks_rotate_secret",
  text: `update webhook set secret_sealed = $2, previous_secret_sealed = $3, previous_secret_expires_at = $4, updated_at = $5 where customer_id = $1`,
};

/** The sealed secret of a customer's webhook, locked in `tx` until it commits. @returns undefined when it has none. */
export async function lockSecret(tx: Tx, customerId: string): Promise<string | undefined> {
  const [row] = await tx.rows<{ secret_sealed: string }>(LOCK_SECRET, [customerId]);
  return row?.secret_sealed;
}

/** Writes a rotation of a customer's secret ({@link ROTATE_SECRET}) in `tx`. */
export async function rotateSecret(tx: Tx, r: { customerId: string; secretSealed: string; previousSealed: string; previousExpiresAt: Date; now: Date }): Promise<void> {
  await tx.run(ROTATE_SECRET, [r.customerId, r.secretSealed, r.previousSealed, r.previousExpiresAt, r.now]);
}

/** Deletes customer `$1`'s webhook. */
export const DELETE_WEBHOOK: PreparedStatement = {
  name: "webhooks_delete",
  text: `delete from webhook where customer_id = $1`,
};

/** Deletes a customer's webhook in `tx`. @returns whether there was one. */
export async function deleteWebhook(tx: Tx, customerId: string): Promise<boolean> {
  return (await tx.run(DELETE_WEBHOOK, [customerId])) > 0;
}

/** Disables customer `$1`'s webhook after HTTP 410: `$2` when, `$3` why. */
export const DISABLE_WEBHOOK: PreparedStatement = {
  name: "webhooks_disable",
  text: `update webhook set disabled_at = $2, disabled_reason = $3 where customer_id = $1`,
};

/** Disables a customer's webhook in `tx` ({@link DISABLE_WEBHOOK}). */
export async function disableWebhook(tx: Tx, customerId: string, at: Date, reason: string): Promise<void> {
  await tx.run(DISABLE_WEBHOOK, [customerId, at, reason]);
}

/** Every pending delivery of customer `$1` becomes `disabled`, out of the schedule (the log is kept). */
export const DISABLE_PENDING_DELIVERIES: PreparedStatement = {
  name: "webhooks_disable_pending_deliveries",
  text: `update webhook_delivery set status = 'disabled', next_attempt_at = null where customer_id = $1 and status = 'pending'`,
};

/** Disables a customer's pending deliveries in `tx` ({@link DISABLE_PENDING_DELIVERIES}). */
export async function disablePendingDeliveries(tx: Tx, customerId: string): Promise<void> {
  await tx.run(DISABLE_PENDING_DELIVERIES, [customerId]);
}

/**
 * A notification written to the outbox (`$1` id, `$2` customer, `$3` `webhook-id`, `$4` type,
 * `$5` sealed body, `$6` reference, `$7` now: created, due, updated), pending and due now, only
 * when customer `$2` has an enabled webhook; returns its id when written.
 */
export const ENQUEUE_DELIVERY: PreparedStatement = {
  name: "webhooks_enqueue_delivery",
  text: `insert into webhook_delivery (id, customer_id, webhook_message_id, event_type, payload_sealed, status, attempt_count, next_attempt_at, reference, created_at, updated_at)
         select $1, w.customer_id, $3, $4, $5, 'pending', 0, $7, $6, $7, $7
           from webhook w where w.customer_id = $2 and w.disabled_at is null
         returning id`,
};

/** The values of a delivery written by {@link ENQUEUE_DELIVERY}. */
export interface DeliveryWrite {
  id: string;
  customerId: string;
  webhookMessageId: string;
  eventType: string;
  payloadSealed: string;
  reference: string;
  now: Date;
}

/**
 * Writes delivery `d` in transaction `on` when its customer has an enabled webhook. @returns whether it was written.
 */
export async function enqueueDelivery(on: Sql, d: DeliveryWrite): Promise<boolean> {
  const rows = await on.rows(ENQUEUE_DELIVERY, [d.id, d.customerId, d.webhookMessageId, d.eventType, d.payloadSealed, d.reference, d.now]);
  return rows.length > 0;
}

/** The webhook as the sender needs it (openTarget, ./target.ts). */
export type WebhookTarget = Pick<Webhook, "customerId" | "url" | "headersSealed" | "secretSealed" | "previousSecretSealed" | "previousSecretExpiresAt" | "disabledAt">;
/** The delivery as the sender needs it. */
export type DeliveryToSend = Pick<WebhookDelivery, "id" | "webhookMessageId" | "payloadSealed">;

/**
 * Delivery `$1` for one attempt: its `webhook-id` and sealed body, and its customer's webhook
 * (null columns when the customer is inactive or has none). Reads identity's `customer`
 * (`is_active`) in the same round trip.
 */
export const PIN_MESSAGE: PreparedStatement = {
  name: "webhooks_pin_message",
  text: `select d.webhook_message_id, d.payload_sealed, w.customer_id, w.url, w.headers_sealed, w.secret_sealed,
                w.previous_secret_sealed, w.previous_secret_expires_at, w.disabled_at
           from webhook_delivery d
           left join customer c on c.customer_id = d.customer_id and c.is_active
           left join webhook w on w.customer_id = c.customer_id
          where d.id = $1`,
};

interface PinMessageRow {
  webhook_message_id: string;
  payload_sealed: string;
  customer_id: string | null;
  url: string | null;
  headers_sealed: string | null;
  secret_sealed: string | null;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | string | null;
  disabled_at: Date | string | null;
}

const dateOrNull = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

/**
 * Delivery `id` and its customer's webhook ({@link PIN_MESSAGE}). `webhook` is null when the
 * customer is inactive or has no webhook.
 * @throws Error when there is no delivery `id`.
 */
export async function pinMessage(sql: Sql, id: string): Promise<{ delivery: DeliveryToSend; webhook: WebhookTarget | null }> {
  const [row] = await sql.rows<PinMessageRow>(PIN_MESSAGE, [id]);
  if (!row) throw new Error(`webhook delivery ${id} not found`);
  const delivery = { id, webhookMessageId: row.webhook_message_id, payloadSealed: row.payload_sealed };
  if (row.customer_id === null) return { delivery, webhook: null };
  return {
    delivery,
    webhook: {
      customerId: row.customer_id,
      url: row.url!,
      headersSealed: row.headers_sealed!,
      secretSealed: row.secret_sealed!,
      previousSecretSealed: row.previous_secret_sealed,
      previousSecretExpiresAt: dateOrNull(row.previous_secret_expires_at),
      disabledAt: dateOrNull(row.disabled_at),
    },
  };
}
