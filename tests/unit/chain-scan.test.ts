// What the follower reads of a token's `Transfer` logs (src/modules/chains/scan.ts
// `tokenTransfers`; docs/decisions/live-chains.md "Deposits"): the addresses are the topics' last 20
// bytes in lower case, the value the data's first word; a log of another shape is no deposit, one
// of another branch stops the batch. Real Anvil logs: tests/integration/chain-rpc.test.ts.
import { describe, expect, it } from "vitest";
import { ChainMoved, TRANSFER_TOPIC, tokenTransfers, type RawLog } from "../../src/modules/chains/scan.js";

const TOKEN = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
const tokens = [{ currency: "usdt", contract: TOKEN, decimals: 6 }];
const blockHash = `0x${"ab".repeat(32)}`;
const blocks = [{ height: 7, hash: blockHash, parentHash: `0x${"cd".repeat(32)}` }];
const FROM = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const TO = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const word = (address: string, high = "0".repeat(24)) => `0x${high}${address.slice(2)}`;

/** A standard `Transfer` log of the test token in block 7, with `over` changed. */
const log = (over: Partial<RawLog> = {}): RawLog => ({
  address: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  topics: [TRANSFER_TOPIC, word(FROM), word(TO)],
  data: `0x${(2_500_000n).toString(16).padStart(64, "0")}`,
  blockNumber: "0x7",
  blockHash: blockHash.toUpperCase().replace("0X", "0x"),
  transactionHash: `0x${"EF".repeat(32)}`,
  logIndex: "0x2",
  ...over,
});

describe("tokenTransfers", () => {
  it("reads a standard Transfer: addresses and hashes in lower case, the value in the token's units", () => {
    expect(tokenTransfers({ tokens }, blocks, [log()])).toEqual([
      { height: 7, blockHash, txHash: `0x${"ef".repeat(32)}`, logIndex: 2, from: FROM.toLowerCase(), to: TO.toLowerCase(), currency: "usdt", raw: 2_500_000n, decimals: 6 },
    ]);
    // data longer than one word: the first word is the value, as an ABI decoder reads it
    expect(tokenTransfers({ tokens }, blocks, [log({ data: `0x${(5n).toString(16).padStart(64, "0")}${"00".repeat(32)}` })])[0]?.raw).toBe(5n);
  });

  it("skips what is no deposit: another contract, a removed log, zero, and logs of another shape", () => {
    const skipped = [
      log({ address: "0x0000000000000000000000000000000000000001" }),
      log({ removed: true }),
      log({ data: `0x${"0".repeat(64)}` }),
      log({ topics: [TRANSFER_TOPIC, word(FROM)] }), // an unindexed `to`
      log({ topics: [`0x${"11".repeat(32)}`, word(FROM), word(TO)] }),
      log({ topics: [TRANSFER_TOPIC, word(FROM), word(TO, "0".repeat(23) + "1")] }), // not an address: high bytes set
      log({ data: "0x01" }), // shorter than a word
      log({ data: `0x${"zz".repeat(32)}` }),
      log({ data: `0x${"0".repeat(63)}1f` }), // not whole bytes
    ];
    expect(tokenTransfers({ tokens }, blocks, skipped)).toEqual([]);
  });

  it("stops the batch on a log of another branch", () => {
    expect(() => tokenTransfers({ tokens }, blocks, [log({ blockHash: `0x${"99".repeat(32)}` })])).toThrow(ChainMoved);
  });
});
