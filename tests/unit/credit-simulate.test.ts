/**
 * The reference model (src/domain/credit/simulate.ts) on the worked examples of docs/decisions/credit.md "The golden vector": the
 * golden vector (ADB 1125 and minimum 5500; BAC 1350) and "Default and cure" (interest 900, minimum
 * 4000, penal 800, interest_accrued 1700, payments 3000 and 1800 → principal 26900, interest 0, cured
 * on the second payment, events in the documented order); plus compound capitalisation, overrides,
 * the overdraft, expiry, dissolution and refusals.
 */
import { describe, expect, it } from "vitest";
import type { CreditEvent } from "../../src/domain/credit/events.js";
import type { Outcome } from "../../src/domain/credit/outcome.js";
import { advance, blockWallet, changeLimit, charge, dissolveWallet, overrideSpecs, pay, unblockWallet, type StepResult } from "../../src/domain/credit/simulate.js";
import { createWallet, nextCutDate, type CreditProductRules, type WalletState } from "../../src/domain/credit/wallet.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";

const golden: CreditProductRules = GOLDEN_PRODUCT;

const d = (iso: string): Date => new Date(iso);

function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`refused: ${o.code} ${o.message}`);
  return o.value;
}

function newWallet(product: CreditProductRules, extra: { time?: number } = {}): WalletState {
  return ok(createWallet(product, { walletId: "w1", createdAt: d("2026-01-01T00:00:00Z"), limit: 100000, firstCutDate: d("2026-01-31T00:00:00Z"), ...extra }));
}

/** Runs a list of steps, threading the state and collecting every event. */
function run(product: CreditProductRules, start: WalletState, steps: ((s: WalletState) => Outcome<StepResult>)[]): { state: WalletState; events: CreditEvent[] } {
  let state = start;
  const events: CreditEvent[] = [];
  for (const step of steps) {
    const r = ok(step(state));
    state = r.state;
    events.push(...r.events);
  }
  return { state, events };
}

const brief = (events: CreditEvent[]): string[] => events.map((e) => `${e.sequence} ${e.type} ${e.amount} ${e.direction}/${String(e.affectsBalance)}`);

describe("golden vector (docs/decisions/credit.md#the-golden-vector)", () => {
  it.each([
    { method: "ADB" as const, interest: 1125 },
    { method: "BAC" as const, interest: 1350 },
  ])("$method: interest $interest, minimum 5500", ({ method, interest }) => {
    const product = { ...golden, interestAccrualMethod: method };
    const { state, events } = run(product, newWallet(product), [
      (s) => charge(s, product, d("2026-01-01T10:00:00Z"), 30000),
      (s) => charge(s, product, d("2026-01-16T10:00:00Z"), 15000),
      (s) => advance(s, product, d("2026-01-31T00:00:00Z")),
    ]);
    expect(brief(events)).toEqual([`1 Interes Nominal Calculado ${interest} debit/false`]);
    const st = state.statements[0];
    expect(st).toMatchObject({ sumOfDailyBalance: 1125000, daysInCycle: 30, principalAtCut: 45000, interestGenerated: interest, minimumPayment: 5500, status: "pending" });
    expect(st?.paymentDueDate.toISOString()).toBe("2026-02-10T00:00:00.000Z");
    expect(state).toMatchObject({ principalOutstanding: 45000, interestOutstanding: 0, availableAmount: 55000, sumOfDailyBalance: 0 });
    expect(nextCutDate(state, product.cutFrequency)?.toISOString()).toBe("2026-02-28T00:00:00.000Z");
    expect(events[0]?.walletDetails_after).toMatchObject({ principal_outstanding: 45000, interest_accrued: 0, totalDebt: 45000, limit: 100000, amountOverdraft: 0 });
  });

  it("paying the minimum in the grace period: interest applied at the grace end, no default", () => {
    const { state, events } = run(golden, newWallet(golden), [
      (s) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000),
      (s) => charge(s, golden, d("2026-01-16T10:00:00Z"), 15000),
      (s) => pay(s, golden, d("2026-02-05T12:00:00Z"), 5500),
      (s) => advance(s, golden, d("2026-02-10T00:00:00Z")),
    ]);
    expect(brief(events)).toEqual(["1 Interes Nominal Calculado 1125 debit/false", "2 Reporte de Pago 5500 credit/true", "3 Interes Nominal Aplicado 1125 debit/true"]);
    expect(state.statements[0]).toMatchObject({ paidInCycle: 5500, status: "paid", interestApplied: 1125, interestAppliedAt: d("2026-02-10T00:00:00Z"), penalInterest: 0, interestRateMoroso: null });
    expect(state).toMatchObject({ status: "active", principalOutstanding: 39500, interestOutstanding: 1125, availableAmount: 59375 });
  });
});

