/**
 * The withdrawals' figure on `/metrics` (src/http/business-metrics.ts), read at scrape time, never
 * on the request path: withdrawals by status.
 */
import type { Db, PreparedStatement } from "../../db/sql.js";

const WITHDRAWALS_BY_STATUS: PreparedStatement = {
  name: "metrics_withdrawals_by_status",
  text: `select status, count(*)::int as count from withdrawal group by status`,
};

/** Withdrawals counted by status (`PENDING`, `COMPLETED`, `CANCELLED`…); statuses with none are absent. @throws the driver's error. */
export function withdrawalsByStatus(statements: Db): Promise<{ status: string; count: number }[]> {
  return statements.rows<{ status: string; count: number }>(WITHDRAWALS_BY_STATUS, []);
}
