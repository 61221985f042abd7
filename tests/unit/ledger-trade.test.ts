/**
 * The ledger's trade entries (src/domain/ledger.ts `tradePostings`; docs/decisions/trading.md "The
 * ledger"): one balanced entry per currency, the wallet's available account and the provider's
 * liquidity account on either side, fees to the fee account of the quote currency; and the
 * trading accounts keep no cached balance.
 */
import { describe, expect, it } from "vitest";
import { accountCode, balanceAllowed, balanceCached, sumsByCurrency, tradePostings, type Posting } from "../../src/domain/ledger.js";
import { money } from "../../src/domain/money.js";

const view = (postings: Posting[]) => postings.map((p) => [accountCode(p.account), p.amount.toFixed()]);
const balanced = (postings: Posting[]) => [...sumsByCurrency(postings).values()].every((sum) => sum.isZero());

describe("trade postings", () => {
  it("a buy of 0.01 btc for 651.30065 usdt, fees 0.65065 usdt", () => {
    const legs = tradePostings("w1", { currency: "usdt", amount: money("651.30065") }, { currency: "btc", amount: money("0.01") }, money("0.65065"), "usdt");
    expect(view(legs.spent)).toEqual([["wallet:w1:available:usdt", "-651.30065"], ["liquidity:usdt", "650.65"], ["fees:usdt", "0.65065"]]);
    expect(view(legs.received)).toEqual([["wallet:w1:available:btc", "0.01"], ["liquidity:btc", "-0.01"]]);
    expect(balanced(legs.spent) && balanced(legs.received)).toBe(true);
  });

  it("a sell of 0.01 btc for 648.70065 usdt, fees 0.64935 usdt", () => {
    const legs = tradePostings("w1", { currency: "btc", amount: money("0.01") }, { currency: "usdt", amount: money("648.70065") }, money("0.64935"), "usdt");
    expect(view(legs.spent)).toEqual([["wallet:w1:available:btc", "-0.01"], ["liquidity:btc", "0.01"]]);
    expect(view(legs.received)).toEqual([["wallet:w1:available:usdt", "648.70065"], ["liquidity:usdt", "-649.35"], ["fees:usdt", "0.64935"]]);
    expect(balanced(legs.spent) && balanced(legs.received)).toBe(true);
  });

  it("no fee posting when the fees are zero; refuses one currency twice, fees in a third currency and non-positive legs", () => {
    const legs = tradePostings("w1", { currency: "usdt", amount: money("10") }, { currency: "usdc", amount: money("9.99") }, money(0), "usdt");
    expect(legs.spent).toHaveLength(2);
    expect(() => tradePostings("w1", { currency: "usdt", amount: money(1) }, { currency: "usdt", amount: money(1) }, money(0), "usdt")).toThrow(/two currencies/);
    expect(() => tradePostings("w1", { currency: "usdt", amount: money(1) }, { currency: "btc", amount: money(1) }, money(0), "eth")).toThrow(/fees in eth/);
    expect(() => tradePostings("w1", { currency: "usdt", amount: money(0) }, { currency: "btc", amount: money(1) }, money(0), "usdt")).toThrow(/greater than zero/);
  });

  it("liquidity and fees accounts keep no cached balance and may go below zero; wallet buckets may not", () => {
    expect(["available", "held", "external", "liquidity", "fees"].map((b) => balanceCached(b as "available"))).toEqual([true, true, false, false, false]);
    expect(balanceAllowed("liquidity", money(-5))).toBe(true);
    expect(balanceAllowed("available", money(-5))).toBe(false);
  });
});
