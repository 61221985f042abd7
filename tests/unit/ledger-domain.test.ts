/**
 * Pure rules of the custody ledger (src/domain/ledger.ts) and its money arithmetic
 * (src/domain/money.ts), table-driven, no database: which accounts each kind of entry moves money
 * between and with which signs, that every entry sums to zero, refusal of amounts ≤ 0, account codes,
 * which balances a bucket may hold, and exact decimal formatting (reference: "Wallet balance",
 * "Balance amounts: strings with 8 decimals").
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  accountCode,
  assertBalanced,
  balanceAllowed,
  postingsFor,
  sumsByCurrency,
  type AccountRef,
  type Bucket,
  type EntryKind,
  type Posting,
} from "../../src/domain/ledger.js";
import { API_DECIMALS, Money, decimalsOf, format8, money, toNumber } from "../../src/domain/money.js";
import { expectDomainError } from "../support/assertions.js";

const WALLET = "0b6f1c9e-2a34-4d5e-8f70-91a2b3c4d5e6";
const NETWORK = "networks/bitcoin";


/** `units` smallest units of `scale` decimals as an exact decimal string (bigint arithmetic, no Decimal). */
function scaled(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const text = scale === 0 ? digits : `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  return `${negative ? "-" : ""}${text}`;
}

describe("accountCode", () => {
  it.each<[string, AccountRef, string]>([
    ["available bucket", { bucket: "available", walletId: WALLET, currency: "btc" }, `wallet:${WALLET}:available:btc`],
    ["held bucket", { bucket: "held", walletId: WALLET, currency: "usdt" }, `wallet:${WALLET}:held:usdt`],
    ["external account of a network", { bucket: "external", network: "networks/bitcoin", currency: "btc" }, "external:networks/bitcoin:btc"],
    ["external account of another network, same currency", { bucket: "external", network: "networks/tron", currency: "usdt" }, "external:networks/tron:usdt"],
  ])("%s", (_label, ref, code) => {
    expect(accountCode(ref)).toBe(code);
  });

  it("gives distinct codes to the buckets of one wallet and currency, and to each currency", () => {
    const codes = new Set<string>();
    for (const currency of ["btc", "eth"]) {
      codes.add(accountCode({ bucket: "available", walletId: WALLET, currency }));
      codes.add(accountCode({ bucket: "held", walletId: WALLET, currency }));
      codes.add(accountCode({ bucket: "external", network: NETWORK, currency }));
    }
    expect(codes.size).toBe(6);
  });
});

describe("postingsFor", () => {
  const available: AccountRef = { bucket: "available", walletId: WALLET, currency: "btc" };
  const held: AccountRef = { bucket: "held", walletId: WALLET, currency: "btc" };
  const external: AccountRef = { bucket: "external", network: NETWORK, currency: "btc" };

  it.each<[EntryKind, AccountRef, AccountRef]>([
    // [kind, debited account (−amount), credited account (+amount)]
    ["deposit", external, available],
    ["hold", available, held],
    ["release", held, available],
    ["debit", held, external],
  ])("%s moves the amount between the right accounts, with opposite signs", (kind, from, to) => {
    const amount = money("1.23456789");
    const postings = postingsFor(kind, WALLET, NETWORK, "btc", amount);
    expect(postings).toHaveLength(2);
    expect(postings.map((p) => accountCode(p.account))).toEqual([accountCode(from), accountCode(to)]);
    expect(postings[0]?.account).toEqual(from);
    expect(postings[1]?.account).toEqual(to);
    expect(postings[0]?.amount.toFixed()).toBe("-1.23456789");
    expect(postings[1]?.amount.toFixed()).toBe("1.23456789");
    const sums = sumsByCurrency(postings);
    expect([...sums.keys()]).toEqual(["btc"]);
    expect(sums.get("btc")?.isZero()).toBe(true);
    expect(() => assertBalanced(postings)).not.toThrow();
  });

  it.each<[string, Money]>([
    ["zero", money(0)],
    ["negative zero", money("-0")],
    ["the smallest negative amount", money("-0.00000001")],
    ["a negative amount", money(-5)],
    ["a far-below-precision negative amount", money("-1e-30")],
    ["NaN", money(NaN)],
    ["positive infinity", money(Infinity)],
    ["negative infinity", money(-Infinity)],
  ])("refuses %s with AMOUNT_MUST_BE_POSITIVE on amount, for every kind", (_label, amount) => {
    for (const kind of ["deposit", "hold", "release", "debit"] as const) {
      expectDomainError(() => postingsFor(kind, WALLET, NETWORK, "btc", amount), "AMOUNT_MUST_BE_POSITIVE", "amount");
    }
  });

  it.each([["0.00000001"], ["1"], ["99999999999.99999999"], ["0.000000000000000001"]])("accepts the positive amount %s", (text) => {
    expect(postingsFor("deposit", WALLET, NETWORK, "btc", money(text))[1]?.amount.toFixed()).toBe(text);
  });

  it("property: for every kind and positive 8-decimal amount, one posting of −amount and one of +amount, summing to zero", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<EntryKind>("deposit", "hold", "release", "debit"),
        fc.bigInt({ min: 1n, max: 10n ** 19n }),
        fc.constantFrom("btc", "eth", "usdt"),
        (kind, units, currency) => {
          const amount = money(scaled(units, 8));
          const postings = postingsFor(kind, WALLET, NETWORK, currency, amount);
          expect(postings.map((p) => p.amount.toFixed(8)).sort()).toEqual([`-${scaled(units, 8)}`, scaled(units, 8)].sort());
          expect(postings.every((p) => p.account.currency === currency)).toBe(true);
          expect(sumsByCurrency(postings).get(currency)?.isZero()).toBe(true);
          // The two accounts differ: an entry never moves money from an account to itself.
          expect(accountCode(postings[0]!.account)).not.toBe(accountCode(postings[1]!.account));
        },
      ),
    );
  });
});

describe("sumsByCurrency and assertBalanced", () => {
  const ref = (currency: string, bucket: "available" | "held" = "available"): AccountRef => ({ bucket, walletId: WALLET, currency });
  const posting = (currency: string, amount: string, bucket: "available" | "held" = "available"): Posting => ({
    account: ref(currency, bucket),
    amount: money(amount),
  });

  it.each<[string, Posting[], Record<string, string>]>([
    ["no postings", [], {}],
    ["one currency, balanced", [posting("btc", "-0.1"), posting("btc", "0.1", "held")], { btc: "0" }],
    [
      "two currencies, each balanced",
      [posting("btc", "-1"), posting("eth", "2.5"), posting("btc", "1", "held"), posting("eth", "-2.5", "held")],
      { btc: "0", eth: "0" },
    ],
    ["0.1 + 0.2 − 0.3 is exactly zero", [posting("btc", "0.1"), posting("btc", "0.2"), posting("btc", "-0.3", "held")], { btc: "0" }],
  ])("balanced: %s", (_label, postings, expected) => {
    const sums = sumsByCurrency(postings);
    expect(Object.fromEntries([...sums].map(([c, s]) => [c, s.toFixed()]))).toEqual(expected);
    expect(() => assertBalanced(postings)).not.toThrow();
  });

  it.each<[string, Posting[], string]>([
    ["a lone posting", [posting("btc", "1")], "btc"],
    ["off by the smallest unit of numeric(38,18)", [posting("btc", "1"), posting("btc", "-0.999999999999999999", "held")], "btc"],
    ["currencies offsetting each other are not balanced", [posting("btc", "1"), posting("eth", "-1")], "btc"],
  ])("unbalanced: %s", (_label, postings, currency) => {
    expect(() => assertBalanced(postings)).toThrow(new RegExp(`unbalanced journal entry: ${currency}`));
  });
});

describe("balanceAllowed", () => {
  it.each<[Bucket, string, boolean]>([
    ["available", "0", true],
    ["available", "-0", true],
    ["available", "0.00000001", true],
    ["available", "99999999999999999999.999999999999999999", true],
    ["available", "-0.00000001", false],
    ["available", "-0.000000000000000001", false],
    ["held", "0", true],
    ["held", "5", true],
    ["held", "-0.000000000000000001", false],
    ["held", "-1", false],
    ["external", "0", true],
    ["external", "-1000000", true],
    ["external", "-0.000000000000000001", true],
    ["external", "1", true],
  ])("%s may hold %s: %s", (bucket, balance, allowed) => {
    expect(balanceAllowed(bucket, money(balance))).toBe(allowed);
  });
});

describe("format8", () => {
  it("prints 8 decimals", () => {
    expect(API_DECIMALS).toBe(8);
  });

  it.each<[string, Money | string | number, string]>([
    ["Money 0.1 + 0.2", money("0.1").plus("0.2"), "0.30000000"],
    ["the JS number 0.1 + 0.2 (0.30000000000000004)", 0.1 + 0.2, "0.30000000"],
    ["the largest 8-decimal amount with 11 integer digits", "99999999999.99999999", "99999999999.99999999"],
    ["the smallest unit", "0.00000001", "0.00000001"],
    ["the smallest unit as a JS number (1e-8)", 1e-8, "0.00000001"],
    ["the smallest unit in exponent notation", "1e-8", "0.00000001"],
    ["zero", 0, "0.00000000"],
    ["an integer", "42", "42.00000000"],
    ["trailing zeros of the input", "1.50", "1.50000000"],
    ["a large integer without exponent notation", "1e21", "1000000000000000000000.00000000"],
    ["the maximum of numeric(38,18), rounded (half-even) to 8 decimals", "99999999999999999999.999999999999999999", "100000000000000000000.00000000"],
    ["an amount with 18 decimals, rounded half-even (down)", "1.000000004999999999", "1.00000000"],
    ["half-even: 0.000000005 → 0.00000000", "0.000000005", "0.00000000"],
    ["half-even: 0.000000015 → 0.00000002", "0.000000015", "0.00000002"],
    ["half-even: 0.000000025 → 0.00000002", "0.000000025", "0.00000002"],
    ["a negative amount (external accounts)", "-12.5", "-12.50000000"],
  ])("%s → %s", (_label, value, printed) => {
    expect(format8(value)).toBe(printed);
  });

  it("property: every 8-decimal amount up to 10^20 prints back exactly", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 28n - 1n }), (units) => {
        expect(format8(money(scaled(units, 8)))).toBe(scaled(units, 8));
      }),
    );
  });
});

describe("money arithmetic", () => {
  it("parses strings exactly and never prints exponent notation", () => {
    expect(money("0.00000001").toString()).toBe("0.00000001");
    expect(money("1e-18").toString()).toBe("0.000000000000000001");
    expect(money("123456789012345678901234567890.5").toString()).toBe("123456789012345678901234567890.5");
  });

  it.each<[string, string[], string]>([
    ["0.1 + 0.2", ["0.1", "0.2"], "0.3"],
    ["30 significant digits + the smallest unit of numeric(38,18)", ["123456789012.123456789012345678", "0.000000000000000001"], "123456789012.123456789012345679"],
    ["the maximum of numeric(38,18) + its smallest unit (39 digits)", ["99999999999999999999.999999999999999999", "0.000000000000000001"], "100000000000000000000"],
    ["30-digit amounts with a carry through every digit", ["999999999999.999999999999999999", "0.000000000000000001", "-1000000000000"], "0"],
    ["an amount and its negation", ["98765432109876543210.123456789012345678", "-98765432109876543210.123456789012345678"], "0"],
  ])("sums without rounding: %s", (_label, terms, sum) => {
    expect(terms.reduce((acc, t) => acc.plus(t), money(0)).toFixed()).toBe(sum);
  });

  it("adds 0.1 ten thousand times to exactly 1000", () => {
    let total = money(0);
    for (let i = 0; i < 10_000; i++) total = total.plus("0.1");
    expect(total.toFixed()).toBe("1000");
  });

  it("property: sums of up to 30-significant-digit amounts equal the bigint sums (no silent rounding)", () => {
    const term = fc.bigInt({ min: -(10n ** 30n) + 1n, max: 10n ** 30n - 1n });
    fc.assert(
      fc.property(fc.array(term, { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 18 }), (terms, scale) => {
        const sum = terms.reduce((acc, t) => acc.plus(money(scaled(t, scale))), money(0));
        const exact = terms.reduce((acc, t) => acc + t, 0n);
        expect(sum.eq(money(scaled(exact, scale)))).toBe(true);
      }),
    );
  });

  it("is a clone of decimal.js with 60 significant digits and half-even rounding", () => {
    expect(Money.precision).toBe(60);
    expect(Money.rounding).toBe(Money.ROUND_HALF_EVEN);
    expect(money("0.1")).toBeInstanceOf(Money);
  });

  it.each<[string, number]>([
    ["0", 0],
    ["100", 0],
    ["1.50", 1],
    ["0.00000001", 8],
    ["0.000000000000000001", 18],
  ])("decimalsOf(%s) = %i", (value, decimals) => {
    expect(decimalsOf(value)).toBe(decimals);
  });

  it.each<[string, number]>([
    ["0.1", 0.1],
    ["1.50000000", 1.5],
    ["0.00000001", 1e-8],
  ])("toNumber(%s) = %d", (value, n) => {
    expect(toNumber(value)).toBe(n);
  });
});
