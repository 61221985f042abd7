/**
 * An outbox channel's figures on `/metrics` (src/http/business-metrics.ts, docs/outbox.md), read at
 * scrape time from the channel's own table: messages waiting for delivery and messages given up
 * on (the statement: ./repository/record.ts `backlogOf`).
 */
import type { Db } from "../../db/sql.js";
import type { OutboxTable } from "./channel.js";
import { backlogOf, type Backlog } from "./repository/record.js";

export type { Backlog } from "./repository/record.js";

/** The backlog of the outbox whose messages live in `table`. @throws the driver's error. */
export function outboxBacklog(statements: Db, table: OutboxTable): Promise<Backlog> {
  return backlogOf(statements, table);
}
