/**
 * What the outbox writes once a message was attempted (docs/outbox.md "Attempts", "Retry and
 * disable", "Order within a stream"): the attempt's `delivery_attempt` row, the message's new state
 * (one statement per outcome, built once per channel), the restarted counter a recover may have
 * left, the next message of a stream made due, the end of a by-hand lease; and a channel's backlog
 * for `/metrics`. The outbox owns `delivery_attempt`; the messages' tables belong to their channels'
 * modules (src/modules/mail/, src/modules/webhooks/, src/modules/credit/), whose delivery columns
 * (status, attempts counter, `next_attempt_at`, touched and settled columns) only these statements
 * and the claims write.
 */
import type { PreparedStatement, Sql, Tx } from "../../../db/sql.js";
import type { ChannelName } from "../entities.js";
import type { OutboxChannel, OutboxTable, OutcomeKind } from "../channel.js";
import { Params, dueNow, perChannel, statementName, type Bound } from "./build.js";

/** One attempt of a message, as `delivery_attempt` stores it. */
export interface AttemptRow {
  id: string;
  channel: ChannelName;
  messageId: string;
  attemptedAt: Date;
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
}

/** Inserts one attempt (`$1…$7`: id, channel, message id, attempted at, HTTP status, duration ms, error). */
export const INSERT_ATTEMPT: PreparedStatement = {
  name: "outbox_attempt_insert",
  text: `insert into delivery_attempt (id, channel, message_id, attempted_at, http_status, duration_ms, error)
         values ($1, $2, $3, $4, $5, $6, $7)`,
};

/** Records attempt `a` in `tx`. */
export async function insertAttempt(tx: Tx, a: AttemptRow): Promise<void> {
  await tx.run(INSERT_ATTEMPT, [a.id, a.channel, a.messageId, a.attemptedAt, a.httpStatus, a.durationMs, a.error]);
}

/** Outcomes whose verdict depends on the attempts counter: their record checks it did not move during the send. */
export const COUNTED: ReadonlySet<OutcomeKind> = new Set(["retry", "failed"]);

/**
 * The values of an outcome's statement: the message `id`; `guarded`, only while it is pending (and,
 * for {@link COUNTED} outcomes, while its counter is still `claimed`); `inc` 1 when an attempt was
 * made, else 0; `attempts` the counter judged (claimed + inc); `next` the `next_attempt_at` of a
 * `retry` or `parked` outcome; `settled` the channel's further columns (src/modules/outbox/channel.ts
 * `settledColumns`).
 */
export interface SettleArgs {
  id: string;
  guarded: boolean;
  claimed: number;
  inc: 0 | 1;
  attempts: number;
  next: Date | null;
  settled: Record<string, unknown>;
}

const OUTCOMES: readonly OutcomeKind[] = ["succeeded", "failed", "disabled", "parked", "retry", "manual"];

/** The `set` list of outcome `kind` on `t`, its values named in `p`. */
function settleSets(t: OutboxTable, kind: OutcomeKind, p: Params): string[] {
  const count = (): string => `${t.attempts} = ${t.attempts} + ${p.ref("inc")}::int`;
  // ends the schedule of a message the outcome ends (one a deletion or a 410 already ended keeps its own)
  const stop = t.clearsNextAttempt ? [`next_attempt_at = case when ${t.status} = 'pending' then null else next_attempt_at end`] : [];
  switch (kind) {
    case "succeeded":
      return [`${t.status} = ${p.ref("status")}`, ...(t.countsSuccess ? [count()] : []), ...(t.clearsNextAttempt ? ["next_attempt_at = null"] : [])];
    case "failed":
      return [...stop, `${t.status} = ${p.ref("status")}`, `${t.attempts} = ${p.ref("attempts")}`];
    case "disabled":
      return [...stop, `${t.status} = case when ${t.status} = 'pending' then ${p.ref("status")} else ${t.status} end`, count()];
    case "parked":
      return [`next_attempt_at = ${p.ref("next")}`, count()];
    case "retry":
      return [`${t.attempts} = ${p.ref("attempts")}`, `next_attempt_at = ${p.ref("next")}`];
    case "manual":
      return [count()];
  }
}

/** Values of an outcome's statement, flattened: {@link SettleArgs} with `status` and the settled columns as `settled.<column>`. */
type SettleValues = Record<string, unknown>;

/**
 * The outcome statements of a channel (`outbox_<channel>_settle_<kind>`): status, attempts counter,
 * next attempt and the channel's further columns (whose names `settledColumns(kind, null)` gives),
 * `where id = … [and guarded]`, `returning` nothing (the row count says whether it was written).
 */
export const settleStatements = perChannel((channel) => {
  const t = channel.table;
  const byKind = new Map<OutcomeKind, Bound<SettleValues>>();
  for (const kind of OUTCOMES) {
    const p = new Params();
    const where = [`id = ${p.ref("id")}`];
    const sets = settleSets(t, kind, p);
    for (const column of Object.keys(channel.settledColumns?.(kind, null) ?? {})) sets.push(`${column} = ${p.ref(`settled.${column}`)}`);
    where.push(`(not ${p.ref("guarded")}::boolean or ${t.status} = 'pending'${COUNTED.has(kind) ? ` and ${t.attempts} = ${p.ref("claimed")}` : ""})`);
    byKind.set(kind, p.bind(statementName(channel, `settle_${kind}`), `update ${t.name} set ${sets.join(", ")} where ${where.join(" and ")}`));
  }
  return byKind;
});

