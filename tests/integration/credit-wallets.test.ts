/**
 * Credit wallets over HTTP on a real PostgreSQL (reference "Credit wallet (credit core)",
 * "States and transitions › Credit wallet"; docs/decisions/provider-and-sandbox.md, docs/decisions/credit.md; spec/credit/wallets.tsp,
 * charges.tsp, payments.tsp, statements.tsp, events.tsp): create, read, list, PayOutCredit,
 * ReportPayCredit, ChangeWalletLimit, ChangeInterestCreditCapital, block, unblock, dissolve,
 * statements and events, Idempotency-Key, tenant isolation and concurrency. Every response is
 * checked against the credit document by the test app.
 *
 * Cycle effects are driven without the batches: the test writes the tenant's `credit_clock` row
 * (what the sandbox clock does; `tenantNow` then returns it) and moves it forward between
 * operations, so the next operation on a wallet runs the closes, cuts and grace ends due before it.
 */
import type request from "supertest";
import { describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, useTestApp } from "../support/app.js";
import { BASE, Walk } from "../support/fixtures.js";
import { goldenProductBody } from "../support/credit-golden.js";

const t = useTestApp();
let seq = 0;

const WALLETS = "/v2/wallet/credits";
const api = t.api;
type Body = Record<string, unknown>;


interface Tenant {
  customerId: string;
  key: string;
  userId: string;
}

/** A tenant with the golden product (`overrides` on it), a registered notification URL and an active user. */
async function tenant(options: { product?: Body; enlist?: boolean; clock?: string } = {}): Promise<Tenant> {
  const walk = new Walk(t.express);
  const { customerId, key } = await walk.tenant(`cw-${++seq}-${Date.now().toString(36)}`);
  const product = await api().post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody(customerId, options.product));
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  if (options.enlist !== false) {
    const enlisted = await api().put("/v2/notifications").set("x-api-key", key).send({ creditNotificationsURL: "https://93.184.215.14/credit-hooks" });
    expect(enlisted.status).toBe(200);
  }
  const { userId } = await walk.activeUserWithToken(key);
  if (options.clock) await setClock(customerId, options.clock);
  return { customerId, key, userId };
}

/** Sets the tenant's credit clock (the sandbox clock's row) to `iso`. */
async function setClock(customerId: string, iso: string): Promise<void> {
  await t.orm.em.fork().getConnection().execute(
    `insert into credit_clock (customer_id, "now", updated_at) values (?, ?, now()) on conflict (customer_id) do update set "now" = excluded."now", updated_at = now()`,
    [customerId, new Date(iso)],
  );
}

