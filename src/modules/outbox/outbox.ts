/**
 * The outbox (docs/outbox.md): one delivery mechanism for every channel that sends what a
 * transaction wrote to its outbox table: the email outbox (src/modules/mail/), the PIN webhook
 * (src/modules/webhooks/) and the credit notifications (src/modules/credit/notifications/). A
 * channel supplies its table, its policy and how to build, sign and send a message
 * (src/modules/outbox/channel.ts); the outbox owns the rest:
 *
 * - the claim: one statement, `FOR UPDATE SKIP LOCKED` plus a lease on `next_attempt_at`
 *   (src/modules/outbox/repository/claim.ts), so concurrent rounds on any number of workers never send one
 *   message at the same time;
 * - the send with no database connection held, then the attempt record (`delivery_attempt`) and
 *   the message's new state in one transaction;
 * - the retry rule: 2xx (or a delivered email) ends the message; HTTP 410 disables the target
 *   (the channel's `disableTarget`) and ends or parks the message (`policy.onGone`); a message that
 *   cannot be built fails at once; anything else is retried after the policy's backoff, and fails
 *   after its last attempt (src/domain/outbox.ts);
 * - the order of a stream: only a stream's head is due; when it ends, the next message of its
 *   stream becomes due;
 * - attempts by hand (a retry endpoint): {@link Outbox.claimMessage} leases one given message the
 *   same way, unless it may already be in flight, so concurrent retries, on any number of API
 *   replicas, and a round never send one message at the same time.
 *
 * At least once: a round that dies mid-send leaves the lease to expire, and a later round sends the
 * message again (the same `webhook-id` for the notifications).
 *
 * Every statement is the outbox repository's (src/modules/outbox/repository/), run on the `Db`;
 * the attempt record is one `db.transaction`.
 */
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Logger } from "pino";
import type { Db, Tx } from "../../db/sql.js";
import { PARKED_AT, WAITING_AT, givesUp, judgeAttempt, retryDelayMs } from "../../domain/outbox.js";
import type { AttemptResult, Claimed, OutboxChannel, OutcomeKind } from "./channel.js";
import { DeliveryAttempt, type ChannelName } from "./entities.js";
import { claimBranches, claimNext, leaseMessage, lockMessage } from "./repository/claim.js";
import { COUNTED, insertAttempt, promoteNext, releaseLease, restartedCount, settleMessage } from "./repository/record.js";

/** Options of a delivery round. */
export interface RoundOptions {
  /** Messages sent at the same time (each lane claims, sends and records one at a time). Default 1. */
  lanes?: number;
  /** Claims after which the round ends (the next round goes on). Default 100. */
  limit?: number;
}

/** What a round did. */
export interface RoundStats {
  /** Messages claimed (attempted, or found without a target to send to). */
  claimed: number;
  /** Messages delivered. */
  succeeded: number;
}

/** The outcome of one delivery and the error its attempt recorded. */
interface Judged {
  kind: OutcomeKind;
  error: string | null;
  /** The receiver answered HTTP 410: the channel disables its target. */
  gone: boolean;
}

/**
 * What {@link Outbox.claimMessage} found: the message, claimed; `busy`, it may be in flight (a round
 * or another caller holds a lease on it), so nothing is sent; `missing`, no such message.
 */
export type MessageClaim = { claimed: Claimed } | { busy: true } | { missing: true };

/** Outcomes after which a message is no longer pending: its stream's next message becomes due. */
const ENDS: ReadonlySet<OutcomeKind> = new Set(["succeeded", "failed", "disabled"]);

/** The delivery mechanism of the outbox channels (see the module docs). */
export class Outbox {
  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /**
   * Claims the channel's oldest due message (its due retries first, then, for channels whose rows
   * are written without `next_attempt_at`, the never-attempted ones), in one short statement.
   * @returns the claimed message, or undefined when none is due.
   */
  async claim<M>(channel: OutboxChannel<M>): Promise<Claimed | undefined> {
    for (const branch of claimBranches(channel)) {
      const row = await claimNext(this.db, channel, branch);
      if (row) {
        const { id, attempts, ...rest } = row;
        return { id: String(id), attempts: Number(attempts), row: rest };
      }
    }
    return undefined;
  }

