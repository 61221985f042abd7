/**
 * The background jobs' statements (docs/architecture.md "Reaching the database"), on Agenda's job
 * table `agenda_jobs` (created by Agenda, src/jobs/scheduler.ts; one of the ORM's foreign tables,
 * src/db/orm.ts `FOREIGN_TABLES`): the figure `/metrics` shows of the jobs
 * (src/http/business-metrics.ts), read at scrape time: how long the oldest due, unlocked run of
 * each job has waited. Agenda itself writes the table through its own queries.
 */
import type { PreparedStatement, Sql } from "../db/sql.js";

/** Each enabled job's `name` and `lag` (seconds, float8): since its oldest due, unlocked run became due, 0 when none is due. */
export const JOB_LAG: PreparedStatement = {
  name: "jobs_lag",
  text: `select name, coalesce(extract(epoch from now() - min(next_run_at) filter (where next_run_at <= now() and locked_at is null)), 0)::float8 as lag
           from agenda_jobs where not coalesce(disabled, false) group by name`,
};

/** Each enabled job's lag, seconds: since the oldest due, unlocked run became due (0 when none is due). @throws the driver's error. */
export function jobLags(sql: Sql): Promise<{ name: string; lag: number }[]> {
  return sql.rows<{ name: string; lag: number }>(JOB_LAG, []);
}

/**
 * Announces a new or changed job on the LISTEN/NOTIFY channel `agenda_jobs` with the payload `$1`
 * (text, JSON; src/jobs/notification-channel.ts), bound apart from the text: no quoting of the payload.
 */
export const JOB_NOTIFY: PreparedStatement = {
  name: "jobs_notify",
  text: "select pg_notify('agenda_jobs', $1)",
};
