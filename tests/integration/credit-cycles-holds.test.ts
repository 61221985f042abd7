/**
 * The expiry of card authorization holds in the set-based cycle batches
 * (src/modules/credit/cycles/repository/expiry.ts, run by service.ts `runDueSteps` right after each daily
 * close) against the pure engine (src/domain/credit `advance`, `authorize`, `capture`,
 * `voidAuthorization`) on a real PostgreSQL (docs/credit-engine.md; docs/decisions/credit.md
 * "Authorizations"): wallets are seeded as the engine makes them (tests/support/credit-seed.ts
 * `persistWallet` writes the open holds as `credit_authorization` rows), the batches walk the days,
 * and every wallet, statement, event and closed authorization is compared with the engine's.
 */
import { randomBytes, randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initORM, type MikroORM } from "../../src/db/orm.js";
import { ENTITIES } from "../../src/modules/entities.js";
import {
  advance,
  authorize,
  blockWallet,
  capture,
  charge,
  createWallet,
  dissolveWallet,
  nextCutDate,
  pay,
  voidAuthorization,
  type CreditEvent,
  type CreditProductRules,
  type HoldClosure,
  type Outcome,
  type StepResult,
  type WalletState,
} from "../../src/domain/credit/index.js";
import { Db } from "../../src/db/sql.js";
import { expireHolds } from "../../src/modules/credit/cycles/repository/expiry.js";
import { runDueSteps, type CycleScope, type DueStepsResult } from "../../src/modules/credit/cycles/service.js";
import { createTestDatabase } from "../support/app.js";
import { eventView, insertProduct, lastCloseOf, loadEvents, loadWallet, persistWallet, seedTenant, type WalletHome } from "../support/credit-seed.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";

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
const HOUR = 3_600_000;

/**
 * Authorization ids that sort in creation order (a random prefix per run, then a counter), so two holds
 * created at the same instant are ordered alike by the engine (its order of authorization) and by
 * the SQL (`created_at`, then `authorization_id`).
 */
const AUTH_PREFIX = randomBytes(4).toString("hex");
let authSeq = 0;
const nextAuthId = (): string => `${AUTH_PREFIX}-0000-4000-8000-${String(++authSeq).padStart(12, "0")}`;

async function newTenant(): Promise<{ customerId: string; userId: string; scope: CycleScope }> {
  const customerId = `ho-${++seq}-${Date.now().toString(36)}`;
  const userId = await seedTenant(em(), customerId);
  return { customerId, userId, scope: { kind: "tenant", customerId } };
}

function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`engine refused: ${JSON.stringify(o)}`);
  return o.value;
}

/** One wallet followed in both worlds: the engine's state, events and closed holds, and where the row lives. */
interface Tracked {
  home: WalletHome;
  state: WalletState;
  events: CreditEvent[];
  closed: HoldClosure[];
}

async function open(tenant: { customerId: string; userId: string }, productId: string, product: CreditProductRules, createdAt: Date, limit: number, firstCutDate?: Date): Promise<Tracked> {
  const state = ok(createWallet(product, { walletId: randomUUID(), createdAt, limit, ...(firstCutDate ? { firstCutDate } : {}) }));
  const home = { customerId: tenant.customerId, userId: tenant.userId, productId, product };
  await persistWallet(em(), home, state);
  return { home, state, events: [], closed: [] };
}

/** Applies an engine operation to the wallet as stored (read back first), persists the result (closed holds included). Returns false when refused. */
async function operate(w: Tracked, op: (s: WalletState) => Outcome<StepResult>): Promise<boolean> {
  const stored = (await loadWallet(em(), w.state.walletId)).state;
  const done = op(stored);
  if (!done.ok) return false;
  await persistWallet(em(), w.home, done.value.state, done.value.events, done.value.closedHolds);
  w.state = done.value.state;
  w.events.push(...done.value.events);
  w.closed.push(...done.value.closedHolds);
  return true;
}

/** Authorizes `amount` cents at `at` with `ttlDays` through the engine and persists it; returns the authorization id. */
async function hold(w: Tracked, at: Date, amount: number, ttlDays: number): Promise<string> {
  const authorizationId = nextAuthId();
  expect(await operate(w, (s) => authorize(s, w.home.product, at, { authorizationId, amount, ttlDays }))).toBe(true);
  return authorizationId;
}