/** Creates a wallet (limit 100000 unless `body` says otherwise); expects 201 and returns `data`. */
async function createWallet(tn: Tenant, body: Body = {}): Promise<Body> {
  const res = await api().post(WALLETS).set("x-api-key", tn.key).send({ userId: tn.userId, currency: "USD", limit: 100000, creditProductCode: "001", ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as Body;
}

const post = (tn: Tenant, path: string, body?: Body, idempotencyKey?: string) => {
  const r = api().post(`${WALLETS}${path}`).set("x-api-key", tn.key);
  if (idempotencyKey) r.set("Idempotency-Key", idempotencyKey);
  return body === undefined ? r : r.send(body);
};
const charge = (tn: Tenant, walletId: unknown, amount: number, key?: string) => post(tn, `/${String(walletId)}/charges`, { amount, description: "Hardware store" }, key);
const payment = (tn: Tenant, walletId: unknown, amount: number, key?: string) => post(tn, `/${String(walletId)}/payments`, { amount }, key);
const getWallet = async (tn: Tenant, walletId: unknown): Promise<Body> => {
  const res = await api().get(`${WALLETS}/${String(walletId)}`).set("x-api-key", tn.key);
  expect(res.status).toBe(200);
  return res.body.data as Body;
};
const eventsOf = async (tn: Tenant, walletId: unknown): Promise<Body[]> => {
  const res = await api().get(`${WALLETS}/${String(walletId)}/events?limit=100`).set("x-api-key", tn.key);
  expect(res.status).toBe(200);
  return res.body.data.items as Body[];
};
const statementsOf = async (tn: Tenant, walletId: unknown): Promise<Body[]> => {
  const res = await api().get(`${WALLETS}/${String(walletId)}/statements`).set("x-api-key", tn.key);
  expect(res.status).toBe(200);
  return res.body.data.items as Body[];
};

/** Expects a credit error `status`/`code` (and `field` on 422s when given). */
function expectError(res: request.Response, status: number, code: string, field?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.errors[0].code).toBe(code);
  if (field !== undefined) expect(res.body.errors.map((e: { field?: string }) => e.field)).toContain(field);
}

describe("create, read, list", () => {
  it("creates an active wallet with AA = limit and the product's specs, at the tenant's clock", async () => {
    const tn = await tenant({ clock: "2026-01-01T00:00:00Z" });
    const w = await createWallet(tn, { description: "Everyday card", firstCutDate: "2026-01-31T00:00:00Z" });
    expect(w).toMatchObject({
      userId: tn.userId,
      currency: "USD",
      description: "Everyday card",
      creditProductCode: "001",
      status: "active",
      limit: 100000,
      availableAmount: 100000,
      principalOutstanding: 0,
      interestOutstanding: 0,
      totalDebt: 0,
      amountOverdraft: 0,
      sumOfDailyBalance: 0,
      firstCutDate: "2026-01-31T00:00:00.000Z",
      nextCutDate: "2026-01-31T00:00:00.000Z",
      time: null,
      expiresAt: null,
      interestSpecs: { interestRateNominal: 36, interestRateMoroso: 12, fixedInterestNominal: 0, fixedInterestMoroso: 500 },
      minimumPaymentSpecs: { minimumPaymentRate: 10, fixedMinimumPayment: 1000 },
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
    });
    expect(await getWallet(tn, w.walletId)).toEqual(w);
  });

  it("defaults firstCutDate to the creation day + one cutFrequency, and sets expiresAt from time", async () => {
    const tn = await tenant({ clock: "2026-03-31T15:30:00Z" });
    const w = await createWallet(tn, { time: 30 });
    expect(w.firstCutDate).toBe("2026-04-30T00:00:00.000Z");
    expect(w.expiresAt).toBe("2026-04-30T15:30:00.000Z");
    expect(w.time).toBe(30);
    expect(w.description).toBeNull();
  });

  it("lists the tenant's wallets oldest first with limit/offset, and no other tenant's", async () => {
    const tn = await tenant();
    const other = await tenant();
    await createWallet(other);
    const ids: unknown[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createWallet(tn)).walletId);
    const all = await api().get(WALLETS).set("x-api-key", tn.key);
    expect(all.status).toBe(200);
    expect(all.body.data).toMatchObject({ total: 3, limit: 20, offset: 0 });
    expect(all.body.data.items.map((w: Body) => w.walletId)).toEqual(ids);
    const page = await api().get(`${WALLETS}?limit=1&offset=1`).set("x-api-key", tn.key);
    expect(page.body.data).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.body.data.items.map((w: Body) => w.walletId)).toEqual([ids[1]]);
  });
});

describe("create refusals", () => {
  it("422 on creditProductCode for a product the tenant does not have", async () => {
    const tn = await tenant();
    const res = await api().post(WALLETS).set("x-api-key", tn.key).send({ userId: tn.userId, currency: "USD", limit: 1000, creditProductCode: "999" });
    expectError(res, 422, "VALIDATION_ERROR", "creditProductCode");
  });

  it("422 on userId for an unknown user, a user not yet active, and another tenant's user", async () => {
    const tn = await tenant();
    const other = await tenant();
    const pending = await new Walk(t.express).user(tn.key);
    for (const userId of ["6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b", pending.user_id, other.userId]) {
      const res = await api().post(WALLETS).set("x-api-key", tn.key).send({ userId, currency: "USD", limit: 1000, creditProductCode: "001" });
      expectError(res, 422, "VALIDATION_ERROR", "userId");
    }
  });

  it("409 without a registered notification URL", async () => {
    const tn = await tenant({ enlist: false });
    const res = await api().post(WALLETS).set("x-api-key", tn.key).send({ userId: tn.userId, currency: "USD", limit: 1000, creditProductCode: "001" });
    expectError(res, 409, "CONFLICT");
  });

  it("422 on firstCutDate when it is not later than the creation instant", async () => {
    const tn = await tenant({ clock: "2026-01-01T00:00:00Z" });
    for (const firstCutDate of ["2026-01-01T00:00:00Z", "2025-12-31T00:00:00Z"]) {
      const res = await api().post(WALLETS).set("x-api-key", tn.key).send({ userId: tn.userId, currency: "USD", limit: 1000, creditProductCode: "001", firstCutDate });
      expectError(res, 422, "VALIDATION_ERROR", "firstCutDate");
    }
  });
});

