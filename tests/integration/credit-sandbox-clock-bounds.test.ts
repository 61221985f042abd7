/**
 * The sandbox clock's bounds (docs/security.md "The sandbox clock"): a call moves the clock at most
 * 3660 days forward whichever form it takes (`days`, `to`, Set `now`; beyond that 422 on the field);
 * the calls of one tenant queue in the process without a database connection each; a move runs in
 * chunks that each commit the steps and the clock together and stops when its time budget is spent,
 * answering where the clock stopped (`complete: false`, `target`), so calling again with `to` =
 * `target` finishes it with the same result as one uninterrupted move. Behaviour is asserted (the
 * pool's waiting requests, lock waits, answers while a move is in progress), never wall time.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { advance, charge, createWallet, notificationPayload, type CreditProductRules, type Outcome, type WalletState } from "../../src/domain/credit/index.js";
import type { DomainError } from "../../src/domain/errors.js";
import { SandboxClockService, type CreditNotificationView } from "../../src/modules/credit/clock/service.js";
import { useTestApp, type TestApp } from "../support/app.js";
import { Db } from "../../src/db/sql.js";
import { insertProduct, loadWallet, persistWallet } from "../support/credit-seed.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";
import { Walk } from "../support/fixtures.js";
import { waitFor } from "../support/wait.js";

const t = useTestApp();

/** A `Db` on the test app's pool, as src/app.ts builds the service's (src/db/sql.ts). */
async function statementsOf(orm: TestApp["orm"]): Promise<Db> {
  return new Db(await orm.em.getConnection().getNativeClient(), { named: true });
}
let seq = 0;

const CLOCK = "/v2/sandbox/clock";
const DAY = 86_400_000;
const api = t.api;
const em = () => t.orm.em.fork();
const D = (iso: string): Date => new Date(iso);

/** Yearly cuts: a wallet emits a few notifications a year, so a long move is many daily closes. */
const YEARLY: CreditProductRules = { ...GOLDEN_PRODUCT, cutFrequency: "year" };

function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`engine refused: ${JSON.stringify(o)}`);
  return o.value;
}

/** A tenant with an owner key and a user, its clock set to `now`. */
async function tenant(now = "2026-01-01T00:00:00Z"): Promise<{ customerId: string; key: string; userId: string }> {
  const walk = new Walk(t.express);
  const { customerId, key } = await walk.tenant(`scb-${++seq}-${Date.now().toString(36)}`);
  const user = await walk.user(key);
  const set = await api().put(CLOCK).set("x-api-key", key).send({ now });
  expect(set.status, JSON.stringify(set.body)).toBe(200);
  return { customerId, key, userId: user.user_id as string };
}

/** `count` copies of one charged wallet of `product` created 2026-01-01 (first cut one period later), inserted in one statement. */
async function wallets(tn: { customerId: string; userId: string }, product: CreditProductRules, count: number): Promise<WalletState> {
  const productId = await insertProduct(em(), tn.customerId, "100", product);
  const created = ok(createWallet(product, { walletId: randomUUID(), createdAt: D("2026-01-01T00:00:00Z"), limit: 100000 }));
  const charged = ok(charge(created, product, D("2026-01-01T00:00:00Z"), 30000)).state;
  await persistWallet(em(), { customerId: tn.customerId, userId: tn.userId, productId, product }, charged);
  if (count > 1) {
    const cols = (await em().execute<{ column_name: string }[]>(
      `select column_name from information_schema.columns where table_name = 'credit_wallet' and column_name <> 'wallet_id' and table_schema = current_schema()`,
    )).map((c) => `"${c.column_name}"`).join(", ");
    await em().execute(`insert into credit_wallet (wallet_id, ${cols}) select gen_random_uuid(), ${cols} from credit_wallet, generate_series(2, ?) where wallet_id = ?`, [count, charged.walletId]);
  }
  return charged;
}

/** Whether the tenant's clock is consistent: every wallet's `as_of` is the clock and no step is due at or before it. */
async function consistent(customerId: string): Promise<{ clock: string; behind: number; dueBefore: number }> {
  const [row] = await em().execute<{ clock: Date | string; behind: string; due: string }[]>(
    `select c."now" as clock,
       (select count(*) from credit_wallet w where w.customer_id = c.customer_id and w.as_of <> c."now") as behind,
       (select count(*) from credit_wallet w where w.customer_id = c.customer_id and (w.next_cut_at <= c."now"
          or date_trunc('day', w.as_of, 'UTC') + interval '1 day' <= c."now"
          or exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.interest_applied_at is null and x.payment_due_date <= c."now"))) as due
     from credit_clock c where c.customer_id = ?`,
    [customerId],
  );
  return { clock: new Date(row!.clock).toISOString(), behind: Number(row!.behind), dueBefore: Number(row!.due) };
}

