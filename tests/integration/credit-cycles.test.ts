/**
 * The set-based cycle batches (src/modules/credit/cycles/service.ts `runDueSteps`) against the pure engine
 * (src/domain/credit `advance`) on a real PostgreSQL (docs/credit-engine.md): wallets are
 * seeded in the database as the engine makes them (charges, payments, refunds and overrides applied by the
 * engine and persisted, as the operation endpoints do), the batches walk months, and every wallet,
 * statement and event is compared with the engine's. Golden vector and default-and-cure example of
 * docs/decisions/credit.md, random products and operations (fast-check, bounded), reruns and interrupted runs.
 */
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initORM, type MikroORM } from "../../src/db/orm.js";
import { ENTITIES } from "../../src/modules/entities.js";
import {
  advance,
  blockWallet,
  charge,
  createWallet,
  dissolveWallet,
  interestOn,
  nextCutAfter,
  nextCutDate,
  overrideSpecs,
  pay,
  refund,
  type CreditEvent,
  type CreditProductRules,
  type CutFrequency,
  type Outcome,
  type StepResult,
  type WalletState,
} from "../../src/domain/credit/index.js";
import { Db } from "../../src/db/sql.js";
import { closeWallets, graceEnds } from "../../src/modules/credit/cycles/repository/close-grace.js";
import { nextCutSql, rheDivSql } from "../../src/modules/credit/cycles/repository/fragments.js";
import { rescheduleWallets } from "../../src/modules/credit/cycles/repository/schedule.js";
import { runDueSteps, type CycleScope } from "../../src/modules/credit/cycles/service.js";
import { createTestDatabase } from "../support/app.js";
import { eventView, insertProduct, lastCloseOf, loadEvents, loadWallet, persistWallet, seedTenant, type WalletHome } from "../support/credit-seed.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";
import { waitFor } from "../support/wait.js";

let orm: MikroORM;
/** The statements' runner on the ORM's pool, as the service builds it (src/app.ts). */
let statements: Db;
let drop: () => Promise<void>;
let seq = 0;

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
const D = (iso: string): Date => new Date(iso);


/** A tenant of its own and its scope. */
async function newTenant(): Promise<{ customerId: string; userId: string; scope: CycleScope }> {
  const customerId = `cy-${++seq}-${Date.now().toString(36)}`;
  const userId = await seedTenant(em(), customerId);
  return { customerId, userId, scope: { kind: "tenant", customerId } };
}

function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`engine refused: ${JSON.stringify(o)}`);
  return o.value;
}

/** One wallet followed in both worlds: the engine's state and events, and where the row lives. */
interface Tracked {
  home: WalletHome;
  state: WalletState;
  events: CreditEvent[];
}

/** Creates the wallet with the engine and inserts it. */
async function open(tenant: { customerId: string; userId: string }, productId: string, product: CreditProductRules, createdAt: Date, limit: number, firstCutDate?: Date): Promise<Tracked> {
  const state = ok(createWallet(product, { walletId: randomUUID(), createdAt, limit, ...(firstCutDate ? { firstCutDate } : {}) }));
  const home = { customerId: tenant.customerId, userId: tenant.userId, productId, product };
  await persistWallet(em(), home, state);
  return { home, state, events: [] };
}

/** Applies an engine operation to the wallet as stored (read back first), persists the result. Returns false when refused. */
async function operate(w: Tracked, op: (s: WalletState) => Outcome<StepResult>): Promise<boolean> {
  const stored = (await loadWallet(em(), w.state.walletId)).state;
  const done = op(stored);
  if (!done.ok) return false;
  await persistWallet(em(), w.home, done.value.state, done.value.events);
  w.state = done.value.state;
  w.events.push(...done.value.events);
  return true;
}

/** Advances the engine copy of each wallet to `until` (a wallet created after `until` stays as it is, as its row does). */
function engineAdvance(ws: Tracked[], until: Date): void {
  for (const w of ws) {
    if (until.getTime() < w.state.asOf.getTime()) continue;
    const r = ok(advance(w.state, w.home.product, until));
    w.state = r.state;
    w.events.push(...r.events);
  }
}

