/**
 * Percentages as the credit API takes them (src/domain/credit/rates.ts) and the HTTP side that hands
 * them over exactly (src/http/credit/exact-rates.ts): a rate whose decimals a double drops reaches
 * the services as its JSON text, so the 4-decimal rule counts every digit (docs/security.md "Money
 * stays exact").
 */
import { describe, expect, it } from "vitest";
import { RATE_DECIMALS, decimalPlaces, exactRateText, rateProblems } from "../../src/domain/credit/rates.js";
import { withExactRates } from "../../src/http/credit/exact-rates.js";
import { applyExactNumbers, scanJson, type NumericFields } from "../../src/http/json-numbers.js";

/** A body parsed as the HTTP layer parses it: `JSON.parse`, then the source text of the declared numbers kept. */
function parsed(text: string, declared: NumericFields): Record<string, unknown> {
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(applyExactNumbers(body, scanJson(text, declared, 8), declared)).toEqual([]);
  return body;
}

describe("rate rules (domain)", () => {
  it("counts decimal places of numbers and decimal texts; anything else has infinitely many", () => {
    expect(RATE_DECIMALS).toBe(4);
    expect(decimalPlaces(36)).toBe(0);
    expect(decimalPlaces(12.5)).toBe(1);
    expect(decimalPlaces("10.000000000000000001")).toBe(18);
    expect(decimalPlaces("not a number")).toBe(Infinity);
  });

  it("names each present field with more than 4 decimal places, skipping absent ones", () => {
    const fields = ["a", "b", "c"] as const;
    expect(rateProblems({ a: 1.2345, b: "1.00000000000000000001" }, fields)).toEqual([{ field: "b", message: "b must have at most 4 decimal places." }]);
    expect(rateProblems({}, fields)).toEqual([]);
  });

  it("stores the exact decimal text", () => {
    expect(exactRateText(12.5)).toBe("12.5");
    expect(exactRateText("10.000000000000000001")).toBe("10.000000000000000001");
  });
});

describe("withExactRates (HTTP handlers)", () => {
  const declared: NumericFields = new Map([
    ["rate", "number"],
    ["other", "number"],
    ["cents", "integer"],
  ]);

  it("hands over the JSON text of a rate a double cannot hold, the number otherwise, and copies the rest", () => {
    const body = parsed(`{"rate":12.00000000000000000001,"other":1.00000000000000000001,"cents":100,"name":"x"}`, declared);
    expect(body.rate).toBe(12);
    const exact = withExactRates(body, ["rate"]);
    expect(exact).toEqual({ rate: "12.00000000000000000001", other: 1, cents: 100, name: "x" });
    expect(rateProblems(exact, ["rate"])).toHaveLength(1);
    expect(withExactRates(parsed(`{"rate":12.5}`, declared), ["rate"])).toEqual({ rate: 12.5 });
  });

  it("leaves absent fields absent", () => {
    const exact = withExactRates(parsed(`{"cents":1}`, declared), ["rate"]);
    expect("rate" in exact).toBe(false);
  });
});