describe("tenant isolation", () => {
  it("answers 404 for another tenant's wallet and for a malformed id, on every operation", async () => {
    const owner = await tenant();
    const intruder = await tenant();
    const w = await createWallet(owner);
    for (const id of [w.walletId, "not-a-uuid"]) {
      const paths: [string, string, Body | undefined][] = [
        ["get", `/${String(id)}`, undefined],
        ["get", `/${String(id)}/statements`, undefined],
        ["get", `/${String(id)}/events`, undefined],
        ["post", `/${String(id)}/charges`, { amount: 100, description: "x" }],
        ["post", `/${String(id)}/payments`, { amount: 100 }],
        ["post", `/${String(id)}/limit`, { limit: 200000 }],
        ["put", `/${String(id)}/interest`, { interestRateNominal: 30 }],
        ["post", `/${String(id)}/block`, undefined],
        ["post", `/${String(id)}/unblock`, undefined],
        ["post", `/${String(id)}/dissolve`, undefined],
      ];
      for (const [method, path, body] of paths) {
        const r = (method === "get" ? api().get(`${WALLETS}${path}`) : method === "put" ? api().put(`${WALLETS}${path}`) : api().post(`${WALLETS}${path}`)).set("x-api-key", intruder.key);
        const res = body === undefined ? await r : await r.send(body);
        expectError(res, 404, "NOT_FOUND");
      }
    }
    const after = await getWallet(owner, w.walletId);
    expect(after).toMatchObject({ status: "active", availableAmount: 100000, limit: 100000 });
  });
});

describe("charges and payments", () => {
  it("a charge lowers AA and raises AO; a payment splits 50/50 with what interest cannot take going to principal", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const c = await charge(tn, w.walletId, 30000, "c-1");
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    expect(c.body.data).toMatchObject({ walletId: w.walletId, amount: 30000, description: "Hardware store", idempotencyKey: "c-1", isDuplicate: false });
    expect(c.body.data.wallet).toMatchObject({ availableAmount: 70000, principalOutstanding: 30000, totalDebt: 30000 });
    const p = await payment(tn, w.walletId, 1234);
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    expect(p.body.data).toMatchObject({ amount: 1234, appliedToInterest: 0, appliedToPrincipal: 1234, appliedToOverdraft: 0, isDuplicate: false });
    expect(p.body.data.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(p.body.data.wallet).toMatchObject({ availableAmount: 71234, principalOutstanding: 28766, interestOutstanding: 0, totalDebt: 28766 });
    const events = await eventsOf(tn, w.walletId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "Reporte de Pago", amount: 1234, direction: "credit", affectsBalance: true, sequence: 1 });
    expect(events[0]!.walletDetails_after).toMatchObject({ principal_outstanding: 28766, interest_accrued: 0, totalDebt: 28766, limit: 100000, amountOverdraft: 0 });
  });

  it("422 on amount for a charge above AA and a payment above the total debt; nothing booked", async () => {
    const tn = await tenant();
    const w = await createWallet(tn, { limit: 5000 });
    expectError(await charge(tn, w.walletId, 5001), 422, "VALIDATION_ERROR", "amount");
    expectError(await payment(tn, w.walletId, 1), 422, "VALIDATION_ERROR", "amount");
    expect((await charge(tn, w.walletId, 5000)).status).toBe(201);
    expectError(await payment(tn, w.walletId, 5001), 422, "VALIDATION_ERROR", "amount");
    expect(await getWallet(tn, w.walletId)).toMatchObject({ availableAmount: 0, principalOutstanding: 5000 });
    expect(await eventsOf(tn, w.walletId)).toEqual([]);
  });

  it("on a non-revolving product a payment lowers the debt but does not restore the available amount", async () => {
    const tn = await tenant({ product: { revolving: false, capitalInterestSplit: 0 } });
    const w = await createWallet(tn);
    expect((await charge(tn, w.walletId, 10000)).status).toBe(201);
    const paid = await payment(tn, w.walletId, 5000);
    expect(paid.body.data).toMatchObject({ appliedToInterest: 0, appliedToPrincipal: 5000 });
    expect(paid.body.data.wallet).toMatchObject({ availableAmount: 90000, principalOutstanding: 5000, totalDebt: 5000 });
  });

  it("409 for a charge after `time` days (expired line)", async () => {
    const tn = await tenant({ clock: "2026-01-01T00:00:00Z" });
    const w = await createWallet(tn, { time: 1 });
    expect((await charge(tn, w.walletId, 100)).status).toBe(201);
    await setClock(tn.customerId, "2026-01-02T00:00:00Z");
    expectError(await charge(tn, w.walletId, 100), 409, "CONFLICT");
    expect((await payment(tn, w.walletId, 100)).status).toBe(201);
  });
});

