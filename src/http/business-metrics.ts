/**
 * Business metrics on `/metrics` (issue 11, "Observability"), read when Prometheus scrapes, never on
 * the request path:
 *
 * - `withdrawals{status}`: withdrawals by status (PENDING, COMPLETED, CANCELLED…);
 * - `outbox_backlog{outbox}` and `outbox_failed{outbox}`: messages waiting for delivery and
 *   messages given up on, for `email` (outbox_email), `webhook` (webhook_delivery) and
 *   `credit_notification` (credit_event);
 * - `job_lag_seconds{job}`: how long the oldest due, unlocked run of each Agenda job has waited
 *   (0 when none is due);
 * - `db_pool_connections{state}`: the pool's `total`, `idle` and `waiting` (requests queued for a
 *   connection);
 * - `credit_wallets_set_aside`: credit wallets set aside because their next cycle step would take
 *   an amount beyond ±(2^53 − 1) cents (docs/security.md "Money stays exact"); above 0 needs an
 *   operator's look.
 *
 * A scrape while the database is down leaves the database-backed gauges empty; the pool gauges
 * still answer.
 */
import type pg from "pg";
import { Gauge, type Registry } from "prom-client";
import type { Statements, PreparedStatement } from "../db/statements.js";

const WITHDRAWALS_BY_STATUS: PreparedStatement = {
  name: "metrics_withdrawals_by_status",
  text: `select status, count(*)::int as count from withdrawal group by status`,
};

/** Pending and given-up messages of each outbox, each count served by the table's status index. */
const OUTBOXES: PreparedStatement = {
  name: "metrics_outboxes",
  text: `select (select count(*) from outbox_email where status = 'pending')::int as email_pending,
                (select count(*) from outbox_email where status = 'failed')::int as email_failed,
                (select count(*) from webhook_delivery where status = 'pending')::int as webhook_pending,
                (select count(*) from webhook_delivery where status = 'failed')::int as webhook_failed,
                (select count(*) from credit_event where delivery_status = 'pending')::int as credit_notification_pending,
                (select count(*) from credit_event where delivery_status = 'failed')::int as credit_notification_failed`,
};

const JOB_LAG: PreparedStatement = {
  name: "metrics_job_lag",
  text: `select name, coalesce(extract(epoch from now() - min(next_run_at) filter (where next_run_at <= now() and locked_at is null)), 0)::float8 as lag
           from agenda_jobs where not coalesce(disabled, false) group by name`,
};

/** Credit wallets set aside, counted on the partial index of `set_aside_at`. */
const CREDIT_SET_ASIDE: PreparedStatement = {
  name: "metrics_credit_set_aside",
  text: `select count(*)::int as count from credit_wallet where set_aside_at is not null`,
};

/** Registers the business metrics on `registry`; `statements` run the reads, `pool` is the ORM's pool. */
export function registerBusinessMetrics(registry: Registry, statements: Statements, pool: pg.Pool): void {
  new Gauge({
    name: "withdrawals",
    help: "Withdrawals by status",
    labelNames: ["status"],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await statements.rows<{ status: string; count: number }>(WITHDRAWALS_BY_STATUS, []).catch(() => []);
      for (const row of rows) this.set({ status: row.status }, row.count);
    },
  });
  // Both outbox gauges come from one read per scrape (the promise is kept for a second).
  let outboxes: { at: number; read: Promise<Record<string, number> | undefined> } | undefined;
  const readOutboxes = (): Promise<Record<string, number> | undefined> => {
    if (!outboxes || Date.now() - outboxes.at > 1000) {
      outboxes = { at: Date.now(), read: statements.rows<Record<string, number>>(OUTBOXES, []).then((rows) => rows[0], () => undefined) };
    }
    return outboxes.read;
  };
  for (const [name, help, suffix] of [
    ["outbox_backlog", "Messages waiting for delivery, by outbox", "pending"],
    ["outbox_failed", "Messages given up on after their last attempt, by outbox", "failed"],
  ] as const) {
    new Gauge({
      name,
      help,
      labelNames: ["outbox"],
      registers: [registry],
      async collect() {
        this.reset();
        const row = await readOutboxes();
        if (!row) return;
        for (const outbox of ["email", "webhook", "credit_notification"]) this.set({ outbox }, row[`${outbox}_${suffix}`] ?? 0);
      },
    });
  }
  new Gauge({
    name: "job_lag_seconds",
    help: "Seconds the oldest due, unlocked run of each background job has waited (0 when none is due)",
    labelNames: ["job"],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await statements.rows<{ name: string; lag: number }>(JOB_LAG, []).catch(() => []);
      for (const row of rows) this.set({ job: row.name }, row.lag);
    },
  });
  new Gauge({
    name: "credit_wallets_set_aside",
    help: "Credit wallets set aside because their next cycle step would take an amount beyond 2^53 - 1 cents",
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await statements.rows<{ count: number }>(CREDIT_SET_ASIDE, []).catch(() => []);
      if (rows[0]) this.set(rows[0].count);
    },
  });
  new Gauge({
    name: "db_pool_connections",
    help: "Connections of the database pool: total, idle, and waiting requests",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      this.set({ state: "total" }, pool.totalCount);
      this.set({ state: "idle" }, pool.idleCount);
      this.set({ state: "waiting" }, pool.waitingCount);
    },
  });
}
