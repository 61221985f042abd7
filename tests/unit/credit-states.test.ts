/**
 * Wallet state machine, wallet creation and event kinds (src/domain/credit/states.ts, wallet.ts,
 * events.ts; reference "States and transitions › Credit wallet", "Credit notifications (credit core)";
 * docs/decisions/credit.md "Wallets" and "Default and cure").
 */
import { describe, expect, it } from "vitest";
import { CREDIT_EVENT_TYPES, EVENT_KINDS, makeEvent, notificationPayload, walletDetails } from "../../src/domain/credit/events.js";
import { block, chargeAllowed, cured, defaultCovered, defaultsAtGraceEnd, dissolve, settingsChangeAllowed, unblock } from "../../src/domain/credit/states.js";
import { createWallet, defaultFirstCutDate, nextCutDate, type CreditProductRules, type Statement, type WalletStatus } from "../../src/domain/credit/wallet.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";

const product: CreditProductRules = GOLDEN_PRODUCT;

const STATES: WalletStatus[] = ["active", "blocked", "in_default", "dissolved"];

describe("transitions", () => {
  it.each(STATES)("block from %s", (from) => {
    const got = block(from);
    if (from === "active") expect(got).toEqual({ ok: true, value: "blocked" });
    else expect(got).toMatchObject({ ok: false, code: "INVALID_TRANSITION" });
  });

  it.each(STATES)("unblock from %s", (from) => {
    const got = unblock(from);
    if (from === "blocked") expect(got).toEqual({ ok: true, value: "active" });
    else expect(got).toMatchObject({ ok: false, code: "INVALID_TRANSITION" });
  });

  it.each(STATES)("dissolve from %s", (from) => {
    const got = dissolve(from);
    if (from === "dissolved") expect(got).toMatchObject({ ok: false, code: "WALLET_DISSOLVED" });
    else expect(got).toEqual({ ok: true, value: "dissolved" });
  });

  it.each([
    { status: "active" as const, expiresAt: null, at: "2026-01-16T00:00:00Z", code: null },
    { status: "blocked" as const, expiresAt: null, at: "2026-01-16T00:00:00Z", code: "WALLET_BLOCKED" },
    { status: "in_default" as const, expiresAt: null, at: "2026-01-16T00:00:00Z", code: "WALLET_IN_DEFAULT" },
    { status: "dissolved" as const, expiresAt: null, at: "2026-01-16T00:00:00Z", code: "WALLET_DISSOLVED" },
    { status: "active" as const, expiresAt: "2026-01-16T00:00:00Z", at: "2026-01-15T23:59:59Z", code: null },
    { status: "active" as const, expiresAt: "2026-01-16T00:00:00Z", at: "2026-01-16T00:00:00Z", code: "WALLET_EXPIRED" },
  ])("charge on $status (expires $expiresAt) at $at → $code", ({ status, expiresAt, at, code }) => {
    const got = chargeAllowed(status, expiresAt === null ? null : new Date(expiresAt), new Date(at));
    if (code === null) expect(got).toEqual({ ok: true, value: true });
    else expect(got).toMatchObject({ ok: false, code });
  });

  it("limit and override changes are refused only on a dissolved wallet", () => {
    expect(settingsChangeAllowed("in_default").ok).toBe(true);
    expect(settingsChangeAllowed("dissolved")).toMatchObject({ ok: false, code: "WALLET_DISSOLVED" });
  });
});

describe("default and cure rules", () => {
  const st = (over: Partial<Statement>): Statement => ({
    index: 0,
    cutDate: new Date("2026-01-31T00:00:00Z"),
    cycleStart: new Date("2026-01-01T00:00:00Z"),
    cycleEnd: new Date("2026-01-31T00:00:00Z"),
    daysInCycle: 30,
    sumOfDailyBalance: 900000,
    principalAtCut: 30000,
    interestOutstandingAtCut: 0,
    interestAccrualMethod: "ADB",
    compound: false,
    interestBasis: 900000,
    interestRateNominal: 36,
    dailyRateDivisor: 360,
    fixedInterestNominal: 0,
    minimumPaymentRate: 10,
    fixedMinimumPayment: 1000,
    interestGenerated: 900,
    minimumPayment: 4000,
    paymentDueDate: new Date("2026-02-10T00:00:00Z"),
    paidInCycle: 0,
    status: "defaulted",
    interestApplied: 900,
    interestAppliedAt: new Date("2026-02-10T00:00:00Z"),
    penalInterest: 800,
    interestRateMoroso: 12,
    fixedInterestMoroso: 500,
    curedAt: null,
    ...over,
  });

  it.each([
    { paid: 0, defaults: true },
    { paid: 3999, defaults: true },
    { paid: 4000, defaults: false },
  ])("paid $paid of a 4000 minimum → defaults: $defaults", ({ paid, defaults }) => {
    expect(defaultsAtGraceEnd({ paidInCycle: paid, minimumPayment: 4000 })).toBe(defaults);
  });

  it.each([
    { paid: 3000, covered: false },
    { paid: 4799, covered: false },
    { paid: 4800, covered: true },
  ])("paid $paid of 4000 + 800 → covered: $covered", ({ paid, covered }) => {
    expect(defaultCovered(st({ paidInCycle: paid }))).toBe(covered);
  });

  it("a wallet is cured when every uncured defaulted statement is covered", () => {
    expect(cured("in_default", [st({ paidInCycle: 4800 })])).toBe(true);
    expect(cured("in_default", [st({ paidInCycle: 4800 }), st({ index: 1, paidInCycle: 100, minimumPayment: 3000, penalInterest: 700 })])).toBe(false);
    expect(cured("in_default", [st({ paidInCycle: 0, curedAt: new Date("2026-02-11T00:00:00Z") }), st({ index: 1, paidInCycle: 3700, minimumPayment: 3000, penalInterest: 700 })])).toBe(true);
    expect(cured("active", [st({ paidInCycle: 4800 })])).toBe(false);
    expect(cured("dissolved", [st({ paidInCycle: 4800 })])).toBe(false);
  });
});

