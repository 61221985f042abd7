/**
 * Refunds of captured authorizations in the pure credit engine (src/domain/credit/refunds.ts)
 * against docs/decisions/cards.md "Refunds": principal first, then interest; the applied amount
 * back to AA on every product and in every state, capped by limit − totalDebt − held (what
 * reduces the overdraft is not given back); the part above the debt is `unappliedAmount`, booked
 * nowhere; not a payment (no `paidInCycle`, no cure); `Reembolso` credit/true with
 * `unappliedAmount`, numbered like every event; refusals `CLOCK_BACKWARDS` and `AMOUNT_NOT_POSITIVE`.
 */
import { describe, expect, it } from "vitest";
import { authorize, capture } from "../../src/domain/credit/authorizations.js";
import { notificationPayload, type CreditEvent } from "../../src/domain/credit/events.js";
import type { Outcome } from "../../src/domain/credit/outcome.js";
import { amountOverdraft, totalDebt } from "../../src/domain/credit/payments.js";
import { applyRefund, refund } from "../../src/domain/credit/refunds.js";
import { advance, charge, dissolveWallet, pay } from "../../src/domain/credit/simulate.js";
import { createWallet, type CreditProductRules, type WalletState } from "../../src/domain/credit/wallet.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";

const golden: CreditProductRules = GOLDEN_PRODUCT;
const nonRevolving: CreditProductRules = { ...GOLDEN_PRODUCT, revolving: false };
const d = (iso: string): Date => new Date(iso);

function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`refused: ${o.code} ${o.message}`);
  return o.value;
}

function newWallet(product: CreditProductRules = golden): WalletState {
  return ok(createWallet(product, { walletId: "w1", createdAt: d("2026-01-01T00:00:00Z"), limit: 100000, firstCutDate: d("2026-01-31T00:00:00Z") }));
}

/** A wallet with `amount` captured on 2026-01-05 (authorized at 10:00, captured at 12:00). */
function captured(amount: number, product: CreditProductRules = golden): WalletState {
  const held = ok(authorize(newWallet(product), product, d("2026-01-05T10:00:00Z"), { authorizationId: "a1", amount, ttlDays: 7 }));
  return ok(capture(held.state, product, d("2026-01-05T12:00:00Z"), "a1")).state;
}

const counters = (s: WalletState): Record<string, number> => ({
  AA: s.availableAmount,
  held: s.amountHeld,
  AO: s.principalOutstanding,
  IO: s.interestOutstanding,
  overdraft: amountOverdraft(s),
});
const brief = (events: CreditEvent[]): string[] => events.map((e) => `${e.sequence} ${e.type} ${e.amount} ${e.direction}/${String(e.affectsBalance)}`);
/** AA + held + AO + IO − overdraft ≤ limit (src/domain/credit/payments.ts module note). */
const withinLimit = (s: WalletState): boolean => s.availableAmount + s.amountHeld + totalDebt(s) - amountOverdraft(s) <= s.limit;

