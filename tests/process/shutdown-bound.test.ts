/**
 * SIGTERM bounds the shutdown (docs/security.md "Shutdown"; docs/operations.md "Shutdown"): the real
 * service runs a long Advance Sandbox Clock (a tenant with many credit wallets seeded in the
 * database, years of daily closes: a long series of SQL statements; the call's own time budget
 * `CLOCK_MOVE_BUDGET_S` at its most) when it gets SIGTERM with `SHUTDOWN_TIMEOUT_S=1`. At the timeout the request's connection is cut, the statements still
 * running on the service's connections are cancelled (their transaction rolls back), the pools close,
 * the embedded PostgreSQL stops, and the process exits 0 — well before `SHUTDOWN_TIMEOUT_S` plus the
 * documented margin. Before, the process waited for the whole advance (minutes) and a SIGKILL then
 * left the embedded PostgreSQL running. Whatever was cut, the rows stay consistent: the clock never
 * shows an instant whose daily close has not run, no wallet is ahead of it, and all moved alike.
 *
 * Two modes: the embedded PostgreSQL (no postgres process of the DATA_DIR may remain; the rows are
 * read after starting it again), and `DATABASE_URL` (the server keeps running: the advance's
 * statement must not go on running on it after the exit).
 */
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createWallet } from "../../src/domain/credit/index.js";
import { MikroORM, ormConfig } from "../../src/db/orm.js";
import { ENTITIES } from "../../src/modules/entities.js";
import { createTestDatabase } from "../support/app.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";
import { insertProduct, persistWallet } from "../support/credit-seed.js";
import { Walk } from "../support/fixtures.js";
import { startPgProcess, type PgProcess } from "../support/pg-process.js";
import { alive, startService, type ServiceProcess } from "../support/service-process.js";
import { sleep, waitFor } from "../support/wait.js";

/** `SHUTDOWN_TIMEOUT_S` of the service under test. */
const TIMEOUT_S = 1;
/** A bound a correct shutdown cannot reach (`SHUTDOWN_TIMEOUT_S` + a 10 s margin, docs/operations.md "Shutdown"); the bug took minutes. */
const EXIT_BOUND_MS = (TIMEOUT_S + 15) * 1000;
/**
 * Wallets of the tenant: each daily close of the advance updates them all in one statement. Their
 * first cut is years away, so the advance emits no notification (whose cap would end the call early).
 */
const WALLETS = 1500;
const START = "2026-01-01T00:00:00.000Z";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

/** The parent PID of process `pid` (from /proc), or undefined once it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** The postmaster of an embedded PostgreSQL (from its lock file) and the processes it forked. */
function postgresProcesses(databaseDir: string): { postmaster: number; port: number; children: number[] } {
  const [pidLine, , , portLine] = readFileSync(join(databaseDir, "postmaster.pid"), "utf8").split("\n");
  const postmaster = Number(pidLine);
  const children = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => parentOf(pid) === postmaster);
  return { postmaster, port: Number(portLine), children };
}

/**
 * A tenant on its sandbox clock (at {@link START}) with {@link WALLETS} identical golden-product
 * wallets created at that instant, first cut in 2040: the tenant, its user and its clock through the API, the product and
 * the first wallet as the credit tests seed them, the others copied from it in one statement.
 */
async function seedTenant(service: ServiceProcess, databaseUrl: string): Promise<{ customerId: string; key: string }> {
  const walk = new Walk(service.base);
  const { customerId, key } = await walk.tenant(`sd-${randomUUID().slice(0, 8)}`);
  const user = await walk.user(key);
  const set = await fetch(`${service.base}/v2/sandbox/clock`, { method: "PUT", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify({ now: START }) });
  expect(set.status).toBe(200);
  const orm = await MikroORM.init(ormConfig(databaseUrl, ENTITIES, { pool: { min: 0, max: 1 } }));
  try {
    const em = orm.em.fork();
    const productId = await insertProduct(em, customerId, "100", GOLDEN_PRODUCT);
    const created = createWallet(GOLDEN_PRODUCT, { walletId: randomUUID(), createdAt: new Date(START), limit: 100000, firstCutDate: new Date("2040-01-31T00:00:00Z") });
    if (!created.ok) throw new Error(JSON.stringify(created));
    await persistWallet(em, { customerId, userId: user.user_id as string, productId, product: GOLDEN_PRODUCT }, created.value);
    const columns = (await em.execute<{ column_name: string }[]>(
      `select column_name from information_schema.columns where table_name = 'credit_wallet' and column_name <> 'wallet_id' order by ordinal_position`,
    )).map((c) => `"${c.column_name}"`);
    await em.execute(
      `insert into credit_wallet (wallet_id, ${columns.join(", ")}) select gen_random_uuid(), ${columns.map((c) => `w.${c}`).join(", ")}
       from credit_wallet w cross join generate_series(2, ?) where w.wallet_id = ?`,
      [WALLETS, created.value.walletId],
    );
  } finally {
    await orm.close(true);
  }
  return { customerId, key };
}

