/**
 * Background jobs across processes (src/jobs/scheduler.ts; docs/decisions/surfaces-and-process.md "Roles and background jobs"): two worker
 * processes on one database run each due job exactly once; a job whose worker is killed with
 * SIGKILL is taken by the other once its lock has expired; SIGTERM lets a running job finish and
 * starts no new one. The workers are real child processes (tests/support/job-worker.ts) running the
 * service's scheduler against a real PostgreSQL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { JobScheduler } from "../../src/jobs/scheduler.js";
import { initORM } from "../../src/db/orm.js";
import { ENTITIES } from "../../src/modules/entities.js";
import { createTestDatabase } from "../support/app.js";
import { sleep, waitFor } from "../support/wait.js";

const ROOT = resolve(import.meta.dirname, "../..");
const LOCK_LIFETIME_MS = 3_000;

let db: { url: string; drop(): Promise<void> };
let pool: pg.Pool;
let producer: JobScheduler;
const workers: ChildProcess[] = [];

/** Starts a worker process and waits for its `ready`. */
async function worker(name: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "tests/support/job-worker.ts"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: db.url, WORKER_NAME: name, LOCK_LIFETIME_MS: String(LOCK_LIFETIME_MS) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  workers.push(child);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  await Promise.race([
    once(lines, "line"),
    once(child, "exit").then(([code]) => {
      throw new Error(`worker ${name} exited early (${String(code)})`);
    }),
  ]);
  return child;
}

async function stopAll(signal: NodeJS.Signals): Promise<void> {
  await Promise.all(
    workers.splice(0).map(async (w) => {
      if (w.exitCode !== null || w.signalCode !== null) return;
      const exited = once(w, "exit");
      w.kill(signal);
      await exited;
    }),
  );
}

type Run = { job_key: string; worker: string; phase: string; at: Date };
const runs = async (): Promise<Run[]> => (await pool.query<Run>(`select job_key, worker, phase, at from job_runs order by at, id`)).rows;

beforeAll(async () => {
  db = await createTestDatabase();
  const orm = await initORM(db.url, ENTITIES); // the job table comes from the committed migration
  await orm.close(true);
  pool = new pg.Pool({ connectionString: db.url });
  await pool.query(`create table job_runs (id serial primary key, job_key text not null, worker text not null, phase text not null, at timestamptz not null default clock_timestamp())`);
  producer = new JobScheduler({ databaseUrl: db.url, lockLifetimeMs: LOCK_LIFETIME_MS, logger: pino({ level: "silent" }) });
  await producer.start(false);
});
afterEach(async () => {
  await stopAll("SIGKILL");
  await pool.query(`truncate job_runs`);
  await pool.query(`delete from agenda_jobs`);
});
afterAll(async () => {
  await producer?.close(0);
  await pool?.end();
  await db?.drop();
});

describe("jobs on two worker processes", () => {
  it("run each due job exactly once", async () => {
    await Promise.all([worker("a"), worker("b")]);
    const keys = Array.from({ length: 60 }, (_, i) => `job-${i}`);
    // half due now, half due in one second; each sleeps a little so both workers get some
    await Promise.all(keys.map((key, i) => (i % 2 === 0
      ? producer.now("test.record", { key, sleepMs: 20 })
      : producer.agenda.schedule(new Date(Date.now() + 1_000), "test.record", { key, sleepMs: 20 }))));
    const done = await waitFor("60 finished runs", async () => {
      const rows = (await runs()).filter((r) => r.phase === "finished");
      return rows.length >= 60 ? rows : undefined;
    }, 30_000);
    await sleep(1_500); // a second run of any job would show up here
    const all = await runs();
    const started = all.filter((r) => r.phase === "started");
    expect(started).toHaveLength(60);
    expect(new Set(started.map((r) => r.job_key)).size).toBe(60);
    expect(done).toHaveLength(60);
    // Both workers took part. With 60 jobs of 20 ms each and per-worker concurrency 5, one worker
    // alone would need several rounds while the other idles: not a chance outcome here.
    expect(new Set(started.map((r) => r.worker))).toEqual(new Set(["a", "b"]));
  }, 60_000);

  it("a job whose worker is killed with SIGKILL is taken by the other once its lock expired", async () => {
    const a = await worker("a");
    await producer.now("test.record", { key: "long", sleepMs: 60_000 });
    await waitFor("worker a to start the job", async () => ((await runs()).some((r) => r.worker === "a" && r.phase === "started") ? true : undefined), 10_000);
    const exited = once(a, "exit");
    a.kill("SIGKILL");
    await exited;
    const killedAt = Date.now();
    await worker("b");
    // worker b re-runs it (its body sleeps 60 s, so "started" is what shows it was taken)
    const taken = await waitFor("worker b to take the job", async () => (await runs()).find((r) => r.worker === "b" && r.phase === "started"), 20_000);
    expect(taken.job_key).toBe("long");
    const firstStart = (await runs()).find((r) => r.worker === "a")!;
    // a's "started" row is written when its job body begins, some time after Agenda locked the job (on a
    // loaded machine up to a few hundred ms), so the gap measured from it understates the lock's age
    expect(taken.at.getTime() - firstStart.at.getTime()).toBeGreaterThanOrEqual(LOCK_LIFETIME_MS - 500);
    expect(Date.now() - killedAt).toBeLessThan(20_000);
  }, 60_000);

  it("SIGTERM lets the running job finish, starts no new one, and exits 0", async () => {
    const a = await worker("a");
    await producer.now("test.record", { key: "running", sleepMs: 1_500 });
    await waitFor("the job to start", async () => ((await runs()).some((r) => r.phase === "started") ? true : undefined), 10_000);
    const exited = once(a, "exit");
    const signalledAt = Date.now();
    a.kill("SIGTERM");
    await producer.agenda.schedule(new Date(Date.now() + 300), "test.record", { key: "after-signal" });
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    // it waited for the job (1.5 s), not for the 10 s bound
    expect(Date.now() - signalledAt).toBeLessThan(5_000);
    const all = await runs();
    expect(all.filter((r) => r.job_key === "running").map((r) => r.phase)).toEqual(["started", "finished"]);
    await sleep(700);
    expect((await runs()).filter((r) => r.job_key === "after-signal")).toEqual([]);
  }, 60_000);
});
