// The block follower's pure rules (src/modules/chains/follow.ts; docs/decisions/live-chains.md
// "Deposits", "Reorgs"): chain units to the currency's 8 decimals rounded down, confirmations,
// the fork point of a reorg, the parent-hash links of a batch, and the batches' ranges.
import { describe, expect, it } from "vitest";
import { chainAmount, confirmationsOf, creditableHeight, firstHeight, forkPoint, linked, nextBatch } from "../../src/modules/chains/follow.js";
import { rpcError } from "../../src/providers/evm/rpc.js";
import { DomainError } from "../../src/domain/errors.js";

const h = (n: number, branch = "a") => `0x${branch}${n.toString(16).padStart(63, "0")}`;

describe("chainAmount", () => {
  it("converts wei and token units exactly and rounds down past 8 decimals", () => {
    expect(chainAmount(1_500_000_000_000_000_000n, 18).toFixed()).toBe("1.5");
    expect(chainAmount(1_123_456_789_999_999_999n, 18).toFixed()).toBe("1.12345678"); // never up
    expect(chainAmount(2_500_000n, 6).toFixed()).toBe("2.5");
    expect(chainAmount(1n, 6).toFixed()).toBe("0.000001");
    expect(chainAmount(9_999_999_999n, 18).toFixed()).toBe("0"); // below 1e-8: nothing to credit
    expect(chainAmount(10_000_000_000n, 18).toFixed()).toBe("0.00000001");
    expect(chainAmount(123n, 0).toFixed()).toBe("123");
    // far beyond a double's precision, still exact
    expect(chainAmount(123_456_789_012_345_678_901_234_567_891n, 18).toFixed()).toBe("123456789012.3456789");
  });

  it("refuses a negative amount and impossible decimals", () => {
    expect(() => chainAmount(-1n, 18)).toThrow(RangeError);
    expect(() => chainAmount(1n, -1)).toThrow(RangeError);
    expect(() => chainAmount(1n, 78)).toThrow(RangeError);
  });
});

describe("confirmations", () => {
  it("counts the deposit's own block: head − block + 1, never below 0", () => {
    expect(confirmationsOf(100, 100)).toBe(1);
    expect(confirmationsOf(111, 100)).toBe(12);
    expect(confirmationsOf(99, 100)).toBe(0);
  });

  it("credits at the threshold on the followed chain", () => {
    expect(creditableHeight(102, 3)).toBe(100); // blocks 100, 101, 102
    expect(confirmationsOf(102, creditableHeight(102, 3))).toBe(3);
  });
});

describe("forkPoint", () => {
  const stored = new Map([100, 101, 102, 103].map((n) => [n, h(n)]));

  it("is the highest stored height whose hash the node still has", () => {
    const node = new Map([[103, h(103, "b")], [102, h(102, "b")], [101, h(101)], [100, h(100)]]);
    expect(forkPoint(stored, node)).toBe(101);
  });

  it("compares hashes in any case and ignores heights the node was not asked", () => {
    expect(forkPoint(stored, new Map([[103, h(103, "b")], [102, h(102).toUpperCase().replace("0X", "0x")]]))).toBe(102);
  });

  it("is the top when nothing changed, and null when the reorg is deeper than the window", () => {
    expect(forkPoint(stored, new Map([...stored]))).toBe(103);
    expect(forkPoint(stored, new Map([100, 101, 102, 103].map((n) => [n, h(n, "c")])))).toBeNull();
    expect(forkPoint(new Map(), new Map([[1, h(1)]]))).toBeNull();
  });
});

describe("linked", () => {
  const chain = [101, 102, 103].map((n) => ({ height: n, hash: h(n), parentHash: h(n - 1) }));

  it("holds when each block's parent is the one before, from the cursor's hash on", () => {
    expect(linked(h(100), chain)).toBe(true);
    expect(linked(h(100).toUpperCase().replace("0X", "0x"), chain)).toBe(true);
    expect(linked(h(100), [])).toBe(true);
  });

  it("breaks on a parent that is not the cursor's or the previous block's hash, or a missing height", () => {
    expect(linked(h(100, "b"), chain)).toBe(false);
    expect(linked(h(100), [chain[0]!, { ...chain[1]!, parentHash: h(101, "b") }, chain[2]!])).toBe(false);
    expect(linked(h(100), [chain[0]!, { ...chain[2]!, parentHash: h(101) }])).toBe(false);
  });
});

describe("batches", () => {
  it("cover cursor+1 … head in bounded ranges", () => {
    expect(nextBatch(99, 150, 20)).toEqual([100, 119]);
    expect(nextBatch(139, 150, 20)).toEqual([140, 150]);
    expect(nextBatch(150, 150, 20)).toBeNull();
    expect(nextBatch(151, 150, 20)).toBeNull(); // a node behind the follower
    expect(nextBatch(-1, 0, 20)).toEqual([0, 0]);
  });

  it("start at the configured block, else at the head", () => {
    expect(firstHeight(7, 100)).toBe(7);
    expect(firstHeight(undefined, 100)).toBe(100);
  });
});

describe("rpcError", () => {
  it("maps ethers' timeout to GATEWAY_TIMEOUT and anything else to BAD_GATEWAY", () => {
    const timeout = Object.assign(new Error("request timeout"), { code: "TIMEOUT" });
    expect(rpcError("networks/ethereum", "eth_blockNumber", timeout)).toMatchObject({ code: "GATEWAY_TIMEOUT" });
    const answer = Object.assign(new Error("could not coalesce error"), { code: "UNKNOWN_ERROR", shortMessage: "header not found" });
    const mapped = rpcError("networks/ethereum", "eth_getBlockByNumber", answer);
    expect(mapped).toMatchObject({ code: "BAD_GATEWAY" });
    expect(mapped.message).toContain("header not found");
    const domain = new DomainError("GATEWAY_TIMEOUT", "already mapped");
    expect(rpcError("networks/ethereum", "x", domain)).toBe(domain);
  });
});
