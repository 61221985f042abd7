/**
 * Model test of the credit wallet operations over HTTP on a real PostgreSQL (docs/credit-engine.md): random
 * products and random sequences of charges, payments, limit raises, overrides, block, unblock,
 * dissolve, card authorizations, captures, voids and refunds of captures (docs/decisions/credit.md
 * "Authorizations", docs/decisions/cards.md "Refunds"; holds expire on the clock moves) and clock moves are sent to the API and applied to the pure reference model
 * (src/domain/credit/simulate.ts) side by side. After every operation the stored wallet equals the
 * model's (counters in cents, status, specs, next cut), the answer's status is the one the model's
 * outcome maps to, and at the end the event log and the statements equal the model's — so the
 * store (only open statements loaded, rates as numeric(9,4)) loses nothing between operations.
 * The tenant's clock is the `credit_clock` row (what the sandbox clock writes); the operations
 * catch up on the closes, cuts and grace ends due before them. Bounded (25 runs, fixed seed;
 * `CREDIT_MODEL_SEED` picks another seed to explore).
 */
import fc from "fast-check";
import type request from "supertest";
import { describe, expect, it } from "vitest";
import {
  advance,
  amountOverdraft,
  authorize,
  capture,
  voidAuthorization,
  blockWallet,
  changeLimit,
  charge,
  createWallet,
  dissolveWallet,
  nextCutDate,
  overrideSpecs,
  pay,
  refund,
  totalDebt,
  unblockWallet,
  type CreditEvent,
  type CreditProductRules,
  type Outcome,
  type RefusalCode,
  type Statement,
  type StepResult,
  type WalletState,
} from "../../src/domain/credit/index.js";
import { TEST_MASTER_KEY, useTestApp } from "../support/app.js";
import { Walk } from "../support/fixtures.js";

const t = useTestApp();
let seq = 0;

const WALLETS = "/v2/wallet/credits";
const api = t.api;
const START = Date.parse("2026-01-01T00:00:00Z");
const MINUTE = 60_000;

const productArb: fc.Arbitrary<CreditProductRules> = fc.record({
  revolving: fc.boolean(),
  compound: fc.boolean(),
  cutFrequency: fc.constantFrom("daily", "weekly", "biweekly", "month"),
  fixedInterestAmount: fc.integer({ min: 0, max: 500 }),
  baseInterestRate: fc.integer({ min: 0, max: 6000 }).map((n) => n / 100),
  baseMinimumPaymentRate: fc.integer({ min: 0, max: 5000 }).map((n) => n / 100),
  fixedMinimumPaymentAmount: fc.integer({ min: 0, max: 3000 }),
  capitalInterestSplit: fc.integer({ min: 0, max: 99 }),
  gracePeriod: fc.integer({ min: 1, max: 15 }),
  variableSpecs: fc.boolean(),
  morosidadRate: fc.integer({ min: 0, max: 6000 }).map((n) => n / 100),
  baseInterestMorosidad: fc.integer({ min: 0, max: 1000 }),
  interestAccrualMethod: fc.constantFrom("ADB", "BAC"),
  dailyRateDivisor: fc.constantFrom(360, 365),
});

type Op =
  | { kind: "charge" | "pay"; dt: number; permille: number; raw: number | null }
  | { kind: "limit"; dt: number; delta: number }
  | { kind: "override"; dt: number; interestRateNominal: number }
  | { kind: "block" | "unblock" | "dissolve" | "wait"; dt: number }
  | { kind: "authorize" | "purchase"; dt: number; permille: number }
  | { kind: "capture"; dt: number; pick: number; permille: number | null }
  | { kind: "void"; dt: number; pick: number }
  | { kind: "refund"; dt: number; pick: number; permille: number; over: boolean };

