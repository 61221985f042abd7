/**
 * A market order's price guard (src/domain/trading.ts `slippageBound`, `withinSlippage`,
 * `assertPriceGuard`; docs/decisions/trading.md "Market orders"): on both sides of the book, a
 * price inside the tolerance fills, a price exactly at the bound fills, a price one unit of the 8th
 * decimal past it is refused with PRICE_CHANGED naming both prices; no guard accepts any price.
 */
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { money } from "../../src/domain/money.js";
import { DEFAULT_MAX_SLIPPAGE_BPS, assertPriceGuard, slippageBound, withinSlippage, type Side } from "../../src/domain/trading.js";

const guard = (expected: string, bps: number) => ({ expectedPrice: money(expected), slippageBps: bps });

describe("the bound", () => {
  it.each([
    // side, expected, bps, bound
    ["buy", "65000", 50, "65325"],
    ["sell", "65000", 50, "64675"],
    ["buy", "65000", 0, "65000"],
    ["sell", "65000", 0, "65000"],
    ["buy", "0.12", 1000, "0.132"],
    ["sell", "0.12", 1000, "0.108"],
    ["buy", "3200.5", 7, "3202.74035"],
    ["sell", "3200.5", 7, "3198.25965"],
  ] as [Side, string, number, string][])("%s at %s with %i bps: %s", (side, expected, bps, bound) => {
    expect(slippageBound(side, guard(expected, bps)).toFixed()).toBe(money(bound).toFixed());
  });

  it("the default tolerance is 50 basis points", () => {
    expect(DEFAULT_MAX_SLIPPAGE_BPS).toBe(50);
  });
});

describe("which execution prices fill", () => {
  it.each([
    // side, execution price, expected, bps, fills
    ["buy", "65065", "65000", 50, true], // the sandbox's buy price, 10 bps above the mid: inside
    ["buy", "65325", "65000", 50, true], // exactly at the bound
    ["buy", "65325.00000001", "65000", 50, false], // just past it
    ["buy", "64000", "65000", 50, true], // better for the buyer: always fills
    ["buy", "65065", "65065", 0, true], // no tolerance, exactly the expected price
    ["buy", "65065.00000001", "65065", 0, false],
    ["sell", "64935", "65000", 50, true],
    ["sell", "64675", "65000", 50, true], // exactly at the bound
    ["sell", "64674.99999999", "65000", 50, false], // just past it
    ["sell", "70000", "65000", 50, true], // better for the seller: always fills
    ["sell", "64935", "64935", 0, true],
    ["sell", "64934.99999999", "64935", 0, false],
    ["buy", "3202.74035", "3200.5", 7, true], // at a bound with more decimals than the price
    ["sell", "3198.25965", "3200.5", 7, true],
    ["buy", "3202.74036", "3200.5", 7, false],
    ["sell", "3198.25964", "3200.5", 7, false],
  ] as [Side, string, string, number, boolean][])("%s at %s, expected %s ± %i bps: fills %s", (side, price, expected, bps, fills) => {
    expect(withinSlippage(side, money(price), guard(expected, bps))).toBe(fills);
    const refusal = (() => {
      try {
        assertPriceGuard(side, money(price), guard(expected, bps), "usdt");
        return null;
      } catch (error) {
        if (error instanceof DomainError) return error;
        throw error;
      }
    })();
    expect(refusal === null).toBe(fills);
    if (refusal) {
      expect(refusal.code).toBe("PRICE_CHANGED");
      expect(refusal.field).toBe("expected_price");
      expect(refusal.message).toContain(`${money(price).toFixed(8)} USDT`);
      expect(refusal.message).toContain(`expected ${money(expected).toFixed()} USDT`);
    }
  });

  it("without a guard (no expected_price) any price fills", () => {
    expect(() => assertPriceGuard("buy", money("1000000"), null, "usdt")).not.toThrow();
    expect(() => assertPriceGuard("sell", money("0.00000001"), null, "usdt")).not.toThrow();
  });
});
