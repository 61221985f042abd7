/**
 * The credit core's sandbox clock over HTTP on a real PostgreSQL (docs/decisions/provider-and-sandbox.md;
 * spec/credit/sandbox-clock.tsp): Get (the tenant's clock, else real time), Set (any instant while the
 * tenant has no credit wallet, past included; with wallets only forward, 409 otherwise, running what
 * falls due), Advance (`days` or `to`, exactly one, else 422; runs the due steps and answers with the
 * notifications emitted in order). Wallets are seeded in the database as the engine makes them (the
 * operation endpoints are built elsewhere); the notifications are compared with the engine's events.
 */
import { randomUUID } from "node:crypto";
import type request from "supertest";
import { describe, expect, it } from "vitest";
import { advance, charge, createWallet, notificationPayload, pay, type Outcome, type WalletState } from "../../src/domain/credit/index.js";
import { sandboxClockHandlers } from "../../src/http/credit/clock-handlers.js";
import { DomainError } from "../../src/domain/errors.js";
import { SandboxClockService } from "../../src/modules/credit/clock/service.js";
import { useTestApp, type TestApp } from "../support/app.js";
import { Db } from "../../src/db/sql.js";
import { insertProduct, loadEvents, loadWallet, persistWallet, type WalletHome } from "../support/credit-seed.js";
import { Walk } from "../support/fixtures.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";

const t = useTestApp();

/** A `Db` on the test app's pool, as src/app.ts builds the service's (src/db/sql.ts). */
async function statementsOf(orm: TestApp["orm"]): Promise<Db> {
  return new Db(await orm.em.getConnection().getNativeClient(), { named: true });
}
let seq = 0;

const CLOCK = "/v2/sandbox/clock";
const api = t.api;
const em = () => t.orm.em.fork();
const D = (iso: string): Date => new Date(iso);


function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`engine refused: ${JSON.stringify(o)}`);
  return o.value;
}

/** A tenant (customer, owner key) with one user. */
async function tenant(): Promise<{ customerId: string; key: string; userId: string }> {
  const walk = new Walk(t.express);
  const { customerId, key } = await walk.tenant(`sc-${++seq}-${Date.now().toString(36)}`);
  const user = await walk.user(key);
  return { customerId, key, userId: user.user_id as string };
}

/** Inserts a golden-product wallet created at `createdAt` (first cut Jan 31 style: `firstCutDate`) and returns its home and state. */
async function seedWallet(tn: { customerId: string; userId: string }, createdAt: Date, firstCutDate: Date, code = "100"): Promise<{ home: WalletHome; state: WalletState }> {
  const productId = await insertProduct(em(), tn.customerId, code, GOLDEN_PRODUCT);
  const state = ok(createWallet(GOLDEN_PRODUCT, { walletId: randomUUID(), createdAt, limit: 100000, firstCutDate }));
  const home = { customerId: tn.customerId, userId: tn.userId, productId, product: GOLDEN_PRODUCT };
  await persistWallet(em(), home, state);
  return { home, state };
}

/** Applies an engine operation to the stored wallet and persists it, as an operation endpoint would. */
async function operate(home: WalletHome, walletId: string, op: (s: WalletState) => Outcome<{ state: WalletState; events: Parameters<typeof persistWallet>[3] }>): Promise<WalletState> {
  const stored = (await loadWallet(em(), walletId)).state;
  const done = ok(op(stored));
  await persistWallet(em(), home, done.state, done.events);
  return done.state;
}

async function setClock(key: string, now: string): Promise<request.Response> {
  return api().put(CLOCK).set("x-api-key", key).send({ now });
}

async function advanceClock(key: string, body: Record<string, unknown>): Promise<request.Response> {
  return api().post(`${CLOCK}/advance`).set("x-api-key", key).send(body);
}

