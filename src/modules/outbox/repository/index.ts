/**
 * The outbox's repository (docs/architecture.md "Reaching the database"; docs/outbox.md): the
 * statements of the delivery mechanism over a channel's table, built once per channel from its
 * fixed identifiers (./build.ts), and `delivery_attempt`, the outbox's own table.
 *
 * - ./claim.ts: the round's claim and the claim by hand (lease);
 * - ./record.ts: the attempt record, the outcome, the end of a by-hand lease, a stream's next
 *   message, the backlog on `/metrics`;
 * - ./recover.ts: the re-queue of a recover;
 * - ./stream-order.ts: the DDL of a stream table's ordering trigger.
 */
import type { PreparedStatement } from "../../../db/sql.js";
import type { OutboxChannel } from "../channel.js";
import { claimStatements, manualStatements } from "./claim.js";
import { INSERT_ATTEMPT, recordStatements, settleStatements } from "./record.js";
import { recoverStatements } from "./recover.js";

/** Every statement of the outbox over `channel` (its claims, outcomes, lease, recover), and the attempt record: for the checks of statement names and texts. */
export function outboxStatements<M>(channel: OutboxChannel<M>): PreparedStatement[] {
  const recorded = recordStatements(channel);
  const recovered = recoverStatements(channel);
  const all: (PreparedStatement | undefined)[] = [
    ...claimStatements(channel).values(),
    ...(!channel.stream && channel.table.clearsNextAttempt ? Object.values(manualStatements(channel)) : []),
    ...[...settleStatements(channel).values()].map((bound) => bound.statement),
    recorded.restarted,
    recorded.release,
    recorded.promote,
    recovered.requeue,
    recovered.markWaiting,
    INSERT_ATTEMPT,
  ];
  return all.filter((s): s is PreparedStatement => s !== undefined);
}
