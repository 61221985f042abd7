/**
 * Money stays exact (docs/security.md "Money stays exact"): every amount the credit core stores or
 * returns is an integer number of cents within ±(2^53 − 1). A wallet whose next cycle step would
 * leave that range is set aside: its steps stop, it still answers reads (with `setAside`), changes on
 * it are refused with 409 naming the reason, an error is logged once and the metrics count it, and
 * every other wallet's steps run as usual, on the real-time batch (`runDueSteps` REAL_TIME, the
 * `credit-cycles` job) and on the sandbox clock. No batch fails as a whole because of one wallet.
 *
 * The wallet that leaves the range is the one of the reproduction: a compound product with daily
 * cuts at 1000 % a year (nominal and penal), a limit of 10¹² cents charged to the limit and never paid;
 * its debt grows about 5 % a day and passes 2^53 − 1 after about 180 days (and PostgreSQL's `bigint`
 * some 130 days later).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initORM, type MikroORM } from "../../src/db/orm.js";
import { ENTITIES } from "../../src/modules/entities.js";
import { advance, charge, createWallet, type CreditEvent, type CreditProductRules, type Outcome, type WalletState } from "../../src/domain/credit/index.js";
import { Db } from "../../src/db/sql.js";
import { REAL_TIME, runDueSteps } from "../../src/modules/credit/cycles/service.js";
import { createTestDatabase, useTestApp } from "../support/app.js";
import { eventView, insertProduct, loadEvents, loadWallet, persistWallet, seedTenant, type WalletHome } from "../support/credit-seed.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";
import { Walk } from "../support/fixtures.js";

/** 2^53 − 1: the largest amount of cents the service stores and returns. */
const MAX = 9007199254740991;
const D = (iso: string): Date => new Date(iso);
const DAY = 86_400_000;

/** The runaway product of the reproduction: compound, daily cuts, 1000 % nominal and penal, grace 1 day. */
const RUNAWAY: CreditProductRules = {
  revolving: true,
  compound: true,
  cutFrequency: "daily",
  fixedInterestAmount: 0,
  baseInterestRate: 1000,
  baseMinimumPaymentRate: 10,
  fixedMinimumPaymentAmount: 1000,
  capitalInterestSplit: 50,
  gracePeriod: 1,
  variableSpecs: false,
  morosidadRate: 1000,
  baseInterestMorosidad: 0,
  interestAccrualMethod: "ADB",
  dailyRateDivisor: 360,
};

function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`engine refused: ${JSON.stringify(o)}`);
  return o.value;
}

/** Whether the engine can advance `s` to `until` with every amount a safe integer (it throws a RangeError otherwise). */
function engineStaysExact(s: WalletState, product: CreditProductRules, until: Date): boolean {
  try {
    const r = advance(s, product, until);
    if (!r.ok) return false;
    const st = r.value.state;
    return [st.principalOutstanding + st.interestOutstanding, st.sumOfDailyBalance, ...r.value.events.map((e) => e.amount)].every((v) => Number.isSafeInteger(v) && v <= MAX);
  } catch (error) {
    if (error instanceof RangeError) return false;
    throw error;
  }
}

/** Every amount column of the credit tables and every amount inside `wallet_details_after`, as exact text, for the given wallets. */
async function largestStored(em: ReturnType<MikroORM["em"]["fork"]>, walletIds: string[]): Promise<bigint> {
  const [row] = await em.execute<{ m: string | null }[]>(
    `select greatest(
        (select max(greatest(credit_limit, available_amount, principal_outstanding, interest_outstanding, principal_outstanding + interest_outstanding, sum_of_daily_balance))
           from credit_wallet where wallet_id = any(?::uuid[])),
        (select max(greatest(sum_of_daily_balance, principal_at_cut, interest_outstanding_at_cut, interest_basis, interest_generated, minimum_payment, interest_applied, penal_interest))
           from credit_statement where wallet_id = any(?::uuid[])),
        (select max(greatest(amount, (wallet_details_after ->> 'principal_outstanding')::numeric, (wallet_details_after ->> 'interest_accrued')::numeric,
             (wallet_details_after ->> 'totalDebt')::numeric, (wallet_details_after ->> 'amountOverdraft')::numeric))
           from credit_event where wallet_id = any(?::uuid[]))
      )::text as m`,
    [`{${walletIds.join(",")}}`, `{${walletIds.join(",")}}`, `{${walletIds.join(",")}}`],
  );
  return BigInt(row?.m ?? "0");
}

