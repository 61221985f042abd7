/**
 * Property test of the reference model (src/domain/credit/simulate.ts) over random products and random
 * charge / payment / advance / limit / override / block / unblock / dissolve / product-update /
 * authorize / capture / void / refund sequences (docs/credit-engine.md "How equivalence is tested";
 * docs/decisions/credit.md "Authorizations"; docs/decisions/cards.md "Refunds"): counters never
 * negative, AA + held + AO + IO − overdraft ≤ limit, `amountHeld` = the sum of the open holds and no
 * hold outlives its expiry, each authorization's decision and effect as the rules say, each refund
 * of a capture applied principal first up to the debt and never as a payment, payments never create a
 * positive balance, each statement's interest calculated and charged exactly once, totals reconcile
 * with the event log, sequences contiguous, and advancing in one go equals advancing in pieces.
 * Bounded (200 runs, fixed seed) so CI stays fast and a failure is reproducible.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CreditEvent } from "../../src/domain/credit/events.js";
import { authorize, capture, holdExpiry, voidAuthorization, type DeclineReason } from "../../src/domain/credit/authorizations.js";
import { refund } from "../../src/domain/credit/refunds.js";
import type { Outcome } from "../../src/domain/credit/outcome.js";
import { advance, blockWallet, changeLimit, charge, dissolveWallet, overrideSpecs, pay, unblockWallet, type StepResult } from "../../src/domain/credit/simulate.js";
import { DAY_MS, startOfUtcDay } from "../../src/domain/credit/schedule.js";
import { createWallet, type CreditProductRules, type WalletState } from "../../src/domain/credit/wallet.js";

const RUNS = { numRuns: 200, seed: 20260131 };

const rate = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 12000 }).map((n) => n / 100));
const productArb: fc.Arbitrary<CreditProductRules> = fc.record({
  revolving: fc.boolean(),
  compound: fc.boolean(),
  cutFrequency: fc.constantFrom("daily", "weekly", "biweekly", "month", "year"),
  fixedInterestAmount: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2000 })),
  baseInterestRate: rate,
  baseMinimumPaymentRate: fc.integer({ min: 0, max: 10000 }).map((n) => n / 100),
  fixedMinimumPaymentAmount: fc.integer({ min: 0, max: 5000 }),
  capitalInterestSplit: fc.integer({ min: 0, max: 99 }),
  gracePeriod: fc.integer({ min: 1, max: 40 }),
  variableSpecs: fc.boolean(),
  morosidadRate: rate,
  baseInterestMorosidad: fc.integer({ min: 0, max: 2000 }),
  interestAccrualMethod: fc.constantFrom("ADB", "BAC"),
  dailyRateDivisor: fc.constantFrom(360, 365),
});

/** An operation, `dt` minutes after the previous one; amounts are drawn as permille of what the wallet has, or raw. */
type Op =
  | { kind: "charge"; dt: number; permille: number; raw: number | null }
  | { kind: "pay"; dt: number; permille: number; raw: number | null }
  | { kind: "advance"; dt: number }
  | { kind: "limit"; dt: number; delta: number }
  | { kind: "override"; dt: number; interestRateNominal: number; minimumPaymentRate: number }
  | { kind: "block" | "unblock" | "dissolve"; dt: number }
  | { kind: "update"; dt: number; changes: Partial<CreditProductRules> }
  | { kind: "authorize"; dt: number; permille: number; raw: number | null; ttlDays: number }
  | { kind: "capture"; dt: number; open: boolean; pick: number; permille: number | null; over: boolean }
  | { kind: "void"; dt: number; open: boolean; pick: number }
  | { kind: "refund"; dt: number; pick: number; permille: number };