describe("Get and Set Sandbox Clock", () => {
  it("starts at the real time, and without wallets may be set anywhere, past included", async () => {
    const { key } = await tenant();
    const before = Date.now();
    const read = await api().get(CLOCK).set("x-api-key", key);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ success: true, meta: { version: "v2" } });
    expect(Date.parse(read.body.data.now as string)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(read.body.data.now as string)).toBeLessThanOrEqual(Date.now() + 1000);

    const past = await setClock(key, "2020-02-29T12:00:00.000Z");
    expect(past.status, JSON.stringify(past.body)).toBe(200);
    expect(past.body.data).toEqual({ now: "2020-02-29T12:00:00.000Z", target: "2020-02-29T12:00:00.000Z", complete: true });
    expect((await api().get(CLOCK).set("x-api-key", key)).body.data).toEqual({ now: "2020-02-29T12:00:00.000Z" });
    const earlier = await setClock(key, "2019-01-01T00:00:00.000Z");
    expect(earlier.status).toBe(200);
    expect((await api().get(CLOCK).set("x-api-key", key)).body.data).toEqual({ now: "2019-01-01T00:00:00.000Z" });
  });

  it("with a wallet only moves forward: an earlier instant answers 409, a later one runs what falls due", async () => {
    const tn = await tenant();
    expect((await setClock(tn.key, "2026-01-01T00:00:00.000Z")).status).toBe(200);
    const { home, state } = await seedWallet(tn, D("2026-01-01T00:00:00Z"), D("2026-01-31T00:00:00Z"));
    await operate(home, state.walletId, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000));

    const back = await setClock(tn.key, "2025-12-31T23:59:59.000Z");
    expect(back.status).toBe(409);
    expect(back.body.errors).toContainEqual(expect.objectContaining({ code: "CONFLICT" }));
    expect((await api().get(CLOCK).set("x-api-key", tn.key)).body.data).toEqual({ now: "2026-01-01T00:00:00.000Z" });

    const same = await setClock(tn.key, "2026-01-01T00:00:00.000Z");
    expect(same.status).toBe(200);
    const forward = await setClock(tn.key, "2026-02-01T00:00:00.000Z");
    expect(forward.status).toBe(200);
    const stored = await loadWallet(em(), state.walletId);
    expect(stored.state.statements.map((s) => [s.cutDate.toISOString(), s.interestGenerated, s.minimumPayment])).toEqual([["2026-01-31T00:00:00.000Z", 900, 4000]]);
    expect(stored.state.asOf).toEqual(D("2026-02-01T00:00:00Z"));
  });
});