describe("applyRefund: principal first, then interest, AA capped", () => {
  it.each([
    { name: "principal only", b: { limit: 10000, availableAmount: 2000, principalOutstanding: 8000, interestOutstanding: 0, amountHeld: 0 }, amount: 3000, after: { AO: 5000, IO: 0, AA: 5000 }, split: { toPrincipal: 3000, toInterest: 0, applied: 3000, unapplied: 0, restored: 3000 } },
    { name: "principal then interest", b: { limit: 10000, availableAmount: 1500, principalOutstanding: 8000, interestOutstanding: 500, amountHeld: 0 }, amount: 8200, after: { AO: 0, IO: 300, AA: 9700 }, split: { toPrincipal: 8000, toInterest: 200, applied: 8200, unapplied: 0, restored: 8200 } },
    { name: "above the debt", b: { limit: 10000, availableAmount: 1500, principalOutstanding: 8000, interestOutstanding: 500, amountHeld: 0 }, amount: 9000, after: { AO: 0, IO: 0, AA: 10000 }, split: { toPrincipal: 8000, toInterest: 500, applied: 8500, unapplied: 500, restored: 8500 } },
    { name: "no debt at all", b: { limit: 10000, availableAmount: 10000, principalOutstanding: 0, interestOutstanding: 0, amountHeld: 0 }, amount: 700, after: { AO: 0, IO: 0, AA: 10000 }, split: { toPrincipal: 0, toInterest: 0, applied: 0, unapplied: 700, restored: 0 } },
    { name: "overdraft absorbed first", b: { limit: 10000, availableAmount: 0, principalOutstanding: 10000, interestOutstanding: 400, amountHeld: 0 }, amount: 1000, after: { AO: 9000, IO: 400, AA: 600 }, split: { toPrincipal: 1000, toInterest: 0, applied: 1000, unapplied: 0, restored: 600 } },
    { name: "an open hold keeps its part", b: { limit: 10000, availableAmount: 0, principalOutstanding: 6000, interestOutstanding: 300, amountHeld: 4000 }, amount: 2000, after: { AO: 4000, IO: 300, AA: 1700 }, split: { toPrincipal: 2000, toInterest: 0, applied: 2000, unapplied: 0, restored: 1700 } },
  ])("$name", ({ b, amount, after, split }) => {
    const r = applyRefund(b, amount);
    expect({ AO: r.balances.principalOutstanding, IO: r.balances.interestOutstanding, AA: r.balances.availableAmount }).toEqual(after);
    expect(r.split).toEqual(split);
    expect(r.balances.limit).toBe(b.limit);
    expect(r.balances.amountHeld).toBe(b.amountHeld);
    expect(r.balances.availableAmount + r.balances.amountHeld + totalDebt(r.balances) - amountOverdraft(r.balances)).toBeLessThanOrEqual(b.limit);
  });

  it("throws on an amount that is not a positive safe integer (refund refuses those first)", () => {
    const b = { limit: 10000, availableAmount: 10000, principalOutstanding: 0, interestOutstanding: 0, amountHeld: 0 };
    expect(() => applyRefund(b, 0)).toThrow(RangeError);
    expect(() => applyRefund(b, 1.5)).toThrow(RangeError);
  });
});