/** Mostly null (the amount is then drawn from the wallet), sometimes a raw amount, possibly ≤ 0 or above what the wallet allows. */
const rawAmount = fc.oneof({ weight: 9, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: -10, max: 300000 }) });
const dt = fc.integer({ min: 0, max: 45 * 24 * 60 });
const holdDt = fc.integer({ min: 0, max: 4 * 24 * 60 });
const openPick = fc.integer({ min: 0, max: 4 }).map((n) => n > 0);
// Authorizations, a few days apart so that holds are still open; `pick` chooses among the open holds
// when `open` (else among every id authorized so far: open, closed or declined).
const authorizeArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constant("authorize" as const),
  dt: holdDt,
  permille: fc.oneof(fc.constant(1000), fc.integer({ min: 1, max: 1000 })),
  raw: rawAmount,
  ttlDays: fc.integer({ min: 1, max: 40 }),
});
const captureArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constant("capture" as const),
  dt: holdDt,
  open: openPick,
  pick: fc.nat(),
  permille: fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 1000 })),
  over: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
});
const voidArb: fc.Arbitrary<Op> = fc.record({ kind: fc.constant("void" as const), dt: holdDt, open: openPick, pick: fc.nat() });
/** A refund of part (or all) of what is left of a captured authorization (docs/decisions/cards.md "Refunds"). */
const refundArb: fc.Arbitrary<Op> = fc.record({ kind: fc.constant("refund" as const), dt: holdDt, pick: fc.nat(), permille: fc.oneof(fc.constant(1000), fc.integer({ min: 1, max: 1000 })) });

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 20, arbitrary: fc.record({ kind: fc.constant("charge" as const), dt, permille: fc.integer({ min: 1, max: 1000 }), raw: rawAmount }) },
  { weight: 24, arbitrary: fc.record({ kind: fc.constant("pay" as const), dt, permille: fc.integer({ min: 1, max: 1000 }), raw: rawAmount }) },
  { weight: 16, arbitrary: fc.record({ kind: fc.constant("advance" as const), dt: fc.integer({ min: 0, max: 120 * 24 * 60 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("limit" as const), dt, delta: fc.integer({ min: -1000, max: 50000 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("override" as const), dt, interestRateNominal: rate, minimumPaymentRate: fc.integer({ min: 0, max: 100 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constantFrom("block" as const, "unblock" as const), dt }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("dissolve" as const), dt }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("update" as const),
      dt,
      // Update Credit Product Settings (revolving is kept: the AA invariant of revolving wallets
      // assumes it does not change under a wallet)
      changes: fc.record(
        {
          cutFrequency: fc.constantFrom("daily", "weekly", "biweekly", "month", "year"),
          gracePeriod: fc.integer({ min: 1, max: 40 }),
          capitalInterestSplit: fc.integer({ min: 0, max: 99 }),
          compound: fc.boolean(),
          interestAccrualMethod: fc.constantFrom("ADB", "BAC"),
          dailyRateDivisor: fc.constantFrom(360, 365),
          baseInterestRate: rate,
          morosidadRate: rate,
          fixedInterestAmount: fc.integer({ min: 0, max: 2000 }),
          baseMinimumPaymentRate: fc.integer({ min: 0, max: 100 }),
          fixedMinimumPaymentAmount: fc.integer({ min: 0, max: 5000 }),
        },
        { requiredKeys: [] },
      ),
    }),
  },
  { weight: 10, arbitrary: authorizeArb },
  { weight: 6, arbitrary: captureArb },
  { weight: 4, arbitrary: voidArb },
  { weight: 3, arbitrary: refundArb },
);

/** Mostly authorizations, captures and voids among charges, payments and short advances, so that holds meet captures, voids, expiries, interest and overdraft. */
const holdOpArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 10, arbitrary: authorizeArb },
  { weight: 8, arbitrary: captureArb },
  { weight: 4, arbitrary: voidArb },
  { weight: 5, arbitrary: refundArb },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("charge" as const), dt: holdDt, permille: fc.integer({ min: 1, max: 1000 }), raw: rawAmount }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("pay" as const), dt: holdDt, permille: fc.integer({ min: 1, max: 1000 }), raw: rawAmount }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("advance" as const), dt: fc.integer({ min: 0, max: 10 * 24 * 60 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("limit" as const), dt: holdDt, delta: fc.integer({ min: -1000, max: 50000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("block" as const, "unblock" as const), dt: holdDt }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("dissolve" as const), dt: holdDt }) },
);
const scenarioFields = {
  product: productArb,
  limit: fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 9, arbitrary: fc.integer({ min: 1000, max: 5_000_000 }) }),
  createdMinute: fc.integer({ min: 0, max: 24 * 60 - 1 }),
  firstCutAfterMinutes: fc.integer({ min: 1, max: 200 * 24 * 60 }),
  time: fc.option(fc.integer({ min: 1, max: 400 }), { freq: 2 }),
};
const scenarioArb = fc.record({ ...scenarioFields, ops: fc.array(opArb, { minLength: 1, maxLength: 40, size: "max" }) });
const holdScenarioArb = fc.record({ ...scenarioFields, ops: fc.array(holdOpArb, { minLength: 1, maxLength: 40, size: "max" }) });

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