function engineAdvance(ws: Tracked[], until: Date): void {
  for (const w of ws) {
    if (until.getTime() < w.state.asOf.getTime()) continue;
    const r = ok(advance(w.state, w.home.product, until));
    w.state = r.state;
    w.events.push(...r.events);
    w.closed.push(...r.closedHolds);
  }
}

/** The wallet's closed authorizations as stored, in the shape of the engine's closures (ordered by closing instant, then id: creation order here). */
async function loadClosed(walletId: string): Promise<HoldClosure[]> {
  const rows = await em().execute<Record<string, unknown>[]>(
    `select * from credit_authorization where wallet_id = ? and status in ('captured', 'voided', 'expired') order by closed_at, authorization_id`,
    [walletId],
  );
  return rows.map((r) => ({
    authorizationId: r.authorization_id as string,
    kind: r.status as HoldClosure["kind"],
    capturedAmount: Number(r.captured_amount),
    releasedAmount: Number(r.released_amount),
    at: new Date(r.closed_at as string),
  }));
}

/** Expects the stored wallet (open holds included), statements, events and closed authorizations to equal the engine's. */
async function expectSame(w: Tracked): Promise<void> {
  const stored = await loadWallet(em(), w.state.walletId);
  expect(stored.state).toEqual(w.state);
  expect(stored.nextCutAt).toEqual(nextCutDate(w.state, w.home.product.cutFrequency));
  if (w.state.status !== "dissolved") expect(stored.lastCloseAt).toEqual(lastCloseOf(w.state));
  expect(await loadEvents(em(), w.state.walletId)).toEqual(w.events.map(eventView));
  const byInstant = [...w.closed].sort((a, b) => a.at.getTime() - b.at.getTime() || a.authorizationId.localeCompare(b.authorizationId));
  expect(await loadClosed(w.state.walletId)).toEqual(byInstant);
}

async function runBoth(scope: CycleScope, ws: Tracked[], until: Date): Promise<DueStepsResult> {
  const ran = await runDueSteps(statements, scope, until);
  engineAdvance(ws, until);
  for (const w of ws) await expectSame(w);
  return ran;
}

async function snapshot(customerId: string): Promise<unknown[]> {
  const e = em();
  return [
    await e.execute(`select * from credit_wallet where customer_id = ? order by wallet_id`, [customerId]),
    await e.execute(`select s.* from credit_statement s join credit_wallet w using (wallet_id) where w.customer_id = ? order by s.wallet_id, s.ordinal`, [customerId]),
    await e.execute(`select wallet_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at from credit_event where customer_id = ? order by wallet_id, sequence`, [customerId]),
    await e.execute(`select * from credit_authorization where customer_id = ? order by authorization_id`, [customerId]),
  ];
}