describe("refund", () => {
  it("a partial refund lowers principal and gives AA back: Reembolso credit/true with unappliedAmount 0", () => {
    const state = captured(20000);
    const r = ok(refund(state, golden, d("2026-01-07T09:00:00Z"), { amount: 5000 }));
    expect(r.appliedAmount).toBe(5000);
    expect(r.unappliedAmount).toBe(0);
    expect(counters(r.state)).toEqual({ AA: 85000, held: 0, AO: 15000, IO: 0, overdraft: 0 });
    expect(brief(r.events)).toEqual(["3 Reembolso 5000 credit/true"]);
    expect(r.events[0]?.unappliedAmount).toBe(0);
    expect(r.events[0]?.at).toEqual(d("2026-01-07T09:00:00Z"));
    expect(r.events[0]?.walletDetails_after).toMatchObject({ principal_outstanding: 15000, interest_accrued: 0, totalDebt: 15000, amountHeld: 0, amountOverdraft: 0 });
    expect(notificationPayload(r.events[0] as CreditEvent)).toMatchObject({ type: "Reembolso", amount: 5000, direction: "credit", affectsBalance: true, sequence: 3, unappliedAmount: 0 });
    expect(r.statements).toEqual([]);
    expect(r.closedHolds).toEqual([]);
  });

  it("lowers principal first, then interest", () => {
    // 50000 captured on 01-05, the minimum paid before the grace end, the interest applied on 02-10
    let s = captured(50000);
    s = ok(advance(s, golden, d("2026-02-01T00:00:00Z"))).state;
    const minimum = s.statements[0]?.minimumPayment ?? 0;
    s = ok(pay(s, golden, d("2026-02-02T00:00:00Z"), minimum)).state;
    s = ok(advance(s, golden, d("2026-02-11T00:00:00Z"))).state;
    const interest = s.interestOutstanding;
    expect(interest).toBeGreaterThan(100);
    const principal = s.principalOutstanding;
    const r = ok(refund(s, golden, d("2026-02-12T00:00:00Z"), { amount: principal + 100 }));
    expect(r.appliedAmount).toBe(principal + 100);
    expect(r.unappliedAmount).toBe(0);
    expect(r.state.principalOutstanding).toBe(0);
    expect(r.state.interestOutstanding).toBe(interest - 100);
    expect(r.state.availableAmount).toBe(s.availableAmount + principal + 100);
    expect(withinLimit(r.state)).toBe(true);
  });

  it("above the total debt: applied = the debt, the rest unapplied and booked nowhere", () => {
    let s = captured(30000);
    s = ok(pay(s, golden, d("2026-01-10T00:00:00Z"), 25000)).state;
    const r = ok(refund(s, golden, d("2026-01-12T00:00:00Z"), { amount: 8000 }));
    expect(r.appliedAmount).toBe(5000);
    expect(r.unappliedAmount).toBe(3000);
    expect(counters(r.state)).toEqual({ AA: 100000, held: 0, AO: 0, IO: 0, overdraft: 0 });
    expect(brief(r.events).at(-1)).toBe(`${r.state.sequence} Reembolso 5000 credit/true`);
    expect(r.events.at(-1)?.unappliedAmount).toBe(3000);
  });

  it("on a wallet without debt: applied 0, Reembolso 0 with the whole amount unapplied", () => {
    const r = ok(refund(newWallet(), golden, d("2026-01-02T00:00:00Z"), { amount: 1200 }));
    expect({ applied: r.appliedAmount, unapplied: r.unappliedAmount }).toEqual({ applied: 0, unapplied: 1200 });
    expect(brief(r.events)).toEqual(["1 Reembolso 0 credit/true"]);
    expect(notificationPayload(r.events[0] as CreditEvent).unappliedAmount).toBe(1200);
    expect(counters(r.state)).toEqual({ AA: 100000, held: 0, AO: 0, IO: 0, overdraft: 0 });
  });

  it("counts toward no minimum payment: the statement is untouched and still defaults at its grace end", () => {
    let s = captured(50000);
    s = ok(advance(s, golden, d("2026-02-01T00:00:00Z"))).state;
    expect(s.statements[0]?.status).toBe("pending");
    const r = ok(refund(s, golden, d("2026-02-03T00:00:00Z"), { amount: 50000 }));
    expect(r.statements).toEqual([]);
    expect(r.state.statements[0]).toMatchObject({ paidInCycle: 0, status: "pending" });
    const after = ok(advance(r.state, golden, d("2026-02-10T00:00:00Z")));
    expect(after.state.statements[0]?.status).toBe("defaulted");
    expect(after.state.status).toBe("in_default");
  });

  it("cures nothing: an in_default wallet stays in default, yet its AA comes back (capped: the overdraft first)", () => {
    // non-revolving, 100000 captured (AA 0), no payment: the grace end books interest and penal interest above the limit
    let s = captured(100000, nonRevolving);
    s = ok(advance(s, nonRevolving, d("2026-02-11T00:00:00Z"))).state;
    expect(s.status).toBe("in_default");
    const over = amountOverdraft(s);
    expect(over).toBeGreaterThan(0);
    expect(s.availableAmount).toBe(0);
    const r = ok(refund(s, nonRevolving, d("2026-02-12T00:00:00Z"), { amount: 10000 }));
    expect(r.appliedAmount).toBe(10000);
    expect(r.state.status).toBe("in_default");
    expect(r.events.map((e) => e.type)).toEqual(["Reembolso"]);
    expect(r.state.statements.filter((st) => st.curedAt !== null)).toEqual([]);
    expect(r.state.principalOutstanding).toBe(90000);
    expect(amountOverdraft(r.state)).toBe(0);
    expect(r.state.availableAmount).toBe(10000 - over);
    expect(withinLimit(r.state)).toBe(true);
  });

  it("gives AA back on a non-revolving product too", () => {
    const s = captured(20000, nonRevolving);
    const r = ok(refund(s, nonRevolving, d("2026-01-06T00:00:00Z"), { amount: 20000 }));
    expect(counters(r.state)).toEqual({ AA: 100000, held: 0, AO: 0, IO: 0, overdraft: 0 });
  });

  it("never gives AA above limit − totalDebt − held while a hold is open", () => {
    let s = captured(40000);
    s = ok(authorize(s, golden, d("2026-01-06T00:00:00Z"), { authorizationId: "a2", amount: 60000, ttlDays: 7 })).state;
    expect(counters(s)).toEqual({ AA: 0, held: 60000, AO: 40000, IO: 0, overdraft: 0 });
    const r = ok(refund(s, golden, d("2026-01-06T01:00:00Z"), { amount: 15000 }));
    expect(counters(r.state)).toEqual({ AA: 15000, held: 60000, AO: 25000, IO: 0, overdraft: 0 });
    expect(withinLimit(r.state)).toBe(true);
  });

  it("runs the steps due before its instant first: the cut's event, then Reembolso, in sequence", () => {
    const s = captured(20000);
    const r = ok(refund(s, golden, d("2026-01-31T08:00:00Z"), { amount: 1000 }));
    expect(brief(r.events)).toEqual(["3 Interes Nominal Calculado " + String(r.events[0]?.amount) + " debit/false", "4 Reembolso 1000 credit/true"]);
    expect(r.state.asOf).toEqual(d("2026-01-31T08:00:00Z"));
    expect(r.statements).toHaveLength(1);
  });

  it("is accepted on a dissolved wallet (the merchant's money still comes back)", () => {
    const s = ok(dissolveWallet(captured(20000), golden, d("2026-01-08T00:00:00Z"))).state;
    const r = ok(refund(s, golden, d("2026-01-09T00:00:00Z"), { amount: 20000 }));
    expect(r.state.status).toBe("dissolved");
    expect(counters(r.state)).toEqual({ AA: 100000, held: 0, AO: 0, IO: 0, overdraft: 0 });
  });

  it("refuses CLOCK_BACKWARDS and AMOUNT_NOT_POSITIVE; throws on a non-integer amount", () => {
    const s = captured(20000);
    expect(refund(s, golden, d("2026-01-05T11:00:00Z"), { amount: 100 })).toMatchObject({ ok: false, code: "CLOCK_BACKWARDS" });
    expect(refund(s, golden, d("2026-01-06T00:00:00Z"), { amount: 0 })).toMatchObject({ ok: false, code: "AMOUNT_NOT_POSITIVE", field: "amount" });
    expect(refund(s, golden, d("2026-01-06T00:00:00Z"), { amount: -5 })).toMatchObject({ ok: false, code: "AMOUNT_NOT_POSITIVE", field: "amount" });
    expect(() => refund(s, golden, d("2026-01-06T00:00:00Z"), { amount: 1.5 })).toThrow(RangeError);
  });

  it("leaves the state it was given unchanged", () => {
    const s = captured(20000);
    const copy = structuredClone(s);
    ok(refund(s, golden, d("2026-01-06T00:00:00Z"), { amount: 5000 }));
    expect(s).toEqual(copy);
  });
});

describe("charge then refund", () => {
  it("a refund of a PayOutCredit-sized purchase restores what the purchase took", () => {
    const s = ok(charge(newWallet(), golden, d("2026-01-03T00:00:00Z"), 12345)).state;
    const r = ok(refund(s, golden, d("2026-01-04T00:00:00Z"), { amount: 12345 }));
    expect(counters(r.state)).toEqual(counters(newWallet()));
  });
});