describe("at most 3660 days per call", () => {
  it("answers 422 on `to` and on `now` beyond 3660 days forward, with or without wallets; earlier instants stay free without wallets", async () => {
    const bare = await tenant("2026-01-01T00:00:00Z");
    const far = await api().post(`${CLOCK}/advance`).set("x-api-key", bare.key).send({ to: "2046-01-01T00:00:00Z" });
    expect(far.status).toBe(422);
    expect(far.body.errors).toEqual([expect.objectContaining({ code: "VALIDATION_ERROR", field: "to" })]);
    const farSet = await api().put(CLOCK).set("x-api-key", bare.key).send({ now: "2066-01-01T00:00:00Z" });
    expect(farSet.status).toBe(422);
    expect(farSet.body.errors).toEqual([expect.objectContaining({ code: "VALIDATION_ERROR", field: "now" })]);
    const justOver = new Date(D("2026-01-01T00:00:00Z").getTime() + 3660 * DAY + 1000).toISOString();
    expect((await api().post(`${CLOCK}/advance`).set("x-api-key", bare.key).send({ to: justOver })).status).toBe(422);
    expect((await api().get(CLOCK).set("x-api-key", bare.key)).body.data.now).toBe("2026-01-01T00:00:00.000Z");
    // without wallets: any earlier instant, and exactly 3660 days forward
    expect((await api().put(CLOCK).set("x-api-key", bare.key).send({ now: "1990-01-01T00:00:00Z" })).status).toBe(200);
    const limit = await api().put(CLOCK).set("x-api-key", bare.key).send({ now: "2000-01-09T00:00:00Z" });
    expect(limit.status, JSON.stringify(limit.body)).toBe(200);
    expect(limit.body.data).toEqual({ now: "2000-01-09T00:00:00.000Z", target: "2000-01-09T00:00:00.000Z", complete: true });

    const withWallet = await tenant("2026-01-01T00:00:00Z");
    await wallets(withWallet, GOLDEN_PRODUCT, 1);
    for (const res of [
      await api().post(`${CLOCK}/advance`).set("x-api-key", withWallet.key).send({ to: "2036-01-10T00:00:00Z" }),
      await api().put(CLOCK).set("x-api-key", withWallet.key).send({ now: "2036-01-10T00:00:00Z" }),
    ]) {
      expect(res.status).toBe(422);
      expect(res.body.errors[0].message).toMatch(/3660 days/);
    }
    expect((await api().get(CLOCK).set("x-api-key", withWallet.key)).body.data.now).toBe("2026-01-01T00:00:00.000Z");
  });
});

describe("a move bigger than its budget", () => {
  it("answers complete: false with a consistent clock; calling again with to = target finishes it like one move", async () => {
    const tn = await tenant("2026-01-01T00:00:00Z");
    const productId = await insertProduct(em(), tn.customerId, "100", GOLDEN_PRODUCT);
    const home = { customerId: tn.customerId, userId: tn.userId, productId, product: GOLDEN_PRODUCT };
    const states: WalletState[] = [];
    for (const limit of [100000, 50000]) {
      const created = ok(createWallet(GOLDEN_PRODUCT, { walletId: randomUUID(), createdAt: D("2026-01-01T00:00:00Z"), limit, firstCutDate: D("2026-01-31T00:00:00Z") }));
      const charged = ok(charge(created, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000)).state;
      await persistWallet(em(), home, charged);
      states.push(charged);
    }
    // a budget of 1 ms: each call runs one chunk of one instant
    const clock = new SandboxClockService(await statementsOf(t.orm), undefined, undefined, { moveBudgetMs: 1 });
    const first = await clock.advance(em(), tn.customerId, { days: 70 });
    expect(first).toMatchObject({ now: "2026-01-02T00:00:00.000Z", target: "2026-03-12T00:00:00.000Z", complete: false, notificationsOmitted: 0 });
    expect(await consistent(tn.customerId)).toEqual({ clock: first.now, behind: 0, dueBefore: 0 });
    expect((await api().get(CLOCK).set("x-api-key", tn.key)).body.data.now).toBe(first.now);

    const notifications: CreditNotificationView[] = [...first.notifications];
    let calls = 1;
    for (let last = first; !last.complete; calls++) {
      expect(calls).toBeLessThan(200);
      last = await clock.advance(em(), tn.customerId, { to: first.target });
      expect(last.target).toBe(first.target);
      expect(await consistent(tn.customerId)).toEqual({ clock: last.now, behind: 0, dueBefore: 0 });
      notifications.push(...last.notifications);
    }
    expect(calls).toBeGreaterThan(60);
    expect((await api().get(CLOCK).set("x-api-key", tn.key)).body.data.now).toBe("2026-03-12T00:00:00.000Z");
    const expectedEvents: ReturnType<typeof notificationPayload>[] = [];
    for (const s of states) {
      const expected = ok(advance(s, GOLDEN_PRODUCT, D("2026-03-12T00:00:00Z")));
      expect((await loadWallet(em(), s.walletId)).state).toEqual(expected.state);
      expectedEvents.push(...expected.events.map(notificationPayload));
    }
    const key = (n: { walletId: string; sequence: number }): string => `${n.walletId}/${n.sequence}`;
    expect(notifications.map(key).sort()).toEqual(expectedEvents.map(key).sort());
    expect(notifications).toEqual(expect.arrayContaining(expectedEvents));
  });
});

