/**
 * The claim of the outbox (docs/outbox.md "Claim and lease"): one statement that picks the oldest
 * due message of a channel, locks it with `FOR UPDATE SKIP LOCKED` (concurrent claims take other
 * messages) and leases it by moving its `next_attempt_at` ahead, returning what the round needs.
 *
 * Cost: the pick is an index scan over the due messages only, in `next_attempt_at` order, that
 * stops at the first one it can lock. Messages that wait (a stream's later messages, messages of a
 * target that is gone) carry a far-future `next_attempt_at` ({@link WAITING_AT}, {@link PARKED_AT})
 * and lie beyond the scan's bound, so a backlog of any size is not walked.
 */
import type { OutboxChannel, OutboxTable } from "./channel.js";

/**
 * Which due messages a claim looks at: `due`, `next_attempt_at <= now()` (retries whose backoff
 * has passed, expired leases, and new messages of channels that write a time); `new`, a null
 * `next_attempt_at` (channels whose rows are written without one: due now, never attempted).
 */
export type ClaimBranch = "due" | "new";

/** A claim statement with `?` placeholders (MikroORM's `execute`) and its parameters. */
export interface ClaimStatement {
  sql: string;
  params: unknown[];
}

/**
 * The claim statement of `channel` over `branch`: `update … where id = (select … for update of m
 * skip locked) returning id, attempts, …`. A stream channel only takes a stream's head (its lowest
 * pending message), which is the only due message of its stream.
 * @throws Error for `new` on a channel whose null `next_attempt_at` is not due.
 */
export function claimStatement<M>(channel: OutboxChannel<M>, branch: ClaimBranch): ClaimStatement {
  const { table, stream } = channel;
  if (branch === "new" && !table.nullIsDue) throw new Error(`channel ${channel.name} has no null-due messages`);
  const conditions = [`m.${table.status} = 'pending'`, branch === "due" ? "m.next_attempt_at <= now()" : "m.next_attempt_at is null"];
  if (stream) {
    conditions.push(`m.${stream.order} = (select min(h.${stream.order}) from ${table.name} h where h.${stream.key} = m.${stream.key} and h.${table.status} = 'pending')`);
  }
  if (channel.claimable) conditions.push(channel.claimable);
  const returning = ["id", `${table.attempts} as attempts`, ...new Set([...(stream ? [stream.key] : []), ...(channel.returning ?? [])])];
  const touched = table.touched ? `, ${table.touched} = now()` : "";
  const sql = `update ${table.name} set next_attempt_at = now() + (? * interval '1 millisecond')${touched}
    where id = (
      select m.id from ${table.name} m
       where ${conditions.join("\n         and ")}
       order by m.next_attempt_at asc${table.nullIsDue ? " nulls first" : ""}
       limit 1
       for update of m skip locked)
    returning ${returning.join(", ")}`;
  return { sql, params: [channel.policy.leaseMs] };
}

/** The branches a round claims from, in order: due retries first, then never-attempted messages. */
export function claimBranches<M>(channel: OutboxChannel<M>): ClaimBranch[] {
  return channel.table.nullIsDue ? ["due", "new"] : ["due"];
}

/**
 * SQL condition: the message aliased `alias` (empty for the bare table) may be under a live lease,
 * so that making it due, or attempting it by hand, could send it a second time while it is in
 * flight (docs/outbox.md "Claim and lease"). A lease is a `next_attempt_at` written as the claim's
 * time plus the channel's `leaseMs`, so a live one always lies in (now, now + `leaseMs`]:
 *
 * - an ended message (not `pending`; `next_attempt_at` is null once it ends, channels with
 *   `clearsNextAttempt`) is leased exactly when `next_attempt_at` is in the future: only a
 *   by-hand claim sets it there;
 * - a pending message is leased, or may be, when its `next_attempt_at` is in that window; one
 *   beyond it (a backoff of more than a lease still to run, {@link PARKED_AT}, {@link WAITING_AT})
 *   or in the past (due) is not.
 *
 * A pending message whose backoff ends within `leaseMs` is counted as possibly leased: the two
 * cannot be told apart, and it is due within a lease anyway. `clock_timestamp()`, not `now()`: a
 * statement that waited for a claim's row lock compares that claim's lease with the time it
 * resumes, not with the start of its own transaction.
 * @param leaseMs the channel's `policy.leaseMs`, a whole number of milliseconds (written inline).
 * @throws Error when `leaseMs` is not a non-negative integer.
 */
export function mayHoldLease(table: OutboxTable, alias: string, leaseMs: number): string {
  if (!Number.isInteger(leaseMs) || leaseMs < 0) throw new Error(`lease must be a whole number of milliseconds, got ${leaseMs}`);
  const a = alias === "" ? "" : `${alias}.`;
  return `(${a}next_attempt_at is not null and ${a}next_attempt_at > clock_timestamp()
      and (${a}${table.status} <> 'pending' or ${a}next_attempt_at <= clock_timestamp() + interval '${leaseMs} milliseconds'))`;
}