/** Expects the stored wallet, statements and events to equal the engine's. */
async function expectSame(w: Tracked): Promise<void> {
  const stored = await loadWallet(em(), w.state.walletId);
  expect(stored.state).toEqual(w.state);
  expect(stored.nextCutAt).toEqual(nextCutDate(w.state, w.home.product.cutFrequency));
  // a dissolved wallet keeps the last close it had (no step runs after the dissolution)
  if (w.state.status !== "dissolved") expect(stored.lastCloseAt).toEqual(lastCloseOf(w.state));
  expect(await loadEvents(em(), w.state.walletId)).toEqual(w.events.map(eventView));
}

/** Runs the batches of `scope` and the engine to `until`, then compares every wallet. */
async function runBoth(scope: CycleScope, ws: Tracked[], until: Date): Promise<void> {
  await runDueSteps(statements, scope, until);
  engineAdvance(ws, until);
  for (const w of ws) await expectSame(w);
}

/** Every row the batches write, for rerun comparisons. */
async function snapshot(customerId: string): Promise<unknown[]> {
  const e = em();
  return [
    await e.execute(`select * from credit_wallet where customer_id = ? order by wallet_id`, [customerId]),
    await e.execute(`select s.* from credit_statement s join credit_wallet w using (wallet_id) where w.customer_id = ? order by s.wallet_id, s.ordinal`, [customerId]),
    await e.execute(`select wallet_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at from credit_event where customer_id = ? order by wallet_id, sequence`, [customerId]),
  ];
}

describe("cut schedule and rounding in SQL", () => {
  it("nextCutSql gives schedule.ts nextCutAfter for every frequency, month ends and leap years included, whatever the session time zone", async () => {
    const anchors = ["2024-01-31T00:00:00Z", "2024-02-29T06:30:00Z", "2026-01-30T23:59:59.999Z", "2026-03-31T00:00:00Z", "2025-08-15T12:00:00Z"].map(D);
    const cases = fc.sample(
      fc.record({ first: fc.constantFrom(...anchors), freq: fc.constantFrom("daily", "weekly", "biweekly", "month", "year"), offsetH: fc.integer({ min: -2000, max: 40000 }) }),
      { numRuns: 400, seed: 7 },
    );
    const values = cases.map((c, i) => `(${i}, timestamptz '${c.first.toISOString()}', '${c.freq}', timestamptz '${new Date(c.first.getTime() + c.offsetH * 3_600_000).toISOString()}')`).join(",");
    // in a session time zone with daylight saving: the SQL must not depend on it
    const rows = await em().transactional(async (tx) => {
      await tx.execute(`set local time zone 'America/Santiago'`);
      return tx.execute<{ i: number; next: Date }[]>(`select i, ${nextCutSql("f", "q", "t")} as next from (values ${values}) as v(i, f, q, t) order by i`);
    });
    expect(rows.map((r) => new Date(r.next).toISOString())).toEqual(
      cases.map((c) => nextCutAfter(c.first, c.freq as CutFrequency, new Date(c.first.getTime() + c.offsetH * 3_600_000)).date.toISOString()),
    );
  });

  it("rheDivSql rounds half to even exactly, as interest.ts interestOn does", async () => {
    const cases = fc.sample(fc.record({ rate: fc.integer({ min: 0, max: 999999 }).map((x) => x / 10000), basis: fc.integer({ min: 0, max: 2 ** 40 }), divisor: fc.constantFrom(360, 365) }), { numRuns: 400, seed: 11 });
    cases.push({ rate: 1, basis: 18000, divisor: 360 }, { rate: 1, basis: 54750, divisor: 365 }, { rate: 36, basis: 12500, divisor: 360 }, { rate: 36, basis: 37500, divisor: 360 });
    const values = cases.map((c, i) => `(${i}, ${c.rate}::numeric, ${c.basis}::bigint, ${c.divisor})`).join(",");
    const rows = await em().execute<{ v: string }[]>(`select ${rheDivSql("r * b", "100 * d")} as v from (values ${values}) as x(i, r, b, d) order by i`);
    expect(rows.map((r) => Number(r.v))).toEqual(cases.map((c) => interestOn(c.basis, c.rate, c.divisor as 360 | 365, 0)));
  });
});