describe("the cycle through the API (docs/decisions/credit.md)", () => {
  it("golden vector: charges 30000 on Jan 1 and 15000 on Jan 16 → the Jan 31 statement has interest 1125 and minimum 5500", async () => {
    const tn = await tenant({ clock: "2026-01-01T00:00:00Z" });
    const w = await createWallet(tn, { firstCutDate: "2026-01-31T00:00:00Z" });
    expect((await charge(tn, w.walletId, 30000)).status).toBe(201);
    await setClock(tn.customerId, "2026-01-16T10:00:00Z");
    const second = await charge(tn, w.walletId, 15000);
    expect(second.status).toBe(201);
    expect(second.body.data.wallet).toMatchObject({ availableAmount: 55000, principalOutstanding: 45000, sumOfDailyBalance: 450000, nextCutDate: "2026-01-31T00:00:00.000Z" });
    await setClock(tn.customerId, "2026-02-05T12:00:00Z");
    const paid = await payment(tn, w.walletId, 5500);
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    expect(paid.body.data).toMatchObject({ appliedToInterest: 0, appliedToPrincipal: 5500 });
    expect(paid.body.data.wallet).toMatchObject({
      availableAmount: 60500,
      principalOutstanding: 39500,
      interestOutstanding: 0,
      sumOfDailyBalance: 225000,
      nextCutDate: "2026-02-28T00:00:00.000Z",
      updatedAt: "2026-02-05T12:00:00.000Z",
    });
    const [st, ...rest] = await statementsOf(tn, w.walletId);
    expect(rest).toEqual([]);
    expect(st).toEqual({
      walletId: w.walletId,
      cutDate: "2026-01-31T00:00:00.000Z",
      cycleStart: "2026-01-01T00:00:00.000Z",
      cycleEnd: "2026-01-31T00:00:00.000Z",
      daysInCycle: 30,
      sumOfDailyBalance: 1125000,
      principalAtCut: 45000,
      interestOutstandingAtCut: 0,
      interestAccrualMethod: "ADB",
      compound: false,
      interestBasis: 1125000,
      interestRateNominal: 36,
      dailyRateDivisor: 360,
      fixedInterestNominal: 0,
      minimumPaymentRate: 10,
      fixedMinimumPayment: 1000,
      interestGenerated: 1125,
      minimumPayment: 5500,
      paymentDueDate: "2026-02-10T00:00:00.000Z",
      paidInCycle: 5500,
      status: "paid",
      interestApplied: 0,
      interestAppliedAt: null,
      penalInterest: 0,
      interestRateMoroso: null,
      fixedInterestMoroso: null,
      curedAt: null,
    });
    let events = await eventsOf(tn, w.walletId);
    expect(events.map((e) => [e.sequence, e.type, e.amount, e.createdAt])).toEqual([
      [1, "Interes Nominal Calculado", 1125, "2026-01-31T00:00:00.000Z"],
      [2, "Reporte de Pago", 5500, "2026-02-05T12:00:00.000Z"],
    ]);

    // After the grace end (Feb 10) the next operation applies the interest (non-compound: into IO).
    await setClock(tn.customerId, "2026-02-11T00:00:00Z");
    const after = await charge(tn, w.walletId, 100);
    expect(after.status).toBe(201);
    expect(after.body.data.wallet).toMatchObject({ principalOutstanding: 39600, interestOutstanding: 1125, totalDebt: 40725, availableAmount: 59275 });
    events = await eventsOf(tn, w.walletId);
    expect(events[2]).toMatchObject({ sequence: 3, type: "Interes Nominal Aplicado", amount: 1125, createdAt: "2026-02-10T00:00:00.000Z" });
    const [applied] = await statementsOf(tn, w.walletId);
    expect(applied).toMatchObject({ status: "paid", interestApplied: 1125, interestAppliedAt: "2026-02-10T00:00:00.000Z" });
  });

  it("the same wallet on a BAC product: interest 1350", async () => {
    const tn = await tenant({ clock: "2026-01-01T00:00:00Z", product: { interestAccrualMethod: "BAC" } });
    const w = await createWallet(tn, { firstCutDate: "2026-01-31T00:00:00Z" });
    expect((await charge(tn, w.walletId, 30000)).status).toBe(201);
    await setClock(tn.customerId, "2026-01-16T10:00:00Z");
    expect((await charge(tn, w.walletId, 15000)).status).toBe(201);
    await setClock(tn.customerId, "2026-02-01T00:00:00Z");
    expect((await charge(tn, w.walletId, 1)).status).toBe(201);
    const [st] = await statementsOf(tn, w.walletId);
    expect(st).toMatchObject({ interestAccrualMethod: "BAC", interestBasis: 1350000, interestGenerated: 1350, minimumPayment: 5500 });
  });

  it("default and cure: penal 800 at the grace end, charges declined while in default, 3000 + 1800 cures", async () => {
    const tn = await tenant({ clock: "2026-01-01T00:00:00Z" });
    const w = await createWallet(tn, { firstCutDate: "2026-01-31T00:00:00Z" });
    expect((await charge(tn, w.walletId, 30000)).status).toBe(201);
    await setClock(tn.customerId, "2026-02-10T01:00:00Z");
    // The refused charge still commits the steps due before it: the wallet is in default.
    expectError(await charge(tn, w.walletId, 100), 409, "CONFLICT");
    expect(await getWallet(tn, w.walletId)).toMatchObject({ status: "in_default", principalOutstanding: 30000, interestOutstanding: 1700, availableAmount: 68300 });
    const first = await payment(tn, w.walletId, 3000);
    expect(first.body.data).toMatchObject({ appliedToInterest: 1500, appliedToPrincipal: 1500 });
    expect(first.body.data.wallet).toMatchObject({ status: "in_default", availableAmount: 68300 });
    const second = await payment(tn, w.walletId, 1800);
    expect(second.body.data).toMatchObject({ appliedToInterest: 200, appliedToPrincipal: 1600 });
    expect(second.body.data.wallet).toMatchObject({ status: "active", principalOutstanding: 26900, interestOutstanding: 0, availableAmount: 73100 });
    const events = await eventsOf(tn, w.walletId);
    expect(events.map((e) => [e.sequence, e.type, e.amount])).toEqual([
      [1, "Interes Nominal Calculado", 900],
      [2, "Interes Nominal Aplicado", 900],
      [3, "Interes Moroso Calculado", 800],
      [4, "Interes Moroso Aplicado", 800],
      [5, "Interes moroso ejecutado", 800],
      [6, "Reporte de Pago", 3000],
      [7, "Reporte de Pago", 1800],
      [8, "Interes cancelado", 800],
      [9, "Credito Reintegrado", 4800],
    ]);
    const [st] = await statementsOf(tn, w.walletId);
    expect(st).toMatchObject({ interestGenerated: 900, minimumPayment: 4000, status: "defaulted", penalInterest: 800, interestRateMoroso: 12, fixedInterestMoroso: 500, paidInCycle: 4800, curedAt: "2026-02-10T01:00:00.000Z" });
    expect((await charge(tn, w.walletId, 100)).status).toBe(201);
  });
});

