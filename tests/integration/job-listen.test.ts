/**
 * The job scheduler's LISTEN session (src/jobs/notification-channel.ts; docs/operations.md
 * "Database waits"): when it is lost it reconnects with a backoff, each outage is logged once when
 * it starts and once when it ends however many attempts it takes, and counted
 * (`job_listen_outages_total` on `/metrics`); new jobs are announced again afterwards.
 */
import pg from "pg";
import pino from "pino";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobScheduler } from "../../src/jobs/scheduler.js";
import { useTestApp } from "../support/app.js";
import { TcpRelay } from "../support/tcp-relay.js";
import { sleep, waitFor } from "../support/wait.js";

const app = useTestApp();
let admin: pg.Client;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: app.databaseUrl });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
});

/** The pids of this database's sessions listening for new jobs. */
async function jobListeners(): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>("select pid from pg_stat_activity where datname = current_database() and query = 'LISTEN agenda_jobs' order by pid");
  return rows.map((r) => r.pid);
}

/** The value of metric `name` on the app's `/metrics`. */
async function metric(name: string): Promise<number> {
  const res = await request(app.express).get("/metrics");
  expect(res.status).toBe(200);
  const line = res.text.split("\n").find((l) => l.startsWith(`${name} `));
  expect(line, name).toBeDefined();
  return Number(line?.split(" ")[1]);
}

type Line = { msg: string; level: number };

describe("the app's job notification channel", () => {
  it("reconnects after its session is terminated, counts the outage once, and announces new jobs again", { timeout: 20_000 }, async () => {
    const [before] = await waitFor("the scheduler's LISTEN session", async () => ((await jobListeners()).length === 1 ? jobListeners() : undefined));
    expect(await metric("job_listen_up")).toBe(1);
    expect(await metric("job_listen_outages_total")).toBe(0);

    await admin.query("select pg_terminate_backend($1)", [before]);
    const [after] = await waitFor("a new LISTEN session", async () => {
      const pids = await jobListeners();
      return pids.length === 1 && pids[0] !== before ? pids : undefined;
    });
    expect(after).not.toBe(before);
    await waitFor("the channel up", () => (app.scheduler.listenUp ? true : undefined));
    expect(await metric("job_listen_outages_total")).toBe(1);
    expect(await metric("job_listen_up")).toBe(1);

    // a NOTIFY on the channel reaches this process again
    const heard = new Promise<void>((done) => app.scheduler.agenda.once("start:test.listen-probe", () => done()));
    app.scheduler.define("test.listen-probe", async () => {});
    await app.scheduler.now("test.listen-probe");
    await heard;
  });
});

describe("a longer outage", () => {
  it("logs it once when it starts and once when it ends, however many attempts it takes, with no line per attempt", { timeout: 20_000 }, async () => {
    const relay = TcpRelay.to(app.databaseUrl);
    await relay.open();
    const lines: Line[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
    const scheduler = new JobScheduler({ databaseUrl: relay.url(app.databaseUrl), lockLifetimeMs: 10_000, databaseWaitS: 2, listenBackoff: { firstMs: 50, maxMs: 200 }, logger });
    try {
      await scheduler.start(false);
      await waitFor("the channel up", () => (scheduler.listenUp ? true : undefined));
      await relay.cut();
      await waitFor("the channel down", () => (scheduler.listenUp ? undefined : true));
      await sleep(1_500); // refused attempts at 50, 100, 200, 200, … ms
      await relay.open();
      await waitFor("the channel back", () => (scheduler.listenUp ? true : undefined), 5_000);

      expect(scheduler.listenOutages).toBe(1);
      const lost = lines.filter((l) => l.msg.startsWith("job notification channel lost"));
      const back = lines.filter((l) => l.msg.startsWith("job notification channel back"));
      expect([lost.length, back.length]).toEqual([1, 1]);
      expect(lost[0]?.level).toBe(40);
      expect(back[0]?.level).toBe(30);
      expect(lines.filter((l) => l.msg.startsWith("job notification channel error"))).toEqual([]);
    } finally {
      await scheduler.close(0);
      await relay.close();
    }
  });
});
