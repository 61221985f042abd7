/**
 * What a channel of the outbox supplies (docs/outbox.md "Channels"): its table and how its rows
 * record status and attempts, its delivery policy (retry, lease, what a 410 does), the order of its
 * streams if any, and how to load, build, sign and send one message. The mechanism itself (claim,
 * lease, attempt record, retry, disable, stream order) is src/modules/outbox/outbox.ts, and its
 * statements over a channel's table (src/modules/outbox/repository/) are built once per channel
 * from the fixed identifiers below.
 */
import type { Sql, Tx } from "../../db/sql.js";
import type { RetryPolicy } from "../../domain/outbox.js";
import type { ChannelName } from "./entities.js";

/**
 * A channel's message table. Every such table has `id` (uuid), a status column whose pending value
 * is `pending`, an attempts counter and `next_attempt_at` (timestamptz: when a round may take the
 * message next, its lease while a round sends it, {@link PARKED_AT}/{@link WAITING_AT} while it
 * waits). Column names are fixed SQL identifiers of the channel, never input.
 */
export interface OutboxTable {
  /** The table (`outbox_email`, `webhook_delivery`, `credit_event`). */
  name: string;
  /** The status column (`status`, `delivery_status`). */
  status: string;
  /** The attempts column (`attempts`, `attempt_count`). */
  attempts: string;
  /** The status values a message ends with. */
  statuses: { succeeded: string; failed: string; disabled: string };
  /** Whether the counter counts the successful attempt too (webhook, credit) or only the failed ones (mail). */
  countsSuccess: boolean;
  /** Whether `next_attempt_at` becomes null once the message is no longer pending (nullable column). */
  clearsNextAttempt: boolean;
  /** Whether a null `next_attempt_at` means due now (credit events are written without it). */
  nullIsDue: boolean;
  /** A column set to now() by every claim (`updated_at`), if any. */
  touched?: string;
}

/**
 * The order of a channel's streams: messages with the same `key` go out one at a time in `order`
 * (the credit notifications: per `wallet_id`, by `sequence`). Only a stream's head (its lowest
 * pending message) is due; the others wait with {@link WAITING_AT}.
 */
export interface StreamOrder {
  /** Column naming the stream. */
  key: string;
  /** Column ordering the stream's messages (an integer, unique per stream). */
  order: string;
}

/** How a channel delivers: its retry policy, its lease, what HTTP 410 does, and how a round reacts to a failure. */
export interface DeliveryPolicy {
  retry: RetryPolicy;
  /** How long a claim keeps other rounds off a message, ms (at least once: a round that dies leaves it to expire). */
  leaseMs: number;
  /**
   * What HTTP 410 does to the message once the channel has disabled its target: `disable` ends it
   * (`disabled`, PIN webhook); `park` keeps it pending and parked until the target is enabled
   * again (credit notifications).
   */
  onGone: "disable" | "park";
  /** Whether a round stops at the first failed attempt (mail: the server is likely down). */
  stopRoundOnFailure: boolean;
}

/**
 * The lease a caller took on one given message to attempt it by hand (a retry endpoint,
 * `Outbox.claimMessage` in src/modules/outbox/outbox.ts; docs/outbox.md "Retry and disable"):
 * `until`, the `next_attempt_at` it wrote (millisecond precision, so it can be compared back);
 * `previous`, the `next_attempt_at` it replaced (a pending message's schedule, null for an ended one),
 * which the attempt puts back unless the message's state changed meanwhile.
 */
export interface ManualLease {
  until: Date;
  previous: Date | null;
}

/** A claimed message: its id, its attempts counter, and the columns the channel asked the claim to return. */
export interface Claimed {
  id: string;
  attempts: number;
  row: Record<string, unknown>;
  /** Set when the message was claimed by hand ({@link ManualLease}); unset for a round's claim. */
  lease?: ManualLease;
}

/** The outcome of one attempt, as a channel's transport reports it. Never thrown. */
export interface AttemptResult {
  /** The receiver's HTTP status; null when no HTTP answer came, and always for mail. */
  httpStatus: number | null;
  /** Why the attempt failed without an HTTP answer (timeout, refused target, SMTP error); null when none. */
  error: string | null;
  /** Milliseconds from the start of the attempt to its end. */
  durationMs: number;
  /** Nothing could be sent from the stored configuration and retrying cannot help: the message fails at once. */
  unsendable?: boolean;
  /** The answer's body (HTTP), for callers that show it; not stored. */
  body?: string;
}

/**
 * What a channel found for a claimed message: the message to send, or why none is sent:
 * `disable` ends it as `disabled` (its target or tenant is gone), `park` parks it until its target
 * is enabled (no attempt is recorded either way).
 */
export type Prepared<M> = { message: M } | { skip: "disable" | "park" };

/** How a message ends one delivery: what is written to its row. */
export type OutcomeKind = "succeeded" | "retry" | "failed" | "disabled" | "parked" | "manual";

/** A channel of the outbox. `M` is the message as the channel loads it for one attempt. */
export interface OutboxChannel<M> {
  readonly name: ChannelName;
  readonly table: OutboxTable;
  readonly policy: DeliveryPolicy;
  /** Ordered streams, if the channel has them. */
  readonly stream?: StreamOrder;
  /**
   * A further SQL condition on the claimed row (alias `m`), e.g. that its tenant has an enabled
   * target: a constant fragment from the channel module's repository, no value in it.
   */
  readonly claimable?: string;
  /** Columns of the row the claim returns besides `id` and the attempts counter (the stream key is added). */
  readonly returning?: readonly string[];
  /**
   * Loads what to send for a claimed message on `sql` (the pool: no transaction held), through the
   * channel module's repository. `manual`: an attempt asked for by a caller (a retry endpoint), not a round.
   */
  prepare(sql: Sql, claimed: Claimed, manual: boolean): Promise<Prepared<M>>;
  /** Builds, signs and sends the message. Never throws: a failure is in the result. */
  send(message: M): Promise<AttemptResult>;
  /** After HTTP 410, in the transaction `tx` that records the attempt: disables the message's target (repository statements). */
  disableTarget?(tx: Tx, claimed: Claimed, message: M): Promise<void>;
  /**
   * Further columns written with an outcome (mail: the text dropped, `sent_at`, `last_error`), by
   * column name. Its keys depend on `outcome` only: the outcome statements are built once from
   * `settledColumns(outcome, null)`.
   */
  settledColumns?(outcome: OutcomeKind, error: string | null): Record<string, unknown>;
}