describe("hold expiry at the daily close", () => {
  it("a hold created 2026-01-01T10:00Z with TTL 7 expires at the 2026-01-09T00:00Z close, not before, as in the engine", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "100", GOLDEN_PRODUCT);
    const w = await open(t, id, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000, D("2026-01-31T00:00:00Z"));
    expect(await operate(w, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000))).toBe(true);
    const auth = await hold(w, D("2026-01-01T10:00:00Z"), 20000, 7);
    expect(w.state.holds).toEqual([{ authorizationId: auth, amount: 20000, createdAt: D("2026-01-01T10:00:00Z"), expiresAt: D("2026-01-09T00:00:00Z") }]);

    const before = await runBoth(t.scope, [w], D("2026-01-08T23:59:59Z"));
    expect(before.expiries).toBe(0);
    expect((await loadWallet(em(), w.state.walletId)).state).toMatchObject({ amountHeld: 20000, availableAmount: 50000, holds: [{ authorizationId: auth }] });

    const at = await runBoth(t.scope, [w], D("2026-01-09T00:00:00Z"));
    expect(at).toMatchObject({ expiries: 1, events: 1 });
    expect((await loadWallet(em(), w.state.walletId)).state).toMatchObject({ amountHeld: 0, availableAmount: 70000, holds: [], sumOfDailyBalance: 8 * 30000 });
    const [row] = await em().execute<Record<string, unknown>[]>(`select status, released_amount, captured_amount, closed_at from credit_authorization where authorization_id = ?`, [auth]);
    expect([row?.status, Number(row?.released_amount), Number(row?.captured_amount)]).toEqual(["expired", 20000, 0]);
    expect(new Date(row?.closed_at as string)).toEqual(D("2026-01-09T00:00:00Z"));
    const events = await loadEvents(em(), w.state.walletId);
    expect(events.map((e) => [e.sequence, e.type, e.amount, e.direction, e.affectsBalance, e.at.toISOString()])).toEqual([
      [1, "Autorizacion Aprobada", 20000, "debit", false, "2026-01-01T10:00:00.000Z"],
      [2, "Autorizacion Liberada", 20000, "credit", false, "2026-01-09T00:00:00.000Z"],
    ]);
    expect(events[1]?.walletDetails_after).toMatchObject({ principal_outstanding: 30000, amountOverdraft: 0, amountHeld: 0 });
    await runBoth(t.scope, [w], D("2026-02-20T00:00:00Z"));
  });

  it("a hold placed at a close instant (00:00) with TTL 1 is not released by that close but by the next one, as in the engine", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "101", GOLDEN_PRODUCT);
    const w = await open(t, id, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000);
    await runBoth(t.scope, [w], D("2026-01-03T00:00:00Z"));
    await hold(w, D("2026-01-03T00:00:00Z"), 5000, 1);
    expect(w.state.holds[0]?.expiresAt).toEqual(D("2026-01-04T00:00:00Z"));
    expect((await runBoth(t.scope, [w], D("2026-01-03T23:59:59Z"))).expiries).toBe(0);
    expect((await runBoth(t.scope, [w], D("2026-01-05T00:00:00Z"))).expiries).toBe(1);
    expect(w.closed).toEqual([expect.objectContaining({ kind: "expired", at: D("2026-01-04T00:00:00Z") })]);
  });
});

describe("golden vector with a hold (docs/decisions/credit.md)", () => {
  it("a hold open through the Jan 31 cut changes neither the interest (1125) nor the minimum payment (5500)", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "200", GOLDEN_PRODUCT);
    const created = D("2026-01-01T00:00:00Z");
    const plain = await open(t, id, GOLDEN_PRODUCT, created, 100000, D("2026-01-31T00:00:00Z"));
    const held = await open(t, id, GOLDEN_PRODUCT, created, 100000, D("2026-01-31T00:00:00Z"));
    for (const w of [plain, held]) expect(await operate(w, (s) => charge(s, GOLDEN_PRODUCT, created, 30000))).toBe(true);
    await hold(held, D("2026-01-02T08:00:00Z"), 40000, 45);
    await runBoth(t.scope, [plain, held], D("2026-01-16T09:00:00Z"));
    for (const w of [plain, held]) expect(await operate(w, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-16T09:00:00Z"), 15000))).toBe(true);
    await runBoth(t.scope, [plain, held], D("2026-01-31T00:00:00Z"));

    const statements = await Promise.all([plain, held].map(async (w) => (await loadWallet(em(), w.state.walletId)).state.statements));
    for (const st of statements) expect(st[0]).toMatchObject({ sumOfDailyBalance: 1125000, interestGenerated: 1125, minimumPayment: 5500, daysInCycle: 30 });
    const cutEvent = (await loadEvents(em(), held.state.walletId)).find((e) => e.type === "Interes Nominal Calculado");
    expect(cutEvent?.walletDetails_after).toMatchObject({ principal_outstanding: 45000, amountHeld: 40000, amountOverdraft: 0 });
    // the grace end books the same interest into both; the hold expires at the Feb 17 close
    await runBoth(t.scope, [plain, held], D("2026-03-01T00:00:00Z"));
    expect(held.closed).toEqual([expect.objectContaining({ kind: "expired", releasedAmount: 40000, at: D("2026-02-17T00:00:00Z") })]);
    const [a, b] = await Promise.all([plain, held].map(async (w) => (await loadWallet(em(), w.state.walletId)).state));
    expect(b?.interestOutstanding).toBe(a?.interestOutstanding);
    expect(b?.statements.map((s) => [s.interestGenerated, s.minimumPayment])).toEqual(a?.statements.map((s) => [s.interestGenerated, s.minimumPayment]));
  });
});

/** Weekly cuts with a 7-day grace: each grace end falls on the next cut. */
const WEEKLY: CreditProductRules = { ...GOLDEN_PRODUCT, cutFrequency: "weekly", gracePeriod: 7 };

