/**
 * Business metrics on `/metrics` (docs/operations.md "Observability"), read when Prometheus scrapes, never on
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
 *   operator's look;
 * - `chain_scan_lag_blocks{network}`: per live EVM network, blocks between the node's head (as last
 *   asked) and the highest block the follower processed (docs/decisions/live-chains.md "Deposits");
 * - `chain_pending_sends{network}`: per live network, its withdrawals' sends still open (`queued` or
 *   `broadcast`), and `chain_gas_wallet_balance{network}`: the gas wallet's native coin as the gas
 *   watcher last stored it, never asked of the node here (docs/decisions/live-chains.md "The operators' view").
 *
 * A scrape while the database is down leaves the database-backed gauges empty; the pool gauges
 * still answer. The SQL of each figure belongs to the module owning its table (the `metrics.ts` of
 * src/modules/withdrawals, outbox (for every channel's table), credit/accounts, chains, and
 * src/jobs/repository.ts); this file holds no SQL: it only registers the gauges.
 */
import type pg from "pg";
import { Gauge, type Registry } from "prom-client";
import type { Db } from "../db/sql.js";
import { jobLags } from "../jobs/repository.js";
import { scanLags } from "../modules/chains/repository.js";
import { gasBalances, pendingSendCounts } from "../modules/chains/repository/overview.js";
import { setAsideWalletCount } from "../modules/credit/accounts/metrics.js";
import { CREDIT_EVENT_TABLE } from "../modules/credit/notifications/channel.js";
import { MAIL_TABLE } from "../modules/mail/service.js";
import type { OutboxTable } from "../modules/outbox/channel.js";
import { outboxBacklog, type Backlog } from "../modules/outbox/metrics.js";
import { WEBHOOK_TABLE } from "../modules/webhooks/channel.js";
import { withdrawalsByStatus } from "../modules/withdrawals/repository.js";

/** Each outbox by its label, with its channel's table (counted by src/modules/outbox/metrics.ts). */
const OUTBOXES: Record<"email" | "webhook" | "credit_notification", OutboxTable> = {
  email: MAIL_TABLE,
  webhook: WEBHOOK_TABLE,
  credit_notification: CREDIT_EVENT_TABLE,
};

/**
 * Registers the business metrics on `registry`; each figure is read through the module owning its
 * table, on `statements`; `pool` is the ORM's pool.
 */
export function registerBusinessMetrics(registry: Registry, statements: Db, pool: pg.Pool): void {
  new Gauge({
    name: "withdrawals",
    help: "Withdrawals by status",
    labelNames: ["status"],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await withdrawalsByStatus(statements).catch(() => []);
      for (const row of rows) this.set({ status: row.status }, row.count);
    },
  });
  registerOutboxGauges(registry, statements);
  new Gauge({
    name: "job_lag_seconds",
    help: "Seconds the oldest due, unlocked run of each background job has waited (0 when none is due)",
    labelNames: ["job"],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await jobLags(statements).catch(() => []);
      for (const row of rows) this.set({ job: row.name }, row.lag);
    },
  });
  new Gauge({
    name: "credit_wallets_set_aside",
    help: "Credit wallets set aside because their next cycle step would take an amount beyond 2^53 - 1 cents",
    registers: [registry],
    async collect() {
      this.reset();
      const count = await setAsideWalletCount(statements).catch(() => undefined);
      if (count !== undefined) this.set(count);
    },
  });
  new Gauge({
    name: "chain_scan_lag_blocks",
    help: "Blocks between each live network's head and the highest block its follower processed",
    labelNames: ["network"],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await scanLags(statements).catch(() => []);
      for (const row of rows) this.set({ network: row.network }, row.lag);
    },
  });
  registerChainGauges(registry, statements);
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

/** `chain_pending_sends{network}` and `chain_gas_wallet_balance{network}`, read from the database (a network whose read failed is left out). */
function registerChainGauges(registry: Registry, statements: Db): void {
  new Gauge({
    name: "chain_pending_sends",
    help: "Sends of withdrawals on each live network still queued or broadcast",
    labelNames: ["network"],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await pendingSendCounts(statements).catch(() => []);
      for (const row of rows) this.set({ network: row.network }, row.count);
    },
  });
  new Gauge({
    name: "chain_gas_wallet_balance",
    help: "The gas wallet's native coin on each live network, as the gas watcher last asked it",
    labelNames: ["network"],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await gasBalances(statements).catch(() => []);
      for (const row of rows) this.set({ network: row.network }, row.balance);
    },
  });
}

/**
 * `outbox_backlog{outbox}` and `outbox_failed{outbox}`: both gauges come from one read of each
 * outbox per scrape (the promises are kept for a second); an outbox whose read failed is left out.
 */
function registerOutboxGauges(registry: Registry, statements: Db): void {
  let outboxes: { at: number; read: Promise<Partial<Record<keyof typeof OUTBOXES, Backlog>>> } | undefined;
  const readOutboxes = (): Promise<Partial<Record<keyof typeof OUTBOXES, Backlog>>> => {
    if (!outboxes || Date.now() - outboxes.at > 1000) {
      const reads = Object.entries(OUTBOXES).map(async ([outbox, table]) => [outbox, await outboxBacklog(statements, table).catch(() => undefined)] as const);
      outboxes = { at: Date.now(), read: Promise.all(reads).then((entries) => Object.fromEntries(entries.filter(([, backlog]) => backlog !== undefined))) };
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
        const counts = await readOutboxes();
        for (const [outbox, backlog] of Object.entries(counts)) this.set({ outbox }, backlog[suffix]);
      },
    });
  }
}
