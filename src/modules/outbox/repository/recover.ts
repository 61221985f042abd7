/**
 * The statements of a recover (src/modules/outbox/recover.ts; docs/outbox.md "Recovering missed
 * notifications"): the re-queue of a tenant's failed messages, and for a stream channel the mark
 * that keeps only each touched stream's head due. Built once per channel.
 */
import type { Tx } from "../../../db/sql.js";
import type { OutboxChannel } from "../channel.js";
import { dueNow, perChannel, statementName } from "./build.js";
import { mayHoldLease } from "./claim.js";

export const recoverStatements = perChannel((channel) => {
  const { table, stream } = channel;
  const leased = mayHoldLease(table, "", "$3");
  return {
    /**
     * `$1` `PARKED_AT`, `$2` `WAITING_AT`, `$3` the lease (ms), `$4` customer id, `$5` since,
     * `$6` the failed status, `$7` the disabled status.
     */
    requeue: {
      name: statementName(channel, "requeue"),
      text: `update ${table.name} set ${table.status} = 'pending', ${table.attempts} = 0,
        next_attempt_at = case when next_attempt_at in ($1, $2) or ${leased} then next_attempt_at else ${dueNow(channel)} end${table.touched ? `, ${table.touched} = now()` : ""}
      where customer_id = $4 and created_at >= $5
        and (${table.status} in ($6, $7) and not ${leased} or ${table.status} = 'pending' and ${table.attempts} > 0)
      returning id${stream ? `, ${stream.key} as stream_key` : ""}`,
    },
    /** `$1` `WAITING_AT`, `$2` the streams' keys (an array). */
    markWaiting: stream && {
      name: statementName(channel, "mark_waiting"),
      text: `update ${table.name} e set next_attempt_at = $1
        where e.${stream.key} = any($2)
          and e.${table.status} = 'pending'
          and e.next_attempt_at is distinct from $1
          and exists (select 1 from ${table.name} p
                       where p.${stream.key} = e.${stream.key} and p.${table.status} = 'pending' and p.${stream.order} < e.${stream.order})`,
    },
  };
});

/** The re-queue's values (docs: src/modules/outbox/recover.ts `requeueFailed`). */
export interface RequeueArgs {
  customerId: string;
  since: Date;
  parkedAt: Date;
  waitingAt: Date;
}

/**
 * Re-queues, in `tx`, tenant `customerId`'s messages of `channel` created at or after `since` whose
 * last attempt failed (src/modules/outbox/recover.ts `requeueFailed` says which and how).
 * @returns the re-queued messages' ids and, for a stream channel, their streams' keys.
 */
export async function requeueRows<M>(tx: Tx, channel: OutboxChannel<M>, a: RequeueArgs): Promise<{ id: string; stream_key?: unknown }[]> {
  const { statuses } = channel.table;
  return tx.rows(recoverStatements(channel).requeue, [a.parkedAt, a.waitingAt, channel.policy.leaseMs, a.customerId, a.since, statuses.failed, statuses.disabled]);
}

/**
 * Marks, in `tx`, every pending message of streams `keys` that has a lower pending message in its
 * stream with `waitingAt` (the insert trigger's rule, ./stream-order.ts). Nothing for a channel
 * without streams.
 */
export async function markStreamsWaiting<M>(tx: Tx, channel: OutboxChannel<M>, keys: readonly string[], waitingAt: Date): Promise<void> {
  const statement = recoverStatements(channel).markWaiting;
  if (statement && keys.length > 0) await tx.run(statement, [waitingAt, keys]);
}