const debt = (s: WalletState): number => s.principalOutstanding + s.interestOutstanding;
const overdraft = (s: WalletState): number => Math.max(0, debt(s) + s.amountHeld - s.limit);

/** The invariants one state breaks (empty when it keeps them all); collected as text so a step costs one `expect`. */
function violations(s: WalletState, product: CreditProductRules): string[] {
  const out: string[] = [];
  for (const [name, v] of Object.entries({ limit: s.limit, AA: s.availableAmount, AO: s.principalOutstanding, IO: s.interestOutstanding, held: s.amountHeld, sum: s.sumOfDailyBalance })) {
    if (!Number.isSafeInteger(v) || v < 0) out.push(`${name} = ${v} is not a non-negative safe integer`);
  }
  if (s.availableAmount + s.amountHeld + debt(s) - overdraft(s) > s.limit) {
    out.push(`AA + held + AO + IO − overdraft = ${s.availableAmount + s.amountHeld + debt(s) - overdraft(s)} > limit = ${s.limit}`);
  }
  if (overdraft(s) > 0 && s.availableAmount !== 0) out.push(`AA = ${s.availableAmount} while overdrawn`);
  if (product.revolving && (s.status === "active" || s.status === "blocked") && s.availableAmount !== Math.max(0, s.limit - debt(s) - s.amountHeld)) {
    out.push(`revolving in good standing: AA = ${s.availableAmount}, limit − debt − held = ${s.limit - debt(s) - s.amountHeld}`);
  }
  // holds (docs/decisions/credit.md "Authorizations"): held = Σ open holds, none past its expiry
  const heldSum = s.holds.reduce((a, h) => a + h.amount, 0);
  if (heldSum !== s.amountHeld) out.push(`amountHeld = ${s.amountHeld}, Σ holds = ${heldSum}`);
  if (s.status === "dissolved" && s.holds.length > 0) out.push(`dissolved with ${s.holds.length} open holds`);
  for (const h of s.holds) {
    if (!(h.amount > 0)) out.push(`hold ${h.authorizationId} of ${h.amount}`);
    if (h.expiresAt.getTime() <= s.asOf.getTime()) out.push(`hold ${h.authorizationId} expiring ${h.expiresAt.toISOString()} still open at ${s.asOf.toISOString()}`);
    if (startOfUtcDay(h.expiresAt).getTime() !== h.expiresAt.getTime()) out.push(`hold ${h.authorizationId} expires at ${h.expiresAt.toISOString()}, not a daily close`);
  }
  const openDefault = s.statements.some((st) => st.status === "defaulted" && st.curedAt === null);
  if (s.status !== "dissolved" && (s.status === "in_default") !== openDefault) out.push(`status ${s.status} with an open default: ${String(openDefault)}`);
  for (const st of s.statements) {
    if (st.paidInCycle < 0 || st.minimumPayment < 0 || st.interestGenerated < 0 || st.penalInterest < 0) out.push(`statement ${st.index} has a negative amount`);
    const shouldBePaid = st.status !== "defaulted" && (st.minimumPayment === 0 || st.paidInCycle >= st.minimumPayment);
    if ((st.status === "paid") !== shouldBePaid) out.push(`statement ${st.index} is ${st.status} with ${st.paidInCycle} paid of ${st.minimumPayment}`);
    if (st.interestAppliedAt !== null && st.status === "pending") out.push(`statement ${st.index} still pending after its grace end`);
    if (st.interestApplied !== (st.interestAppliedAt === null ? 0 : st.interestGenerated)) out.push(`statement ${st.index} applied ${st.interestApplied} of ${st.interestGenerated}`);
    if (st.curedAt !== null && st.paidInCycle < st.minimumPayment + st.penalInterest) out.push(`statement ${st.index} cured with ${st.paidInCycle} paid of ${st.minimumPayment} + ${st.penalInterest}`);
    if (st.curedAt !== null && st.status !== "defaulted") out.push(`statement ${st.index} cured without a default`);
    if ((st.status === "defaulted") !== (st.interestRateMoroso !== null)) out.push(`statement ${st.index}: penal rate recorded iff defaulted`);
  }
  return out;
}

