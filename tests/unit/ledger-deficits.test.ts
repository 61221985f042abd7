/**
 * A wallet's deficit on the balance rows (docs/decisions/live-chains.md "Reorgs";
 * src/modules/ledger/service.ts `currencyBalances`): the `wallet_deficit` rows the balance read
 * adds as bucket `deficit` sum per currency over networks, apart from `available` and `held`,
 * which stay what the accounts hold; a currency that owes nothing has no `deficit`.
 */
import { describe, expect, it } from "vitest";
import { currencyBalances } from "../../src/modules/ledger/service.js";

describe("currencyBalances with deficits", () => {
  it("sums a currency's deficits over networks and leaves balance, available and held as the accounts hold them", () => {
    const rows = [
      { currency: "eth", bucket: "available", balance: "0" },
      { currency: "eth", bucket: "deficit", balance: "0.7" },
      { currency: "eth", bucket: "held", balance: "0.25" },
      { currency: "usdt", bucket: "available", balance: "5" },
      { currency: "usdt", bucket: "deficit", balance: "1.5" },
      { currency: "usdt", bucket: "deficit", balance: "0.5" },
      { currency: "usdt", bucket: "held", balance: "0" },
    ];
    const out = currencyBalances(rows).map((b) => ({ currency: b.currency, available: b.available.toFixed(), held: b.held.toFixed(), balance: b.balance.toFixed(), deficit: b.deficit?.toFixed() }));
    expect(out).toEqual([
      { currency: "eth", available: "0", held: "0.25", balance: "0.25", deficit: "0.7" },
      { currency: "usdt", available: "5", held: "0", balance: "5", deficit: "2" },
    ]);
  });

  it("has no deficit on a currency that owes nothing, nor on a wallet without accounts", () => {
    const [btc] = currencyBalances([
      { currency: "btc", bucket: "available", balance: "1" },
      { currency: "btc", bucket: "held", balance: "0" },
    ]);
    expect(btc?.deficit).toBeUndefined();
    expect(btc?.balance.toFixed()).toBe("1");
    expect(currencyBalances([{ currency: null, bucket: null, balance: null }])).toEqual([]);
  });
});