describe("golden vector (docs/decisions/credit.md)", () => {
  it("ADB interest 1125 and minimum 5500, BAC interest 1350, with statements and events equal to the engine's", async () => {
    const t = await newTenant();
    const adbId = await insertProduct(em(), t.customerId, "100", GOLDEN_PRODUCT);
    const bacRules: CreditProductRules = { ...GOLDEN_PRODUCT, interestAccrualMethod: "BAC" };
    const bacId = await insertProduct(em(), t.customerId, "101", bacRules);
    const created = D("2026-01-01T00:00:00Z");
    const first = D("2026-01-31T00:00:00Z");
    const adb = await open(t, adbId, GOLDEN_PRODUCT, created, 100000, first);
    const bac = await open(t, bacId, bacRules, created, 100000, first);
    for (const w of [adb, bac]) expect(await operate(w, (s) => charge(s, w.home.product, created, 30000))).toBe(true);

    await runBoth(t.scope, [adb, bac], D("2026-01-16T09:00:00Z"));
    for (const w of [adb, bac]) expect(await operate(w, (s) => charge(s, w.home.product, D("2026-01-16T09:00:00Z"), 15000))).toBe(true);
    await runBoth(t.scope, [adb, bac], D("2026-01-31T00:00:00Z"));

    const adbCut = (await loadWallet(em(), adb.state.walletId)).state.statements[0];
    expect(adbCut).toMatchObject({ sumOfDailyBalance: 1125000, interestGenerated: 1125, minimumPayment: 5500, daysInCycle: 30, status: "pending" });
    const bacCut = (await loadWallet(em(), bac.state.walletId)).state.statements[0];
    expect(bacCut).toMatchObject({ interestBasis: 1350000, interestGenerated: 1350, minimumPayment: 5500 });
    expect((await loadEvents(em(), adb.state.walletId)).map((e) => [e.sequence, e.type, e.amount])).toEqual([[1, "Interes Nominal Calculado", 1125]]);

    // pay the minimum in the grace period: no default; then three more months
    for (const w of [adb, bac]) expect(await operate(w, (s) => pay(s, w.home.product, D("2026-02-05T10:00:00Z"), 5500))).toBe(true);
    await runBoth(t.scope, [adb, bac], D("2026-05-15T00:00:00Z"));
    expect((await loadWallet(em(), adb.state.walletId)).state.statements.map((s) => s.cutDate.toISOString())).toEqual([
      "2026-01-31T00:00:00.000Z",
      "2026-02-28T00:00:00.000Z",
      "2026-03-31T00:00:00.000Z",
      "2026-04-30T00:00:00.000Z",
    ]);
  });
});

describe("default and cure (docs/decisions/credit.md)", () => {
  it("Jan 31 cut 900 / 4000, Feb 10 grace end: 900 applied, penal 800, in_default; cured by 3000 + 1800", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "200", GOLDEN_PRODUCT);
    const created = D("2026-01-01T00:00:00Z");
    const w = await open(t, id, GOLDEN_PRODUCT, created, 100000, D("2026-01-31T00:00:00Z"));
    expect(await operate(w, (s) => charge(s, GOLDEN_PRODUCT, created, 30000))).toBe(true);
    await runBoth(t.scope, [w], D("2026-01-31T00:00:00Z"));
    expect((await loadWallet(em(), w.state.walletId)).state.statements[0]).toMatchObject({ interestGenerated: 900, minimumPayment: 4000 });

    await runBoth(t.scope, [w], D("2026-02-10T00:00:00Z"));
    const stored = (await loadWallet(em(), w.state.walletId)).state;
    expect(stored).toMatchObject({ status: "in_default", statusBeforeDefault: "active", interestOutstanding: 1700, principalOutstanding: 30000 });
    expect(stored.statements[0]).toMatchObject({ status: "defaulted", interestApplied: 900, penalInterest: 800, interestRateMoroso: 12, fixedInterestMoroso: 500 });
    expect((await loadEvents(em(), w.state.walletId)).map((e) => [e.sequence, e.type, e.amount, e.direction, e.affectsBalance])).toEqual([
      [1, "Interes Nominal Calculado", 900, "debit", false],
      [2, "Interes Nominal Aplicado", 900, "debit", true],
      [3, "Interes Moroso Calculado", 800, "debit", false],
      [4, "Interes Moroso Aplicado", 800, "debit", true],
      [5, "Interes moroso ejecutado", 800, "debit", false],
    ]);

    expect(await operate(w, (s) => pay(s, GOLDEN_PRODUCT, D("2026-02-12T10:00:00Z"), 3000))).toBe(true);
    expect(await operate(w, (s) => pay(s, GOLDEN_PRODUCT, D("2026-02-13T10:00:00Z"), 1800))).toBe(true);
    expect(w.state).toMatchObject({ status: "active", principalOutstanding: 26900, interestOutstanding: 0 });
    await runBoth(t.scope, [w], D("2026-04-20T00:00:00Z"));
  });
});