const dt = fc.integer({ min: 0, max: 20 * 24 * 60 });
/** Refunds come within days of the operation before, so that they meet the purchases. */
const soon = fc.integer({ min: 0, max: 3 * 24 * 60 });
const raw = fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 300000 }) });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("charge" as const), dt, permille: fc.integer({ min: 1, max: 1000 }), raw }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("pay" as const), dt, permille: fc.integer({ min: 1, max: 1000 }), raw }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("limit" as const), dt, delta: fc.integer({ min: -1000, max: 30000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("override" as const), dt, interestRateNominal: fc.integer({ min: 0, max: 5000 }).map((n) => n / 100) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom("block" as const, "unblock" as const), dt }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("wait" as const), dt: fc.integer({ min: 0, max: 60 * 24 * 60 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("dissolve" as const), dt }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("authorize" as const), dt, permille: fc.integer({ min: 1, max: 1100 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("capture" as const), dt, pick: fc.nat(), permille: fc.option(fc.integer({ min: 1, max: 1100 })) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("void" as const), dt, pick: fc.nat() }) },
  // a card purchase: an authorization captured whole at once, what refunds give back
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("purchase" as const), dt, permille: fc.integer({ min: 1, max: 1000 }) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("refund" as const), dt: soon, pick: fc.nat(), permille: fc.integer({ min: 1, max: 1000 }), over: fc.integer({ min: 0, max: 5 }).map((n) => n === 0) }) },
);

/** AUTHORIZATION_TTL_DAYS of the test app (the default). */
const TTL_DAYS = 7;

/** HTTP status of an engine refusal (src/modules/credit/accounts/refusals.ts `refusalError`). */
const statusOf = (code: RefusalCode): number =>
  ["AMOUNT_NOT_POSITIVE", "PAYMENT_EXCEEDS_DEBT", "CHARGE_EXCEEDS_AVAILABLE", "LIMIT_NOT_RAISED", "FIRST_CUT_NOT_AFTER_CREATION"].includes(code) ? 422 : 409;

/** The wallet fields a read shows, from a model state. */
function expectedWallet(s: WalletState, p: CreditProductRules): Record<string, unknown> {
  return {
    status: s.status,
    limit: s.limit,
    availableAmount: s.availableAmount,
    amountHeld: s.amountHeld,
    principalOutstanding: s.principalOutstanding,
    interestOutstanding: s.interestOutstanding,
    totalDebt: totalDebt(s),
    amountOverdraft: amountOverdraft(s),
    sumOfDailyBalance: s.sumOfDailyBalance,
    nextCutDate: nextCutDate(s, p.cutFrequency)?.toISOString() ?? null,
    interestSpecs: s.interestSpecs,
    minimumPaymentSpecs: s.minimumPaymentSpecs,
  };
}

const eventView = (e: CreditEvent) => ({ sequence: e.sequence, type: e.type, amount: e.amount, unappliedAmount: e.unappliedAmount, createdAt: e.at.toISOString(), walletDetails_after: e.walletDetails_after });
const statementView = (st: Statement) => ({
  cutDate: st.cutDate.toISOString(),
  sumOfDailyBalance: st.sumOfDailyBalance,
  interestBasis: st.interestBasis,
  interestGenerated: st.interestGenerated,
  minimumPayment: st.minimumPayment,
  paidInCycle: st.paidInCycle,
  status: st.status,
  interestApplied: st.interestApplied,
  penalInterest: st.penalInterest,
  curedAt: st.curedAt?.toISOString() ?? null,
});