describe("overdraft and product updates", () => {
  it("interest applied on a fully used line is overdraft; a payment covers it first and restores only the rest", async () => {
    const tn = await tenant({ clock: "2026-01-01T00:00:00Z" });
    const w = await createWallet(tn, { limit: 30000, firstCutDate: "2026-01-31T00:00:00Z" });
    expect((await charge(tn, w.walletId, 30000)).status).toBe(201);
    await setClock(tn.customerId, "2026-02-05T00:00:00Z");
    expect((await payment(tn, w.walletId, 4000)).body.data.wallet).toMatchObject({ availableAmount: 4000, principalOutstanding: 26000 });
    expect((await charge(tn, w.walletId, 4000)).body.data.wallet).toMatchObject({ availableAmount: 0, principalOutstanding: 30000 });
    await setClock(tn.customerId, "2026-02-11T00:00:00Z");
    expectError(await charge(tn, w.walletId, 1), 422, "VALIDATION_ERROR", "amount");
    expect(await getWallet(tn, w.walletId)).toMatchObject({ status: "active", interestOutstanding: 900, totalDebt: 30900, amountOverdraft: 900, availableAmount: 0 });
    const paid = await payment(tn, w.walletId, 1000);
    expect(paid.body.data).toMatchObject({ appliedToInterest: 500, appliedToPrincipal: 500, appliedToOverdraft: 900 });
    expect(paid.body.data.wallet).toMatchObject({ interestOutstanding: 400, principalOutstanding: 29500, totalDebt: 29900, amountOverdraft: 0, availableAmount: 100 });
  });

  it("Update Credit Product Settings applies to the wallet from its next cut", async () => {
    const tn = await tenant({ clock: "2026-01-01T00:00:00Z" });
    const w = await createWallet(tn, { firstCutDate: "2026-01-31T00:00:00Z" });
    expect((await charge(tn, w.walletId, 30000)).status).toBe(201);
    const patched = await api().patch("/v2/credit-products/001").set("x-api-key", TEST_MASTER_KEY).send({ customerId: tn.customerId, baseInterestRate: 72, fixedMinimumPaymentAmount: 0 });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect((await getWallet(tn, w.walletId)).interestSpecs).toMatchObject({ interestRateNominal: 36 });
    await setClock(tn.customerId, "2026-02-01T00:00:00Z");
    const paid = await payment(tn, w.walletId, 100);
    expect(paid.body.data.wallet).toMatchObject({ interestSpecs: { interestRateNominal: 72 }, minimumPaymentSpecs: { fixedMinimumPayment: 0 } });
    const [st] = await statementsOf(tn, w.walletId);
    expect(st).toMatchObject({ interestRateNominal: 72, interestGenerated: 1800, fixedMinimumPayment: 0, minimumPayment: 3000 });
  });
});