describe("expiry with a grace end and a cut at the same instant", () => {
  it("interest booked while holds use up AA is overdraft; the releases at the Jan 22 close absorb it first, then the grace end and the cut run", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "300", WEEKLY);
    const w = await open(t, id, WEEKLY, D("2026-01-01T00:00:00Z"), 100000, D("2026-01-08T00:00:00Z"));
    expect(await operate(w, (s) => charge(s, WEEKLY, D("2026-01-01T00:00:00Z"), 30000))).toBe(true);
    const first = await hold(w, D("2026-01-07T10:00:00Z"), 50000, 14);
    const second = await hold(w, D("2026-01-07T11:00:00Z"), 20000, 14);
    expect(w.state).toMatchObject({ availableAmount: 0, amountHeld: 70000 });

    // Jan 15: grace end of the Jan 8 cut (210 applied, default, penal 570) while AA is 0, then the cut
    await runBoth(t.scope, [w], D("2026-01-15T00:00:00Z"));
    expect((await loadWallet(em(), w.state.walletId)).state).toMatchObject({ status: "in_default", availableAmount: 0, interestOutstanding: 780 });
    const overdrafts = (await loadEvents(em(), w.state.walletId)).filter((e) => e.at.getTime() === D("2026-01-15T00:00:00Z").getTime());
    expect(overdrafts.map((e) => [e.type, e.walletDetails_after.amountOverdraft, e.walletDetails_after.amountHeld])).toEqual([
      ["Interes Nominal Aplicado", 210, 70000],
      ["Interes Moroso Calculado", 210, 70000],
      ["Interes Moroso Aplicado", 780, 70000],
      ["Interes moroso ejecutado", 780, 70000],
      ["Interes Nominal Calculado", 780, 70000],
    ]);

    // Jan 22: close, both expiries (the first gives back 49220 of 50000: the overdraft absorbs 780), grace end, cut
    const ran = await runBoth(t.scope, [w], D("2026-01-22T00:00:00Z"));
    expect(ran).toMatchObject({ expiries: 2, graceEnds: 1, cuts: 1 });
    const at22 = (await loadEvents(em(), w.state.walletId)).filter((e) => e.at.getTime() === D("2026-01-22T00:00:00Z").getTime());
    expect(at22.map((e) => e.type)).toEqual([
      "Autorizacion Liberada",
      "Autorizacion Liberada",
      "Interes Nominal Aplicado",
      "Interes Moroso Calculado",
      "Interes Moroso Aplicado",
      "Interes moroso ejecutado",
      "Interes Nominal Calculado",
    ]);
    expect(at22.slice(0, 2).map((e) => [e.amount, e.walletDetails_after.amountHeld, e.walletDetails_after.amountOverdraft])).toEqual([
      [50000, 20000, 0],
      [20000, 0, 0],
    ]);
    expect(w.closed.map((c) => [c.authorizationId, c.kind, c.releasedAmount])).toEqual([
      [first, "expired", 50000],
      [second, "expired", 20000],
    ]);
    await runBoth(t.scope, [w], D("2026-02-20T00:00:00Z"));
  });
});

