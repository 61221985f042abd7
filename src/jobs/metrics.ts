/**
 * The background jobs' figure on `/metrics` (src/http/business-metrics.ts), read at scrape time
 * from Agenda's job table: how long the oldest due, unlocked run of each job has waited.
 */
import type { Db, PreparedStatement } from "../db/sql.js";

const JOB_LAG: PreparedStatement = {
  name: "metrics_job_lag",
  text: `select name, coalesce(extract(epoch from now() - min(next_run_at) filter (where next_run_at <= now() and locked_at is null)), 0)::float8 as lag
           from agenda_jobs where not coalesce(disabled, false) group by name`,
};

/** Each enabled job's lag, seconds: since the oldest due, unlocked run became due (0 when none is due). @throws the driver's error. */
export function jobLags(statements: Db): Promise<{ name: string; lag: number }[]> {
  return statements.rows<{ name: string; lag: number }>(JOB_LAG, []);
}
