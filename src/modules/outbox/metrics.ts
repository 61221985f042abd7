/**
 * An outbox channel's figures on `/metrics` (src/http/business-metrics.ts, docs/outbox.md), read at
 * scrape time from the channel's own table: messages waiting for delivery and messages given up
 * on, each count served by the table's status index.
 */
import type { Db, PreparedStatement } from "../../db/sql.js";
import type { OutboxTable } from "./channel.js";

/** An outbox's counts: messages still to deliver and messages given up on after their last attempt. */
export interface Backlog {
  pending: number;
  failed: number;
}

/** One prepared statement per table (the table and column names are the channels' fixed identifiers). */
const statementsByTable = new Map<string, PreparedStatement>();

function backlogStatement(table: OutboxTable): PreparedStatement {
  let statement = statementsByTable.get(table.name);
  if (!statement) {
    statement = {
      name: `metrics_outbox_${table.name}`,
      text: `select (select count(*) from ${table.name} where ${table.status} = 'pending')::int as pending,
                    (select count(*) from ${table.name} where ${table.status} = '${table.statuses.failed}')::int as failed`,
    };
    statementsByTable.set(table.name, statement);
  }
  return statement;
}

/** The backlog of the outbox whose messages live in `table`. @throws the driver's error. */
export async function outboxBacklog(statements: Db, table: OutboxTable): Promise<Backlog> {
  const [row] = await statements.rows<Backlog>(backlogStatement(table), []);
  return row ?? { pending: 0, failed: 0 };
}
