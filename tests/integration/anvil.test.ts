// The local EVM chain the live-network tests stand on (docs/testing.md "The real parts";
// tests/support/anvil.ts): Anvil from npm starts and stops with no process left behind, the test
// ERC-20 deploys, mints, transfers and logs, and the reorg tools really replace blocks.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Contract, id as topicOf, parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployTestToken, startAnvil, startTestChain, type TestChain } from "../support/anvil.js";
import { waitFor } from "../support/wait.js";

const TRANSFER = topicOf("Transfer(address,address,uint256)");
const usdt = (amount: string) => parseUnits(amount, 6);

/** Whether `pid` is a live process (a zombie waiting to be reaped counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Whether anything answers JSON-RPC at `url`. */
const answers = (url: string) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' }).then(
    () => true,
    () => false,
  );

describe("a local EVM chain (Anvil)", () => {
  let chain: TestChain;
  let token: Contract;
  let tokenAddress: string;
  const balanceOf = async (address: string) => (await token.getFunction("balanceOf")(address)) as bigint;

  beforeAll(async () => {
    chain = await startTestChain();
    ({ contract: token, address: tokenAddress } = await deployTestToken(chain.wallet(), { name: "Tether USD", symbol: "USDT", decimals: 6 }));
  });
  afterAll(async () => {
    await chain?.stop();
  });

  it("answers the chain id, and the test token mints and transfers with Transfer logs found by getLogs", async () => {
    expect((await chain.provider.getNetwork()).chainId).toBe(31337n);
    expect(await token.getFunction("decimals")()).toBe(6n);
    expect(await token.getFunction("symbol")()).toBe("USDT");
    const [owner, payee] = [chain.wallet(0).address, chain.wallet(1).address];

    const mint = await (await token.getFunction("mint")(owner, usdt("1000"))).wait();
    const transfer = await (await token.getFunction("transfer")(payee, usdt("2.5"))).wait();
    expect(await balanceOf(owner)).toBe(usdt("997.5"));
    expect(await balanceOf(payee)).toBe(usdt("2.5"));

    const logs = await chain.provider.getLogs({ address: tokenAddress, topics: [TRANSFER], fromBlock: mint.blockNumber, toBlock: transfer.blockNumber });
    expect(logs.map((log) => [log.transactionHash, ...token.interface.parseLog(log)!.args])).toEqual([
      [mint.hash, "0x0000000000000000000000000000000000000000", owner, usdt("1000")],
      [transfer.hash, owner, payee, usdt("2.5")],
    ]);
  });

  it("anvil_reorg gives the heights new hashes: a mined transfer leaves the chain, and comes back when re-sent", async () => {
    const payee = chain.wallet(2).address;
    const sent = await (await token.getFunction("mint")(payee, usdt("7"))).wait();
    const raw = await chain.rawTransaction(sent.hash);
    await chain.mine(2);
    const head = await chain.provider.getBlockNumber();
    const before = await chain.blockHash(sent.blockNumber);
    expect(before).toBe(sent.blockHash);

    await chain.reorg(3);
    expect(await chain.provider.getBlockNumber()).toBe(head); // replaced in place, not shortened
    const orphaned = await chain.blockHash(sent.blockNumber);
    expect(orphaned).not.toBe(before);
    expect(await chain.provider.getTransactionReceipt(sent.hash)).toBeNull();
    expect(await chain.provider.getTransaction(sent.hash)).toBeNull(); // not back in the pool either
    expect(await balanceOf(payee)).toBe(0n);
    expect(await chain.provider.getLogs({ address: tokenAddress, fromBlock: head - 2, toBlock: head })).toEqual([]);

    // the same signed bytes, mined again in the first block of a new branch: same hash, new block
    await chain.reorg(3, [{ tx: raw!, offset: 0 }]);
    const again = await chain.provider.getTransactionReceipt(sent.hash);
    expect(again?.blockNumber).toBe(head - 2);
    expect(again?.blockHash).toBe(await chain.blockHash(head - 2));
    expect(await chain.blockHash(sent.blockNumber)).not.toBe(orphaned);
    expect(await balanceOf(payee)).toBe(usdt("7"));
  });

  it("snapshot, revert and other transactions give the height a new hash", async () => {
    const [first, second] = [chain.wallet(3).address, chain.wallet(4).address];
    const id = await chain.snapshot();
    const height = (await chain.provider.getBlockNumber()) + 1;
    const undone = await (await token.getFunction("mint")(first, usdt("1"))).wait();
    expect(undone.blockNumber).toBe(height);

    await chain.revert(id);
    expect(await chain.provider.getBlockNumber()).toBe(height - 1);
    expect(await chain.blockHash(height)).toBeUndefined();
    const replacing = await (await token.getFunction("mint")(second, usdt("1"))).wait();
    expect(replacing.blockNumber).toBe(height);
    expect(await chain.blockHash(height)).not.toBe(undone.blockHash);
    expect(await chain.provider.getTransactionReceipt(undone.hash)).toBeNull();
    expect([await balanceOf(first), await balanceOf(second)]).toEqual([0n, usdt("1")]);
  });

  it("a dropped transaction is gone from the pool and never mined", async () => {
    const sender = chain.wallet(5);
    const nonce = await chain.provider.getTransactionCount(sender.address);
    await chain.setAutomine(false);
    try {
      const pending = await sender.sendTransaction({ to: chain.wallet(6).address, value: 1n });
      expect((await chain.provider.getTransaction(pending.hash))?.blockNumber).toBeNull();
      expect(await chain.provider.send("txpool_status", [])).toEqual({ pending: "0x1", queued: "0x0" });

      expect(await chain.dropTransaction(pending.hash)).toBe(true);
      expect(await chain.provider.getTransaction(pending.hash)).toBeNull();
      expect(await chain.provider.send("txpool_status", [])).toEqual({ pending: "0x0", queued: "0x0" });
      expect(await chain.dropTransaction(pending.hash)).toBe(false);
      await chain.mine(1);
      expect(await chain.provider.getTransactionReceipt(pending.hash)).toBeNull();
      expect(await chain.provider.getTransactionCount(sender.address)).toBe(nonce);
    } finally {
      await chain.setAutomine(true);
    }
  });

  it("sets the next block's base fee", async () => {
    await chain.setNextBaseFee(77);
    await chain.mine(1);
    expect((await chain.provider.getBlock("latest"))?.baseFeePerGas).toBe(parseUnits("77", "gwei"));
  });
});

