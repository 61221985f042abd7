/**
 * Pure rules of the outbox (docs/outbox.md): the retry policy of a channel (how many attempts, how
 * long between them), the lease a claim takes, and what an attempt's answer means (2xx ends the
 * delivery, HTTP 410 disables the target, anything else is retried). One definition for every
 * channel; a channel differs only by the numbers of its {@link RetryPolicy}. No I/O; randomness and
 * time are passed in.
 */

/**
 * How a channel retries a failed attempt. The wait before attempt n + 1 (after n failed attempts)
 * is `firstDelayMs` × `factor`^(n − 1), at most `maxDelayMs`, times a jitter factor drawn in
 * [1 − `jitter`, 1 + `jitter`). After `maxAttempts` failed attempts the message is given up
 * (`failed`). Durations in milliseconds.
 */
export interface RetryPolicy {
  /** Name shown in logs and docs (`notification`, `mail`). */
  readonly name: string;
  /** Attempts of a message before it is given up. */
  readonly maxAttempts: number;
  /** Wait after the first failed attempt, ms. */
  readonly firstDelayMs: number;
  /** Each next wait is this many times the previous one. */
  readonly factor: number;
  /** Longest wait between two attempts, ms. */
  readonly maxDelayMs: number;
  /** Relative spread of each wait: 0.2 draws it in [0.8, 1.2) of the computed wait; 0 for none. */
  readonly jitter: number;
}

/** Attempts of a notification (PIN webhook, credit notification) before it is `failed`: about three days with the default base. */
export const NOTIFICATION_MAX_ATTEMPTS = 17;
/** Longest wait between two attempts of a notification: 8 h. */
export const NOTIFICATION_MAX_DELAY_MS = 8 * 3600_000;

/**
 * The retry policy of the outgoing notifications, the PIN webhook and the credit notifications
 * (docs/decisions/notifications.md): `baseMs` × 3^(n − 1), at most 8 h, ±20 % jitter, 17 attempts.
 * With the default base of 5 s (`WEBHOOK_RETRY_BASE_S`): 5 s, 15 s, 45 s, 2¼ min, 7 min, 20 min,
 * 1 h, 3 h, then 8 h; the 17th attempt comes about three days after the first.
 * @param baseMs the first wait (`WEBHOOK_RETRY_BASE_S` × 1000).
 */
export function notificationRetryPolicy(baseMs: number): RetryPolicy {
  return { name: "notification", maxAttempts: NOTIFICATION_MAX_ATTEMPTS, firstDelayMs: baseMs, factor: 3, maxDelayMs: NOTIFICATION_MAX_DELAY_MS, jitter: 0.2 };
}

/**
 * The retry policy of the email outbox (docs/decisions/withdrawals.md "How a code reaches the
 * user"): 15 s doubling, at most 30 min, no jitter, 10 attempts (about an hour and a half).
 */
export const MAIL_RETRY_POLICY: RetryPolicy = {
  name: "mail",
  maxAttempts: 10,
  firstDelayMs: 15_000,
  factor: 2,
  maxDelayMs: 30 * 60_000,
  jitter: 0,
};

/**
 * Wait before attempt `failedAttempts + 1` under `policy`, milliseconds, rounded to the millisecond
 * (see {@link RetryPolicy}).
 * @param failedAttempts attempts that failed so far (1 after the first failure).
 * @param random a number in [0, 1) choosing the jitter (ignored when the policy has none).
 */
export function retryDelayMs(policy: RetryPolicy, failedAttempts: number, random: number): number {
  const exponential = Math.min(policy.firstDelayMs * policy.factor ** Math.max(0, failedAttempts - 1), policy.maxDelayMs);
  return Math.round(exponential * (1 - policy.jitter + 2 * policy.jitter * random));
}

/** Whether a message that has now failed `failedAttempts` times is given up under `policy`. */
export function givesUp(policy: RetryPolicy, failedAttempts: number): boolean {
  return failedAttempts >= policy.maxAttempts;
}

/**
 * How long a claimed notification stays leased to the round that sends it, milliseconds: three
 * times the attempt's timeout plus 5 s. A round that dies mid-send (crash, SIGKILL) leaves the lease
 * to expire; the next round then sends the message again with the same `webhook-id` (at least once,
 * docs/outbox.md).
 * @param timeoutMs bound of one attempt (`WEBHOOK_TIMEOUT_S` × 1000).
 */
export function deliveryLeaseMs(timeoutMs: number): number {
  return timeoutMs * 3 + 5000;
}

/** How long a claimed email stays leased to the round that sends it: 2 min. */
export const MAIL_LEASE_MS = 120_000;

/** What an attempt's HTTP answer means for the message (docs/outbox.md "Retry and disable"). */
export type AttemptVerdict = "succeeded" | "disable" | "retry";

/** 2xx ends the delivery, 410 disables the target, anything else (3xx included: redirects are not followed, no answer) is retried. */
export function judgeAttempt(httpStatus: number | null): AttemptVerdict {
  if (httpStatus !== null && httpStatus >= 200 && httpStatus < 300) return "succeeded";
  if (httpStatus === 410) return "disable";
  return "retry";
}

/**
 * `next_attempt_at` of a pending message that waits for its target (none registered, or disabled
 * by an HTTP 410): a far-future instant, so no claim walks over it. Only a stream's head is parked;
 * registering or enabling the target sets it back to due (docs/outbox.md "Parked and waiting").
 */
export const PARKED_AT = new Date("9999-01-01T00:00:00Z");

/**
 * `next_attempt_at` of a pending message of an ordered stream that waits for an earlier message of
 * its stream (it is not the stream's head): a far-future instant after {@link PARKED_AT}, so no
 * claim walks over it. Set when the message is written behind a pending one; cleared (due now) when
 * the message before it ends (docs/outbox.md "Order within a stream").
 */
export const WAITING_AT = new Date("9999-12-31T00:00:00Z");