describe("idempotency and crashes", () => {
  it("a rerun, or the expiry statement run again by hand, books nothing twice", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "400", GOLDEN_PRODUCT);
    const w = await open(t, id, GOLDEN_PRODUCT, D("2026-01-01T10:00:00Z"), 100000);
    await hold(w, D("2026-01-02T10:00:00Z"), 12000, 7);
    await hold(w, D("2026-01-02T10:00:00Z"), 8000, 3);
    await runBoth(t.scope, [w], D("2026-01-20T00:00:00Z"));
    expect(w.closed.map((c) => c.at.toISOString())).toEqual(["2026-01-06T00:00:00.000Z", "2026-01-10T00:00:00.000Z"]);
    const before = await snapshot(t.customerId);
    expect(await runDueSteps(statements, t.scope, D("2026-01-20T00:00:00Z"))).toMatchObject({ instants: 0, events: 0, expiries: 0 });
    for (const at of ["2026-01-06T00:00:00Z", "2026-01-10T00:00:00Z", "2026-01-20T00:00:00Z"]) {
      await expireHolds(statements, t.scope, D(at));
    }
    expect(await snapshot(t.customerId)).toEqual(before);
    await expectSame(w);
  });

  it("a crash inside an expiry batch rolls the step back (no hold half released), and the rerun releases at the same close, as the engine", async () => {
    const t = await newTenant();
    const id = await insertProduct(em(), t.customerId, "500", GOLDEN_PRODUCT);
    const a = await open(t, id, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000, D("2026-01-31T00:00:00Z"));
    const b = await open(t, id, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 100000, D("2026-01-31T00:00:00Z"));
    for (const w of [a, b]) {
      expect(await operate(w, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000))).toBe(true);
      await hold(w, D("2026-01-01T10:00:00Z"), 20000, 7);
      await hold(w, D("2026-01-01T11:00:00Z"), 10000, 7);
    }
    // the insert of wallet b's second release fails: the expiry statement of both wallets must roll back
    const fn = `crash_${b.state.walletId.replaceAll("-", "")}`;
    await em().execute(`create function ${fn}() returns trigger language plpgsql as $$ begin
        if new.wallet_id = '${b.state.walletId}' and new.type = 'Autorizacion Liberada' and new.amount = 10000 then raise exception 'simulated crash'; end if;
        return new; end $$`);
    await em().execute(`create trigger ${fn} before insert on credit_event for each row execute function ${fn}()`);
    await expect(runDueSteps(statements, t.scope, D("2026-01-12T00:00:00Z"))).rejects.toThrow(/simulated crash/);
    for (const w of [a, b]) {
      const stored = (await loadWallet(em(), w.state.walletId)).state;
      expect(stored).toMatchObject({ amountHeld: 30000, availableAmount: 40000, asOf: D("2026-01-09T00:00:00Z") }); // the close had committed
      expect(stored.holds).toHaveLength(2);
      expect((await loadEvents(em(), w.state.walletId)).map((e) => e.type)).toEqual(["Autorizacion Aprobada", "Autorizacion Aprobada"]);
    }
    await em().execute(`drop trigger ${fn} on credit_event`);
    await em().execute(`drop function ${fn}()`);
    const ran = await runBoth(t.scope, [a, b], D("2026-01-12T00:00:00Z"));
    expect(ran.expiries).toBe(4);
    for (const w of [a, b]) expect(w.closed.map((c) => c.at)).toEqual([D("2026-01-09T00:00:00Z"), D("2026-01-09T00:00:00Z")]);
    await runBoth(t.scope, [a, b], D("2026-02-15T00:00:00Z"));
  });
});

// --- random holds mixed with random operations -------------------------------------------------

const rate = (max: number) => fc.integer({ min: 0, max: max * 10000 }).map((x) => x / 10000);
const productArb: fc.Arbitrary<CreditProductRules> = fc.record({
  revolving: fc.boolean(),
  compound: fc.boolean(),
  cutFrequency: fc.constantFrom("daily", "weekly", "biweekly", "month"),
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
  | { at: number; kind: "charge" | "pay"; amount: number }
  | { at: number; kind: "authorize"; amount: number; ttl: number; follow: Follow | null; id?: string }
  | { at: number; kind: "capture"; pick: number; share: number; id?: string }
  | { at: number; kind: "void"; pick: number; id?: string }
  | { at: number; kind: "block" | "dissolve" };
const atArb = fc.integer({ min: 0, max: 80 * 24 });
/** A capture or void of the same authorization `after` hours later (it may have expired by then: the engine refuses it). */
interface Follow {
  kind: "capture" | "void";
  after: number;
  share: number;
}
const followArb: fc.Arbitrary<Follow | null> = fc.option(
  fc.record({ kind: fc.constantFrom("capture" as const, "void" as const), after: fc.integer({ min: 1, max: 15 * 24 }), share: fc.integer({ min: 1, max: 100 }) }),
  { nil: null, freq: 2 },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ at: atArb, kind: fc.constantFrom("charge" as const, "pay" as const), amount: fc.integer({ min: 1, max: 60000 }) }) },
  { weight: 4, arbitrary: fc.record({ at: atArb, kind: fc.constant("authorize" as const), amount: fc.integer({ min: 1, max: 80000 }), ttl: fc.integer({ min: 1, max: 30 }), follow: followArb }) },
  { weight: 1, arbitrary: fc.record({ at: atArb, kind: fc.constant("capture" as const), pick: fc.nat(), share: fc.integer({ min: 1, max: 100 }) }) },
  { weight: 1, arbitrary: fc.record({ at: atArb, kind: fc.constant("void" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ at: atArb, kind: fc.constantFrom("block" as const, "dissolve" as const) }) },
);
const walletArb = fc.record({
  product: productArb,
  createdHour: fc.integer({ min: 0, max: 48 }),
  firstCutDays: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
  limit: fc.integer({ min: 1000, max: 300000 }),
  ops: fc.array(opArb, { maxLength: 12 }),
});