describe("the real-time batch (runDueSteps REAL_TIME, the credit-cycles job)", () => {
  let orm: MikroORM;
  /** The statements' runner on the ORM's pool, as the service builds it (src/app.ts). */
  let statements: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    orm = await initORM(db.url, ENTITIES);
    statements = new Db(await orm.em.getConnection().getNativeClient(), { named: true });
  });
  afterAll(async () => {
    await orm?.close(true);
    await drop?.();
  });
  const em = () => orm.em.fork();

  it("sets aside the wallets whose next step would leave ±(2^53 − 1); every other wallet of every tenant runs as usual, exactly", async () => {
    const stamp = Date.now().toString(36);
    const tenants = [`sa-a-${stamp}`, `sa-b-${stamp}`];
    const homes: WalletHome[] = [];
    const golden: { home: WalletHome; state: WalletState; events: CreditEvent[] }[] = [];
    for (const customerId of tenants) {
      const userId = await seedTenant(em(), customerId);
      const productId = await insertProduct(em(), customerId, "100", GOLDEN_PRODUCT);
      const home = { customerId, userId, productId, product: GOLDEN_PRODUCT };
      homes.push({ customerId, userId, productId: await insertProduct(em(), customerId, "900", RUNAWAY), product: RUNAWAY });
      const created = ok(createWallet(GOLDEN_PRODUCT, { walletId: randomUUID(), createdAt: D("2026-01-01T00:00:00Z"), limit: 100000, firstCutDate: D("2026-01-31T00:00:00Z") }));
      const charged = ok(charge(created, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000)).state;
      await persistWallet(em(), home, charged);
      golden.push({ home, state: charged, events: [] });
    }
    // tenant A: the runaway wallet, 170 days on (every amount still exact), as the engine makes it
    const runHome = homes[0]!;
    const created = ok(createWallet(RUNAWAY, { walletId: randomUUID(), createdAt: D("2026-01-01T00:00:00Z"), limit: 1e12 }));
    const charged = ok(charge(created, RUNAWAY, D("2026-01-01T00:00:00Z"), 999_999_999_999)).state;
    const day170 = ok(advance(charged, RUNAWAY, D("2026-06-20T00:00:00Z")));
    await persistWallet(em(), runHome, day170.state, day170.events);
    // tenant B: a wallet an earlier version left past 2^53 − 1, whose next close would pass PostgreSQL's bigint
    const leftHome = homes[1]!;
    const leftBase = ok(charge(ok(createWallet(RUNAWAY, { walletId: randomUUID(), createdAt: D("2026-01-01T00:00:00Z"), limit: 1e12 })), RUNAWAY, D("2026-01-01T00:00:00Z"), 1e12)).state;
    await persistWallet(em(), leftHome, leftBase);
    await em().execute(`update credit_wallet set principal_outstanding = 5000000000000000000, available_amount = 0 where wallet_id = ?`, [leftBase.walletId]);

    const logged: unknown[] = [];
    const logger = { error: (obj: unknown) => void logged.push(obj) };
    const until = D("2026-08-01T00:00:00Z");
    await expect(runDueSteps(statements, REAL_TIME, until, { logger })).resolves.toMatchObject({ cuts: expect.any(Number) });

    // the ordinary wallets of both tenants: exactly the engine's months
    for (const g of golden) {
      const expected = ok(advance(g.state, GOLDEN_PRODUCT, until));
      const stored = await loadWallet(em(), g.state.walletId);
      expect(stored.state.statements).toEqual(expected.state.statements);
      expect(stored.state).toEqual({ ...expected.state, asOf: stored.state.asOf });
      expect(await loadEvents(em(), g.state.walletId)).toEqual(expected.events.map(eventView));
    }
    // the runaway wallet: stopped at the last instant whose steps stay exact, set aside with the reason
    const stored = await loadWallet(em(), day170.state.walletId);
    const asOf = stored.state.asOf;
    expect(asOf.getTime()).toBeGreaterThan(D("2026-06-20T00:00:00Z").getTime());
    expect(asOf.getTime()).toBeLessThan(until.getTime());
    const engineThere = ok(advance(day170.state, RUNAWAY, asOf));
    expect(stored.state).toEqual(engineThere.state);
    expect(engineStaysExact(engineThere.state, RUNAWAY, new Date(asOf.getTime() + DAY))).toBe(false);
    const [aside] = await em().execute<{ set_aside_at: string | Date | null; set_aside_reason: string | null }[]>(
      `select set_aside_at, set_aside_reason from credit_wallet where wallet_id = ?`,
      [day170.state.walletId],
    );
    expect(new Date(aside?.set_aside_at ?? 0)).toEqual(new Date(asOf.getTime() + DAY));
    expect(aside?.set_aside_reason).toMatch(/9007199254740991/);
    // the wallet left past the range: set aside at its next close, nothing written
    const left = await em().execute<{ set_aside_reason: string | null; principal_outstanding: string; sum_of_daily_balance: string }[]>(
      `select set_aside_reason, principal_outstanding::text, sum_of_daily_balance::text from credit_wallet where wallet_id = ?`,
      [leftBase.walletId],
    );
    expect(left[0]).toMatchObject({ principal_outstanding: "5000000000000000000", sum_of_daily_balance: "0", set_aside_reason: expect.stringMatching(/sumOfDailyBalance/) });
    // nothing stored for the wallets the batch wrote is beyond 2^53 − 1
    expect(await largestStored(em(), [day170.state.walletId, ...golden.map((g) => g.state.walletId)])).toBeLessThanOrEqual(BigInt(MAX));
    // one error logged per wallet set aside, and not again on the next run
    expect(logged).toHaveLength(2);
    await runDueSteps(statements, REAL_TIME, new Date(until.getTime() + 40 * DAY), { logger });
    expect(logged).toHaveLength(2);
    expect((await loadWallet(em(), day170.state.walletId)).state).toEqual(engineThere.state);
    for (const g of golden) expect((await loadWallet(em(), g.state.walletId)).state.statements.length).toBeGreaterThan(6);
  });
});

