/**
 * Balance movements (src/domain/credit/payments.ts; docs/decisions/credit.md "Payments, charges and the overdraft"; reference
 * "ReportPayCredit", "PayOutCredit", "ChangeWalletLimit"): the split with overflow between buckets,
 * the refusal of a payment above the debt, the overdraft (interest beyond the limit, reduced first by
 * payments, absorbed first by a limit raise), revolving reinstatement and charges against AA.
 */
import { describe, expect, it } from "vitest";
import { amountOverdraft, applyCharge, applyPayment, bookInterest, raiseLimit, reinstate, splitPayment, totalDebt, type Balances } from "../../src/domain/credit/payments.js";

const b = (limit: number, aa: number, ao: number, io: number): Balances => ({ limit, availableAmount: aa, principalOutstanding: ao, interestOutstanding: io, amountHeld: 0 });

describe("splitPayment", () => {
  it.each([
    { name: "default-and-cure first payment", amount: 3000, io: 1700, ao: 30000, split: 50, toInterest: 1500, toPrincipal: 1500 },
    { name: "interest cannot take its share: the rest to principal", amount: 1800, io: 200, ao: 28500, split: 50, toInterest: 200, toPrincipal: 1600 },
    { name: "principal cannot take its share: the rest to interest", amount: 1000, io: 900, ao: 300, split: 50, toInterest: 700, toPrincipal: 300 },
    { name: "split 0 → all to principal", amount: 1000, io: 900, ao: 5000, split: 0, toInterest: 0, toPrincipal: 1000 },
    { name: "split 99", amount: 1000, io: 5000, ao: 5000, split: 99, toInterest: 990, toPrincipal: 10 },
    { name: "share rounded half-even (2.5 → 2)", amount: 5, io: 100, ao: 100, split: 50, toInterest: 2, toPrincipal: 3 },
    { name: "share rounded half-even (3.5 → 4)", amount: 7, io: 100, ao: 100, split: 50, toInterest: 4, toPrincipal: 3 },
    { name: "exactly the total debt", amount: 1200, io: 200, ao: 1000, split: 50, toInterest: 200, toPrincipal: 1000 },
  ])("$name", ({ amount, io, ao, split, toInterest, toPrincipal }) => {
    const got = splitPayment(amount, io, ao, split);
    expect(got).toEqual({ ok: true, value: { toInterest, toPrincipal } });
  });

  it.each([
    { amount: 1201, code: "PAYMENT_EXCEEDS_DEBT" },
    { amount: 0, code: "AMOUNT_NOT_POSITIVE" },
    { amount: -5, code: "AMOUNT_NOT_POSITIVE" },
  ])("refuses $amount with $code on field amount", ({ amount, code }) => {
    const got = splitPayment(amount, 200, 1000, 50);
    expect(got.ok).toBe(false);
    if (!got.ok) {
      expect(got.code).toBe(code);
      expect(got.field).toBe("amount");
    }
  });

  it("throws on a non-integer amount (a programming error, not a refusal)", () => {
    expect(() => splitPayment(10.5, 200, 1000, 50)).toThrow(RangeError);
  });
});

describe("applyPayment, overdraft and reinstatement", () => {
  it("revolving: restores the amount paid to AA", () => {
    const got = applyPayment(b(100000, 55000, 45000, 0), 5000, 50, true);
    expect(got.ok && got.value.balances).toEqual(b(100000, 60000, 40000, 0));
    expect(got.ok && got.value.split).toEqual({ toInterest: 0, toPrincipal: 5000, toOverdraft: 0, restored: 5000 });
  });

  it("non-revolving (or in default): AA is not restored", () => {
    const got = applyPayment(b(100000, 55000, 45000, 0), 5000, 50, false);
    expect(got.ok && got.value.balances).toEqual(b(100000, 55000, 40000, 0));
    expect(got.ok && got.value.split.restored).toBe(0);
  });

  it("reduces the overdraft first; only the rest is restored", () => {
    const start = b(100000, 0, 100000, 1500); // 1500 over the limit
    expect(amountOverdraft(start)).toBe(1500);
    const got = applyPayment(start, 4000, 50, true);
    expect(got.ok).toBe(true);
    if (got.ok) {
      expect(got.value.split).toEqual({ toInterest: 1500, toPrincipal: 2500, toOverdraft: 1500, restored: 2500 });
      expect(got.value.balances).toEqual(b(100000, 2500, 97500, 0));
      expect(amountOverdraft(got.value.balances)).toBe(0);
    }
  });

  it("a payment smaller than the overdraft restores nothing", () => {
    const got = applyPayment(b(100000, 0, 100000, 1500), 1000, 50, true);
    expect(got.ok && got.value.split).toEqual({ toInterest: 500, toPrincipal: 500, toOverdraft: 1000, restored: 0 });
  });

  it("booked interest lowers AA; what AA cannot take becomes overdraft", () => {
    const within = bookInterest(b(100000, 55000, 45000, 0), 1350, "interest");
    expect(within).toEqual({ balances: b(100000, 53650, 45000, 1350), overdraftAdded: 0 });
    const beyond = bookInterest(b(100000, 500, 99500, 0), 1350, "principal");
    expect(beyond).toEqual({ balances: b(100000, 0, 100850, 0), overdraftAdded: 850 });
    expect(totalDebt(beyond.balances)).toBe(100850);
  });

  it("reinstate restores AA to limit − debt, never below what it is", () => {
    expect(reinstate(b(100000, 0, 26900, 0))).toEqual({ balances: b(100000, 73100, 26900, 0), restored: 73100 });
    expect(reinstate(b(100000, 0, 100500, 0))).toEqual({ balances: b(100000, 0, 100500, 0), restored: 0 });
  });
});

describe("applyCharge and raiseLimit", () => {
  it.each([
    { name: "within AA", start: b(100000, 100000, 0, 0), amount: 30000, ok: true, after: b(100000, 70000, 30000, 0) },
    { name: "exactly AA", start: b(100000, 70000, 30000, 0), amount: 70000, ok: true, after: b(100000, 0, 100000, 0) },
    { name: "above AA", start: b(100000, 70000, 30000, 0), amount: 70001, ok: false, code: "CHARGE_EXCEEDS_AVAILABLE" },
    { name: "zero", start: b(100000, 70000, 30000, 0), amount: 0, ok: false, code: "AMOUNT_NOT_POSITIVE" },
  ])("charge: $name", ({ start, amount, ok, after, code }) => {
    const got = applyCharge(start, amount);
    expect(got.ok).toBe(ok);
    if (got.ok) expect(got.value).toEqual(after);
    else expect(got.code).toBe(code);
  });

  it("raising the limit adds the difference to AA", () => {
    expect(raiseLimit(b(100000, 55000, 45000, 0), 150000)).toEqual({ ok: true, value: { balances: b(150000, 105000, 45000, 0), delta: 50000 } });
  });

  it("raising the limit absorbs the overdraft first", () => {
    expect(raiseLimit(b(100000, 0, 100850, 0), 101000)).toEqual({ ok: true, value: { balances: b(101000, 150, 100850, 0), delta: 1000 } });
    expect(raiseLimit(b(100000, 0, 100850, 0), 100500)).toEqual({ ok: true, value: { balances: b(100500, 0, 100850, 0), delta: 500 } });
  });

  it.each([100000, 90000])("refuses a limit that is not higher (%i) with LIMIT_NOT_RAISED on field limit", (limit) => {
    const got = raiseLimit(b(100000, 55000, 45000, 0), limit);
    expect(got).toMatchObject({ ok: false, code: "LIMIT_NOT_RAISED", field: "limit" });
  });
});
