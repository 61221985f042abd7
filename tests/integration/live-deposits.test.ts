/**
 * Deposits on a live EVM network, against a real Anvil (docs/decisions/live-chains.md "Deposits",
 * "Reorgs"; tests/support/anvil.ts): the follower sees native and ERC-20 deposits `pending` (in no
 * balance), credits them once at the network's confirmations, orphans a deposit whose block a reorg
 * replaced and takes the same record back when the transaction is mined again, catches up after a
 * restart with no gap and no double credit, and records a node that hangs or goes away
 * (`last_error`) without losing a block. The app reaches Anvil through a pass-through the test can
 * stop, start and make hang: the node disappearing and coming back, with its chain intact.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HDNodeWallet, parseEther, parseUnits, type Contract } from "ethers";
import pg from "pg";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createTestDatabase } from "../support/app.js";
import { liveEnv } from "../support/live-env.js";
import { NodeProxy } from "../support/node-proxy.js";
import { deployTestToken, startTestChain, type TestChain } from "../support/anvil.js";
import { BASE, Walk } from "../support/fixtures.js";
import { guardTransactions } from "../support/tx-guard.js";
import { sleep, waitFor } from "../support/wait.js";

const NETWORK = "networks/ethereum";
const usdt = (amount: string) => parseUnits(amount, 6);
const WAIT_MS = 25_000;

type Tx = { id: number; balance: number; transaction: { hash: string; status: string; action: string; currency: string; amount: number; confirmations?: number } };

describe("live deposits on Anvil", () => {
  let chain: TestChain;
  let token: Contract;
  let tokenAddress: string;
  let proxy: NodeProxy;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let app: App | undefined;
  let db: pg.Client;
  let key: string;
  let walletId: string;
  let address: string;

  const start = async (): Promise<App> => {
    guardTransactions();
    const config = loadConfig(liveEnv(database.url, dataDir, {
      ROLE: "all",
      CHAIN_ETHEREUM_RPC_URL: proxy.url,
      CHAIN_ETHEREUM_CONFIRMATIONS: "3",
      CHAIN_ETHEREUM_TOKENS: `usdt=${tokenAddress}:6`,
      CHAIN_RPC_TIMEOUT_S: "1",
      // no sweeps here (docs/decisions/live-chains.md "Sweeps"): their transactions would mine blocks on this automining
      // Anvil and move the deposits; a minimum no deposit of this test reaches keeps them where they arrived
      CHAIN_ETHEREUM_SWEEP_MIN: "eth=1000000,usdt=1000000",
    }));
    return createApp(config, { validateResponses: true });
  };
  const live = (): App => {
    if (!app) throw new Error("the app is not running");
    return app;
  };
  const transactions = async (): Promise<Tx[]> => {
    const res = await request(live().express).get(`${BASE}/wallets/${walletId}/transactions`).set("x-api-key", key).query({ "filter[limit]": 100 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as Tx[];
  };
  const withHash = async (hash: string): Promise<Tx[]> => (await transactions()).filter((t) => t.transaction.hash === hash.toLowerCase());
  /** Waits until the deposit of `hash` has status `status`; asserts it is the only transaction of that hash. */
  const depositIn = (hash: string, status: string): Promise<Tx> =>
    waitFor(`the deposit ${hash} ${status}`, async () => {
      const found = await withHash(hash);
      expect(found.length).toBeLessThanOrEqual(1);
      return found[0]?.transaction.status === status ? found[0] : undefined;
    }, WAIT_MS);
  const balances = async (): Promise<Record<string, { balance: string; available: string }>> => {
    const res = await request(live().express).get(`${BASE}/wallets/${walletId}/balance`).set("x-api-key", key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return Object.fromEntries((res.body.data.balance as { currency: string; balance: string; available: string }[]).map((b) => [b.currency, b]));
  };
  const ledgerEntries = async (hash: string): Promise<{ reference: string; amount: string }[]> =>
    (await db.query<{ reference: string; amount: string }>(`select reference, amount::text from journal_entry where reference like $1 order by id`, [`deposit:${NETWORK}:${hash.toLowerCase()}:%`])).rows;
  const cursor = async () =>
    (await db.query<{ head: string; scanned: string; last_error: string | null }>(`select head::text, scanned::text, last_error from chain_cursor where network = $1`, [NETWORK])).rows[0];
  /** The stored window has no hole: one block per height from its floor to the cursor, each the parent of the next. */
  const expectNoGap = async () => {
    const blocks = (await db.query<{ height: string; hash: string; parent_hash: string }>(`select height::text, hash, parent_hash from chain_block where network = $1 order by chain_block.height`, [NETWORK])).rows;
    const c = await cursor();
    expect(blocks.length).toBeGreaterThan(1);
    expect(Number(blocks[blocks.length - 1]!.height)).toBe(Number(c!.scanned));
    for (let i = 1; i < blocks.length; i++) {
      expect(Number(blocks[i]!.height)).toBe(Number(blocks[i - 1]!.height) + 1);
      expect(blocks[i]!.parent_hash).toBe(blocks[i - 1]!.hash);
      expect(blocks[i]!.hash).toBe(await chain.blockHash(Number(blocks[i]!.height)));
    }
  };

  beforeAll(async () => {
    chain = await startTestChain();
    ({ contract: token, address: tokenAddress } = await deployTestToken(chain.wallet(), { name: "Tether USD", symbol: "USDT", decimals: 6 }));
    await (await token.getFunction("mint")(chain.wallet().address, usdt("1000000"))).wait();
    proxy = new NodeProxy(chain.url);
    await proxy.start();
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "live-deposits-"));
    db = new pg.Client({ connectionString: database.url });
    app = await start();
    await db.connect();
    const walk = new Walk(live().express);
    ({ key } = await walk.tenant("live-deposits"));
    const { userId } = await walk.activeUserWithToken(key);
    const res = await request(live().express)
      .post(`${BASE}/users/${userId}/wallets`)
      .set("x-api-key", key)
      .send({ name: "Live", networks: [{ name: NETWORK, currency: "eth" }, { name: NETWORK, currency: "usdt" }] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    walletId = res.body.data.wallet_id as string;
    address = (res.body.data.addresses as { address: string }[])[0]!.address;
    await waitFor("the follower's first run", async () => ((await cursor()) ? true : undefined), WAIT_MS);
  });

  afterAll(async () => {
    await app?.close();
    await db?.end();
    await database?.drop();
    await proxy?.stop().catch(() => {});
    await chain?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("sees native and token deposits pending, in no balance, and credits each once at 3 confirmations", async () => {
    const eth = await (await chain.wallet(1).sendTransaction({ to: address, value: parseEther("1.123456789123") })).wait();
    const pendingEth = await depositIn(eth!.hash, "pending");
    expect(pendingEth.transaction).toMatchObject({ action: "deposit", currency: "eth", amount: 1.12345678 }); // rounded down
    expect(pendingEth.transaction.confirmations).toBeGreaterThanOrEqual(1);
    expect(pendingEth.transaction.confirmations).toBeLessThan(3);

    const sent = await (await token.getFunction("transfer")(address, usdt("2.5"))).wait();
    const pendingUsdt = await depositIn(sent.hash as string, "pending");
    expect(pendingUsdt.transaction).toMatchObject({ action: "deposit", currency: "usdt", amount: 2.5 });
    expect(await balances()).toMatchObject({ eth: { balance: "0.00000000", available: "0.00000000" }, usdt: { balance: "0.00000000", available: "0.00000000" } });
    expect(await ledgerEntries(eth!.hash)).toEqual([]);

    await chain.mine(2);
    const doneEth = await depositIn(eth!.hash, "done");
    const doneUsdt = await depositIn(sent.hash as string, "done");
    expect([doneEth.id, doneUsdt.id]).toEqual([pendingEth.id, pendingUsdt.id]);
    expect(doneEth.balance).toBe(1.12345678);
    expect(doneEth.transaction.confirmations).toBeGreaterThanOrEqual(3);
    expect(await balances()).toMatchObject({ eth: { balance: "1.12345678", available: "1.12345678" }, usdt: { balance: "2.50000000", available: "2.50000000" } });
    expect(await ledgerEntries(eth!.hash)).toEqual([{ reference: `deposit:${NETWORK}:${eth!.hash.toLowerCase()}:-1`, amount: "1.123456780000000000" }]);
    expect((await ledgerEntries(sent.hash as string)).map((e) => e.amount)).toEqual(["2.500000000000000000"]);

    // further blocks change nothing but the confirmations
    await chain.mine(3);
    await waitFor("the confirmations to grow", async () => ((await withHash(eth!.hash))[0]!.transaction.confirmations! >= doneEth.transaction.confirmations! + 3 ? true : undefined), WAIT_MS);
    expect(await ledgerEntries(eth!.hash)).toHaveLength(1);
    expect((await balances()).eth!.balance).toBe("1.12345678");
  });

  it("does not count the service's own gas wallet's transfers as deposits", async () => {
    const words = readFileSync(join(dataDir, "custody-mnemonic.txt"), "utf8").trim();
    const gas = HDNodeWallet.fromPhrase(words, undefined, "m/44'/60'/7'/0/0").connect(chain.provider);
    await (await chain.wallet(4).sendTransaction({ to: gas.address, value: parseEther("1") })).wait();
    const topUp = await (await gas.sendTransaction({ to: address, value: parseEther("0.01") })).wait();
    const real = await (await chain.wallet(4).sendTransaction({ to: address, value: parseEther("0.02") })).wait();
    await chain.mine(3);
    await depositIn(real!.hash, "done");
    expect(await withHash(topUp!.hash)).toEqual([]);
    expect(await ledgerEntries(topUp!.hash)).toEqual([]);
  });

  it("orphans a pending deposit whose block a reorg replaced, and takes the same record back when it is mined again", async () => {
    const before = (await balances()).eth!.balance;
    const sent = (await (await chain.wallet(2).sendTransaction({ to: address, value: parseEther("0.5") })).wait())!;
    const raw = (await chain.rawTransaction(sent.hash))!;
    const pending = await depositIn(sent.hash, "pending");

    const depth = (await chain.provider.getBlockNumber()) - sent.blockNumber + 1;
    await chain.reorg(depth);
    expect(await chain.blockHash(sent.blockNumber)).not.toBe(sent.blockHash);
    await chain.mine(1); // the next block shows the follower the new branch
    const orphaned = await depositIn(sent.hash, "orphaned");
    expect(orphaned.id).toBe(pending.id);
    expect(orphaned.transaction.confirmations).toBe(0);
    expect((await db.query(`select status from chain_deposit where tx_hash = $1`, [sent.hash.toLowerCase()])).rows).toEqual([{ status: "orphaned" }]);

    // mined again one block higher in a new branch: 2 confirmations once the next block comes
    const head = await chain.provider.getBlockNumber();
    expect(head).toBe(sent.blockNumber + 1);
    await chain.reorg(2, [{ tx: raw, offset: 1 }]);
    const again = (await chain.provider.getTransactionReceipt(sent.hash))!;
    expect(again.blockNumber).toBe(sent.blockNumber + 1);
    await chain.mine(1);
    const back = await depositIn(sent.hash, "pending");
    expect(back.id).toBe(pending.id);
    expect((await db.query(`select status, block_hash from chain_deposit where tx_hash = $1`, [sent.hash.toLowerCase()])).rows).toEqual([{ status: "pending", block_hash: again.blockHash }]);
    expect((await balances()).eth!.balance).toBe(before);
    expect(await ledgerEntries(sent.hash)).toEqual([]);

    expect(back.transaction.confirmations).toBe(2);
    await chain.mine(1);
    const done = await depositIn(sent.hash, "done");
    expect(done.id).toBe(pending.id);
    expect(await ledgerEntries(sent.hash)).toHaveLength(1);
    expect((await balances()).eth!.balance).toBe((Number(before) + 0.5).toFixed(8));
    await expectNoGap();
  });

  it("catches up after a restart: the deposits mined while it was down are credited once, with no gap", async () => {
    const before = await balances();
    await live().close();
    app = undefined;
    const eth = (await (await chain.wallet(3).sendTransaction({ to: address, value: parseEther("0.25") })).wait())!;
    const sent = await (await token.getFunction("transfer")(address, usdt("1.000001"))).wait();
    await chain.mine(4);

    app = await start();
    await depositIn(eth.hash, "done");
    await depositIn(sent.hash as string, "done");
    expect(await ledgerEntries(eth.hash)).toHaveLength(1);
    expect(await ledgerEntries(sent.hash as string)).toHaveLength(1);
    expect(await balances()).toMatchObject({
      eth: { balance: (Number(before.eth!.balance) + 0.25).toFixed(8) },
      usdt: { balance: (Number(before.usdt!.balance) + 1.000001).toFixed(8) },
    });
    await waitFor("the follower at the head", async () => (Number((await cursor())!.scanned) === (await chain.provider.getBlockNumber()) ? true : undefined), WAIT_MS);
    await expectNoGap();
  });

  it("records a node that hangs or goes away, and resumes where it stopped once it answers", async () => {
    await waitFor("the follower at the head", async () => (Number((await cursor())!.scanned) === (await chain.provider.getBlockNumber()) ? true : undefined), WAIT_MS);
    proxy.hang = true;
    await chain.mine(1);
    const hung = await waitFor("a timeout recorded", async () => ((await cursor())!.last_error ?? undefined), WAIT_MS);
    expect(hung).toMatch(/did not answer/);
    await proxy.stop();
    proxy.hang = false;
    await waitFor("a failure recorded", async () => ((await cursor())!.last_error !== hung ? true : undefined), WAIT_MS);
    const stopped = await cursor();
    expect(stopped!.last_error).not.toBeNull();

    const eth = (await (await chain.wallet(5).sendTransaction({ to: address, value: parseEther("0.125") })).wait())!;
    await chain.mine(3);
    await sleep(3_000); // runs fail meanwhile: the cursor does not move
    expect((await cursor())!.scanned).toBe(stopped!.scanned);
    // requests are still answered
    expect((await balances()).eth).toBeDefined();

    await proxy.start();
    await depositIn(eth.hash, "done");
    expect((await cursor())!.last_error).toBeNull();
    expect(await ledgerEntries(eth.hash)).toHaveLength(1);
    await expectNoGap();
  });
});