describe("default and cure (the example of docs/decisions/credit.md#the-golden-vector)", () => {
  const steps = [
    (s: WalletState) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000),
    (s: WalletState) => advance(s, golden, d("2026-02-10T00:00:00Z")),
  ];

  it("defaults at the grace end: 900 applied, penal 800 calculated and applied, interest_accrued 1700", () => {
    const { state, events } = run(golden, newWallet(golden), steps);
    expect(brief(events)).toEqual([
      "1 Interes Nominal Calculado 900 debit/false",
      "2 Interes Nominal Aplicado 900 debit/true",
      "3 Interes Moroso Calculado 800 debit/false",
      "4 Interes Moroso Aplicado 800 debit/true",
      "5 Interes moroso ejecutado 800 debit/false",
    ]);
    expect(state.statements[0]).toMatchObject({ interestGenerated: 900, minimumPayment: 4000, status: "defaulted", penalInterest: 800 });
    expect(state).toMatchObject({ status: "in_default", principalOutstanding: 30000, interestOutstanding: 1700, availableAmount: 68300 });
    expect(events[1]?.walletDetails_after.interest_accrued).toBe(900);
    expect(events[3]?.walletDetails_after.interest_accrued).toBe(1700);
  });

  it("charges are declined while in default", () => {
    const { state } = run(golden, newWallet(golden), steps);
    expect(charge(state, golden, d("2026-02-11T00:00:00Z"), 100)).toMatchObject({ ok: false, code: "WALLET_IN_DEFAULT" });
  });

  it("payments of 3000 and 1800 leave principal 26900 and interest 0, and the second one cures the wallet", () => {
    const { state: defaulted } = run(golden, newWallet(golden), steps);
    const first = ok(pay(defaulted, golden, d("2026-02-11T09:00:00Z"), 3000));
    expect(first.split).toEqual({ toInterest: 1500, toPrincipal: 1500, toOverdraft: 0, restored: 0 });
    expect(brief(first.events)).toEqual(["6 Reporte de Pago 3000 credit/true"]);
    expect(first.state).toMatchObject({ status: "in_default", principalOutstanding: 28500, interestOutstanding: 200, availableAmount: 68300 });

    const second = ok(pay(first.state, golden, d("2026-02-12T09:00:00Z"), 1800));
    expect(second.split).toEqual({ toInterest: 200, toPrincipal: 1600, toOverdraft: 0, restored: 0 });
    expect(brief(second.events)).toEqual(["7 Reporte de Pago 1800 credit/true", "8 Interes cancelado 800 credit/false", "9 Credito Reintegrado 4800 credit/true"]);
    expect(second.state).toMatchObject({ status: "active", principalOutstanding: 26900, interestOutstanding: 0, availableAmount: 73100 });
    expect(second.state.statements[0]).toMatchObject({ paidInCycle: 4800, status: "defaulted", penalInterest: 800, interestRateMoroso: 12, fixedInterestMoroso: 500, curedAt: d("2026-02-12T09:00:00Z") });
    expect(second.statements.map((s) => s.index)).toEqual([0]);
  });

  it("a second default while in default: the cure needs both statements covered, and cancels both penal interests", () => {
    const { state, events } = run(golden, newWallet(golden), [
      (s) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000),
      (s) => advance(s, golden, d("2026-03-10T00:00:00Z")),
    ]);
    // Feb cycle: 28 closes × 30000 = 840000 → nominal 840, minimum 10 % × 30000 + 1000 = 4000,
    // penal 12/100/360 × 840000 + 500 = 780
    expect(brief(events).slice(5)).toEqual([
      "6 Interes Nominal Calculado 840 debit/false",
      "7 Interes Nominal Aplicado 840 debit/true",
      "8 Interes Moroso Calculado 780 debit/false",
      "9 Interes Moroso Aplicado 780 debit/true",
      "10 Interes moroso ejecutado 780 debit/false",
    ]);
    expect(state.statements.map((s) => [s.status, s.minimumPayment, s.penalInterest])).toEqual([
      ["defaulted", 4000, 800],
      ["defaulted", 4000, 780],
    ]);
    const partly = ok(pay(state, golden, d("2026-03-11T00:00:00Z"), 4790)); // covers 4000 + 780, not 4000 + 800
    expect(partly.state.status).toBe("in_default");
    expect(brief(partly.events)).toEqual(["11 Reporte de Pago 4790 credit/true"]);
    const cured = ok(pay(partly.state, golden, d("2026-03-11T00:00:00Z"), 10));
    expect(brief(cured.events).slice(0, 2)).toEqual(["12 Reporte de Pago 10 credit/true", "13 Interes cancelado 1580 credit/false"]);
    expect(cured.state.status).toBe("active");
    expect(cured.state.statements.map((s) => s.curedAt?.toISOString())).toEqual(["2026-03-11T00:00:00.000Z", "2026-03-11T00:00:00.000Z"]);
  });

  it("a payment counts toward every statement whose grace period is open", () => {
    const daily = { ...golden, cutFrequency: "daily" as const, gracePeriod: 3, fixedMinimumPaymentAmount: 0 };
    const w = ok(createWallet(daily, { walletId: "w1", createdAt: d("2026-01-01T00:00:00Z"), limit: 100000, firstCutDate: d("2026-01-02T00:00:00Z") }));
    const { state } = run(daily, w, [
      (s) => charge(s, daily, d("2026-01-01T10:00:00Z"), 30000),
      (s) => pay(s, daily, d("2026-01-04T12:00:00Z"), 6000),
    ]);
    // cuts Jan 2, 3, 4 are in their grace period on Jan 4 12:00 (due Jan 5, 6, 7)
    expect(state.statements.map((s) => [s.cutDate.toISOString().slice(0, 10), s.minimumPayment, s.paidInCycle, s.status])).toEqual([
      ["2026-01-02", 3000, 6000, "paid"],
      ["2026-01-03", 3000, 6000, "paid"],
      ["2026-01-04", 3000, 6000, "paid"],
    ]);
  });

  it("a non-revolving product cures without Credito Reintegrado and restores nothing", () => {
    const product = { ...golden, revolving: false };
    const { state, events } = run(product, newWallet(product), [
      (s) => charge(s, product, d("2026-01-01T10:00:00Z"), 30000),
      (s) => advance(s, product, d("2026-02-10T00:00:00Z")),
      (s) => pay(s, product, d("2026-02-11T09:00:00Z"), 4800),
    ]);
    expect(brief(events).slice(-2)).toEqual(["6 Reporte de Pago 4800 credit/true", "7 Interes cancelado 800 credit/false"]);
    expect(state).toMatchObject({ status: "active", principalOutstanding: 26900, interestOutstanding: 0, availableAmount: 68300 });
  });

  it("a blocked wallet defaults too and returns to blocked at the cure", () => {
    const { state } = run(golden, newWallet(golden), [
      (s) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000),
      (s) => blockWallet(s, golden, d("2026-01-20T00:00:00Z")),
      (s) => advance(s, golden, d("2026-02-10T00:00:00Z")),
    ]);
    expect(state.status).toBe("in_default");
    expect(blockWallet(state, golden, d("2026-02-10T00:00:00Z"))).toMatchObject({ ok: false, code: "INVALID_TRANSITION" });
    const after = ok(pay(state, golden, d("2026-02-11T00:00:00Z"), 4800));
    expect(after.state.status).toBe("blocked");
    expect(ok(unblockWallet(after.state, golden, d("2026-02-11T00:00:00Z"))).state.status).toBe("active");
  });
});

