/**
 * The check order of Create Transfer (src/domain/transfers.ts; docs/decisions/limits-and-allowlist.md
 * "Transfers"), table-driven: each row breaks one rule and every rule after it, so the row's code
 * shows that its check runs before all later ones; and the transfer postings of the ledger
 * (src/domain/ledger.ts `transferPostings`).
 */
import { describe, expect, it } from "vitest";
import { assertBalanced, transferPostings } from "../../src/domain/ledger.js";
import { money } from "../../src/domain/money.js";
import { checkTransfer, MIN_TRANSFER_AMOUNT, type TransferFacts } from "../../src/domain/transfers.js";
import { expectDomainError } from "../support/assertions.js";

const A = "0b6f1c9e-2a34-4d5e-8f70-91a2b3c4d5e6";
const B = "7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a";
const USDT = { code: "usdt", precision: 6 };

/** A request that passes every check: 1.5 usdt from A to B, both holding usdt. */
const valid: TransferFacts = { fromWalletId: A, toWalletId: B, currency: "USDT", known: USDT, fromHolds: ["btc", "usdt"], toHolds: ["usdt"], amount: money("1.5") };

/**
 * Each rule broken, as a change of {@link valid}. The amounts break every later amount rule too
 * (−0.0000001 is also below the minimum and has 7 decimals; 0.0000001 also has 7).
 */
const breaks = {
  sameWallet: { toWalletId: A },
  unknownCurrency: { known: null },
  notHeld: { toHolds: ["btc"] },
  notPositive: { amount: money("-0.0000001") },
  tooSmall: { amount: money("0.0000001") },
  tooPrecise: { amount: money("0.0000015") },
} satisfies Record<string, Partial<TransferFacts>>;

/** The rules in the contract's order. */
const ORDER: [keyof typeof breaks, string, string][] = [
  ["sameWallet", "SAME_WALLET_TRANSFER", "to_wallet_id"],
  ["unknownCurrency", "INVALID_CURRENCY", "currency"],
  ["notHeld", "UNSUPPORTED_CURRENCY", "currency"],
  ["notPositive", "AMOUNT_MUST_BE_POSITIVE", "amount"],
  ["tooSmall", "AMOUNT_TOO_SMALL", "amount"],
  ["tooPrecise", "INVALID_AMOUNT", "amount"],
];

describe("checkTransfer", () => {
  it("passes a valid request and answers the lower-case currency code", () => {
    expect(checkTransfer(valid)).toBe("usdt");
  });

  it.each(ORDER.map(([rule, code, field], i) => [rule, code, field, i] as const))("%s answers %s, before every later rule", (rule, code, field, i) => {
    // This rule broken alone…
    expectDomainError(() => checkTransfer({ ...valid, ...breaks[rule] }), code, field);
    // …and with every later rule broken too (applied latest first, so the earliest later rule's amount stays).
    const later = ORDER.slice(i + 1).map(([r]) => breaks[r]).reverse();
    expectDomainError(() => checkTransfer(Object.assign({ ...valid }, ...later, breaks[rule]) as TransferFacts), code, field);
  });

  /** Edge cases: the expected code, or null when the request passes. */
  it.each<[string, Partial<TransferFacts>, string | null]>([
    ["the source lacking the currency", { fromHolds: ["btc"] }, "UNSUPPORTED_CURRENCY"],
    ["a negative amount", { amount: money("-1") }, "AMOUNT_MUST_BE_POSITIVE"],
    ["exactly the minimum", { amount: MIN_TRANSFER_AMOUNT }, null],
    ["just below the minimum, within the precision", { amount: money("0.00000099"), known: { code: "btc", precision: 8 }, fromHolds: ["btc"], toHolds: ["btc"] }, "AMOUNT_TOO_SMALL"],
    ["as many decimals as the precision", { amount: money("0.123456") }, null],
    ["one decimal more than the precision", { amount: money("1.1234567") }, "INVALID_AMOUNT"],
    ["trailing zeros past the precision (the same amount)", { amount: money("1.50000000000") }, null],
    ["10^12 exactly", { amount: money("1e12") }, null],
    ["above 10^12", { amount: money("1000000000000.000001") }, "INVALID_AMOUNT"],
    ["a currency code in any case", { currency: "uSdT" }, null],
  ])("%s", (_name, change, code) => {
    if (code === null) expect(checkTransfer({ ...valid, ...change })).toBe("usdt");
    else expectDomainError(() => checkTransfer({ ...valid, ...change }), code);
  });
});

describe("transferPostings", () => {
  it("moves the amount from the source's available account to the destination's, balanced", () => {
    const postings = transferPostings(A, B, "btc", money("0.1"));
    expect(postings.map((p) => [p.account, p.amount.toFixed()])).toEqual([
      [{ bucket: "available", walletId: A, currency: "btc" }, "-0.1"],
      [{ bucket: "available", walletId: B, currency: "btc" }, "0.1"],
    ]);
    expect(() => assertBalanced(postings)).not.toThrow();
  });

  it("refuses amounts ≤ 0 and amounts the ledger cannot store, and a single wallet", () => {
    expectDomainError(() => transferPostings(A, B, "btc", money(0)), "AMOUNT_MUST_BE_POSITIVE", "amount");
    expectDomainError(() => transferPostings(A, B, "btc", money("1e20")), "INVALID_AMOUNT", "amount");
    expect(() => transferPostings(A, A, "btc", money(1))).toThrow(/two wallets/);
  });
});