describe("idempotency", () => {
  it("a rerun to the same instant changes nothing", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "300", GOLDEN_PRODUCT);
    const w = await open(t, id, GOLDEN_PRODUCT, D("2026-01-01T10:00:00Z"), 100000);
    expect(await operate(w, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-02T00:00:00Z"), 20000))).toBe(true);
    await runBoth(t.scope, [w], D("2026-03-20T00:00:00Z"));
    const before = await snapshot(t.customerId);
    const again = await runDueSteps(statements, t.scope, D("2026-03-20T00:00:00Z"));
    expect(again).toMatchObject({ instants: 0, events: 0 });
    // a step statement run again by hand at an instant already done books nothing either
    await closeWallets(statements, t.scope, D("2026-03-20T00:00:00Z"));
    await graceEnds(statements, t.scope, D("2026-03-11T00:00:00Z"));
    expect(await snapshot(t.customerId)).toEqual(before);
    await expectSame(w);
  });

  it("a batch interrupted between instants, or between the steps of one instant, then rerun gives the engine's result", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "301", GOLDEN_PRODUCT);
    const a = await open(t, id, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000, D("2026-01-31T00:00:00Z"));
    const b = await open(t, id, GOLDEN_PRODUCT, D("2026-01-05T15:00:00Z"), 50000, D("2026-01-31T00:00:00Z"));
    expect(await operate(a, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000))).toBe(true);
    expect(await operate(b, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-06T00:00:00Z"), 10000))).toBe(true);
    // stops after 20 instants (mid-January)
    const partial = await runDueSteps(statements, t.scope, D("2026-03-15T00:00:00Z"), { maxInstants: 20 });
    expect(partial.instants).toBe(20);
    // then, at the Jan 31 instant, only the close runs (a crash before the cut)
    await runDueSteps(statements, t.scope, D("2026-01-30T23:00:00Z"));
    await closeWallets(statements, t.scope, D("2026-01-31T00:00:00Z"));
    await runBoth(t.scope, [a, b], D("2026-03-15T00:00:00Z"));
    expect((await loadWallet(em(), a.state.walletId)).state.statements).toHaveLength(2);
  });
});

describe("a crash inside a step", () => {
  it("rolls the whole step back (no wallet half cut), and the rerun gives the engine's result", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "700", GOLDEN_PRODUCT);
    const a = await open(t, id, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000, D("2026-01-31T00:00:00Z"));
    const b = await open(t, id, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000, D("2026-01-31T00:00:00Z"));
    for (const w of [a, b]) expect(await operate(w, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000))).toBe(true);
    // the event insert of wallet b fails: the cut statement of both wallets must roll back
    const fn = `crash_${b.state.walletId.replaceAll("-", "")}`;
    await em().execute(`create function ${fn}() returns trigger language plpgsql as $$ begin
        if new.wallet_id = '${b.state.walletId}' then raise exception 'simulated crash'; end if; return new; end $$`);
    await em().execute(`create trigger ${fn} before insert on credit_event for each row execute function ${fn}()`);
    await expect(runDueSteps(statements, t.scope, D("2026-02-05T00:00:00Z"))).rejects.toThrow(/simulated crash/);
    for (const w of [a, b]) {
      const stored = (await loadWallet(em(), w.state.walletId)).state;
      expect(stored.statements).toEqual([]);
      expect(stored.asOf).toEqual(D("2026-01-31T00:00:00Z")); // the close of that instant had committed
      expect(await loadEvents(em(), w.state.walletId)).toEqual([]);
    }
    await em().execute(`drop trigger ${fn} on credit_event`);
    await em().execute(`drop function ${fn}()`);
    await runBoth(t.scope, [a, b], D("2026-02-15T00:00:00Z"));
  });
});

