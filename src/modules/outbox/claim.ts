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
import type { OutboxChannel } from "./channel.js";

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