describe("cycle details", () => {
  it("compound: the daily basis includes outstanding interest and applied interest is capitalised", () => {
    const product = { ...golden, compound: true };
    const { state, events } = run(product, newWallet(product), [
      (s) => charge(s, product, d("2026-01-01T10:00:00Z"), 30000),
      (s) => advance(s, product, d("2026-02-28T00:00:00Z")),
    ]);
    // Jan 31: 900; Feb 10: 900 capitalised + default (nothing paid) penal 800 into interest.
    // Feb cycle (28 days): 10 closes × 30000 (Feb 1–10) + 18 closes × (30900 + 800) = 300000 + 570600 = 870600 → 870.6 → 871
    expect(brief(events)).toEqual([
      "1 Interes Nominal Calculado 900 debit/false",
      "2 Interes Nominal Aplicado 900 debit/true",
      "3 Interes Moroso Calculado 800 debit/false",
      "4 Interes Moroso Aplicado 800 debit/true",
      "5 Interes moroso ejecutado 800 debit/false",
      "6 Interes Nominal Calculado 871 debit/false",
    ]);
    expect(state.statements[1]).toMatchObject({ sumOfDailyBalance: 870600, daysInCycle: 28, principalAtCut: 30900, interestOutstandingAtCut: 800, compound: true });
    expect(state).toMatchObject({ principalOutstanding: 30900, interestOutstanding: 800 });
  });

  it("an override takes effect after the next cut, which still uses the old rate", () => {
    const { state, events } = run(golden, newWallet(golden), [
      (s) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000),
      (s) => overrideSpecs(s, golden, d("2026-01-10T00:00:00Z"), { interestRateNominal: 72 }),
      (s) => pay(s, golden, d("2026-02-01T00:00:00Z"), 4000),
      (s) => advance(s, golden, d("2026-02-28T00:00:00Z")),
    ]);
    expect(brief(events).filter((e) => e.includes("Calculado") || e.includes("Cambio"))).toEqual([
      "1 Interes Nominal Calculado 900 debit/false",
      "2 Cambio Interest ejecutado 0 credit/false",
      // the payment (IO still 0: all to principal) follows the Feb 1 close, so Feb is
      // 1 close × 30000 + 27 closes × 26000 = 732000 cent-days at 72 % / 360 → 1464
      "5 Interes Nominal Calculado 1464 debit/false",
    ]);
    expect(state.interestSpecs.interestRateNominal).toBe(72);
    expect(events[1]?.walletDetails_after.interestSpecs.interestRateNominal).toBe(72);
  });

  it("a product's interest settings apply to its wallets from their next cut, until an override has activated", () => {
    const dearer = { ...golden, baseInterestRate: 72, baseMinimumPaymentRate: 20 };
    const followed = run(golden, newWallet(golden), [
      (s) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000),
      (s) => advance(s, golden, d("2026-01-20T00:00:00Z")),
      (s) => advance(s, dearer, d("2026-01-31T00:00:00Z")),
    ]);
    // 72 % / 360 × 900000 = 1800; minimum 20 % × 30000 + 1000 = 7000
    expect(brief(followed.events)).toEqual(["1 Interes Nominal Calculado 1800 debit/false"]);
    expect(followed.state.statements[0]).toMatchObject({ interestRateNominal: 72, minimumPaymentRate: 20, interestGenerated: 1800, minimumPayment: 7000 });
    expect(followed.events[0]?.walletDetails_after.interestSpecs.interestRateNominal).toBe(72);

    const overridden = run(golden, newWallet(golden), [
      (s) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000),
      (s) => overrideSpecs(s, golden, d("2026-01-10T00:00:00Z"), { interestRateNominal: 48 }),
      (s) => advance(s, golden, d("2026-02-05T00:00:00Z")),
      (s) => advance(s, dearer, d("2026-02-28T00:00:00Z")),
    ]);
    expect(overridden.state.statements.map((s) => s.interestRateNominal)).toEqual([36, 48]);
    expect(overridden.state).toMatchObject({ specsOverridden: true, interestSpecs: { interestRateNominal: 48 }, minimumPaymentSpecs: { minimumPaymentRate: 10 } });
  });

  it("an override is ignored on a product without variableSpecs", () => {
    const product = { ...golden, variableSpecs: false };
    const r = ok(overrideSpecs(newWallet(product), product, d("2026-01-10T00:00:00Z"), { interestRateNominal: 72 }));
    expect(r.outcome).toBe("ignored");
    expect(r.state.pendingSpecs).toBeNull();
  });

  it("interest beyond the limit becomes overdraft and AA stays 0; a payment reduces the overdraft first", () => {
    const { state, events } = run(golden, newWallet(golden), [
      (s) => charge(s, golden, d("2026-01-01T10:00:00Z"), 100000),
      (s) => pay(s, golden, d("2026-02-01T00:00:00Z"), 11000),
      (s) => charge(s, golden, d("2026-02-02T00:00:00Z"), 11000),
      (s) => advance(s, golden, d("2026-02-10T00:00:00Z")),
    ]);
    // Jan: 30 closes × 100000 → 3000 interest; minimum 11000 paid.
    expect(state).toMatchObject({ availableAmount: 0, principalOutstanding: 100000, interestOutstanding: 3000 });
    expect(events.at(-1)?.walletDetails_after.amountOverdraft).toBe(3000);
    const paid = ok(pay(state, golden, d("2026-02-11T00:00:00Z"), 5000));
    expect(paid.split).toEqual({ toInterest: 2500, toPrincipal: 2500, toOverdraft: 3000, restored: 2000 });
    expect(paid.state).toMatchObject({ availableAmount: 2000, principalOutstanding: 97500, interestOutstanding: 500 });
  });

  it("a limit raise emits Cambio de Limite with the difference", () => {
    const r = ok(changeLimit(newWallet(golden), golden, d("2026-01-05T00:00:00Z"), 150000));
    expect(brief(r.events)).toEqual(["1 Cambio de Limite 50000 credit/true"]);
    expect(r.state).toMatchObject({ limit: 150000, availableAmount: 150000 });
    expect(changeLimit(r.state, golden, d("2026-01-05T00:00:00Z"), 150000)).toMatchObject({ ok: false, code: "LIMIT_NOT_RAISED" });
  });

  it("charges stop at the end of `time`", () => {
    const w = newWallet(golden, { time: 10 });
    expect(charge(w, golden, d("2026-01-10T23:59:59Z"), 100).ok).toBe(true);
    expect(charge(w, golden, d("2026-01-11T00:00:00Z"), 100)).toMatchObject({ ok: false, code: "WALLET_EXPIRED" });
  });

  it("a dissolved wallet runs no step but still takes payments", () => {
    const { state, events } = run(golden, newWallet(golden), [
      (s) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000),
      (s) => dissolveWallet(s, golden, d("2026-01-20T00:00:00Z")),
      (s) => advance(s, golden, d("2026-06-01T00:00:00Z")),
      (s) => pay(s, golden, d("2026-06-01T00:00:00Z"), 30000),
    ]);
    expect(brief(events)).toEqual(["1 Reporte de Pago 30000 credit/true"]);
    expect(state).toMatchObject({ status: "dissolved", principalOutstanding: 0, interestOutstanding: 0, statements: [] });
    expect(charge(state, golden, d("2026-06-02T00:00:00Z"), 1)).toMatchObject({ ok: false, code: "WALLET_DISSOLVED" });
    expect(dissolveWallet(state, golden, d("2026-06-02T00:00:00Z"))).toMatchObject({ ok: false, code: "WALLET_DISSOLVED" });
  });

  it("refuses a payment above the debt and an instant before the wallet's clock", () => {
    const w = ok(charge(newWallet(golden), golden, d("2026-01-02T00:00:00Z"), 1000)).state;
    expect(pay(w, golden, d("2026-01-03T00:00:00Z"), 1001)).toMatchObject({ ok: false, code: "PAYMENT_EXCEEDS_DEBT", field: "amount" });
    expect(advance(w, golden, d("2026-01-01T00:00:00Z"))).toMatchObject({ ok: false, code: "CLOCK_BACKWARDS" });
  });

  it("a product update applies from the next cycle step: a new cutFrequency follows its own schedule from the wallet's clock, a new gracePeriod from the next cut", () => {
    const first = ok(advance(newWallet(golden), golden, d("2026-02-03T12:00:00Z")));
    expect(first.state.statements.map((s) => s.paymentDueDate.toISOString().slice(0, 10))).toEqual(["2026-02-10"]);
    const weekly = { ...golden, cutFrequency: "weekly" as const, gracePeriod: 3 };
    // weekly cuts from Jan 31: Feb 7, 14, …; the Feb 7 cut is the first after the clock (never Feb 7's predecessors)
    const r = ok(advance(first.state, weekly, d("2026-02-14T00:00:00Z")));
    expect(r.state.statements.map((s) => `${s.cutDate.toISOString().slice(0, 10)} due ${s.paymentDueDate.toISOString().slice(0, 10)}`)).toEqual([
      "2026-01-31 due 2026-02-10",
      "2026-02-07 due 2026-02-10",
      "2026-02-14 due 2026-02-17",
    ]);
    expect(r.state.statements.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(r.state.statements[1]?.daysInCycle).toBe(7);
  });

  it.each([
    { freq: "biweekly" as const, cuts: ["2026-01-31", "2026-02-14", "2026-02-28", "2026-03-14", "2026-03-28"] },
    { freq: "month" as const, cuts: ["2026-01-31", "2026-02-28", "2026-03-31"] },
    { freq: "year" as const, cuts: ["2026-01-31"] },
  ])("$freq cuts up to 2026-03-31", ({ freq, cuts }) => {
    const product = { ...golden, cutFrequency: freq };
    const r = ok(advance(newWallet(product), product, d("2026-03-31T00:00:00Z")));
    expect(r.state.statements.map((s) => s.cutDate.toISOString().slice(0, 10))).toEqual(cuts);
    expect(r.state.statements.map((s) => s.cycleStart.toISOString().slice(0, 10))).toEqual(["2026-01-01", ...cuts.slice(0, -1)]);
  });
});