describe("wallet creation", () => {
  it("starts active with AA = limit, the product's specs and the first cycle at creation", () => {
    const got = createWallet(product, { walletId: "w1", createdAt: new Date("2026-01-01T00:00:00Z"), limit: 100000, firstCutDate: new Date("2026-01-31T00:00:00Z"), time: 90 });
    expect(got.ok).toBe(true);
    if (!got.ok) return;
    expect(got.value).toMatchObject({
      status: "active",
      limit: 100000,
      availableAmount: 100000,
      principalOutstanding: 0,
      interestOutstanding: 0,
      sumOfDailyBalance: 0,
      sequence: 0,
      interestSpecs: { interestRateNominal: 36, interestRateMoroso: 12, fixedInterestNominal: 0, fixedInterestMoroso: 500 },
      minimumPaymentSpecs: { minimumPaymentRate: 10, fixedMinimumPayment: 1000 },
    });
    expect(got.value.cycleStart.toISOString()).toBe("2026-01-01T00:00:00.000Z");
    expect(got.value.expiresAt?.toISOString()).toBe("2026-04-01T00:00:00.000Z");
    expect(nextCutDate(got.value, "month")?.toISOString()).toBe("2026-01-31T00:00:00.000Z");
  });

  it("defaults the first cut to 00:00 UTC of the creation day plus one cutFrequency", () => {
    expect(defaultFirstCutDate(new Date("2026-01-31T13:00:00Z"), "month").toISOString()).toBe("2026-02-28T00:00:00.000Z");
    expect(defaultFirstCutDate(new Date("2026-01-31T13:00:00Z"), "biweekly").toISOString()).toBe("2026-02-14T00:00:00.000Z");
  });

  it("refuses a first cut that is not after the creation", () => {
    const got = createWallet(product, { walletId: "w1", createdAt: new Date("2026-01-31T00:00:00Z"), limit: 100000, firstCutDate: new Date("2026-01-31T00:00:00Z") });
    expect(got).toMatchObject({ ok: false, code: "FIRST_CUT_NOT_AFTER_CREATION", field: "firstCutDate" });
  });
});

describe("event kinds", () => {
  it("lists the ten names of the reference, the four authorization types and the refund with their direction and balance effect", () => {
    expect(CREDIT_EVENT_TYPES).toHaveLength(15);
    expect(Object.fromEntries(CREDIT_EVENT_TYPES.map((t) => [t, `${EVENT_KINDS[t].direction}/${String(EVENT_KINDS[t].affectsBalance)}`]))).toEqual({
      "Interes Nominal Calculado": "debit/false",
      "Interes Nominal Aplicado": "debit/true",
      "Interes Moroso Calculado": "debit/false",
      "Interes Moroso Aplicado": "debit/true",
      "Reporte de Pago": "credit/true",
      "Cambio de Limite": "credit/true",
      "Interes cancelado": "credit/false",
      "Credito Reintegrado": "credit/true",
      "Cambio Interest ejecutado": "credit/false",
      "Interes moroso ejecutado": "debit/false",
      "Autorizacion Aprobada": "debit/false",
      "Autorizacion Rechazada": "debit/false",
      "Autorizacion Capturada": "debit/true",
      "Autorizacion Liberada": "credit/false",
      Reembolso: "credit/true",
    });
  });

  it("numbers events per wallet and keeps the payload to the reference's fields plus sequence", () => {
    const specs = { interestRateNominal: 36, interestRateMoroso: 12, fixedInterestNominal: 0, fixedInterestMoroso: 500 };
    const min = { minimumPaymentRate: 10, fixedMinimumPayment: 1000 };
    const details = walletDetails({ limit: 100000, availableAmount: 0, principalOutstanding: 100000, interestOutstanding: 850, amountHeld: 0 }, specs, min);
    expect(details).toEqual({ principal_outstanding: 100000, interest_accrued: 850, totalDebt: 100850, limit: 100000, amountOverdraft: 850, amountHeld: 0, interestSpecs: specs, minimumPaymentSpecs: min });
    const e = makeEvent({ walletId: "w1", type: "Interes Nominal Aplicado", amount: 850, lastSequence: 6, at: new Date("2026-02-10T00:00:00Z"), details, statementCut: new Date("2026-01-31T00:00:00Z") });
    expect(notificationPayload(e)).toEqual({ walletId: "w1", type: "Interes Nominal Aplicado", amount: 850, direction: "debit", affectsBalance: true, walletDetails_after: details, sequence: 7 });
    expect(() => makeEvent({ walletId: "w1", type: "Reporte de Pago", amount: -1, lastSequence: 0, at: new Date(), details })).toThrow(RangeError);
  });
});
