/**
 * A worker process for the job tests (tests/process/jobs-workers.test.ts): the service's own
 * scheduler (src/jobs/scheduler.ts) on `DATABASE_URL`, with one test job, `test.record`, whose body
 * records each run in the test-only table `job_runs` (`started`, then `finished` after `sleepMs`).
 * Prints `ready` once it runs jobs; on SIGTERM it drains (running jobs finish) and exits 0.
 * Environment: DATABASE_URL, WORKER_NAME, LOCK_LIFETIME_MS.
 */
import pg from "pg";
import { pino } from "pino";
import { JobScheduler } from "../../src/jobs/scheduler.js";

const databaseUrl = process.env.DATABASE_URL as string;
const name = process.env.WORKER_NAME ?? `worker-${process.pid}`;
const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
const scheduler = new JobScheduler({
  databaseUrl,
  name,
  lockLifetimeMs: Number(process.env.LOCK_LIFETIME_MS ?? 5000),
  processEveryMs: 200,
  logger: pino({ level: "silent" }),
});
scheduler.define<{ key: string; sleepMs?: number }>("test.record", async ({ key, sleepMs }) => {
  await pool.query(`insert into job_runs (job_key, worker, phase) values ($1, $2, 'started')`, [key, name]);
  if (sleepMs) await new Promise((r) => setTimeout(r, sleepMs));
  await pool.query(`insert into job_runs (job_key, worker, phase) values ($1, $2, 'finished')`, [key, name]);
});
await scheduler.start(true);
process.stdout.write("ready\n");
process.on("SIGTERM", () => {
  void (async () => {
    await scheduler.close(10_000);
    await pool.end();
    // Agenda's lock timers may keep the loop alive up to the lock lifetime (versions.md): exit now.
    process.exit(0);
  })();
});
