/**
 * Recovering missed notifications (docs/outbox.md "Recovering missed notifications"): a receiver
 * that was down asks for everything of its tenant that ended `failed` or `disabled` since an
 * instant to be sent again. The messages go back to `pending`, due now, with their attempt
 * counter restarted (they get the channel's whole retry schedule again) and everything else kept:
 * the id (hence the `webhook-id`), the body, the attempt history in `delivery_attempt`.
 *
 * A stream channel (credit: per wallet, by `sequence`) keeps its order: after the re-queue, one
 * set-based statement marks every pending message of the touched streams that has a lower pending
 * message with `WAITING_AT` (the insert trigger's rule, src/modules/outbox/stream-order.ts), so
 * only each stream's head is due. The claim only ever takes a stream's lowest pending message
 * anyway; the mark keeps the claim's index scan off the later ones.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { ValidationFailed } from "../../domain/errors.js";
import { WAITING_AT } from "../../domain/outbox.js";
import type { OutboxChannel } from "./channel.js";

/** How far back `since` may go, days (docs/outbox.md "Recovering missed notifications"). */
export const RECOVER_WINDOW_DAYS = 30;

/**
 * Checks the `since` of a recover request: an ISO 8601 date-time (the schema has checked its form),
 * not after `now` and at most {@link RECOVER_WINDOW_DAYS} days before it.
 * @returns the instant (UTC).
 * @throws ValidationFailed (422: platform `UNPROCESSABLE_ENTITY`, credit core `VALIDATION_ERROR`) on `since`.
 */
export function recoverSince(since: string, now: Date = new Date()): Date {
  const at = new Date(since);
  if (Number.isNaN(at.getTime())) throw new ValidationFailed([{ field: "since", message: "must be an ISO 8601 date-time" }]);
  if (at.getTime() > now.getTime()) throw new ValidationFailed([{ field: "since", message: "must not be in the future" }]);
  if (now.getTime() - at.getTime() > RECOVER_WINDOW_DAYS * 86_400_000) {
    throw new ValidationFailed([{ field: "since", message: `must be at most ${RECOVER_WINDOW_DAYS} days ago` }]);
  }
  return at;
}

/**
 * Re-queues, in `tx`, every message of `channel` whose `customer_id` is `customerId`, in the
 * channel's `failed` or `disabled` status, with `created_at` at or after `since`: status `pending`,
 * attempts counter 0, due now (`next_attempt_at` null for channels where null is due, else now()).
 * Pending messages (due, leased, waiting or parked) and succeeded ones are left alone. For a stream
 * channel, then marks the touched streams' pending non-heads `WAITING_AT` (see the module docs).
 * The caller starts a delivery round after the commit.
 * @returns how many messages were re-queued.
 */
export async function requeueFailed<M>(tx: EntityManager, channel: OutboxChannel<M>, customerId: string, since: Date): Promise<number> {
  const { table, stream } = channel;
  const keyColumn = stream ? `, ${stream.key} as stream_key` : "";
  const rows = await tx.execute<{ id: string; stream_key?: unknown }[]>(
    `update ${table.name} set ${table.status} = 'pending', ${table.attempts} = 0,
        next_attempt_at = ${table.nullIsDue ? "null" : "now()"}${table.touched ? `, ${table.touched} = now()` : ""}
      where customer_id = ? and ${table.status} in (?, ?) and created_at >= ?
      returning id${keyColumn}`,
    [customerId, table.statuses.failed, table.statuses.disabled, since],
  );
  if (stream && rows.length > 0) {
    const keys = [...new Set(rows.map((r) => String(r.stream_key)))];
    await tx.execute(
      `update ${table.name} e set next_attempt_at = ?
        where e.${stream.key} in (${keys.map(() => "?").join(", ")})
          and e.${table.status} = 'pending'
          and e.next_attempt_at is distinct from ?
          and exists (select 1 from ${table.name} p
                       where p.${stream.key} = e.${stream.key} and p.${table.status} = 'pending' and p.${stream.order} < e.${stream.order})`,
      [WAITING_AT, ...keys, WAITING_AT],
    );
  }
  return rows.length;
}