describe("ChangeWalletLimit", () => {
  it("raises the limit and AA by the difference, emitting Cambio de Limite; equal or lower answers 422 on limit", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    expect((await charge(tn, w.walletId, 40000)).status).toBe(201);
    const raised = await post(tn, `/${String(w.walletId)}/limit`, { limit: 150000 });
    expect(raised.status, JSON.stringify(raised.body)).toBe(200);
    expect(raised.body.data).toMatchObject({ limit: 150000, availableAmount: 110000, principalOutstanding: 40000 });
    expectError(await post(tn, `/${String(w.walletId)}/limit`, { limit: 150000 }), 422, "VALIDATION_ERROR", "limit");
    expectError(await post(tn, `/${String(w.walletId)}/limit`, { limit: 1000 }), 422, "VALIDATION_ERROR", "limit");
    const events = await eventsOf(tn, w.walletId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "Cambio de Limite", amount: 50000, direction: "credit", affectsBalance: true, sequence: 1 });
    expect(events[0]!.walletDetails_after).toMatchObject({ limit: 150000, principal_outstanding: 40000 });
  });
});

describe("ChangeInterestCreditCapital", () => {
  it("is ignored when the product has variableSpecs false: nothing changes", async () => {
    const tn = await tenant({ product: { variableSpecs: false } });
    const w = await createWallet(tn);
    const res = await api().put(`${WALLETS}/${String(w.walletId)}/interest`).set("x-api-key", tn.key).send({ interestRateNominal: 30 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ walletId: w.walletId, status: "ignored", activatesAt: null, interestSpecs: { interestRateNominal: 36 } });
    expect((await getWallet(tn, w.walletId)).interestSpecs).toEqual(w.interestSpecs);
    expect(await eventsOf(tn, w.walletId)).toEqual([]);
  });

  it("is pending until the next cut, which still uses the old rate; then the override is in force (Cambio Interest ejecutado)", async () => {
    const tn = await tenant({ clock: "2026-01-01T00:00:00Z" });
    const w = await createWallet(tn, { firstCutDate: "2026-01-31T00:00:00Z" });
    expect((await charge(tn, w.walletId, 30000)).status).toBe(201);
    const res = await api().put(`${WALLETS}/${String(w.walletId)}/interest`).set("x-api-key", tn.key).send({ interestRateNominal: 24, fixedMinimumPayment: 2000 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({
      walletId: w.walletId,
      status: "pending",
      interestSpecs: { interestRateNominal: 24, interestRateMoroso: 12, fixedInterestNominal: 0, fixedInterestMoroso: 500 },
      minimumPaymentSpecs: { minimumPaymentRate: 10, fixedMinimumPayment: 2000 },
      activatesAt: "2026-01-31T00:00:00.000Z",
      requestedAt: "2026-01-01T00:00:00.000Z",
    });
    expect((await getWallet(tn, w.walletId)).interestSpecs).toMatchObject({ interestRateNominal: 36 });
    await setClock(tn.customerId, "2026-02-01T00:00:00Z");
    const paid = await payment(tn, w.walletId, 4000);
    expect(paid.body.data.wallet).toMatchObject({ interestSpecs: { interestRateNominal: 24 }, minimumPaymentSpecs: { fixedMinimumPayment: 2000 } });
    const [st] = await statementsOf(tn, w.walletId);
    expect(st).toMatchObject({ interestRateNominal: 36, interestGenerated: 900, minimumPayment: 4000 });
    const events = await eventsOf(tn, w.walletId);
    expect(events.map((e) => e.type)).toEqual(["Interes Nominal Calculado", "Cambio Interest ejecutado", "Reporte de Pago"]);
    expect(events[1]).toMatchObject({ amount: 0, createdAt: "2026-01-31T00:00:00.000Z" });
  });

  it("422 for an empty body or a rate with more than 4 decimal places", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const empty = await api().put(`${WALLETS}/${String(w.walletId)}/interest`).set("x-api-key", tn.key).send({});
    expectError(empty, 422, "VALIDATION_ERROR");
    const unknownOnly = await api().put(`${WALLETS}/${String(w.walletId)}/interest`).set("x-api-key", tn.key).send({ somethingElse: 1 });
    expectError(unknownOnly, 422, "VALIDATION_ERROR");
    const precise = await api().put(`${WALLETS}/${String(w.walletId)}/interest`).set("x-api-key", tn.key).send({ interestRateNominal: 12.34567 });
    expectError(precise, 422, "VALIDATION_ERROR", "interestRateNominal");
  });

  it("422 for a rate whose extra decimal places a double cannot hold (counted on the JSON text)", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const text = `{"interestRateNominal":12.00000000000000000001,"fixedInterestNominal":100}`;
    const res = await api().put(`${WALLETS}/${String(w.walletId)}/interest`).set("x-api-key", tn.key).set("content-type", "application/json").send(text);
    expectError(res, 422, "VALIDATION_ERROR", "interestRateNominal");
  });
});

