/**
 * The pure rules of on-chain sends (src/modules/chains/send-rules.ts; docs/decisions/live-chains.md
 * "Sends"): the amount in the chain's units, EIP-1559 fees under the cap, the replacement's raise,
 * when a send is replaced, and the gas limit's margin.
 */
import { describe, expect, it } from "vitest";
import { feesFor, gasLimitOf, GWEI, replacementDue, replacementFees, unitsOf, REPLACE_AFTER_BLOCKS } from "../../src/modules/chains/send-rules.js";

describe("unitsOf", () => {
  it.each([
    ["1.5", 6, 1_500_000n],
    ["0.00000001", 18, 10_000_000_000n],
    ["25", 0, 25n],
    ["123456789.12345678", 18, 123456789123456780000000000n],
  ] as const)("%s at %i decimals is %s units", (amount, decimals, units) => {
    expect(unitsOf(amount, decimals)).toBe(units);
  });

  it("refuses an amount finer than the token's decimals, zero and a negative amount", () => {
    expect(unitsOf("0.1234567", 6)).toBeNull();
    expect(unitsOf("0.5", 0)).toBeNull();
    expect(unitsOf("0", 18)).toBeNull();
    expect(unitsOf("-1", 18)).toBeNull();
  });
});

describe("feesFor", () => {
  const cap = 200n * GWEI;

  it("offers twice the base fee plus the tip, under the cap", () => {
    expect(feesFor(10n * GWEI, 2n * GWEI, cap)).toEqual({ maxFeePerGas: 22n * GWEI, maxPriorityFeePerGas: 2n * GWEI });
  });

  it("caps the max fee, and the tip at the max fee", () => {
    expect(feesFor(150n * GWEI, 2n * GWEI, cap)).toEqual({ maxFeePerGas: cap, maxPriorityFeePerGas: 2n * GWEI });
    expect(feesFor(199n * GWEI, 500n * GWEI, cap)).toEqual({ maxFeePerGas: cap, maxPriorityFeePerGas: cap });
  });

  it("waits (null) while the base fee alone is above the cap, and not at the cap", () => {
    expect(feesFor(cap + 1n, 1n, cap)).toBeNull();
    expect(feesFor(cap, 1n, cap)).toEqual({ maxFeePerGas: cap, maxPriorityFeePerGas: 1n });
  });
});

describe("replacementFees", () => {
  const cap = 200n * GWEI;
  const previous = { maxFeePerGas: 40n * GWEI, maxPriorityFeePerGas: 2n * GWEI };

  it("raises both fees by at least 25 %, more than the 10 % nodes require", () => {
    expect(replacementFees(previous, null, cap)).toEqual({ maxFeePerGas: 50n * GWEI, maxPriorityFeePerGas: 2_500_000_000n });
  });

  it("pays at least what a new transaction would pay now", () => {
    expect(replacementFees(previous, { maxFeePerGas: 140n * GWEI, maxPriorityFeePerGas: 3n * GWEI }, cap)).toEqual({ maxFeePerGas: 140n * GWEI, maxPriorityFeePerGas: 3n * GWEI });
  });

  it("rounds the raise up, so a 1-wei fee still rises", () => {
    expect(replacementFees({ maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }, null, cap)).toEqual({ maxFeePerGas: 2n, maxPriorityFeePerGas: 2n });
  });

  it("makes no replacement (null) when the raise would pass the cap", () => {
    expect(replacementFees({ maxFeePerGas: 170n * GWEI, maxPriorityFeePerGas: 2n * GWEI }, null, cap)).toBeNull();
  });
});

describe("replacementDue and gasLimitOf", () => {
  it("replaces a transaction after 20 blocks unmined, not before", () => {
    expect(REPLACE_AFTER_BLOCKS).toBe(20);
    expect(replacementDue(119, 100)).toBe(false);
    expect(replacementDue(120, 100)).toBe(true);
  });

  it("adds 20 % to the node's estimate, rounded up", () => {
    expect(gasLimitOf(21_000n)).toBe(25_200n);
    expect(gasLimitOf(1n)).toBe(2n);
  });
});
