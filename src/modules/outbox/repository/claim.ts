/**
 * The claims of the outbox (docs/outbox.md "Claim and lease"): the round's claim, one statement
 * that picks the oldest due message of a channel, locks it with `FOR UPDATE SKIP LOCKED`
 * (concurrent claims take other messages) and leases it by moving its `next_attempt_at` ahead,
 * returning what the round needs; and the claim of one given message by hand (a retry endpoint).
 *
 * Cost: the pick is an index scan over the due messages only, in `next_attempt_at` order, that
 * stops at the first one it can lock. Messages that wait (a stream's later messages, messages of a
 * target that is gone) carry a far-future `next_attempt_at` (`WAITING_AT`, `PARKED_AT`) and lie
 * beyond the scan's bound, so a backlog of any size is not walked
 * (tests/integration/outbox-claim-plan.test.ts).
 */
import type { PreparedStatement, Sql, Tx } from "../../../db/sql.js";
import type { OutboxChannel, OutboxTable } from "../channel.js";
import { perChannel, statementName } from "./build.js";

/**
 * Which due messages a claim looks at: `due`, `next_attempt_at <= now()` (retries whose backoff
 * has passed, expired leases, and new messages of channels that write a time); `new`, a null
 * `next_attempt_at` (channels whose rows are written without one: due now, never attempted).
 */
export type ClaimBranch = "due" | "new";

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
 *   beyond it (a backoff of more than a lease still to run, `PARKED_AT`, `WAITING_AT`) or in the
 *   past (due) is not.
 *
 * A pending message whose backoff ends within `leaseMs` is counted as possibly leased: the two
 * cannot be told apart, and it is due within a lease anyway. `clock_timestamp()`, not `now()`: a
 * statement that waited for a claim's row lock compares that claim's lease with the time it
 * resumes, not with the start of its own transaction.
 * @param leaseMs the placeholder (`$n`) the statement binds the channel's `policy.leaseMs` to.
 * @throws Error when `leaseMs` is not a placeholder.
 */
export function mayHoldLease(table: OutboxTable, alias: string, leaseMs: string): string {
  if (!/^\$\d+$/.test(leaseMs)) throw new Error(`the lease must be a placeholder ($n), got ${leaseMs}`);
  const a = alias === "" ? "" : `${alias}.`;
  return `(${a}next_attempt_at is not null and ${a}next_attempt_at > clock_timestamp()
      and (${a}${table.status} <> 'pending' or ${a}next_attempt_at <= clock_timestamp() + interval '1 millisecond' * ${leaseMs}::float8))`;
}

/** The branches a round claims from, in order: due retries first, then never-attempted messages. */
export function claimBranches<M>(channel: OutboxChannel<M>): ClaimBranch[] {
  return channel.table.nullIsDue ? ["due", "new"] : ["due"];
}

/** The round's claim over `branch` (`$1` the lease, ms). */
function claimText(channel: OutboxChannel<unknown>, branch: ClaimBranch): string {
  const { table, stream } = channel;
  const conditions = [`m.${table.status} = 'pending'`, branch === "due" ? "m.next_attempt_at <= now()" : "m.next_attempt_at is null"];
  if (stream) {
    conditions.push(`m.${stream.order} = (select min(h.${stream.order}) from ${table.name} h where h.${stream.key} = m.${stream.key} and h.${table.status} = 'pending')`);
  }
  if (channel.claimable) conditions.push(channel.claimable);
  const returning = ["id", `${table.attempts} as attempts`, ...new Set([...(stream ? [stream.key] : []), ...(channel.returning ?? [])])];
  const touched = table.touched ? `, ${table.touched} = now()` : "";
  return `update ${table.name} set next_attempt_at = now() + interval '1 millisecond' * $1::float8${touched}
    where id = (
      select m.id from ${table.name} m
       where ${conditions.join("\n         and ")}
       order by m.next_attempt_at asc${table.nullIsDue ? " nulls first" : ""}
       limit 1
       for update of m skip locked)
    returning ${returning.join(", ")}`;
}