describe("what one answer carries", () => {
  it("stops at the end of the instant that reaches 1000 notifications, lists the first 1000 and counts the rest", async () => {
    const tn = await tenant("2026-01-01T00:00:00Z");
    await wallets(tn, GOLDEN_PRODUCT, 600);
    // Feb 1: 600 cuts; Feb 11: 600 grace ends with a default (4 notifications each)
    // The cap on notifications, apart from the time budget: a budget of 120 s, so that a busy
    // machine cannot end the call before Feb 11 (the budget has its own tests above and below).
    const clock = new SandboxClockService(await statementsOf(t.orm), undefined, undefined, { moveBudgetMs: 120_000 });
    const data = await clock.advance(em(), tn.customerId, { to: "2026-02-15T00:00:00Z" });
    expect(data).toMatchObject({ now: "2026-02-11T00:00:00.000Z", target: "2026-02-15T00:00:00.000Z", complete: false, notificationsOmitted: 2000 });
    expect(data.notifications).toHaveLength(1000);
    const [written] = await em().execute<{ n: string }[]>(`select count(*) as n from credit_event where customer_id = ?`, [tn.customerId]);
    expect(Number(written?.n)).toBe(3000);
    expect(await consistent(tn.customerId)).toEqual({ clock: "2026-02-11T00:00:00.000Z", behind: 0, dueBefore: 0 });
    const rest = await api().post(`${CLOCK}/advance`).set("x-api-key", tn.key).send({ to: data.target });
    expect(rest.body.data).toEqual({ now: "2026-02-15T00:00:00.000Z", target: "2026-02-15T00:00:00.000Z", complete: true, notifications: [], notificationsOmitted: 0 });
  });
});