describe("credit wallets against the reference model", () => {
  it("random products and operation sequences: the API's wallet, answers, events and statements equal the model's", { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(productArb, fc.array(opArb, { minLength: 5, maxLength: 14 }), async (product, ops) => {
        const walk = new Walk(t.express);
        const { customerId, key } = await walk.tenant(`cm-${++seq}-${Date.now().toString(36)}`);
        const created = await api().post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send({ customerId, creditProductCode: "001", ...product });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        expect((await api().put("/v2/notifications").set("x-api-key", key).send({ creditNotificationsURL: "https://93.184.215.14/hooks" })).status).toBe(200);
        const { userId } = await walk.activeUserWithToken(key);
        const db = t.orm.em.fork().getConnection();
        let now = START;
        const setClock = async () => {
          await db.execute(`insert into credit_clock (customer_id, "now", updated_at) values (?, ?, now()) on conflict (customer_id) do update set "now" = excluded."now"`, [customerId, new Date(now)]);
        };
        await setClock();
        const res = await api().post(WALLETS).set("x-api-key", key).send({ userId, currency: "USD", limit: 100000, creditProductCode: "001" });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        const walletId = res.body.data.walletId as string;
        const made = createWallet(product, { walletId, createdAt: new Date(now), limit: 100000 });
        if (!made.ok) throw new Error(made.message);
        let model = made.value;
        const events: CreditEvent[] = [];
        const statements = new Map<number, Statement>();
        /** Every authorization the API made (open, closed or declined), for captures and voids to pick from. */
        const authorizations: { id: string; amount: number }[] = [];
        /** What is left to refund of each captured authorization, cents (the service's check: docs/decisions/cards.md "Refunds"). */
        const refundable = new Map<string, number>();
        const take = (r: StepResult) => {
          model = r.state;
          events.push(...r.events);
          for (const st of r.statements) statements.set(st.index, st);
        };

        for (const op of ops) {
          now += op.dt * MINUTE;
          await setClock();
          if (op.kind === "wait") continue;
          const at = new Date(now);
          const ahead = advance(model, product, at);
          if (!ahead.ok) throw new Error(ahead.message);
          const w = `${WALLETS}/${walletId}`;
          let outcome: Outcome<StepResult>;
          let call: request.Test;
          /** The answer's data a successful refund must show. */
          let expectedBody: Record<string, unknown> | undefined;
          switch (op.kind) {
            case "charge": {
              const amount = op.raw ?? Math.max(1, Math.floor((ahead.value.state.availableAmount * op.permille) / 1000));
              outcome = charge(model, product, at, amount);
              call = api().post(`${w}/charges`).set("x-api-key", key).send({ amount, description: "model" });
              break;
            }
            case "pay": {
              const amount = op.raw ?? Math.max(1, Math.floor((totalDebt(ahead.value.state) * op.permille) / 1000));
              outcome = pay(model, product, at, amount);
              call = api().post(`${w}/payments`).set("x-api-key", key).send({ amount });
              break;
            }
            case "limit": {
              const limit = Math.max(0, ahead.value.state.limit + op.delta);
              outcome = changeLimit(model, product, at, limit);
              call = api().post(`${w}/limit`).set("x-api-key", key).send({ limit });
              break;
            }
            case "override":
              outcome = overrideSpecs(model, product, at, { interestRateNominal: op.interestRateNominal });
              call = api().put(`${w}/interest`).set("x-api-key", key).send({ interestRateNominal: op.interestRateNominal });
              break;
            case "block":
              outcome = blockWallet(model, product, at);
              call = api().post(`${w}/block`).set("x-api-key", key);
              break;
            case "unblock":
              outcome = unblockWallet(model, product, at);
              call = api().post(`${w}/unblock`).set("x-api-key", key);
              break;
            case "dissolve":
              outcome = dissolveWallet(model, product, at);
              call = api().post(`${w}/dissolve`).set("x-api-key", key);
              break;
            case "authorize": {
              const amount = Math.max(1, Math.floor((ahead.value.state.availableAmount * op.permille) / 1000));
              const answer = await api().post(`${w}/authorizations`).set("x-api-key", key).send({ amount, merchant: { name: "model" } });
              expect(answer.status, JSON.stringify(answer.body)).toBe(201);
              const id = answer.body.data.authorizationId as string;
              authorizations.push({ id, amount });
              const decided = authorize(model, product, at, { authorizationId: id, amount, ttlDays: TTL_DAYS });
              if (decided.ok) expect(answer.body.data.status).toBe(decided.value.decision.status);
              outcome = decided;
              call = api().get(w).set("x-api-key", key);
              break;
            }
            case "purchase": {
              const amount = Math.max(1, Math.floor((ahead.value.state.availableAmount * op.permille) / 1000));
              const answer = await api().post(`${w}/authorizations`).set("x-api-key", key).send({ amount, merchant: { name: "model" } });
              expect(answer.status, JSON.stringify(answer.body)).toBe(201);
              const id = answer.body.data.authorizationId as string;
              authorizations.push({ id, amount });
              const decided = authorize(model, product, at, { authorizationId: id, amount, ttlDays: TTL_DAYS });
              if (!decided.ok) throw new Error(decided.message);
              expect(answer.body.data.status).toBe(decided.value.decision.status);
              if (decided.value.decision.status === "declined") {
                outcome = decided;
                call = api().get(w).set("x-api-key", key);
                break;
              }
              take(decided.value);
              outcome = capture(model, product, at, id);
              call = api().post(`${w}/authorizations/${id}/capture`).set("x-api-key", key).send({});
              if (outcome.ok) refundable.set(id, amount);
              break;
            }
            case "capture":
            case "void": {
              const picked = authorizations.length === 0 ? { id: "00000000-0000-4000-8000-000000000000", amount: 1 } : authorizations[op.pick % authorizations.length]!;
              if (authorizations.length === 0) {
                call = api().post(`${w}/authorizations/${picked.id}/${op.kind}`).set("x-api-key", key);
                expect((await call).status).toBe(404);
                // a 404 rolls its transaction back: the steps due are not caught up (the next operation does it)
                continue;
              }
              if (op.kind === "void") {
                outcome = voidAuthorization(model, product, at, picked.id);
                call = api().post(`${w}/authorizations/${picked.id}/void`).set("x-api-key", key);
              } else {
                const amount = op.permille === null ? undefined : Math.max(1, Math.floor((picked.amount * op.permille) / 1000));
                outcome = capture(model, product, at, picked.id, amount);
                call = api().post(`${w}/authorizations/${picked.id}/capture`).set("x-api-key", key).send(amount === undefined ? {} : { amount });
                if (outcome.ok) refundable.set(picked.id, amount ?? picked.amount);
              }
              break;
            }
            case "refund": {
              // mostly one with something left to refund, sometimes any (not captured: 409)
              const captured = authorizations.filter((a) => (refundable.get(a.id) ?? 0) > 0);
              const pool = captured.length > 0 && op.pick % 4 !== 0 ? captured : authorizations;
              const picked = pool[op.pick % Math.max(1, pool.length)] ?? { id: "00000000-0000-4000-8000-000000000000", amount: 1 };
              const left = refundable.get(picked.id);
              const amount = op.over && left !== undefined ? left + 1 : Math.max(1, Math.floor(((left ?? picked.amount) * op.permille) / 1000));
              call = api().post(`${w}/authorizations/${picked.id}/refund`).set("x-api-key", key).send({ amount });
              if (authorizations.length === 0) {
                expect((await call).status).toBe(404);
                // a 404 rolls its transaction back: the steps due are not caught up (the next operation does it)
                continue;
              }
              if (left === undefined) outcome = { ok: false, code: "AUTHORIZATION_NOT_CAPTURED", message: "not captured" };
              else if (amount > left) outcome = { ok: false, code: "REFUND_EXCEEDS_CAPTURED", message: "above the capture" };
              else {
                const refunded = refund(model, product, at, { amount });
                if (refunded.ok) {
                  refundable.set(picked.id, left - amount);
                  expectedBody = { authorizationId: picked.id, amount, appliedAmount: refunded.value.appliedAmount, unappliedAmount: refunded.value.unappliedAmount };
                }
                outcome = refunded;
              }
              break;
            }
          }
          const answer = await call;
          if (outcome.ok) {
            expect(answer.status, `${op.kind}: ${JSON.stringify(answer.body)}`).toBe(op.kind === "charge" || op.kind === "pay" || op.kind === "refund" ? 201 : 200);
            if (expectedBody) expect(answer.body.data).toMatchObject(expectedBody);
            take(outcome.value);
          } else {
            expect(answer.status, `${op.kind} (${outcome.code}): ${JSON.stringify(answer.body)}`).toBe(statusOf(outcome.code));
            take(ahead.value);
          }
          const read = await api().get(w).set("x-api-key", key);
          expect(read.status).toBe(200);
          expect(read.body.data).toMatchObject(expectedWallet(model, product));
          expect(read.body.data.availableAmount).toBeGreaterThanOrEqual(0);
        }

        const evs = await api().get(`${WALLETS}/${walletId}/events?limit=100`).set("x-api-key", key);
        expect(evs.body.data.total).toBe(events.length);
        expect(evs.body.data.items.map((e: Record<string, unknown>) => ({ sequence: e.sequence, type: e.type, amount: e.amount, unappliedAmount: e.unappliedAmount, createdAt: e.createdAt, walletDetails_after: e.walletDetails_after }))).toEqual(
          events.slice(0, 100).map(eventView),
        );
        const sts = await api().get(`${WALLETS}/${walletId}/statements?limit=100`).set("x-api-key", key);
        const modelStatements = [...statements.values()].sort((a, b) => a.index - b.index);
        expect(sts.body.data.total).toBe(modelStatements.length);
        expect(sts.body.data.items.map((s: Record<string, unknown>) => statementView({ ...s, cutDate: new Date(s.cutDate as string), curedAt: s.curedAt ? new Date(s.curedAt as string) : null } as unknown as Statement))).toEqual(
          modelStatements.slice(0, 100).map(statementView),
        );
      }),
      { numRuns: 25, seed: Number(process.env.CREDIT_MODEL_SEED ?? 20260201), endOnFailure: true },
    );
  });
});