/** Runs `sql` once on `url`. */
async function query<R extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** Statements of the advance (they all touch credit_wallet) running on `url`'s database, other than this probe's. */
const ADVANCE_RUNNING = `select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()
  and state <> 'idle' and query ilike '%credit_wallet%'`;

/** Whether the tenant's clock row moved past {@link START}: a chunk of the advance committed. */
const CLOCK_MOVED = `select count(*)::int as n from credit_clock where customer_id = $1 and "now" > $2::timestamptz`;

/**
 * Starts a long advance, waits until its statements run and its first chunk committed, sends
 * SIGTERM, and returns how the request ended, the exit and the time from the signal to the exit
 * (bounded by {@link EXIT_BOUND_MS}).
 */
async function advanceThenSigterm(service: ServiceProcess, databaseUrl: string, customerId: string, key: string) {
  const advance = fetch(`${service.base}/v2/sandbox/clock/advance`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ days: 3650 }),
  }).then(
    async (res) => ({ status: res.status, body: await res.text().catch(() => "") }),
    (error: { cause?: { code?: string } }) => ({ error: error.cause?.code ?? String(error) }),
  );
  await waitFor("the advance's statements to run", async () => ((await query<{ n: number }>(databaseUrl, ADVANCE_RUNNING))[0]!.n > 0 ? true : undefined), 30_000);
  // Mid-way into the advance (the whole of it takes minutes): a first chunk committed, the next running.
  await waitFor("a first chunk of the advance to commit", async () => ((await query<{ n: number }>(databaseUrl, CLOCK_MOVED, [customerId, START]))[0]!.n > 0 ? true : undefined), 30_000);
  const signalled = Date.now();
  service.child.kill("SIGTERM");
  const exit = await Promise.race([service.exited, sleep(EXIT_BOUND_MS).then(() => "still running" as const)]);
  const tookMs = Date.now() - signalled;
  return { exit, tookMs, request: await Promise.race([advance, sleep(5_000).then(() => ({ error: "no end" }))]) };
}

/**
 * The tenant's rows after a cut advance: every wallet's last daily close is the clock's last 00:00
 * UTC after the wallets' creation (none when there is none), no wallet is ahead of the clock, and all
 * wallets are alike (the same daily-balance sum, last close, sequence and number of statements and
 * events). A move written in part (closes kept without the clock, or the clock without its closes)
 * breaks one of these.
 */
async function expectConsistent(databaseUrl: string, customerId: string): Promise<void> {
  const [row] = await query<Record<string, string | number>>(
    databaseUrl,
    `with per_wallet as (
       select w.wallet_id, w.as_of, w.last_close_at, w.sum_of_daily_balance, w.sequence, w.next_cut_at,
         (select count(*) from credit_statement x where x.wallet_id = w.wallet_id) as statements,
         (select count(*) from credit_event e where e.wallet_id = w.wallet_id) as events
       from credit_wallet w where w.customer_id = $1)
     select (select "now" from credit_clock where customer_id = $1) as clock, count(*)::int as wallets,
       count(distinct as_of)::int as as_ofs, min(as_of) as as_of, count(distinct coalesce(last_close_at, 'epoch'))::int as closes,
       count(distinct sum_of_daily_balance)::int as sums, count(distinct sequence)::int as sequences,
       count(distinct statements)::int as statement_counts, count(distinct events)::int as event_counts,
       count(*) filter (where next_cut_at <= as_of)::int as cuts_missed,
       count(*) filter (where as_of > (select "now" from credit_clock where customer_id = $1))::int as ahead,
       count(*) filter (where last_close_at is distinct from (select case when date_trunc('day', c."now", 'UTC') > $2::timestamptz
         then date_trunc('day', c."now", 'UTC') end from credit_clock c where c.customer_id = $1))::int as closes_off
     from per_wallet`,
    [customerId, START],
  );
  expect(row).toMatchObject({ wallets: WALLETS, as_ofs: 1, closes: 1, sums: 1, sequences: 1, statement_counts: 1, event_counts: 1, cuts_missed: 0, ahead: 0, closes_off: 0 });
}