describe("the Anvil process", () => {
  it("is gone after stop, and nothing answers on its port", async () => {
    const anvil = await startAnvil({ chainId: 137, blockTime: 1 });
    const pid = anvil.process.pid!;
    expect(alive(pid)).toBe(true);
    expect(await answers(anvil.url)).toBe(true);
    await anvil.stop();
    expect(alive(pid)).toBe(false);
    expect(await answers(anvil.url)).toBe(false);
    await anvil.stop(); // idempotent
  });

  it("dies with the process that started it, even when that one is killed with SIGKILL", async () => {
    const module = resolve(import.meta.dirname, "../../scripts/chain/anvil.ts");
    const code = `const { startAnvil } = await import(${JSON.stringify(module)}); const a = await startAnvil(); console.log(a.process.pid); setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = once(parent, "exit");
    let out = "";
    parent.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const pid = await waitFor("the child to start Anvil", () => (/^\d+\n/.test(out) ? Number(out.trim()) : undefined), 20_000);
    expect(alive(pid)).toBe(true);

    parent.kill("SIGKILL");
    await exited;
    try {
      await waitFor(`Anvil (pid ${pid}) to exit after its parent was killed`, () => (alive(pid) ? undefined : true), 5_000);
    } finally {
      if (alive(pid)) process.kill(pid, "SIGKILL"); // the orphan this test failed on
    }
  });
});