/** Applies one random operation at `at` to the stored wallet through the engine (refusals leave it as it is). */
async function apply(w: Tracked, op: Op, at: Date): Promise<void> {
  const p = w.home.product;
  const picked = (s: WalletState, o: { pick: number; id?: string }): string | undefined => o.id ?? s.holds[o.pick % Math.max(1, s.holds.length)]?.authorizationId;
  if (op.kind === "charge") await operate(w, (s) => charge(s, p, at, Math.min(op.amount, Math.max(1, s.availableAmount))));
  else if (op.kind === "pay") await operate(w, (s) => pay(s, p, at, Math.min(op.amount, Math.max(1, s.principalOutstanding + s.interestOutstanding))));
  else if (op.kind === "authorize") {
    const authorizationId = op.id ?? nextAuthId();
    await operate(w, (s) => authorize(s, p, at, { authorizationId, amount: Math.min(op.amount, Math.max(1, s.availableAmount)), ttlDays: op.ttl }));
  } else if (op.kind === "capture") {
    await operate(w, (s) => {
      const h = s.holds.find((x) => x.authorizationId === picked(s, op));
      return h ? capture(s, p, at, h.authorizationId, Math.max(1, Math.floor((h.amount * op.share) / 100))) : advance(s, p, at);
    });
  } else if (op.kind === "void") await operate(w, (s) => voidAuthorization(s, p, at, picked(s, op) ?? "none"));
  else if (op.kind === "block") await operate(w, (s) => blockWallet(s, p, at));
  else await operate(w, (s) => dissolveWallet(s, p, at));
}

describe("random holds and operations (fast-check)", () => {
  it("the batches give the engine's wallets, holds, statements and events over ~3 months", async () => {
    const base = D("2027-03-10T00:00:00Z").getTime();
    const seen = { expired: 0, captured: 0, voided: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(walletArb, { minLength: 1, maxLength: 3 }), async (specs) => {
        const t = await newTenant();
        const tracked: { w: Tracked; ops: Op[] }[] = [];
        for (const [i, spec] of specs.entries()) {
          const productId = await insertProduct(em(), t.customerId, String(600 + i), spec.product);
          const createdAt = new Date(base + spec.createdHour * HOUR);
          const first = spec.firstCutDays === undefined ? undefined : new Date(createdAt.getTime() + spec.firstCutDays * 24 * HOUR);
          const w = await open(t, productId, spec.product, createdAt, spec.limit, first);
          tracked.push({ w, ops: spec.ops.map((op) => ({ ...op, at: spec.createdHour + op.at })) });
        }
        const sorted = tracked.flatMap(({ w, ops }) => ops.map((op) => ({ w, op }))).sort((x, y) => x.op.at - y.op.at);
        // authorization ids in time order (./nextAuthId), and each follow-up aimed at its authorization
        const all: { w: Tracked; op: Op }[] = [];
        for (const { w, op } of sorted) {
          if (op.kind !== "authorize") {
            all.push({ w, op });
            continue;
          }
          const id = nextAuthId();
          all.push({ w, op: { ...op, id } });
          if (op.follow) all.push({ w, op: { at: op.at + op.follow.after, kind: op.follow.kind, pick: 0, share: op.follow.share, id } });
        }
        all.sort((x, y) => x.op.at - y.op.at);
        for (const { w, op } of all) {
          const at = new Date(base + op.at * HOUR);
          await runBoth(t.scope, tracked.map((x) => x.w), at);
          await apply(w, op, at);
        }
        await runBoth(t.scope, tracked.map((x) => x.w), new Date(base + 100 * 24 * HOUR));
        for (const { w } of tracked) for (const c of w.closed) seen[c.kind] += 1;
      }),
      { numRuns: 12, seed: 20261126, endOnFailure: true },
    );
    // the runs did release holds by expiry (the batches), capture and void (the engine, persisted)
    expect(seen.expired).toBeGreaterThan(0);
    expect(seen.captured).toBeGreaterThan(0);
    expect(seen.voided).toBeGreaterThan(0);
  }, 300_000);
});