function checkState(s: WalletState, product: CreditProductRules): void {
  expect(violations(s, product)).toEqual([]);
}

/** The decline reason of an authorization of `amount` at `at` on `s` (already advanced to `at`), in the order of docs/decisions/credit.md "Authorizations"; null for an approval. */
function expectedDecline(s: WalletState, at: Date, amount: number): DeclineReason | null {
  if (s.status === "blocked") return "WALLET_BLOCKED";
  if (s.status === "in_default") return "WALLET_IN_DEFAULT";
  if (s.status === "dissolved") return "WALLET_DISSOLVED";
  if (s.expiresAt !== null && at.getTime() >= s.expiresAt.getTime()) return "WALLET_EXPIRED";
  return amount > s.availableAmount ? "INSUFFICIENT_CREDIT" : null;
}

/** AA after a release of `rest` cents from `before`'s AA: it gets back what the hold took, never above limit − debt − held (`after`'s). */
function availableAfterRelease(before: WalletState, after: WalletState, rest: number): number {
  return Math.min(before.availableAmount + rest, Math.max(before.availableAmount, after.limit - debt(after) - after.amountHeld));
}

type HoldOp = Extract<Op, { kind: "authorize" | "capture" | "void" }>;

/** The authorizations of a run so far: every id used (approved or declined), the expiry of each approval, and what is left to refund of each capture (cents). */
interface HoldBook {
  ids: string[];
  expiries: Map<string, Date>;
  refundable: Map<string, number>;
}

/**
 * Runs one authorize / capture / void at `at` on `state` and checks its outcome against the rules of
 * docs/decisions/credit.md "Authorizations", computed from the state advanced to `at`.
 */