  /**
   * Claims message `id` of tenant `customerId` for one attempt by hand (a retry endpoint;
   * docs/outbox.md "Retry and disable"), whatever its status: in one short transaction, locks its
   * row (`FOR UPDATE`: concurrent claims of it wait for each other a moment, on any replica), and
   * unless it may be under a live lease (`mayHoldLease`, ./repository/claim.ts: a round or another caller is sending
   * it, or a pending message is due within a lease anyway), leases it as a round's claim does:
   * `next_attempt_at` = now + `policy.leaseMs`. Rounds then skip it, and every other claim of it
   * answers `busy` until {@link deliver} ends the attempt and gives the message its schedule back.
   * No connection is held during the send.
   * @returns `{ claimed }` (with its `ManualLease`: the lease and the schedule it replaced),
   *   `{ busy: true }`, or `{ missing: true }` when the channel has no message `id` of `customerId`.
   * @throws Error for a stream channel (a stream's messages go in order, never by hand) or one whose
   *   ended messages keep a `next_attempt_at` (mail).
   */
  async claimMessage<M>(channel: OutboxChannel<M>, id: string, customerId: string): Promise<MessageClaim> {
    const { table } = channel;
    if (channel.stream || !table.clearsNextAttempt) throw new Error(`channel ${channel.name} has no attempts by hand`);
    return this.db.transaction(async (tx) => {
      const row = await lockMessage(tx, channel, id, customerId);
      if (!row) return { missing: true };
      if (row.busy) return { busy: true };
      const until = await leaseMessage(tx, channel, id);
      const { attempts, next_attempt_at: previous, busy: _busy, ...rest } = row;
      return {
        claimed: {
          id,
          attempts: Number(attempts),
          row: rest,
          lease: { until, previous: previous === null || previous === undefined ? null : new Date(previous as Date | string) },
        },
      };
    });
  }