describe("Advance Sandbox Clock", () => {
  it("golden vector: answers with the cut's notification, equal to the engine's, and the statement holds 1125 / 5500", async () => {
    const tn = await tenant();
    expect((await setClock(tn.key, "2026-01-01T00:00:00.000Z")).status).toBe(200);
    const { home, state } = await seedWallet(tn, D("2026-01-01T00:00:00Z"), D("2026-01-31T00:00:00Z"));
    await operate(home, state.walletId, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000));

    const toJan16 = await advanceClock(tn.key, { to: "2026-01-16T09:00:00Z" });
    expect(toJan16.status, JSON.stringify(toJan16.body)).toBe(200);
    expect(toJan16.body.data).toEqual({ now: "2026-01-16T09:00:00.000Z", target: "2026-01-16T09:00:00.000Z", complete: true, notifications: [], notificationsOmitted: 0 });
    const engine = await operate(home, state.walletId, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-16T09:00:00Z"), 15000));

    const res = await advanceClock(tn.key, { days: 15 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.now).toBe("2026-01-31T09:00:00.000Z");
    const expected = ok(advance(engine, GOLDEN_PRODUCT, D("2026-01-31T09:00:00Z")));
    expect(res.body.data.notifications).toEqual(expected.events.map(notificationPayload));
    expect(res.body.data.notifications).toEqual([
      expect.objectContaining({ walletId: state.walletId, type: "Interes Nominal Calculado", amount: 1125, direction: "debit", affectsBalance: false, sequence: 1 }),
    ]);
    const stored = await loadWallet(em(), state.walletId);
    expect(stored.state).toEqual(expected.state);
    expect(stored.state.statements[0]).toMatchObject({ sumOfDailyBalance: 1125000, interestGenerated: 1125, minimumPayment: 5500 });
  });

  it("default and cure: the grace end's notifications in sequence order, then the cure by payments", async () => {
    const tn = await tenant();
    expect((await setClock(tn.key, "2026-01-01T00:00:00.000Z")).status).toBe(200);
    const { home, state } = await seedWallet(tn, D("2026-01-01T00:00:00Z"), D("2026-01-31T00:00:00Z"));
    await operate(home, state.walletId, (s) => charge(s, GOLDEN_PRODUCT, D("2026-01-01T00:00:00Z"), 30000));
    const res = await advanceClock(tn.key, { to: "2026-02-10T00:00:00Z" });
    expect(res.status).toBe(200);
    expect((res.body.data.notifications as { sequence: number; type: string; amount: number }[]).map((n) => [n.sequence, n.type, n.amount])).toEqual([
      [1, "Interes Nominal Calculado", 900],
      [2, "Interes Nominal Aplicado", 900],
      [3, "Interes Moroso Calculado", 800],
      [4, "Interes Moroso Aplicado", 800],
      [5, "Interes moroso ejecutado", 800],
    ]);
    expect(res.body.data.notifications[4].walletDetails_after).toMatchObject({ principal_outstanding: 30000, interest_accrued: 1700, totalDebt: 31700, limit: 100000 });
    expect((await loadWallet(em(), state.walletId)).state.status).toBe("in_default");
    await operate(home, state.walletId, (s) => pay(s, GOLDEN_PRODUCT, D("2026-02-10T00:00:00Z"), 3000));
    const cured = await operate(home, state.walletId, (s) => pay(s, GOLDEN_PRODUCT, D("2026-02-10T00:00:00Z"), 1800));
    expect(cured).toMatchObject({ status: "active", principalOutstanding: 26900, interestOutstanding: 0 });
    const next = await advanceClock(tn.key, { days: 30 });
    expect(next.status).toBe(200);
    const expected = ok(advance(cured, GOLDEN_PRODUCT, D("2026-03-12T00:00:00Z")));
    expect(next.body.data.notifications).toEqual(expected.events.map(notificationPayload));
    expect((await loadEvents(em(), state.walletId)).map((e) => e.sequence)).toEqual(Array.from({ length: expected.state.sequence }, (_, i) => i + 1));
  });

  it("needs exactly one of days and to, and a to not before the clock (422 VALIDATION_ERROR)", async () => {
    const { key } = await tenant();
    expect((await setClock(key, "2026-05-01T00:00:00.000Z")).status).toBe(200);
    for (const body of [{}, { days: 1, to: "2026-06-01T00:00:00Z" }]) {
      const res = await advanceClock(key, body);
      expect(res.status).toBe(422);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ code: "VALIDATION_ERROR", field: "days" }));
    }
    const back = await advanceClock(key, { to: "2026-04-30T00:00:00Z" });
    expect(back.status).toBe(422);
    expect(back.body.errors).toContainEqual(expect.objectContaining({ code: "VALIDATION_ERROR", field: "to" }));
    expect((await api().get(CLOCK).set("x-api-key", key)).body.data).toEqual({ now: "2026-05-01T00:00:00.000Z" });
  });

  it("leaves other tenants' wallets alone", async () => {
    const a = await tenant();
    const b = await tenant();
    for (const tn of [a, b]) expect((await setClock(tn.key, "2026-01-01T00:00:00.000Z")).status).toBe(200);
    const wa = await seedWallet(a, D("2026-01-01T00:00:00Z"), D("2026-01-31T00:00:00Z"));
    const wb = await seedWallet(b, D("2026-01-01T00:00:00Z"), D("2026-01-31T00:00:00Z"));
    expect((await advanceClock(a.key, { days: 40 })).status).toBe(200);
    expect((await loadWallet(em(), wa.state.walletId)).state.statements).toHaveLength(1);
    expect((await loadWallet(em(), wb.state.walletId)).state).toEqual(wb.state);
  });
});

describe("only while the provider is the sandbox", () => {
  it("answers 404 NOT_FOUND for every clock operation under another provider", async () => {
    const handlers = sandboxClockHandlers(new SandboxClockService(await statementsOf(t.orm)), { name: "other" });
    const call = { em: em(), principal: { kind: "owner", customerId: "x" }, body: { now: "2026-01-01T00:00:00Z", days: 1 } } as never;
    for (const handler of [handlers.getSandboxClock, handlers.setSandboxClock, handlers.advanceSandboxClock]) {
      const error = await (handler as (c: never) => Promise<unknown>)(call).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe("NOT_FOUND");
    }
  });

  it("answers the clock operations with the owner API key only", async () => {
    const res = await api().get(CLOCK);
    expect(res.status).toBe(401);
  });
});