describe("SIGTERM during a long clock advance", () => {
  it("embedded PostgreSQL: the advance is cut at SHUTDOWN_TIMEOUT_S, exit 0 within the bound, no postgres of the DATA_DIR left, rows consistent", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "shutdown-bound-"));
    // initdb runs as the unprivileged "postgres" user when the tests run as root: it must reach the folder.
    chmodSync(dataDir, 0o755);
    const databaseDir = join(dataDir, "pg");
    const started: { service?: ServiceProcess; restarted?: PgProcess } = {};
    cleanups.push(async () => {
      await started.restarted?.stop();
      await started.service?.stop("SIGKILL");
      if (existsSync(join(databaseDir, "postmaster.pid"))) {
        const pid = Number(readFileSync(join(databaseDir, "postmaster.pid"), "utf8").split("\n")[0]);
        if (alive(pid)) process.kill(pid, "SIGINT");
        await waitFor("the postgres left behind to stop", () => (alive(pid) ? undefined : true), 15_000);
      }
      rmSync(dataDir, { recursive: true, force: true });
    });
    const service = (started.service = await startService({ DATA_DIR: dataDir, DATABASE_URL: "", SHUTDOWN_TIMEOUT_S: String(TIMEOUT_S), RATE_LIMIT_IP: "off", CLOCK_MOVE_BUDGET_S: "60" }));
    const running = postgresProcesses(databaseDir);
    const password = readFileSync(join(dataDir, "pg-password"), "utf8").trim();
    const databaseUrl = `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${running.port}/platform`;
    const { customerId, key } = await seedTenant(service, databaseUrl);
    const processes = postgresProcesses(databaseDir);

    const { exit, tookMs, request } = await advanceThenSigterm(service, databaseUrl, customerId, key);
    const output = service.output();
    expect(exit, `exit within ${EXIT_BOUND_MS} ms of SIGTERM:\n${output.slice(-3000)}`).toEqual({ code: 0, signal: null });
    expect(request, "the cut request was not answered as if it had run").not.toMatchObject({ status: 200 });
    expect(output).toContain("cancelling the statements still running");
    expect(output).toContain('"msg":"stopped"');
    for (const pid of [processes.postmaster, ...processes.children]) expect(alive(pid), `postgres process ${pid} of the DATA_DIR`).toBe(false);
    expect(existsSync(join(databaseDir, "postmaster.pid")), "the lock file of a stopped server is gone").toBe(false);
    expect(tookMs).toBeLessThan(EXIT_BOUND_MS);

    const restarted = (started.restarted = await startPgProcess(dataDir));
    await expectConsistent(`${restarted.serverUrl}/platform`, customerId);
  }, 240_000);

  it("DATABASE_URL: the advance's statement is cancelled on the server, exit 0 within the bound, rows consistent", async () => {
    const db = await createTestDatabase();
    const started: { service?: ServiceProcess } = {};
    cleanups.push(async () => {
      await started.service?.stop("SIGKILL");
      await db.drop();
    });
    const service = (started.service = await startService({ DATABASE_URL: db.url, SHUTDOWN_TIMEOUT_S: String(TIMEOUT_S), RATE_LIMIT_IP: "off", CLOCK_MOVE_BUDGET_S: "60" }));
    const { customerId, key } = await seedTenant(service, db.url);
    // Another process's statement on the same database: the cut must leave it alone.
    const bystander = new pg.Client({ connectionString: db.url, application_name: "bystander" });
    await bystander.connect();
    cleanups.push(() => bystander.end());
    const sleeping = bystander.query("select pg_sleep(60)").then(() => "ended", (error: { code?: string }) => error.code);

    const { exit, tookMs, request } = await advanceThenSigterm(service, db.url, customerId, key);
    const output = service.output();
    expect(exit, `exit within ${EXIT_BOUND_MS} ms of SIGTERM:\n${output.slice(-3000)}`).toEqual({ code: 0, signal: null });
    expect(request, "the cut request was not answered as if it had run").not.toMatchObject({ status: 200 });
    expect(output).toContain("cancelling the statements still running");
    expect(tookMs).toBeLessThan(EXIT_BOUND_MS);
    // Not left running on the server after the exit (it would hold its row locks for minutes).
    await waitFor("no statement of the advance left on the server", async () => ((await query<{ n: number }>(db.url, ADVANCE_RUNNING))[0]!.n === 0 ? true : undefined), 5_000);
    await expectConsistent(db.url, customerId);
    const bystanders = await query<{ n: number }>(db.url, `select count(*)::int as n from pg_stat_activity where application_name = 'bystander' and state = 'active'`);
    expect(bystanders[0]!.n, "another process's statement still runs").toBe(1);
    await query(db.url, `select pg_cancel_backend(pid) from pg_stat_activity where application_name = 'bystander'`);
    expect(await sleeping).toBe("57014");
  }, 240_000);
});