describe("the sandbox clock over HTTP", () => {
  const t = useTestApp();
  const api = t.api;
  const em = () => t.orm.em.fork();

  /** A tenant with an owner key, a user and a sandbox clock at 2026-01-01. */
  async function tenant(name: string): Promise<{ customerId: string; key: string; userId: string }> {
    const walk = new Walk(t.express);
    const { customerId, key } = await walk.tenant(`${name}-${Date.now().toString(36)}`);
    const user = await walk.user(key);
    const set = await api().put("/v2/sandbox/clock").set("x-api-key", key).send({ now: "2026-01-01T00:00:00Z" });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    return { customerId, key, userId: user.user_id as string };
  }

  it("runs the other wallets' cycles while the runaway wallet is set aside; reads are exact, its charges refused with the reason, the metric counts it", async () => {
    const a = await tenant("sa-http-a");
    const b = await tenant("sa-http-b");
    const runaway = ok(charge(ok(createWallet(RUNAWAY, { walletId: randomUUID(), createdAt: D("2026-01-01T00:00:00Z"), limit: 1e12 })), RUNAWAY, D("2026-01-01T00:00:00Z"), 999_999_999_999)).state;
    await persistWallet(em(), { customerId: a.customerId, userId: a.userId, productId: await insertProduct(em(), a.customerId, "900", RUNAWAY), product: RUNAWAY }, runaway);
    const ordinary: { key: string; state: WalletState }[] = [];
    for (const tn of [a, b]) {
      const productId = await insertProduct(em(), tn.customerId, "100", GOLDEN_PRODUCT);
      const created = ok(createWallet(GOLDEN_PRODUCT, { walletId: randomUUID(), createdAt: D("2026-01-01T00:00:00Z"), limit: 100000, firstCutDate: D("2026-01-31T00:00:00Z") }));
      const charged = ok(charge(created, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000)).state;
      await persistWallet(em(), { customerId: tn.customerId, userId: tn.userId, productId, product: GOLDEN_PRODUCT }, charged);
      ordinary.push({ key: tn.key, state: charged });
    }

    // 330 days on: the runaway wallet passes 2^53 − 1 at about +180 days and bigint at about +310
    const target = "2026-11-27T00:00:00.000Z";
    for (const tn of [a, b]) {
      for (let call = 0; ; call++) {
        expect(call).toBeLessThan(50);
        const res = await api().post("/v2/sandbox/clock/advance").set("x-api-key", tn.key).send({ to: target });
        expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
        if (res.body.data.complete !== false) break;
      }
      expect((await api().get("/v2/sandbox/clock").set("x-api-key", tn.key)).body.data.now).toBe(target);
    }
    for (const o of ordinary) {
      const expected = ok(advance(o.state, GOLDEN_PRODUCT, D(target)));
      expect((await loadWallet(em(), o.state.walletId)).state).toEqual(expected.state);
      const read = await api().get(`/v2/wallet/credits/${o.state.walletId}`).set("x-api-key", o.key);
      expect(read.status).toBe(200);
      expect(read.body.data.setAside).toBeUndefined();
    }

    // the runaway wallet answers reads, exactly: the JSON text holds the database's digits
    const read = await api().get(`/v2/wallet/credits/${runaway.walletId}`).set("x-api-key", a.key);
    expect(read.status).toBe(200);
    const [row] = await em().execute<{ p: string; i: string; s: string; reason: string }[]>(
      `select principal_outstanding::text as p, interest_outstanding::text as i, sum_of_daily_balance::text as s, set_aside_reason as reason from credit_wallet where wallet_id = ?`,
      [runaway.walletId],
    );
    expect(read.text).toContain(`"principalOutstanding":${row!.p}`);
    expect(read.text).toContain(`"interestOutstanding":${row!.i}`);
    expect(read.text).toContain(`"sumOfDailyBalance":${row!.s}`);
    for (const field of ["principalOutstanding", "interestOutstanding", "totalDebt", "sumOfDailyBalance", "amountOverdraft"]) {
      expect(Number.isSafeInteger(read.body.data[field]), field).toBe(true);
    }
    expect(read.body.data.setAside).toEqual({ at: expect.any(String), reason: row!.reason });
    expect(row!.reason).toMatch(/9007199254740991/);
    const events = await api().get(`/v2/wallet/credits/${runaway.walletId}/events?limit=100&offset=0`).set("x-api-key", a.key);
    expect(events.status).toBe(200);

    // a charge (and any other change) is refused with 409 naming the reason
    const refused = await api().post(`/v2/wallet/credits/${runaway.walletId}/charges`).set("x-api-key", a.key).send({ amount: 100, description: "after" });
    expect(refused.status).toBe(409);
    expect(refused.body.errors).toContainEqual(expect.objectContaining({ code: "CONFLICT", message: expect.stringContaining(row!.reason) }));
    const paid = await api().post(`/v2/wallet/credits/${runaway.walletId}/payments`).set("x-api-key", a.key).send({ amount: 100 });
    expect(paid.status).toBe(409);

    // the metrics count it
    const metrics = await api().get("/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^credit_wallets_set_aside [1-9]/m);
  });

  it("a change whose catch-up steps would leave the range books nothing, sets the wallet aside and is refused with the reason", async () => {
    const c = await tenant("sa-http-c");
    const productId = await insertProduct(em(), c.customerId, "900", RUNAWAY);
    const created = ok(createWallet(RUNAWAY, { walletId: randomUUID(), createdAt: D("2026-01-01T00:00:00Z"), limit: 1e12 }));
    const day170 = ok(advance(ok(charge(created, RUNAWAY, D("2026-01-01T00:00:00Z"), 999_999_999_999)).state, RUNAWAY, D("2026-06-20T00:00:00Z")));
    await persistWallet(em(), { customerId: c.customerId, userId: c.userId, productId, product: RUNAWAY }, day170.state, day170.events);
    // the tenant's clock is later than the wallet's last step: a change first runs the steps in between
    await em().execute(`update credit_clock set "now" = ? where customer_id = ?`, [D("2026-11-27T00:00:00Z"), c.customerId]);

    const paid = await api().post(`/v2/wallet/credits/${day170.state.walletId}/payments`).set("x-api-key", c.key).send({ amount: 100 });
    expect(paid.status, JSON.stringify(paid.body)).toBe(409);
    expect(paid.body.errors[0].message).toMatch(/set aside.*9007199254740991/);
    expect((await loadWallet(em(), day170.state.walletId)).state).toEqual(day170.state);
    const read = await api().get(`/v2/wallet/credits/${day170.state.walletId}`).set("x-api-key", c.key);
    expect(read.status).toBe(200);
    expect(read.body.data.setAside).toEqual({ at: "2026-11-27T00:00:00.000Z", reason: expect.stringMatching(/9007199254740991/) });
    expect(paid.body.errors[0].message).toContain(read.body.data.setAside.reason);
    const charged = await api().post(`/v2/wallet/credits/${day170.state.walletId}/charges`).set("x-api-key", c.key).send({ amount: 1, description: "x" });
    expect(charged.status).toBe(409);
    expect(charged.body.errors[0].message).toContain(read.body.data.setAside.reason);
    // the clock moves on; the wallet stays as it was
    const moved = await api().post("/v2/sandbox/clock/advance").set("x-api-key", c.key).send({ days: 5 });
    expect(moved.status).toBe(200);
    expect((await loadWallet(em(), day170.state.walletId)).state).toEqual(day170.state);
  });
});