function playHold(op: HoldOp, state: WalletState, product: CreditProductRules, at: Date, book: HoldBook): Outcome<StepResult> {
  const advanced = advance(state, product, at);
  if (!advanced.ok) throw new Error(advanced.message);
  const before = advanced.value.state;
  const stepped = advanced.value.events.length;
  const own = (r: StepResult): [string, number][] => {
    expect(r.events.slice(0, stepped)).toEqual(advanced.value.events);
    expect(r.closedHolds.slice(0, advanced.value.closedHolds.length)).toEqual(advanced.value.closedHolds);
    return r.events.slice(stepped).map((e) => [e.type, e.amount]);
  };
  if (op.kind === "authorize") {
    const id = `a${book.ids.length}`;
    book.ids.push(id);
    const amount = op.raw ?? Math.max(1, Math.floor((before.availableAmount * op.permille) / 1000));
    const r = authorize(state, product, at, { authorizationId: id, amount, ttlDays: op.ttlDays });
    if (amount <= 0) {
      expect(r).toMatchObject({ ok: false, code: "AMOUNT_NOT_POSITIVE" });
      return r;
    }
    if (!r.ok) throw new Error(`authorize refused: ${r.code}`);
    const reason = expectedDecline(before, at, amount);
    expect(own(r.value)).toEqual([[reason === null ? "Autorizacion Aprobada" : "Autorizacion Rechazada", amount]]);
    if (reason !== null) {
      expect(r.value.decision).toEqual({ status: "declined", reason });
      expect({ ...r.value.state, sequence: before.sequence }).toEqual(before);
      return r;
    }
    const expiresAt = holdExpiry(at, op.ttlDays);
    expect(r.value.decision).toEqual({ status: "approved", expiresAt });
    book.expiries.set(id, expiresAt);
    const s = r.value.state;
    expect(s.holds).toEqual([...before.holds, { authorizationId: id, amount, createdAt: at, expiresAt }]);
    expect([s.availableAmount, s.amountHeld, s.principalOutstanding, s.interestOutstanding]).toEqual([
      before.availableAmount - amount,
      before.amountHeld + amount,
      before.principalOutstanding,
      before.interestOutstanding,
    ]);
    return r;
  }
  const among = op.open && before.holds.length > 0 ? before.holds.map((h) => h.authorizationId) : book.ids;
  const id = among[op.pick % Math.max(1, among.length)] ?? "none";
  const hold = before.holds.find((h) => h.authorizationId === id);
  let amount: number | undefined;
  if (op.kind === "capture" && hold !== undefined) amount = op.over ? hold.amount + 1 : op.permille === null ? undefined : Math.max(1, Math.floor((hold.amount * op.permille) / 1000));
  const r = op.kind === "capture" ? capture(state, product, at, id, amount) : voidAuthorization(state, product, at, id);
  if (hold === undefined) {
    expect(r).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
    return r;
  }
  if (op.kind === "capture" && op.over) {
    expect(r).toMatchObject({ ok: false, code: "CAPTURE_EXCEEDS_AUTHORIZED" });
    return r;
  }
  if (!r.ok) throw new Error(`${op.kind} refused: ${r.code}`);
  const captured = op.kind === "capture" ? (amount ?? hold.amount) : 0;
  const rest = hold.amount - captured;
  const s = r.value.state;
  expect(own(r.value)).toEqual([...(captured > 0 ? [["Autorizacion Capturada", captured]] : []), ...(rest > 0 ? [["Autorizacion Liberada", rest]] : [])]);
  expect(r.value.closedHolds.at(-1)).toEqual({ authorizationId: id, kind: op.kind === "capture" ? "captured" : "voided", capturedAmount: captured, releasedAmount: rest, at });
  expect(s.holds).toEqual(before.holds.filter((h) => h.authorizationId !== id));
  expect([s.amountHeld, s.principalOutstanding, s.interestOutstanding, s.status]).toEqual([before.amountHeld - hold.amount, before.principalOutstanding + captured, before.interestOutstanding, before.status]);
  expect(s.availableAmount).toBe(availableAfterRelease(before, s, rest));
  if (captured > 0) book.refundable.set(id, captured);
  return r;
}

/**
 * Runs one refund at `at` of what is left of a captured authorization (null when none is left) and
 * checks it against docs/decisions/cards.md "Refunds": applied = min(amount, debt), principal
 * first, AA back by the applied amount up to limit − debt − held, statements and status untouched,
 * one `Reembolso` of the applied amount with the rest as `unappliedAmount`.
 */
