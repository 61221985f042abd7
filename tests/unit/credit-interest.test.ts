/**
 * Interest and minimum payment formulas (src/domain/credit/interest.ts; docs/decisions/credit.md "The cycle", "The golden vector"): the golden
 * vector (ADB 1125, BAC 1350, minimum 5500), the default-and-cure figures (interest 900, minimum 4000,
 * penal 800), half-even rounding once, the compound basis and where applied interest goes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as credit from "../../src/domain/credit/index.js";
import { Decimal } from "decimal.js";
import {
  dailyBalanceBasis,
  interestBasis,
  interestOn,
  minimumPayment,
  nominalInterest,
  nominalInterestBucket,
  parseAccrualMethod,
  penalInterest,
  roundCents,
  type InterestSpecs,
} from "../../src/domain/credit/interest.js";

const golden: InterestSpecs = { interestRateNominal: 36, interestRateMoroso: 12, fixedInterestNominal: 0, fixedInterestMoroso: 500 };

describe("nominal interest", () => {
  it.each([
    { name: "golden vector ADB", method: "ADB" as const, sum: 15 * 30000 + 15 * 45000, days: 30, atCut: 45000, expected: 1125 },
    { name: "golden vector BAC", method: "BAC" as const, sum: 15 * 30000 + 15 * 45000, days: 30, atCut: 45000, expected: 1350 },
    { name: "default-and-cure ADB", method: "ADB" as const, sum: 30 * 30000, days: 30, atCut: 30000, expected: 900 },
    { name: "constant balance: ADB = BAC", method: "BAC" as const, sum: 30 * 30000, days: 30, atCut: 30000, expected: 900 },
    { name: "no debt", method: "ADB" as const, sum: 0, days: 30, atCut: 0, expected: 0 },
  ])("$name → $expected", ({ method, sum, days, atCut, expected }) => {
    expect(nominalInterest(method, 360, golden, sum, days, atCut)).toBe(expected);
  });

  it("adds fixedInterestNominal after rounding, also on a zero basis", () => {
    expect(nominalInterest("ADB", 360, { ...golden, fixedInterestNominal: 250 }, 1125000, 30, 45000)).toBe(1375);
    expect(nominalInterest("ADB", 360, { ...golden, fixedInterestNominal: 250 }, 0, 30, 0)).toBe(250);
  });

  it("uses the divisor 365", () => {
    // 36/100/365 × 1 125 000 = 1109.589… → 1110
    expect(nominalInterest("ADB", 365, golden, 1125000, 30, 45000)).toBe(1110);
  });

  it.each([
    { basis: 5000, rate: 36, expected: 5 }, // 5 exactly
    { basis: 2500, rate: 72, expected: 5 }, // 5 exactly
    { basis: 1250, rate: 36, expected: 1 }, // 1.25 → 1
    { basis: 2500, rate: 36, expected: 2 }, // 2.5 → 2 (half-even)
    { basis: 3500, rate: 36, expected: 4 }, // 3.5 → 4 (half-even)
    { basis: 3600, rate: 36, expected: 4 }, // 3.6 → 4
  ])("rounds half-even once: $rate % on $basis cent-days → $expected", ({ basis, rate, expected }) => {
    expect(interestOn(basis, rate, 360, 0)).toBe(expected);
  });

  it("computes fractional rates exactly (no binary floating point)", () => {
    // 0.1 % / 360 × 360 000 = 1 exactly; 0.1 as a double would not give an exact product
    expect(interestOn(360000, 0.1, 360, 0)).toBe(1);
    expect(roundCents(new Decimal("0.5"))).toBe(0);
    expect(roundCents(new Decimal("1.5"))).toBe(2);
    expect(roundCents(new Decimal("2.5000001"))).toBe(3);
  });
});

describe("interest basis", () => {
  it("ADB is the sum of daily balances, BAC is days × balance at the cut", () => {
    expect(interestBasis("ADB", 1125000, 30, 45000)).toBe(1125000);
    expect(interestBasis("BAC", 1125000, 30, 45000)).toBe(1350000);
  });

  it("the daily close adds principal, plus outstanding interest on compound products", () => {
    expect(dailyBalanceBasis(30000, 1700, false)).toBe(30000);
    expect(dailyBalanceBasis(30000, 1700, true)).toBe(31700);
  });

  it("applied nominal interest is capitalised on compound products, else added to interest", () => {
    expect(nominalInterestBucket(true)).toBe("principal");
    expect(nominalInterestBucket(false)).toBe("interest");
  });

  it("accepts both spellings of the accrual method and returns the short one", () => {
    expect(parseAccrualMethod("ADB")).toBe("ADB");
    expect(parseAccrualMethod("average_daily_balance")).toBe("ADB");
    expect(parseAccrualMethod("balance_at_cut")).toBe("BAC");
    expect(parseAccrualMethod("bac")).toBe("BAC");
    expect(parseAccrualMethod("simple")).toBeNull();
  });
});

describe("minimum payment and penal interest", () => {
  it.each([
    { name: "golden vector", rate: 10, fixed: 1000, principal: 45000, debt: 45000, expected: 5500 },
    { name: "default-and-cure", rate: 10, fixed: 1000, principal: 30000, debt: 30000, expected: 4000 },
    { name: "capped at the total debt", rate: 10, fixed: 1000, principal: 500, debt: 500, expected: 500 },
    { name: "no debt → 0", rate: 10, fixed: 1000, principal: 0, debt: 0, expected: 0 },
    { name: "100 % of principal", rate: 100, fixed: 0, principal: 12345, debt: 13000, expected: 12345 },
    { name: "rated part rounded half-even (2.5 → 2)", rate: 12.5, fixed: 0, principal: 20, debt: 20, expected: 2 },
    { name: "debt includes interest", rate: 10, fixed: 1000, principal: 500, debt: 2000, expected: 1050 },
  ])("$name → $expected", ({ rate, fixed, principal, debt, expected }) => {
    expect(minimumPayment({ minimumPaymentRate: rate, fixedMinimumPayment: fixed }, principal, debt)).toBe(expected);
  });

  it("penal interest of the default-and-cure example: 12/100/360 × 900 000 + 500 = 800", () => {
    expect(penalInterest(900000, 360, golden)).toBe(800);
  });

  it("penal interest of a BAC statement uses days × principal at the cut", () => {
    expect(penalInterest(interestBasis("BAC", 0, 30, 45000), 360, golden)).toBe(450 + 500);
  });
});

describe("the SQL mirror of the rounding (src/domain/credit/index.ts)", () => {
  /** `CASE WHEN x - floor(x) = 0.5 THEN 2 * round(x / 2) ELSE round(x) END`, with PostgreSQL's round(numeric) = half away from zero. */
  const rheSql = (x: Decimal): number => {
    const pgRound = (v: Decimal): Decimal => v.toDecimalPlaces(0, Decimal.ROUND_HALF_UP);
    return (x.minus(x.floor()).eq(0.5) ? pgRound(x.div(2)).times(2) : pgRound(x)).toNumber();
  };

  it("agrees with roundCents on non-negative amounts, halves included", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.constantFrom(1, 2, 4, 8, 10, 360, 365, 1000), (n, den) => {
        const x = new Decimal(n).div(den);
        expect(rheSql(x)).toBe(credit.roundCents(x));
      }),
      { numRuns: 500, seed: 6 },
    );
  });
});