describe("block, unblock, dissolve", () => {
  it("a blocked wallet declines charges and accepts payments; unblock restores charges; wrong transitions answer 409", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    expect((await charge(tn, w.walletId, 10000)).status).toBe(201);
    expectError(await post(tn, `/${String(w.walletId)}/unblock`), 409, "CONFLICT");
    const blocked = await post(tn, `/${String(w.walletId)}/block`);
    expect(blocked.status).toBe(200);
    expect(blocked.body.data).toMatchObject({ status: "blocked", availableAmount: 90000 });
    expectError(await post(tn, `/${String(w.walletId)}/block`), 409, "CONFLICT");
    expectError(await charge(tn, w.walletId, 100), 409, "CONFLICT");
    const paid = await payment(tn, w.walletId, 1000);
    expect(paid.status).toBe(201);
    expect(paid.body.data.wallet).toMatchObject({ status: "blocked", availableAmount: 91000 });
    const unblocked = await post(tn, `/${String(w.walletId)}/unblock`);
    expect(unblocked.body.data).toMatchObject({ status: "active" });
    expect((await charge(tn, w.walletId, 100)).status).toBe(201);
  });

  it("a dissolved wallet declines charges, limit changes and overrides, still takes payments, and has no next cut", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    expect((await charge(tn, w.walletId, 10000)).status).toBe(201);
    const dissolved = await post(tn, `/${String(w.walletId)}/dissolve`);
    expect(dissolved.status).toBe(200);
    expect(dissolved.body.data).toMatchObject({ status: "dissolved", nextCutDate: null, principalOutstanding: 10000 });
    expectError(await post(tn, `/${String(w.walletId)}/dissolve`), 409, "CONFLICT");
    expectError(await post(tn, `/${String(w.walletId)}/block`), 409, "CONFLICT");
    expectError(await charge(tn, w.walletId, 100), 409, "CONFLICT");
    expectError(await post(tn, `/${String(w.walletId)}/limit`, { limit: 200000 }), 409, "CONFLICT");
    expectError(await api().put(`${WALLETS}/${String(w.walletId)}/interest`).set("x-api-key", tn.key).send({ interestRateNominal: 1 }), 409, "CONFLICT");
    const paid = await payment(tn, w.walletId, 10000);
    expect(paid.status).toBe(201);
    expect(paid.body.data.wallet).toMatchObject({ status: "dissolved", totalDebt: 0 });
  });
});

describe("statements and events endpoints", () => {
  it("page statements by cut and events by sequence with limit/offset", async () => {
    const tn = await tenant({ clock: "2026-01-01T00:00:00Z", product: { cutFrequency: "weekly", gracePeriod: 3 } });
    const w = await createWallet(tn, { firstCutDate: "2026-01-08T00:00:00Z" });
    expect((await charge(tn, w.walletId, 10000)).status).toBe(201);
    await setClock(tn.customerId, "2026-01-29T12:00:00Z");
    expect((await payment(tn, w.walletId, 10)).status).toBe(201);
    const all = await statementsOf(tn, w.walletId);
    expect(all.map((s) => s.cutDate)).toEqual(["2026-01-08T00:00:00.000Z", "2026-01-15T00:00:00.000Z", "2026-01-22T00:00:00.000Z", "2026-01-29T00:00:00.000Z"]);
    const page = await api().get(`${WALLETS}/${String(w.walletId)}/statements?limit=2&offset=1`).set("x-api-key", tn.key);
    expect(page.body.data).toMatchObject({ total: 4, limit: 2, offset: 1 });
    expect(page.body.data.items.map((s: Body) => s.cutDate)).toEqual([all[1]!.cutDate, all[2]!.cutDate]);
    const events = await eventsOf(tn, w.walletId);
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    const evPage = await api().get(`${WALLETS}/${String(w.walletId)}/events?limit=3&offset=2`).set("x-api-key", tn.key);
    expect(evPage.body.data).toMatchObject({ total: events.length, limit: 3, offset: 2 });
    expect(evPage.body.data.items.map((e: Body) => e.sequence)).toEqual([3, 4, 5]);
  });
});