/**
 * Writes outcome `kind` to the message's row in `tx` (the values: {@link SettleArgs}). The status
 * written is the channel's for the outcome (`sent` for a delivered email).
 * @returns whether the row was written (false: a guard did not hold).
 */
export async function settleMessage<M>(tx: Tx, channel: OutboxChannel<M>, kind: OutcomeKind, args: SettleArgs): Promise<boolean> {
  const { statuses } = channel.table;
  const status = kind === "succeeded" ? statuses.succeeded : kind === "failed" ? statuses.failed : statuses.disabled;
  const bound = settleStatements(channel).get(kind)!;
  const values: SettleValues = { ...args, status };
  for (const [column, value] of Object.entries(args.settled)) values[`settled.${column}`] = value;
  return (await tx.run(bound.statement, bound.values(values))) > 0;
}

/** The other statements of a channel's record. */
export const recordStatements = perChannel((channel) => {
  const t = channel.table;
  const stream = channel.stream;
  return {
    /** `$1` id, `$2` claimed counter. */
    restarted: {
      name: statementName(channel, "restarted"),
      text: `select ${t.attempts} as attempts from ${t.name} where id = $1 and ${t.status} = 'pending' and ${t.attempts} <> $2 for update`,
    },
    /** `$1` the counter after the attempt, `$2` the schedule the lease replaced, `$3` id, `$4` the lease. */
    release: {
      name: statementName(channel, "release_lease"),
      text: `update ${t.name} set next_attempt_at = case when ${t.status} <> 'pending' then null when ${t.attempts} = $1 then $2::timestamptz else ${dueNow(channel)} end
          where id = $3 and next_attempt_at = $4`,
    },
    /** `$1` the stream's key, `$2` `WAITING_AT`. */
    promote: stream && {
      name: statementName(channel, "promote"),
      text: `update ${t.name} set next_attempt_at = ${dueNow(channel)}
        where id = (select h.id from ${t.name} h where h.${stream.key} = $1 and h.${t.status} = 'pending' order by h.${stream.order} limit 1)
          and next_attempt_at = $2`,
    },
  };
});

/**
 * The attempts counter of message `id` when a recover restarted it during the send: the message is
 * still pending and its counter is no longer `claimed` (locked in `tx` until the record commits).
 * Undefined otherwise (the message ended meanwhile, or nothing moved).
 */
export async function restartedCount<M>(tx: Tx, channel: OutboxChannel<M>, id: string, claimed: number): Promise<number | undefined> {
  const [row] = await tx.rows<{ attempts: number }>(recordStatements(channel).restarted, [id, claimed]);
  return row ? Number(row.attempts) : undefined;
}

/**
 * Ends the by-hand lease `until` of message `id` (autocommit on `sql`): an ended message's
 * `next_attempt_at` goes back to null; a pending one gets `previous` back while its counter is
 * `attempts`, else (a recover restarted it) it is due now. Only while the row still holds the lease.
 */
export async function releaseLease<M>(sql: Sql, channel: OutboxChannel<M>, id: string, attempts: number, previous: Date | null, until: Date): Promise<void> {
  await sql.run(recordStatements(channel).release, [attempts, previous, id, until]);
}

/**
 * Makes the next message of stream `key` due (its lowest pending message, if it waits with
 * `waitingAt`), in the transaction `tx` that ended the stream's head. Nothing for a channel without
 * streams.
 */
export async function promoteNext<M>(tx: Tx, channel: OutboxChannel<M>, key: unknown, waitingAt: Date): Promise<void> {
  const statement = recordStatements(channel).promote;
  if (statement) await tx.run(statement, [key, waitingAt]);
}

/** An outbox's counts: messages still to deliver and messages given up on after their last attempt. */
export interface Backlog {
  pending: number;
  failed: number;
}

/** The backlog statement of a table (`outbox_backlog_<table>`, `$1` the failed status), one per table. */
const backlogByTable = new Map<string, PreparedStatement>();

/**
 * The backlog of the outbox whose messages live in `table` (on `/metrics`: src/http/business-metrics.ts),
 * each count served by the table's status index. @throws the driver's error.
 */
export async function backlogOf(sql: Sql, table: OutboxTable): Promise<Backlog> {
  let statement = backlogByTable.get(table.name);
  if (!statement) {
    statement = {
      name: `outbox_backlog_${table.name}`,
      text: `select (select count(*) from ${table.name} where ${table.status} = 'pending')::int as pending,
                    (select count(*) from ${table.name} where ${table.status} = $1)::int as failed`,
    };
    backlogByTable.set(table.name, statement);
  }
  const [row] = await sql.rows<Backlog>(statement, [table.statuses.failed]);
  return row ?? { pending: 0, failed: 0 };
}