describe("concurrency", () => {
  it("a step waits for a concurrent change of a wallet row and computes from the committed row (no lost update)", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "800", GOLDEN_PRODUCT);
    const w = await open(t, id, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000, D("2026-01-31T00:00:00Z"));
    expect(await operate(w, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000))).toBe(true);
    await runBoth(t.scope, [w], D("2026-01-30T12:00:00Z"));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = em().transactional(async (tx) => {
      await tx.execute(`update credit_wallet set principal_outstanding = principal_outstanding + 5000, available_amount = available_amount - 5000 where wallet_id = ?`, [w.state.walletId]);
      locked();
      await gate;
    });
    await isLocked;
    const run = runDueSteps(statements, t.scope, D("2026-01-31T00:00:00Z"));
    // the step is blocked on the row lock the holder keeps (the only other transaction on this database)
    await waitFor("the step to wait for the wallet row's lock", async () => {
      const [waiting] = await em().execute<{ n: string }[]>(`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
      return Number(waiting?.n) > 0 ? true : undefined;
    });
    release();
    await holder;
    await run;
    const stored = (await loadWallet(em(), w.state.walletId)).state;
    expect(stored.principalOutstanding).toBe(35000);
    expect(stored.statements[0]).toMatchObject({ principalAtCut: 35000, sumOfDailyBalance: 29 * 30000 + 35000, interestGenerated: 905, minimumPayment: 4500 });
  });
});

describe("product updates", () => {
  it("a cutFrequency and rate update applies from the next cut, as in the engine (rescheduleWallets)", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "600", GOLDEN_PRODUCT);
    const w = await open(t, id, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000, D("2026-01-31T00:00:00Z"));
    expect(await operate(w, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000))).toBe(true);
    await runBoth(t.scope, [w], D("2026-02-14T12:00:00Z"));
    const weekly: CreditProductRules = { ...GOLDEN_PRODUCT, cutFrequency: "weekly", baseInterestRate: 24.5, gracePeriod: 3 };
    await em().execute(`update credit_product set cut_frequency = 'weekly', base_interest_rate = 24.5, grace_period = 3 where id = ?`, [id]);
    expect(await rescheduleWallets(statements, id)).toBe(1);
    w.home = { ...w.home, product: weekly };
    await runBoth(t.scope, [w], D("2026-04-01T00:00:00Z"));
    expect((await loadWallet(em(), w.state.walletId)).state.statements[1]?.cutDate).toEqual(D("2026-02-21T00:00:00Z"));
  });
});

describe("scopes", () => {
  it("a tenant's run leaves other tenants' wallets alone, and dissolved wallets run nothing", async () => {
    const t1 = await newTenant();
    const t2 = await newTenant();
    const p1 = await insertProduct(em(), t1.customerId, "400", GOLDEN_PRODUCT);
    const p2 = await insertProduct(em(), t2.customerId, "400", GOLDEN_PRODUCT);
    const mine = await open(t1, p1, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000);
    const gone = await open(t1, p1, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000);
    const other = await open(t2, p2, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000);
    expect(await operate(gone, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-03T00:00:00Z"), 1000))).toBe(true);
    expect(await operate(gone, (s) => dissolveWallet(s, GOLDEN_PRODUCT, D("2026-01-04T00:00:00Z")))).toBe(true);
    await runBoth(t1.scope, [mine, gone], D("2026-03-01T00:00:00Z"));
    expect((await loadWallet(em(), gone.state.walletId)).state.statements).toEqual([]);
    expect((await loadWallet(em(), other.state.walletId)).state).toEqual(other.state);
  });
});

// --- random products and operations -----------------------------------------------------------

const rate = (max: number) => fc.integer({ min: 0, max: max * 10000 }).map((x) => x / 10000);
const productArb: fc.Arbitrary<CreditProductRules> = fc.record({
  revolving: fc.boolean(),
  compound: fc.boolean(),
  cutFrequency: fc.constantFrom("daily", "weekly", "biweekly", "month", "year"),
  fixedInterestAmount: fc.integer({ min: 0, max: 2000 }),
  baseInterestRate: rate(99),
  baseMinimumPaymentRate: rate(100),
  fixedMinimumPaymentAmount: fc.integer({ min: 0, max: 5000 }),
  capitalInterestSplit: rate(99),
  gracePeriod: fc.integer({ min: 1, max: 25 }),
  variableSpecs: fc.boolean(),
  morosidadRate: rate(60),
  baseInterestMorosidad: fc.integer({ min: 0, max: 3000 }),
  interestAccrualMethod: fc.constantFrom("ADB", "BAC"),
  dailyRateDivisor: fc.constantFrom(360, 365),
});
type Op =
  | { at: number; kind: "charge" | "pay" | "refund"; amount: number }
  | { at: number; kind: "override"; nominal: number; min: number }
  | { at: number; kind: "block" | "dissolve" };
const HOUR = 3_600_000;
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ at: fc.integer({ min: 0, max: 140 * 24 }), kind: fc.constantFrom("charge" as const, "pay" as const), amount: fc.integer({ min: 1, max: 60000 }) }) },
  { weight: 1, arbitrary: fc.record({ at: fc.integer({ min: 0, max: 140 * 24 }), kind: fc.constant("override" as const), nominal: rate(80), min: rate(50) }) },
  { weight: 1, arbitrary: fc.record({ at: fc.integer({ min: 0, max: 140 * 24 }), kind: fc.constantFrom("block" as const, "dissolve" as const) }) },
  // a merchant's refund (docs/decisions/cards.md "Refunds"): it moves only principal, interest and the available amount, which the batches read as they are
  { weight: 2, arbitrary: fc.record({ at: fc.integer({ min: 0, max: 140 * 24 }), kind: fc.constant("refund" as const), amount: fc.integer({ min: 1, max: 60000 }) }) },
);
const walletArb = fc.record({
  product: productArb,
  createdHour: fc.integer({ min: 0, max: 72 }),
  firstCutDays: fc.option(fc.integer({ min: 1, max: 45 }), { nil: undefined }),
  limit: fc.integer({ min: 1000, max: 500000 }),
  ops: fc.array(opArb, { maxLength: 8 }),
});

describe("random products, balances and operations (fast-check)", () => {
  it("the batches give the engine's wallets, statements and events over ~5 months", async () => {
    const base = D("2027-01-10T00:00:00Z").getTime();
    await fc.assert(
      fc.asyncProperty(fc.array(walletArb, { minLength: 1, maxLength: 3 }), async (specs) => {
        const t = await newTenant();
        const tracked: { w: Tracked; ops: Op[] }[] = [];
        for (const [i, spec] of specs.entries()) {
          const productId = await insertProduct(em(), t.customerId, String(500 + i), spec.product);
          const createdAt = new Date(base + spec.createdHour * HOUR);
          const first = spec.firstCutDays === undefined ? undefined : new Date(createdAt.getTime() + spec.firstCutDays * 24 * HOUR);
          const w = await open(t, productId, spec.product, createdAt, spec.limit, first);
          tracked.push({ w, ops: spec.ops.map((op) => ({ ...op, at: spec.createdHour + op.at })) });
        }
        const all = tracked.flatMap(({ w, ops }) => ops.map((op) => ({ w, op }))).sort((x, y) => x.op.at - y.op.at);
        for (const { w, op } of all) {
          const at = new Date(base + op.at * HOUR);
          await runBoth(t.scope, tracked.map((x) => x.w), at);
          const p = w.home.product;
          if (op.kind === "charge") await operate(w, (s) => charge(s, p, at, Math.min(op.amount, Math.max(1, s.availableAmount))));
          else if (op.kind === "pay") await operate(w, (s) => pay(s, p, at, Math.min(op.amount, Math.max(1, s.principalOutstanding + s.interestOutstanding))));
          else if (op.kind === "refund") await operate(w, (s) => refund(s, p, at, { amount: op.amount }));
          else if (op.kind === "override") await operate(w, (s) => overrideSpecs(s, p, at, { interestRateNominal: op.nominal, minimumPaymentRate: op.min }));
          else if (op.kind === "block") await operate(w, (s) => blockWallet(s, p, at));
          else await operate(w, (s) => dissolveWallet(s, p, at));
        }
        await runBoth(t.scope, tracked.map((x) => x.w), new Date(base + 150 * 24 * HOUR));
      }),
      { numRuns: 10, seed: 20261123 },
    );
  }, 240_000);
});
