/**
 * The pure trading rules (src/domain/trading.ts; docs/decisions/trading.md "Rounding"): quote terms
 * for buys and sells at the quote currency's precision (8 for btc, 6 for usdt, 2 for fiat), the
 * user never paying less nor receiving more than the exact amount, the order bounds, and the checks
 * of side and quantity.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { money } from "../../src/domain/money.js";
import { checkQuantity, orderLegs, parseSide, quoteLive, quoteTerms, type PairMarket, type Side } from "../../src/domain/trading.js";

const market = (mid: string, spreadBps = 20, feeBps = 10): PairMarket => ({ mid: money(mid), spreadBps, feeBps, minNotional: money(1), maxNotional: money(1_000_000) });
const pair = (quotePrecision: number, basePrecision = 8) => ({ base: { code: "base", precision: basePrecision }, quote: { code: "quote", precision: quotePrecision } });

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  return "none";
}

describe("quote terms, rounding against the user", () => {
  it.each([
    // btc/usdt at 65000, spread 20 bps: buy price 65065, sell 64935; fee 10 bps
    { name: "buy btc with usdt (6)", side: "buy", qty: "0.01", mid: "65000", qp: 6, price: "65065", fees: "0.65065", total: "651.30065" },
    { name: "sell btc for usdt (6)", side: "sell", qty: "0.01", mid: "65000", qp: 6, price: "64935", fees: "0.64935", total: "648.70065" },
    // a notional with more decimals than the quote currency (80.32729705 / 80.16680295): the fee rounds up, the total up on a buy, down on a sell
    { name: "buy, usdt, fractional", side: "buy", qty: "0.00123457", mid: "65000", qp: 6, price: "65065", fees: "0.080328", total: "80.407626" },
    { name: "sell, usdt, fractional", side: "sell", qty: "0.00123457", mid: "65000", qp: 6, price: "64935", fees: "0.080167", total: "80.086635" },
    // eth/btc at 0.05: quote precision 8
    { name: "buy eth with btc (8)", side: "buy", qty: "1.23456789", mid: "0.05", qp: 8, price: "0.05005", fees: "0.0000618", total: "0.06185193" },
    { name: "sell eth for btc (8)", side: "sell", qty: "1.23456789", mid: "0.05", qp: 8, price: "0.04995", fees: "0.00006167", total: "0.06160499" },
    // fiat quote (2 decimals)
    { name: "buy with fiat (2)", side: "buy", qty: "0.0015", mid: "65000", qp: 2, price: "65065", fees: "0.10", total: "97.70" },
    { name: "sell for fiat (2)", side: "sell", qty: "0.0015", mid: "65000", qp: 2, price: "64935", fees: "0.10", total: "97.30" },
  ])("$name", ({ side, qty, mid, qp, price, fees, total }) => {
    const terms = quoteTerms(side as Side, money(qty), { ...market(mid), minNotional: money(0) }, pair(qp));
    expect(terms.price.toFixed()).toBe(money(price).toFixed());
    expect(terms.fees.toFixed()).toBe(money(fees).toFixed());
    expect(terms.total.toFixed()).toBe(money(total).toFixed());
    expect(terms.total.decimalPlaces()).toBeLessThanOrEqual(qp);
  });

  it("the price rounds to 8 decimals against the user", () => {
    const m = market("0.123456789", 7);
    // 0.123456789 × 1.00035 = 0.1234999988… → up; × 0.99965 = 0.1234135791… → down
    expect(quoteTerms("buy", money(100), m, pair(6)).price.toFixed()).toBe("0.1235");
    expect(quoteTerms("sell", money(100), m, pair(6)).price.toFixed()).toBe("0.12341357");
  });

  it("property: a buyer never pays less, a seller never receives more, than the exact amount; the difference is under one unit of the precision", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Side>("buy", "sell"),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.integer({ min: 1, max: 10 ** 9 }),
        fc.constantFrom(2, 6, 8),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 300 }),
        (side, units, midCents, qp, spreadBps, feeBps) => {
          const quantity = money(units.toString()).div(1e8);
          const m = { ...market(money(midCents).div(100).toFixed(), spreadBps, feeBps), minNotional: money(0), maxNotional: money("1e30") };
          const terms = quoteTerms(side, quantity, m, pair(qp));
          const exactFees = terms.notional.times(feeBps).div(10_000);
          const exact = side === "buy" ? terms.notional.plus(exactFees) : terms.notional.minus(exactFees);
          const unit = money(10).pow(-qp);
          if (side === "buy") {
            expect(terms.total.gte(exact)).toBe(true);
            expect(terms.total.minus(exact).lt(unit.times(2))).toBe(true);
          } else {
            expect(terms.total.lte(exact)).toBe(true);
            expect(exact.minus(terms.total).lt(unit.times(2))).toBe(true);
          }
          expect(terms.fees.gte(exactFees)).toBe(true);
        },
      ),
      { numRuns: 500, seed: 20261126 },
    );
  });

  it("order bounds on the notional: below 1 MINIMUM_ORDER_NOT_MET, above 1 000 000 MAXIMUM_ORDER_EXCEEDED", () => {
    expect(codeOf(() => quoteTerms("buy", money("0.00001"), market("65000"), pair(6)))).toBe("MINIMUM_ORDER_NOT_MET");
    expect(codeOf(() => quoteTerms("sell", money("16"), market("65000"), pair(6)))).toBe("MAXIMUM_ORDER_EXCEEDED");
    expect(codeOf(() => quoteTerms("buy", money("15"), market("65000"), pair(6)))).toBe("none");
  });

  it("legs: a buy spends the quote currency's total and receives the quantity; a sell the other way", () => {
    const c = { base: { code: "btc", precision: 8 }, quote: { code: "usdt", precision: 6 } };
    const buy = orderLegs(quoteTerms("buy", money("0.01"), market("65000"), c), c);
    expect([buy.spent.currency, buy.spent.amount.toFixed(), buy.received.currency, buy.received.amount.toFixed(), buy.fees.toFixed()]).toEqual(["usdt", "651.30065", "btc", "0.01", "0.65065"]);
    const sell = orderLegs(quoteTerms("sell", money("0.01"), market("65000"), c), c);
    expect([sell.spent.currency, sell.spent.amount.toFixed(), sell.received.currency, sell.received.amount.toFixed()]).toEqual(["btc", "0.01", "usdt", "648.70065"]);
  });
});

describe("checks", () => {
  it("side must be buy or sell", () => {
    expect(parseSide("buy")).toBe("buy");
    expect(parseSide("sell")).toBe("sell");
    for (const bad of ["BUY", "hold", "", undefined, 3]) expect(codeOf(() => parseSide(bad))).toBe("INVALID_SIDE");
  });

  it("quantity: required, positive, within the base currency's decimals", () => {
    expect(codeOf(() => checkQuantity(undefined, 8))).toBe("QUANTITY_REQUIRED");
    expect(codeOf(() => checkQuantity(money(0), 8))).toBe("QUANTITY_MUST_BE_POSITIVE");
    expect(codeOf(() => checkQuantity(money(-1), 8))).toBe("QUANTITY_MUST_BE_POSITIVE");
    expect(codeOf(() => checkQuantity(money("0.0000001"), 6))).toBe("INVALID_AMOUNT");
    expect(checkQuantity(money("0.000001"), 6).toFixed()).toBe("0.000001");
  });

  it("a quote is firm until its expiry, exclusive", () => {
    const at = new Date("2026-11-26T10:00:15Z");
    expect(quoteLive(at, new Date("2026-11-26T10:00:14.999Z"))).toBe(true);
    expect(quoteLive(at, at)).toBe(false);
  });
});