  /**
   * A delivery round: `lanes` loops, each claiming a due message, sending it and recording the
   * outcome, until none is due or `limit` messages were claimed (or, with
   * `policy.stopRoundOnFailure`, an attempt failed). Safe to run on any number of workers at once.
   */
  async round<M>(channel: OutboxChannel<M>, options: RoundOptions = {}): Promise<RoundStats> {
    const lanes = options.lanes ?? 1;
    const limit = options.limit ?? 100;
    const stats: RoundStats = { claimed: 0, succeeded: 0 };
    let stopped = false;
    const lane = async (): Promise<void> => {
      while (!stopped && stats.claimed < limit) {
        const claimed = await this.claim(channel);
        if (!claimed) return;
        stats.claimed++;
        const outcome = await this.deliver(channel, claimed);
        if (outcome === "succeeded") stats.succeeded++;
        else if (channel.policy.stopRoundOnFailure && (outcome === "retry" || outcome === "failed")) stopped = true;
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    return stats;
  }

  /**
   * One delivery of a claimed message: the channel loads it (or says why nothing is sent: the
   * message is then disabled or parked without an attempt), sends it with no connection held, then
   * the attempt and the message's new state are recorded in one transaction (see the module docs).
   * `manual` (a retry endpoint: one attempt now, whatever the message's status) leaves the status
   * and the schedule of a message that was not delivered as they were; a message claimed by
   * {@link claimMessage} then gets its schedule back ({@link endLease}), also when nothing was sent.
   *
   * The attempts counter of a pending message can move during the send only by a recover
   * (src/modules/outbox/recover.ts restarts it): a `retry` or `failed` outcome is recorded only if
   * the counter is still the claimed one, else it is judged again from the restarted counter, so a
   * recover that came during the send is not undone by it.
   * @returns the outcome, or undefined when a manual attempt found nothing to send.
   */
  async deliver<M>(channel: OutboxChannel<M>, claimed: Claimed, manual = false): Promise<OutcomeKind | undefined> {
    let attempted = false;
    try {
      const kind = await this.attempt(channel, claimed, manual);
      attempted = manual && kind !== undefined; // a manual attempt answers undefined exactly when it sent nothing
      return kind;
    } finally {
      if (claimed.lease) await this.endLease(channel, claimed, attempted);
    }
  }

  /** {@link deliver} but the release of a by-hand lease. */
  private async attempt<M>(channel: OutboxChannel<M>, claimed: Claimed, manual: boolean): Promise<OutcomeKind | undefined> {
    const prepared = await channel.prepare(this.db, claimed, manual);
    if ("skip" in prepared) {
      if (manual) return undefined;
      const kind = prepared.skip === "disable" ? "disabled" : "parked";
      await this.db.transaction((tx) => this.settle(tx, channel, claimed, kind, { attempted: false, error: null, guarded: true }));
      return kind;
    }
    const attemptedAt = new Date();
    const result = await channel.send(prepared.message);
    const judged = this.judge(channel, claimed, result, manual);
    await this.db.transaction(async (tx) => {
      await insertAttempt(tx, {
        id: randomUUID(),
        channel: channel.name,
        messageId: claimed.id,
        attemptedAt,
        httpStatus: result.httpStatus,
        durationMs: result.durationMs,
        error: judged.error,
      });
      if (judged.gone) await channel.disableTarget?.(tx, claimed, prepared.message);
      const how = { attempted: true, error: judged.error, guarded: !manual && !judged.gone };
      if (await this.settle(tx, channel, claimed, judged.kind, how) || !COUNTED.has(judged.kind)) return;
      const restarted = await restartedCount(tx, channel, claimed.id, claimed.attempts);
      if (restarted === undefined) return;
      const again = { ...claimed, attempts: restarted };
      await this.settle(tx, channel, again, this.judge(channel, again, result, false).kind, how);
    });
    if (judged.kind !== "succeeded") {
      this.logger.warn(
        { channel: channel.name, messageId: claimed.id, attempts: claimed.attempts + 1, outcome: judged.kind, status: result.httpStatus, error: judged.error },
        "outbox delivery attempt failed",
      );
    }
    return judged.kind;
  }

  /**
   * The attempts of `messageIds` of `channel`, oldest first (`attempted_at`, then `id`): what the
   * delivery logs show.
   */
  async attemptsOf(em: EntityManager, channel: ChannelName, messageIds: readonly string[]): Promise<DeliveryAttempt[]> {
    if (messageIds.length === 0) return [];
    return em.find(DeliveryAttempt, { channel, messageId: { $in: [...messageIds] } }, { orderBy: { attemptedAt: "asc", id: "asc" } });
  }

  /** The outcome of an attempt's result under the channel's policy (docs/outbox.md "Retry and disable"). */
  private judge<M>(channel: OutboxChannel<M>, claimed: Claimed, result: AttemptResult, manual: boolean): Judged {
    const verdict = result.unsendable
      ? "unsendable"
      : result.httpStatus !== null
        ? judgeAttempt(result.httpStatus)
        : result.error === null ? "succeeded" : "retry";
    const error = verdict === "succeeded" ? null : result.httpStatus !== null ? `HTTP ${result.httpStatus}` : result.error;
    if (verdict === "succeeded") return { kind: "succeeded", error, gone: false };
    if (verdict === "disable") return { kind: channel.policy.onGone === "disable" ? "disabled" : "parked", error, gone: true };
    if (manual) return { kind: "manual", error, gone: false };
    const failed = verdict === "unsendable" || givesUp(channel.policy.retry, claimed.attempts + 1);
    return { kind: failed ? "failed" : "retry", error, gone: false };
  }

  /**
   * Writes an outcome to the message's row in `tx` (./repository/record.ts `settleMessage`):
   * status, attempts counter, next attempt, and the channel's further columns. `guarded`: only
   * while the message is still pending (a target deleted during the send keeps the message as the
   * deletion left it) and, for the outcomes judged from the counter (`retry`, `failed`), while the
   * counter is still the claimed one. An outcome that ends the message makes its stream's next
   * message due.
   * @returns whether the row was written (false: a guard did not hold).
   */
  private async settle<M>(
    tx: Tx,
    channel: OutboxChannel<M>,
    claimed: Claimed,
    kind: OutcomeKind,
    how: { attempted: boolean; error: string | null; guarded: boolean },
  ): Promise<boolean> {
    const inc = how.attempted ? 1 : 0;
    const attempts = claimed.attempts + inc;
    const next = kind === "parked"
      ? PARKED_AT
      : kind === "retry" ? new Date(Date.now() + retryDelayMs(channel.policy.retry, attempts, Math.random())) : null;
    const settled = channel.settledColumns?.(kind, how.error) ?? {};
    const written = await settleMessage(tx, channel, kind, { id: claimed.id, guarded: how.guarded, claimed: claimed.attempts, inc, attempts, next, settled });
    // the next message of its stream: the lowest pending one, if it waits (a message written
    // concurrently behind it is ordered by the stream table's insert trigger, which locks the head)
    if (channel.stream && ENDS.has(kind)) await promoteNext(tx, channel, claimed.row[channel.stream.key], WAITING_AT);
    return written;
  }

  /**
   * Ends a by-hand lease ({@link claimMessage}) once its attempt is recorded, or nothing was sent:
   * an ended message's `next_attempt_at` goes back to null; a pending one gets back the schedule
   * the lease replaced, unless a recover restarted its counter meanwhile (then it is due now).
   * Only while the row still holds this lease: an outcome, a deletion or a 410 that wrote
   * `next_attempt_at` since has the last word. Never throws (a failure is logged; the lease then
   * expires by itself, `policy.leaseMs` after the claim).
   * @param attempted whether an attempt was recorded (it added 1 to the counter).
   */
  private async endLease<M>(channel: OutboxChannel<M>, claimed: Claimed, attempted: boolean): Promise<void> {
    const lease = claimed.lease;
    if (!lease) return;
    try {
      await releaseLease(this.db, channel, claimed.id, claimed.attempts + (attempted ? 1 : 0), lease.previous, lease.until);
    } catch (error) {
      this.logger.warn({ err: error, channel: channel.name, messageId: claimed.id }, "could not end a retry's lease (it expires by itself)");
    }
  }
}