function playRefund(op: Extract<Op, { kind: "refund" }>, state: WalletState, product: CreditProductRules, at: Date, book: HoldBook): Outcome<StepResult> | null {
  const ids = [...book.refundable.entries()].filter(([, left]) => left > 0);
  const [id, left] = ids[op.pick % Math.max(1, ids.length)] ?? ["", 0];
  if (left === 0) return null;
  const advanced = advance(state, product, at);
  if (!advanced.ok) throw new Error(advanced.message);
  const before = advanced.value.state;
  const amount = Math.max(1, Math.floor((left * op.permille) / 1000));
  const r = refund(state, product, at, { amount });
  if (!r.ok) throw new Error(`refund refused: ${r.code}`);
  book.refundable.set(id, left - amount);
  const applied = Math.min(amount, debt(before));
  const toPrincipal = Math.min(applied, before.principalOutstanding);
  const s = r.value.state;
  expect({ applied: r.value.appliedAmount, unapplied: r.value.unappliedAmount }).toEqual({ applied, unapplied: amount - applied });
  expect(r.value.events.slice(0, advanced.value.events.length)).toEqual(advanced.value.events);
  const own = r.value.events.slice(advanced.value.events.length);
  expect(own.map((e) => [e.type, e.amount, e.direction, e.affectsBalance, e.unappliedAmount])).toEqual([["Reembolso", applied, "credit", true, amount - applied]]);
  expect([s.principalOutstanding, s.interestOutstanding, s.amountHeld, s.limit, s.status]).toEqual([
    before.principalOutstanding - toPrincipal,
    before.interestOutstanding - (applied - toPrincipal),
    before.amountHeld,
    before.limit,
    before.status,
  ]);
  // not a payment: no statement counts it, none is cured
  expect(s.statements).toEqual(before.statements);
  expect(s.availableAmount).toBe(Math.min(before.availableAmount + applied, Math.max(before.availableAmount, s.limit - debt(s) - s.amountHeld)));
  return r;
}

interface Run {
  start: WalletState;
  state: WalletState;
  events: CreditEvent[];
  charged: number;
  end: Date;
}

function play(sc: Scenario, check: boolean): Run {
  let product = sc.product;
  const createdAt = new Date(Date.UTC(2026, 0, 1) + sc.createdMinute * 60_000);
  const created = createWallet(product, {
    walletId: "w",
    createdAt,
    limit: sc.limit,
    firstCutDate: new Date(createdAt.getTime() + sc.firstCutAfterMinutes * 60_000),
    ...(sc.time === null ? {} : { time: sc.time }),
  });
  if (!created.ok) throw new Error(created.message);
  let state = created.value;
  let now = createdAt.getTime();
  let charged = 0;
  const events: CreditEvent[] = [];
  const book: HoldBook = { ids: [], expiries: new Map(), refundable: new Map() };
  const take = (r: Outcome<StepResult>): boolean => {
    if (!r.ok) return false;
    state = r.value.state;
    events.push(...r.value.events);
    // a hold expires exactly at the daily close of its expiresAt (docs/decisions/credit.md "Authorizations")
    for (const c of r.value.closedHolds) if (c.kind === "expired") expect(c.at).toEqual(book.expiries.get(c.authorizationId));
    return true;
  };
  for (const op of sc.ops) {
    now += op.dt * 60_000;
    const at = new Date(now);
    switch (op.kind) {
      case "charge": {
        const amount = op.raw ?? Math.max(1, Math.floor((state.availableAmount * op.permille) / 1000));
        const r = charge(state, product, at, amount);
        if (r.ok) charged += amount;
        else expect(["AMOUNT_NOT_POSITIVE", "CHARGE_EXCEEDS_AVAILABLE", "WALLET_BLOCKED", "WALLET_IN_DEFAULT", "WALLET_DISSOLVED", "WALLET_EXPIRED"]).toContain(r.code);
        take(r);
        break;
      }
      case "pay": {
        const before = advance(state, product, at);
        if (!before.ok) throw new Error(before.message);
        const owed = debt(before.value.state);
        const amount = op.raw ?? Math.max(1, Math.floor((owed * op.permille) / 1000));
        const r = pay(state, product, at, amount);
        // a payment is accepted exactly when 0 < amount ≤ debt: never a positive (credit) balance
        expect(r.ok).toBe(amount > 0 && amount <= owed);
        if (!r.ok) expect(r.code).toBe(amount <= 0 ? "AMOUNT_NOT_POSITIVE" : "PAYMENT_EXCEEDS_DEBT");
        if (r.ok) expect(r.value.split.toInterest + r.value.split.toPrincipal).toBe(amount);
        take(r);
        break;
      }
      case "advance":
        expect(take(advance(state, product, at))).toBe(true);
        break;
      case "limit":
        take(changeLimit(state, product, at, state.limit + op.delta));
        break;
      case "override":
        take(overrideSpecs(state, product, at, { interestRateNominal: op.interestRateNominal, minimumPaymentRate: op.minimumPaymentRate }));
        break;
      case "block":
        take(blockWallet(state, product, at));
        break;
      case "unblock":
        take(unblockWallet(state, product, at));
        break;
      case "dissolve":
        take(dissolveWallet(state, product, at));
        break;
      case "update":
        product = { ...product, ...op.changes };
        break;
      case "authorize":
      case "capture":
      case "void":
        take(playHold(op, state, product, at, book));
        break;
      case "refund": {
        const r = playRefund(op, state, product, at, book);
        if (r) expect(take(r)).toBe(true);
        break;
      }
    }
    if (check) checkState(state, product);
  }
  // run every pending grace end (gracePeriod ≤ 40 days), so that each statement's interest is applied
  now += 41 * DAY_MS;
  const last = advance(state, product, new Date(now));
  if (!last.ok) throw new Error(last.message);
  state = last.value.state;
  events.push(...last.value.events);
  if (check) checkState(state, product);
  return { start: created.value, state, events, charged, end: new Date(now) };
}

