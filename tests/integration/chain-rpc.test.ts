/**
 * The follower's plain JSON-RPC client and what it reads of a batch (src/modules/chains/rpc.ts,
 * scan.ts; docs/decisions/live-chains.md "Deposits"), against a real Anvil (tests/support/anvil.ts):
 * native and token transfers found in a batch of blocks with lower-case addresses and hashes, the
 * blocks linked by parent hash, a native transfer's receipt, and the node's failures as the
 * follower records them (`GATEWAY_TIMEOUT` "did not answer", `BAD_GATEWAY` "failed <method>").
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getAddress, parseEther, parseUnits, Wallet, type Contract } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { linked } from "../../src/modules/chains/follow.js";
import type { LiveChainSettings } from "../../src/modules/chains/follower.js";
import { ChainRpc, RPC_BATCH_MAX } from "../../src/modules/chains/rpc.js";
import { fetchBatch, nativeSucceeded } from "../../src/modules/chains/scan.js";
import { deployTestToken, startTestChain, type TestChain } from "../support/anvil.js";

let chain: TestChain;
let token: Contract;
let settings: LiveChainSettings;
let rpc: ChainRpc;

/** A server on a loopback port answering every request with `answer` (never, when null). */
async function fakeNode(answer: ((body: string) => { status: number; text: string }) | null): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (!answer) return; // never answers
      const { status, text } = answer(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(status, { "content-type": "application/json" });
      res.end(text);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The DomainError `promise` rejects with. */
async function failure(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

beforeAll(async () => {
  chain = await startTestChain();
  ({ contract: token } = await deployTestToken(chain.wallet(), { name: "Tether USD", symbol: "USDT", decimals: 6 }));
  await (await token.getFunction("mint")(chain.wallet().address, parseUnits("1000", 6))).wait();
  settings = { network: "networks/ethereum", nativeCurrency: "eth", confirmations: 3, tokens: [{ currency: "usdt", contract: (await token.getAddress()).toLowerCase(), decimals: 6 }], startBlock: 0 };
  rpc = new ChainRpc("networks/ethereum", chain.url, 5);
});

afterAll(async () => {
  await chain?.stop();
});

describe("a batch read with the plain client", () => {
  it("finds native and token transfers with lower-case addresses and hashes, linked by parent hash", async () => {
    const to = Wallet.createRandom().address; // checksummed, mixed case
    expect(to).not.toBe(to.toLowerCase());
    const from = await chain.provider.getBlockNumber();
    const eth = (await (await chain.wallet(1).sendTransaction({ to, value: parseEther("0.5") })).wait())!;
    const usdt = (await (await token.getFunction("transfer")(to, parseUnits("2.25", 6))).wait())!;
    await chain.mine(1);
    const head = await chain.provider.getBlockNumber();

    const batch = await fetchBatch(rpc, settings, from + 1, head);
    expect(batch.blocks.map((b) => b.height)).toEqual(Array.from({ length: head - from }, (_, i) => from + 1 + i));
    const previous = (await chain.provider.getBlock(from))!.hash!;
    expect(linked(previous, batch.blocks)).toBe(true);
    for (const b of batch.blocks) expect(b.hash).toBe(b.hash.toLowerCase());

    const paying = batch.transfers.filter((t) => t.to === to.toLowerCase());
    expect(paying).toEqual([
      expect.objectContaining({ height: eth.blockNumber, txHash: eth.hash.toLowerCase(), logIndex: -1, from: chain.wallet(1).address.toLowerCase(), currency: "eth", raw: parseEther("0.5"), decimals: 18 }),
      expect.objectContaining({ height: usdt.blockNumber, txHash: usdt.hash.toLowerCase(), logIndex: usdt.logs[0]!.index, from: chain.wallet().address.toLowerCase(), currency: "usdt", raw: parseUnits("2.25", 6), decimals: 6 }),
    ]);
    // the address as a checksum would write it is the same address
    expect(getAddress(paying[1]!.to)).toBe(to);
    expect([...(await nativeSucceeded(rpc, paying.filter((t) => t.logIndex === -1)))]).toEqual([eth.hash.toLowerCase()]);
  });

  it("sends more calls than a request holds as several requests, answers in the calls' order", async () => {
    const head = await chain.provider.getBlockNumber();
    const heights = Array.from({ length: RPC_BATCH_MAX + 7 }, (_, i) => i % (head + 1));
    const answers = (await rpc.batch(heights.map((h) => ["eth_getBlockByNumber", [`0x${h.toString(16)}`, false]] as const))) as { number: string }[];
    expect(answers.map((a) => Number(a.number))).toEqual(heights);
    expect(await rpc.call<string>("eth_chainId", [])).toBe(`0x${chain.chainId.toString(16)}`);
  });
});

describe("the node's failures", () => {
  it("an error answer is BAD_GATEWAY naming the method", async () => {
    const error = await failure(rpc.batch([["eth_blockNumber", []], ["eth_noSuchMethod", []]]));
    expect(error.code).toBe("BAD_GATEWAY");
    expect(error.message).toContain("The networks/ethereum node failed eth_noSuchMethod");
  });

  it("no answer within the timeout is GATEWAY_TIMEOUT", async () => {
    const node = await fakeNode(null);
    try {
      const error = await failure(new ChainRpc("networks/ethereum", node.url, 0.3).call("eth_blockNumber", []));
      expect(error.code).toBe("GATEWAY_TIMEOUT");
      expect(error.message).toBe("The networks/ethereum node did not answer eth_blockNumber in time.");
    } finally {
      node.server.closeAllConnections();
      node.server.close();
    }
  });

  it("a refused connection, an HTTP error, a reply that is not JSON or lacks an answer are BAD_GATEWAY", async () => {
    const closed = await fakeNode(null);
    const url = closed.url;
    closed.server.close();
    await once(closed.server, "close");
    expect((await failure(new ChainRpc("networks/ethereum", url, 2).call("eth_blockNumber", []))).code).toBe("BAD_GATEWAY");

    const answers: ((body: string) => { status: number; text: string })[] = [
      () => ({ status: 503, text: "busy" }),
      () => ({ status: 200, text: "<html>" }),
      (body) => ({ status: 200, text: JSON.stringify((JSON.parse(body) as { id: number }[]).slice(1).map((c) => ({ jsonrpc: "2.0", id: c.id, result: "0x1" }))) }),
    ];
    for (const answer of answers) {
      const node = await fakeNode(answer);
      try {
        const error = await failure(new ChainRpc("networks/ethereum", node.url, 2).batch([["eth_blockNumber", []], ["eth_chainId", []]]));
        expect(error.code).toBe("BAD_GATEWAY");
        expect(error.message).toMatch(/^The networks\/ethereum node failed eth_blockNumber: /);
      } finally {
        node.server.close();
      }
    }
  });
});
