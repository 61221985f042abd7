/**
 * The pure rules of cards on credit wallets (src/domain/cards.ts) against docs/decisions/cards.md:
 * 16-digit numbers on the sandbox issuer number `400000` with a Luhn check digit, three-digit
 * security codes, expiry three years after the issue month on the tenant clock (UTC), and the
 * spend controls' validation, one row per rule.
 */
import { describe, expect, it } from "vitest";
import {
  SANDBOX_BIN,
  expiryOf,
  isAssignedCountry,
  isLuhnValid,
  luhnCheckDigit,
  newCvv,
  newPan,
  normalizedControls,
  spendControlProblems,
  type SpendControls,
} from "../../src/domain/cards.js";

describe("Luhn", () => {
  it("computes the check digit of known card numbers", () => {
    expect(luhnCheckDigit("424242424242424")).toBe(2);
    expect(luhnCheckDigit("400000123457424")).toBe(2);
    expect(luhnCheckDigit("7992739871")).toBe(3);
  });

  it("accepts valid numbers and refuses a changed digit, a swap of neighbours and non-digits", () => {
    expect(isLuhnValid("4242424242424242")).toBe(true);
    expect(isLuhnValid("4000001234574242")).toBe(true);
    expect(isLuhnValid("4242424242424241")).toBe(false);
    expect(isLuhnValid("4000001234754242")).toBe(false);
    expect(isLuhnValid("42424242424242a2")).toBe(false);
    expect(isLuhnValid("")).toBe(false);
  });
});

describe("newPan", () => {
  it("draws 16 digits starting with the sandbox BIN, Luhn-valid", () => {
    for (let i = 0; i < 200; i++) {
      const pan = newPan();
      expect(pan).toMatch(/^400000[0-9]{10}$/);
      expect(pan.startsWith(SANDBOX_BIN)).toBe(true);
      expect(isLuhnValid(pan)).toBe(true);
    }
  });

  it("takes its nine middle digits from the random source", () => {
    const digits = [1, 2, 3, 4, 5, 7, 4, 2, 4];
    let i = 0;
    expect(newPan(() => digits[i++] ?? 0)).toBe("4000001234574242");
    expect(newPan(() => 0)).toBe(`400000000000000${luhnCheckDigit("400000000000000")}`);
  });

  it("draws different numbers", () => {
    expect(new Set(Array.from({ length: 50 }, () => newPan())).size).toBe(50);
  });
});

describe("newCvv", () => {
  it("is three digits, keeping leading zeros", () => {
    expect(newCvv(() => 7)).toBe("007");
    expect(newCvv(() => 999)).toBe("999");
    for (let i = 0; i < 100; i++) expect(newCvv()).toMatch(/^[0-9]{3}$/);
  });
});

describe("expiryOf", () => {
  it.each([
    ["2026-01-16T10:00:00Z", 1, 2029],
    ["2026-12-31T23:59:59.999Z", 12, 2029],
    ["2027-01-01T00:00:00Z", 1, 2030],
    ["2028-02-29T12:00:00Z", 2, 2031],
    ["2026-06-30T23:59:59Z", 6, 2029],
    ["2026-07-01T00:00:00Z", 7, 2029],
  ])("issued at %s expires %i/%i (UTC month, three years on)", (at, month, year) => {
    expect(expiryOf(new Date(at))).toEqual({ expMonth: month, expYear: year });
  });

  it("follows UTC, not the local time zone of an offset instant", () => {
    expect(expiryOf(new Date("2026-12-31T20:00:00-05:00"))).toEqual({ expMonth: 1, expYear: 2030 });
  });
});

describe("isAssignedCountry", () => {
  it("knows assigned codes and refuses unassigned, reserved and lower-case ones", () => {
    for (const code of ["US", "MX", "DE", "SS", "BQ", "AX", "ZW"]) expect(isAssignedCountry(code)).toBe(true);
    for (const code of ["XK", "EU", "UK", "ZZ", "AA", "us", "USA", ""]) expect(isAssignedCountry(code)).toBe(false);
  });
});

describe("spendControlProblems", () => {
  const cases: [string, SpendControls, string[]][] = [
    ["no controls", {}, []],
    ["every control valid", { perTransaction: 1, daily: 50_000, monthly: 1_000_000_000_000, blockedMcc: ["7995", "0742"], allowedCountries: ["MX", "US"] }, []],
    ["allowedMcc alone", { allowedMcc: ["5411"] }, []],
    ["allowedMcc and blockedMcc", { allowedMcc: ["5411"], blockedMcc: ["7995"] }, ["spendControls.blockedMcc"]],
    ["a zero amount", { perTransaction: 0 }, ["spendControls.perTransaction"]],
    ["a negative amount", { daily: -5 }, ["spendControls.daily"]],
    ["a fractional amount", { monthly: 10.5 }, ["spendControls.monthly"]],
    ["an amount above 10¹²", { monthly: 1_000_000_000_001 }, ["spendControls.monthly"]],
    ["an MCC of three digits", { blockedMcc: ["799"] }, ["spendControls.blockedMcc"]],
    ["an MCC with a letter", { allowedMcc: ["54A1"] }, ["spendControls.allowedMcc"]],
    ["an empty MCC list", { allowedMcc: [] }, ["spendControls.allowedMcc"]],
    ["501 MCCs", { blockedMcc: Array.from({ length: 501 }, (_, i) => String(i).padStart(4, "0")) }, ["spendControls.blockedMcc"]],
    ["an unassigned country", { allowedCountries: ["US", "XK"] }, ["spendControls.allowedCountries"]],
    ["a lower-case country", { allowedCountries: ["mx"] }, ["spendControls.allowedCountries"]],
    ["an empty country list", { allowedCountries: [] }, ["spendControls.allowedCountries"]],
    ["an unknown control", { weekly: 5 } as SpendControls, ["spendControls.weekly"]],
    ["several problems at once", { perTransaction: 0, allowedCountries: ["ZZ"] }, ["spendControls.perTransaction", "spendControls.allowedCountries"]],
  ];

  it.each(cases)("%s", (_name, controls, fields) => {
    expect(spendControlProblems(controls).map((p) => p.field)).toEqual(fields);
  });

  it("names the fields under the prefix given", () => {
    expect(spendControlProblems({ daily: 0 }, "controls")).toEqual([{ field: "controls.daily", message: expect.stringContaining("1 to") }]);
  });
});

describe("normalizedControls", () => {
  it("keeps the present controls in a fixed order and copies the lists", () => {
    const lists = { allowedCountries: ["US"], blockedMcc: ["7995"], monthly: 3, perTransaction: 1 };
    const out = normalizedControls(lists);
    expect(Object.keys(out)).toEqual(["perTransaction", "monthly", "blockedMcc", "allowedCountries"]);
    expect(out.blockedMcc).not.toBe(lists.blockedMcc);
    expect(out).toEqual(lists);
  });
});
