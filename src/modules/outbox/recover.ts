/**
 * Recovering missed notifications (docs/outbox.md "Recovering missed notifications"): a receiver
 * that was down asks for every message of its tenant since an instant whose last attempt failed to
 * be sent again, as Svix's recover does: those that ended `failed` or `disabled`, and those still
 * `pending` after failed attempts, waiting for a retry that the backoff may put hours away. They
 * are due now, with their attempt counter restarted (they get the channel's whole retry schedule
 * again) and everything else kept: the id (hence the `webhook-id`), the body, the attempt history
 * in `delivery_attempt`. A message never attempted, or delivered, is not touched.
 *
 * Nothing is sent twice at once: a message that may be in flight at that moment (under a live
 * lease, src/modules/outbox/repository/claim.ts `mayHoldLease`) keeps its `next_attempt_at`, so no second
 * round can claim it; its counter is restarted all the same, and the outbox records the attempt
 * in flight against the restarted counter (src/modules/outbox/outbox.ts `deliver`): if it fails, the
 * next attempt follows the schedule's first wait, not the old one.
 *
 * A stream channel (credit: per wallet, by `sequence`) keeps its order: after the re-queue, one
 * set-based statement marks every pending message of the touched streams that has a lower pending
 * message with `WAITING_AT` (the insert trigger's rule, src/modules/outbox/repository/stream-order.ts), so
 * only each stream's head is due. The claim only ever takes a stream's lowest pending message
 * anyway; the mark keeps the claim's index scan off the later ones.
 */
import type { Tx } from "../../db/sql.js";
import { ValidationFailed } from "../../domain/errors.js";
import { PARKED_AT, WAITING_AT } from "../../domain/outbox.js";
import type { OutboxChannel } from "./channel.js";
import { markStreamsWaiting, requeueRows } from "./repository/recover.js";

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
 * Re-queues, in `tx`, every message of `channel` whose `customer_id` is `customerId`, with
 * `created_at` at or after `since`, whose last attempt failed: in the channel's `failed` or
 * `disabled` status, or `pending` with at least one attempt (a success ends a message, so a pending
 * message's attempts all failed). Each gets status `pending` and attempts counter 0, and is due now
 * (`next_attempt_at` null for channels where null is due, else now()), except that a pending
 * message keeps its `next_attempt_at` when it waits for a reason of its own (parked until its
 * target is enabled, {@link PARKED_AT}; behind its stream's head, {@link WAITING_AT}) or may be in
 * flight (see the module docs), and an ended message being retried by hand at that moment (under a
 * lease) is left to that attempt. Never-attempted and succeeded messages are left alone. For a
 * stream channel, then marks the touched streams' pending non-heads `WAITING_AT` (see the module
 * docs; the statements: ./repository/recover.ts). Run in the caller's `db.transaction`; the caller
 * starts a delivery round after the commit.
 * @returns how many messages were re-queued (their counters restarted).
 */
export async function requeueFailed<M>(tx: Tx, channel: OutboxChannel<M>, customerId: string, since: Date): Promise<number> {
  const rows = await requeueRows(tx, channel, { customerId, since, parkedAt: PARKED_AT, waitingAt: WAITING_AT });
  if (channel.stream) await markStreamsWaiting(tx, channel, [...new Set(rows.map((r) => String(r.stream_key)))], WAITING_AT);
  return rows.length;
}