/** Plays `sc` checking every step, then checks the event log against the final state. */
function checkScenario(sc: Scenario): void {
  const { start, state, events, charged } = play(sc, true);

  // sequence 1, 2, 3, … without gaps; payloads consistent
  expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
  for (const e of events) {
    const w = e.walletDetails_after;
    expect(e.amount).toBeGreaterThanOrEqual(0);
    expect(w.totalDebt).toBe(w.principal_outstanding + w.interest_accrued);
    expect(w.amountOverdraft).toBe(Math.max(0, w.totalDebt + w.amountHeld - w.limit));
  }

  // totals reconcile: debt change = charges + debits that affect the balance − payments − refunds applied
  const sum = (pred: (e: CreditEvent) => boolean): number => events.filter(pred).reduce((a, e) => a + e.amount, 0);
  const debits = sum((e) => e.direction === "debit" && e.affectsBalance);
  const payments = sum((e) => e.type === "Reporte de Pago");
  const refunds = sum((e) => e.type === "Reembolso");
  expect(debt(state) - debt(start)).toBe(charged + debits - payments - refunds);
  for (const e of events) expect(e.unappliedAmount !== undefined).toBe(e.type === "Reembolso");
  expect(state.limit - start.limit).toBe(sum((e) => e.type === "Cambio de Limite"));
  // every hold is gone 41 days after the last operation (TTL ≤ 40 days); held reconciles with the log
  expect(state.holds).toEqual([]);
  expect(state.amountHeld).toBe(0);
  expect(sum((e) => e.type === "Autorizacion Aprobada")).toBe(sum((e) => e.type === "Autorizacion Capturada" || e.type === "Autorizacion Liberada"));

  // each statement's interest is calculated once, and charged once when its grace ended
  const byStatement = new Map<string, CreditEvent[]>();
  for (const e of events) {
    if (e.statementCut === undefined) continue;
    const key = `${e.statementCut.toISOString()} ${e.type}`;
    byStatement.set(key, [...(byStatement.get(key) ?? []), e]);
  }
  for (const st of state.statements) {
    const of = (type: CreditEvent["type"]): CreditEvent[] => byStatement.get(`${st.cutDate.toISOString()} ${type}`) ?? [];
    expect(of("Interes Nominal Calculado").map((e) => e.amount)).toEqual([st.interestGenerated]);
    expect(of("Interes Nominal Aplicado").map((e) => e.amount)).toEqual(st.interestAppliedAt !== null ? [st.interestGenerated] : []);
    const penal = st.status === "defaulted" ? [st.penalInterest] : [];
    expect(of("Interes Moroso Calculado").map((e) => e.amount)).toEqual(penal);
    expect(of("Interes Moroso Aplicado").map((e) => e.amount)).toEqual(penal);
  }
  expect(events.filter((e) => e.type === "Interes Nominal Aplicado")).toHaveLength(state.statements.filter((st) => st.interestAppliedAt !== null).length);

  // a cure follows a payment: Reporte de Pago, Interes cancelado[, Credito Reintegrado]
  events.forEach((e, i) => {
    if (e.type === "Interes cancelado") expect(events[i - 1]?.type).toBe("Reporte de Pago");
    if (e.type === "Credito Reintegrado") expect(events[i - 1]?.type).toBe("Interes cancelado");
  });
}