describe("Idempotency-Key", () => {
  it("a repeat returns the first result (isDuplicate) and books nothing; another body, wallet or operation answers 409", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const w2 = await createWallet(tn);
    const first = await charge(tn, w.walletId, 2500, "k-1");
    expect(first.status).toBe(201);
    const again = await charge(tn, w.walletId, 2500, "k-1");
    expect(again.status).toBe(201);
    expect(again.body.data).toMatchObject({ id: first.body.data.id, isDuplicate: true, idempotencyKey: "k-1", createdAt: first.body.data.createdAt });
    expect(again.body.data.wallet).toMatchObject({ availableAmount: 97500 });
    expectError(await charge(tn, w.walletId, 2600, "k-1"), 409, "CONFLICT");
    expectError(await charge(tn, w2.walletId, 2500, "k-1"), 409, "CONFLICT");
    expectError(await payment(tn, w.walletId, 2500, "k-1"), 409, "CONFLICT");
    const p1 = await payment(tn, w.walletId, 500, "p-1");
    const p2 = await payment(tn, w.walletId, 500, "p-1");
    expect(p2.body.data).toMatchObject({ id: p1.body.data.id, isDuplicate: true });
    expect(await getWallet(tn, w.walletId)).toMatchObject({ availableAmount: 98000, principalOutstanding: 2000 });
    // Keys are per tenant: another tenant may use the same key.
    const other = await tenant();
    const ow = await createWallet(other);
    expect((await charge(other, ow.walletId, 100, "k-1")).body.data.isDuplicate).toBe(false);
  });

  it("a refused request does not consume its key", async () => {
    const tn = await tenant();
    const w = await createWallet(tn, { limit: 1000 });
    expectError(await charge(tn, w.walletId, 2000, "k-r"), 422, "VALIDATION_ERROR", "amount");
    expect((await post(tn, `/${String(w.walletId)}/limit`, { limit: 5000 })).status).toBe(200);
    const ok = await charge(tn, w.walletId, 2000, "k-r");
    expect(ok.status).toBe(201);
    expect(ok.body.data.isDuplicate).toBe(false);
  });

  it("20 concurrent repeats of one payment book it once", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    expect((await charge(tn, w.walletId, 50000)).status).toBe(201);
    const results = await Promise.all(Array.from({ length: 20 }, () => payment(tn, w.walletId, 7000, "same-payment")));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    expect(results.filter((r) => r.body.data.isDuplicate === false)).toHaveLength(1);
    expect(await getWallet(tn, w.walletId)).toMatchObject({ principalOutstanding: 43000, availableAmount: 57000 });
    expect((await eventsOf(tn, w.walletId)).filter((e) => e.type === "Reporte de Pago")).toHaveLength(1);
  });
});

describe("concurrency", () => {
  it("parallel charges on one wallet never exceed the available amount; counters never go negative", async () => {
    const tn = await tenant();
    const w = await createWallet(tn, { limit: 100000 });
    const results = await Promise.all(Array.from({ length: 25 }, () => charge(tn, w.walletId, 10000)));
    const ok = results.filter((r) => r.status === 201);
    expect(ok).toHaveLength(10);
    for (const r of results.filter((x) => x.status !== 201)) expectError(r, 422, "VALIDATION_ERROR", "amount");
    const after = await getWallet(tn, w.walletId);
    expect(after).toMatchObject({ availableAmount: 0, principalOutstanding: 100000, totalDebt: 100000 });
    const mixed = await Promise.all([
      ...Array.from({ length: 10 }, () => payment(tn, w.walletId, 5000)),
      ...Array.from({ length: 10 }, () => charge(tn, w.walletId, 5000)),
    ]);
    expect(mixed.every((r) => r.status === 201 || r.status === 422)).toBe(true);
    const final = await getWallet(tn, w.walletId);
    const charged = mixed.slice(10).filter((r) => r.status === 201).length;
    expect(final.principalOutstanding).toBe(100000 - 50000 + charged * 5000);
    expect(final.availableAmount).toBe(100000 - (final.principalOutstanding as number));
    expect(final.availableAmount as number).toBeGreaterThanOrEqual(0);
  });
});

describe("platform users used as holders", () => {
  it("a deactivated user can no longer open a wallet", async () => {
    const tn = await tenant();
    const user = await new Walk(t.express).user(tn.key);
    const userId = user.user_id as string;
    expect((await api().post(`${BASE}/users/${userId}/activate`).set("x-api-key", tn.key)).status).toBe(200);
    await createWallet(tn, { userId });
    expect((await api().post(`${BASE}/users/${userId}/deactivate`).set("x-api-key", tn.key)).status).toBeLessThan(300);
    const res = await api().post(WALLETS).set("x-api-key", tn.key).send({ userId, currency: "USD", limit: 1000, creditProductCode: "001" });
    expectError(res, 422, "VALIDATION_ERROR", "userId");
  });
});