/** The claim statements of a channel, by branch (`outbox_<channel>_claim_due`, `…_claim_new`). */
export const claimStatements = perChannel((channel) => {
  const byBranch = new Map<ClaimBranch, PreparedStatement>();
  for (const branch of claimBranches(channel)) byBranch.set(branch, { name: statementName(channel, `claim_${branch}`), text: claimText(channel, branch) });
  return byBranch;
});

/**
 * The claim statement of `channel` over `branch` and its values: `update … where id = (select …
 * for update of m skip locked) returning id, attempts, …`. A stream channel only takes a stream's
 * head (its lowest pending message), which is the only due message of its stream.
 * @throws Error for `new` on a channel whose null `next_attempt_at` is not due.
 */
export function claimStatement<M>(channel: OutboxChannel<M>, branch: ClaimBranch): { statement: PreparedStatement; values: unknown[] } {
  const statement = claimStatements(channel).get(branch);
  if (!statement) throw new Error(`channel ${channel.name} has no null-due messages`);
  return { statement, values: [channel.policy.leaseMs] };
}

/**
 * Claims the oldest due message of `channel` in `branch` (one statement, autocommit on `sql`).
 * @returns its row (`id`, `attempts`, the stream key and the channel's `returning` columns), or
 *   undefined when none is due.
 */
export async function claimNext<M>(sql: Sql, channel: OutboxChannel<M>, branch: ClaimBranch): Promise<Record<string, unknown> | undefined> {
  const { statement, values } = claimStatement(channel, branch);
  const [row] = await sql.rows<Record<string, unknown>>(statement, values);
  return row;
}

/** The statements of a claim by hand: the row lock (`$1` id, `$2` customer, `$3` lease ms) and the lease (`$1` lease ms, `$2` id). */
export const manualStatements = perChannel((channel) => {
  const { table } = channel;
  const columns = [...new Set(channel.returning ?? [])];
  return {
    lock: {
      name: statementName(channel, "manual_lock"),
      text: `select ${table.attempts} as attempts, next_attempt_at, ${mayHoldLease(table, "", "$3")} as busy${columns.map((c) => `, ${c}`).join("")}
           from ${table.name} where id = $1 and customer_id = $2 for update`,
    },
    lease: {
      name: statementName(channel, "manual_lease"),
      text: `update ${table.name} set next_attempt_at = date_trunc('milliseconds', clock_timestamp()) + interval '1 millisecond' * $1::float8${table.touched ? `, ${table.touched} = now()` : ""}
          where id = $2 returning next_attempt_at`,
    },
  } satisfies Record<string, PreparedStatement>;
});

/**
 * Locks message `id` of tenant `customerId` in `tx` (`FOR UPDATE`), whatever its status.
 * @returns its attempts counter, `next_attempt_at`, whether it may be under a live lease
 *   ({@link mayHoldLease}) and the channel's `returning` columns; undefined when there is no such
 *   message.
 */
export async function lockMessage<M>(tx: Tx, channel: OutboxChannel<M>, id: string, customerId: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await tx.rows<Record<string, unknown>>(manualStatements(channel).lock, [id, customerId, channel.policy.leaseMs]);
  return row;
}

/** Leases message `id` in `tx` from now (millisecond precision) for the channel's `leaseMs`. @returns the lease's end. */
export async function leaseMessage<M>(tx: Tx, channel: OutboxChannel<M>, id: string): Promise<Date> {
  const [row] = await tx.rows<{ next_attempt_at: Date | string }>(manualStatements(channel).lease, [channel.policy.leaseMs, id]);
  if (!row) throw new Error(`message ${id} of channel ${channel.name} vanished under its row lock`);
  return new Date(row.next_attempt_at);
}