describe("queueing without holding the pool", () => {
  /** Samples the app pool's waiting requests and the database's lock waits until `stop` is true. */
  function sampler(): { stop(): Promise<{ poolWaiting: number; lockWaits: number; samples: number; waiters: string[] }> } {
    let running = true;
    const seen = { poolWaiting: 0, lockWaits: 0, samples: 0, waiters: [] as string[] };
    const done = (async () => {
      const pool = (await t.orm.em.getConnection().getNativeClient()) as unknown as pg.Pool;
      const client = new pg.Client({ connectionString: t.config.databaseUrl });
      await client.connect();
      try {
        while (running) {
          const { rows } = await client.query<{ query: string; blockers: string }>(
            // the job scheduler's own statements are left out: its NOTIFYs queue on PostgreSQL's
            // notification lock at commit, a wait of the scheduler's, not of the clock's calls
            `select a.query, (select string_agg(b.query, ' | ') from pg_stat_activity b where b.pid = any(pg_blocking_pids(a.pid))) as blockers
               from pg_stat_activity a where a.datname = current_database() and a.wait_event_type = 'Lock'
                and a.query not ilike 'notify %' and a.query not ilike '%agenda_jobs%'`,
          );
          seen.poolWaiting = Math.max(seen.poolWaiting, pool.waitingCount);
          seen.lockWaits = Math.max(seen.lockWaits, rows.length);
          // who waited behind whom, shown when the assertion fails
          for (const row of rows) seen.waiters.push(`${row.query.slice(0, 200)} <- ${String(row.blockers).slice(0, 200)}`);
          seen.samples += 1;
          // the sampling period (a sample every 10 ms while the calls run), not a wait for their work
          await new Promise((r) => setTimeout(r, 10));
        }
      } finally {
        await client.end();
      }
    })();
    return {
      async stop() {
        running = false;
        await done;
        return seen;
      },
    };
  }

  it("12 concurrent advances of one tenant wait in the process, not on the clock row with a connection each; another tenant is served meanwhile", async () => {
    const a = await tenant("2026-01-01T00:00:00Z");
    const b = await tenant("2026-01-01T00:00:00Z");
    await wallets(a, YEARLY, 150);
    const watch = sampler();
    let finished = 0;
    const calls = Array.from({ length: 12 }, () =>
      api().post(`${CLOCK}/advance`).set("x-api-key", a.key).send({ days: 20 }).then((res) => {
        finished += 1;
        return res;
      }),
    );
    // once the first move has committed a chunk, the other tenant's requests are answered
    const moved = async () => ((await consistent(a.customerId)).clock !== "2026-01-01T00:00:00.000Z" ? true : undefined);
    await waitFor("the first chunk of tenant a's move to commit", moved, 10_000);
    const other = await api().get(CLOCK).set("x-api-key", b.key);
    const ready = await api().get("/readyz");
    const servedWhile = finished;
    const answers = await Promise.all(calls);
    const seen = await watch.stop();
    expect(other.status).toBe(200);
    expect(other.body.data.now).toBe("2026-01-01T00:00:00.000Z");
    expect(ready.status).toBe(200);
    expect(servedWhile).toBeLessThan(12);
    expect(seen.samples).toBeGreaterThan(0);
    expect(seen.lockWaits, seen.waiters.join("\n")).toBe(0);
    expect(seen.poolWaiting).toBe(0);
    for (const res of answers) {
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
      if (res.body.data.complete) expect(res.body.data.now).toBe(res.body.data.target);
    }
    // one after the other: each started from where the previous one stopped
    const ends = answers.map((r) => Date.parse(r.body.data.now as string)).sort((x, y) => x - y);
    expect(new Set(ends).size).toBe(12);
    expect(await consistent(a.customerId)).toEqual({ clock: new Date(ends[11]!).toISOString(), behind: 0, dueBefore: 0 });
  });

  it("answers 429 beyond 16 waiting calls of one tenant; the others run one after the other", async () => {
    const tn = await tenant("2026-01-01T00:00:00Z");
    await wallets(tn, GOLDEN_PRODUCT, 1);
    const clock = new SandboxClockService(await statementsOf(t.orm));
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => clock.advance(em(), tn.customerId, { days: 1 })));
    const refused = outcomes.filter((o) => o.status === "rejected").map((o) => (o as PromiseRejectedResult).reason as DomainError);
    expect(refused).toHaveLength(4);
    for (const error of refused) expect(error).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", retryAfterS: 5 });
    expect(outcomes.filter((o) => o.status === "fulfilled").map((o) => (o as PromiseFulfilledResult<{ now: string }>).value.now).sort()).toEqual(
      Array.from({ length: 16 }, (_, i) => new Date(D("2026-01-02T00:00:00Z").getTime() + i * DAY).toISOString()),
    );
  });

  it("while one tenant advances as far as allowed, another tenant's request is answered; the move stops within its budget with a consistent clock", async () => {
    const a = await tenant("2026-01-01T00:00:00Z");
    const b = await tenant("2026-01-01T00:00:00Z");
    await wallets(a, YEARLY, 200);
    let done = false;
    const move = api().post(`${CLOCK}/advance`).set("x-api-key", a.key).send({ days: 3660 }).then((res) => {
      done = true;
      return res;
    });
    const moved = async () => ((await consistent(a.customerId)).clock !== "2026-01-01T00:00:00.000Z" ? true : undefined);
    await waitFor("the first chunk of tenant a's move to commit", moved, 10_000);
    const other = await api().get(CLOCK).set("x-api-key", b.key);
    expect(other.status).toBe(200);
    expect(done).toBe(false);
    const res = await move;
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ target: "2036-01-09T00:00:00.000Z", complete: false });
    expect(res.body.data.notifications.length + res.body.data.notificationsOmitted).toBeLessThanOrEqual(1000 + 200 * 5);
    expect(await consistent(a.customerId)).toEqual({ clock: res.body.data.now, behind: 0, dueBefore: 0 });
  });
});