describe("credit engine properties", () => {
  it("keeps the invariants after every step, and the event log reconciles with the balances", () => {
    fc.assert(fc.property(scenarioArb, checkScenario), RUNS);
  });

  it("the same with mostly authorizations, captures, voids and refunds (docs/decisions/credit.md \"Authorizations\", docs/decisions/cards.md \"Refunds\")", () => {
    fc.assert(fc.property(holdScenarioArb, checkScenario), { numRuns: 200, seed: 20261126 });
  });


  it("advancing in one go equals advancing day by day (batches may run in any chunking), a hold's expiry included", () => {
    const hold = fc.record({ permille: fc.integer({ min: 0, max: 1000 }), ttlDays: fc.integer({ min: 1, max: 40 }) });
    fc.assert(
      fc.property(productArb, fc.integer({ min: 0, max: 3_000_000 }), fc.integer({ min: 1, max: 60 * 24 * 60 }), fc.integer({ min: 1, max: 150 }), hold, (product, limit, firstCutAfter, days, held) => {
        const createdAt = new Date("2026-01-01T08:00:00Z");
        const w = createWallet(product, { walletId: "w", createdAt, limit, firstCutDate: new Date(createdAt.getTime() + firstCutAfter * 60_000) });
        if (!w.ok) throw new Error(w.message);
        const amount = Math.floor((limit * held.permille) / 1000);
        const authorized = amount > 0 ? authorize(w.value, product, new Date("2026-01-01T08:30:00Z"), { authorizationId: "a", amount, ttlDays: held.ttlDays }) : null;
        const opened = authorized?.ok ? authorized.value.state : w.value;
        const charged = charge(opened, product, new Date("2026-01-01T09:00:00Z"), opened.availableAmount);
        const base = charged.ok ? charged.value.state : opened;
        const to = new Date(createdAt.getTime() + days * DAY_MS);
        const once = advance(base, product, to);
        let stepwise = base;
        const stepEvents: CreditEvent[] = [];
        const stepClosed: StepResult["closedHolds"] = [];
        for (let t = createdAt.getTime() + DAY_MS / 2; t < to.getTime(); t += DAY_MS / 2) {
          const r = advance(stepwise, product, new Date(t));
          if (!r.ok) throw new Error(r.message);
          stepwise = r.value.state;
          stepEvents.push(...r.value.events);
          stepClosed.push(...r.value.closedHolds);
          expect(violations(stepwise, product)).toEqual([]);
        }
        const final = advance(stepwise, product, to);
        if (!once.ok || !final.ok) throw new Error("advance refused");
        stepEvents.push(...final.value.events);
        stepClosed.push(...final.value.closedHolds);
        expect(final.value.state).toEqual(once.value.state);
        expect(stepEvents).toEqual(once.value.events);
        expect(stepClosed).toEqual(once.value.closedHolds);
        // the hold is open exactly until its daily close
        const expiresAt = authorized?.ok && authorized.value.decision.status === "approved" ? authorized.value.decision.expiresAt : null;
        const open = expiresAt !== null && to.getTime() < expiresAt.getTime();
        expect(once.value.state.holds.map((h) => h.authorizationId)).toEqual(open ? ["a"] : []);
        expect(once.value.closedHolds).toEqual(expiresAt !== null && !open ? [{ authorizationId: "a", kind: "expired", capturedAmount: 0, releasedAmount: amount, at: expiresAt }] : []);
      }),
      { numRuns: 100, seed: 20260210 },
    );
  });
});
