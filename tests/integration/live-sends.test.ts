/**
 * Withdrawals sent on a live EVM network, against a real Anvil (docs/decisions/live-chains.md
 * "Sends"; tests/support/anvil.ts): the destination is paid the exact amount (native and ERC-20)
 * and `chain.state` goes through to `confirmed`; 20 withdrawals confirmed at once get consecutive
 * nonces and are all mined; a dropped transaction is broadcast again as the same bytes; one left
 * unmined for 20 blocks is replaced with the same nonce; a base fee above the cap makes the send
 * wait until fees fall; a destination that reverts makes the withdrawal FAILED with its reversal
 * and `withdrawal.failed`. The hot wallet is funded from Anvil's accounts; the custody mnemonic is
 * the test's own file.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Decimal } from "decimal.js";
import { HDNodeWallet, Wallet, parseEther, parseUnits, type Contract } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { GAS_WALLET_INDEX, HOT_WALLET_INDEX, openCustodyKeys, serviceWalletPath } from "../../src/providers/evm/keys.js";
import { reconcileChains } from "../../src/modules/chains/overview-reconcile.js";
import { createLogger } from "../../src/logging.js";
import { createTestDatabase, type TestApp } from "../support/app.js";
import { liveEnv } from "../support/live-env.js";
import { deployTestToken, startTestChain, type TestChain } from "../support/anvil.js";
import { BASE } from "../support/fixtures.js";
import { guardTransactions } from "../support/tx-guard.js";
import { waitFor } from "../support/wait.js";
import { Api, apiKey, bearer, type Scene } from "../support/withdrawals-scene.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";

const NETWORK = "networks/ethereum";
const ETH = { name: NETWORK, currency: "eth" };
const USDT = { name: NETWORK, currency: "usdt" };
const WAIT_MS = 30_000;
const CONFIRMATIONS = 3;
/** Runtime code `PUSH1 0 PUSH1 0 REVERT` behind its init code: a contract that refuses every call and payment. */
const REVERTING_CONTRACT = "0x600580600b6000396000f360006000fd";

type Chain = { tx_hash: string | null; state: string; confirmations: number; nonce: number | null; fee: string | null };
type Record_ = { id: string; status: string; chain: Chain | null };

let chain: TestChain;
let token: Contract;
let tokenAddress: string;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let dataDir: string;
let app: TestApp;
let api: Api;
let scene: Scene;
let receiver: Receiver;
let hot: string;
let gas: string;
/** The wallet's deposit address on ethereum. */
let depositAddress: string;

/** A new destination address nobody holds a key of in this test. */
const destination = (): string => Wallet.createRandom().address;

async function withdrawal(id: string): Promise<Record_> {
  const res = await api.get(apiKey(scene.key), scene.userId, id);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Record_;
}

/** Initiates and confirms a withdrawal of `amount` `currency` to `to` (asserting 201, 200 COMPLETED); its id. */
async function sent(currency: string, amount: number, to: string): Promise<string> {
  const { id, code } = await api.started(scene, { currency, amount, address: to });
  const confirmed = await api.confirm(bearer(scene.token), scene.userId, id, code);
  expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  expect(confirmed.body.data).toEqual({ id, status: "COMPLETED" });
  return id;
}

/** Waits until withdrawal `id`'s chain record satisfies `ok` (the sender runs every 2 s). */
function chainOf(id: string, what: string, ok: (c: Chain, w: Record_) => boolean): Promise<Record_> {
  return waitFor(`withdrawal ${id}: ${what}`, async () => {
    const w = await withdrawal(id);
    return w.chain !== null && ok(w.chain, w) ? w : undefined;
  }, WAIT_MS);
}

/** Mines until withdrawal `id` is confirmed. */
async function confirmedOnChain(id: string): Promise<Record_> {
  await chainOf(id, "mined", (c) => c.confirmations >= 1);
  await chain.mine(CONFIRMATIONS);
  return chainOf(id, "confirmed", (c) => c.state === "confirmed");
}

const tokenBalance = async (address: string): Promise<bigint> => BigInt(await token.getFunction("balanceOf")(address));

beforeAll(async () => {
  chain = await startTestChain();
  ({ contract: token, address: tokenAddress } = await deployTestToken(chain.wallet(), { name: "Tether USD", symbol: "USDT", decimals: 6 }));
  await (await token.getFunction("mint")(chain.wallet().address, parseUnits("1000000", 6))).wait();
  receiver = await startReceiver();
  database = await createTestDatabase();
  dataDir = mkdtempSync(join(tmpdir(), "live-sends-"));
  const mnemonic = Wallet.createRandom().mnemonic!.phrase;
  writeFileSync(join(dataDir, "mnemonic.txt"), mnemonic, { mode: 0o600 });
  hot = HDNodeWallet.fromPhrase(mnemonic, undefined, serviceWalletPath(HOT_WALLET_INDEX)).address;
  gas = HDNodeWallet.fromPhrase(mnemonic, undefined, serviceWalletPath(GAS_WALLET_INDEX)).address;
  await (await chain.wallet(1).sendTransaction({ to: hot, value: parseEther("100") })).wait();
  await (await chain.wallet(4).sendTransaction({ to: gas, value: parseEther("5") })).wait();
  await (await token.getFunction("transfer")(hot, parseUnits("10000", 6))).wait();
  guardTransactions();
  const config = loadConfig(liveEnv(database.url, dataDir, {
    ROLE: "all",
    ALLOW_PRIVATE_NETWORK_TARGETS: "true",
    CUSTODY_MNEMONIC_FILE: join(dataDir, "mnemonic.txt"),
    CHAIN_ETHEREUM_RPC_URL: chain.url,
    CHAIN_ETHEREUM_CONFIRMATIONS: String(CONFIRMATIONS),
    CHAIN_ETHEREUM_TOKENS: `usdt=${tokenAddress}:6`,
    CHAIN_ETHEREUM_MAX_FEE_GWEI: "200",
    CHAIN_ETHEREUM_GIVE_UP_S: "60",
    CHAIN_RPC_TIMEOUT_S: "2",
  }));
  const built = await createApp(config, { validateResponses: true });
  app = { ...built, config, dispose: () => built.close() } as TestApp;
  api = new Api(app);
  const { customerId, key } = await api.tenant("live-sends");
  const user = await api.user(key);
  const created = await api.http().post(`${BASE}/users/${user.userId}/wallets`).set("x-api-key", key).send({ name: "Live", networks: [ETH, USDT] });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const walletId = created.body.data.wallet_id as string;
  const address = (created.body.data.addresses as { address: string }[])[0]!.address;
  depositAddress = address;
  scene = { app, customerId, key, ...user, walletId };
  const operator = await api.walk.operatorToken();
  const registered = await api.http().post(`${BASE}/customers/${customerId}/webhooks`).set("Authorization", `Bearer ${operator}`).send({ url: receiver.url });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  receiver.trust(registered.body.data.signing_secret as string);
  // value arrives on chain: 10 eth and 1 000 usdt to the wallet's address, credited at the confirmations
  await (await chain.wallet(2).sendTransaction({ to: address, value: parseEther("10") })).wait();
  await (await token.getFunction("transfer")(address, parseUnits("1000", 6))).wait();
  await chain.mine(CONFIRMATIONS);
  await waitFor("the deposits credited", async () => {
    const b = await api.balances(apiKey(key), walletId);
    return b.eth?.available === "10.00000000" && b.usdt?.available === "1000.00000000" ? true : undefined;
  }, WAIT_MS);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await database?.drop();
  await receiver?.close();
  await chain?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("sends from the hot wallet", () => {
  it("pays the destination the exact native amount, chain.state through to confirmed", async () => {
    const to = destination();
    const id = await sent("eth", 1.25, to);
    const queued = await withdrawal(id);
    expect(queued.status).toBe("COMPLETED");
    expect(queued.chain).not.toBeNull();
    const done = await confirmedOnChain(id);
    expect(done.chain).toMatchObject({ state: "confirmed", nonce: expect.any(Number) });
    expect(done.chain!.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.chain!.confirmations).toBeGreaterThanOrEqual(CONFIRMATIONS);
    expect(Number(done.chain!.fee)).toBeGreaterThan(0);
    expect(await chain.provider.getBalance(to)).toBe(parseEther("1.25"));
    const mined = await chain.provider.getTransaction(done.chain!.tx_hash!);
    expect(mined!.from.toLowerCase()).toBe(hot.toLowerCase());
    expect((await api.balances(apiKey(scene.key), scene.walletId)).eth).toMatchObject({ balance: "8.75000000", available: "8.75000000" });
  });

  it("pays an ERC-20 withdrawal through the token's transfer", async () => {
    const to = destination();
    const id = await sent("usdt", 12.5, to);
    const done = await confirmedOnChain(id);
    expect(done.chain!.state).toBe("confirmed");
    expect(await tokenBalance(to)).toBe(parseUnits("12.5", 6));
  });

  it("gives 20 withdrawals confirmed at once consecutive nonces, all mined, each paid once", { timeout: 120_000 }, async () => {
    const to = destination();
    const ids = await Promise.all(Array.from({ length: 20 }, async () => {
      const { id, code } = await api.started(scene, { currency: "eth", amount: 0.01, address: to });
      return { id, code };
    }));
    await Promise.all(ids.map(async ({ id, code }) => {
      const res = await api.confirm(bearer(scene.token), scene.userId, id, code);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }));
    const mined = await Promise.all(ids.map(({ id }) => chainOf(id, "mined", (c) => c.confirmations >= 1)));
    await chain.mine(CONFIRMATIONS);
    const done = await Promise.all(ids.map(({ id }) => chainOf(id, "confirmed", (c) => c.state === "confirmed")));
    const nonces = done.map((w) => w.chain!.nonce!).sort((a, b) => a - b);
    expect(nonces).toEqual(Array.from({ length: 20 }, (_, i) => nonces[0]! + i));
    expect(new Set(mined.map((w) => w.chain!.tx_hash)).size).toBe(20);
    expect(await chain.provider.getBalance(to)).toBe(parseEther("0.2"));
    expect(await chain.provider.getTransactionCount(hot, "latest")).toBe(nonces[19]! + 1);
  });
});

describe("what the chain does to a send", () => {
  it("broadcasts a dropped transaction again as the same bytes", async () => {
    await chain.setAutomine(false);
    try {
      const to = destination();
      const id = await sent("eth", 0.5, to);
      const broadcast = await chainOf(id, "broadcast", (c) => c.state === "broadcast" && c.tx_hash !== null);
      const hash = broadcast.chain!.tx_hash!;
      expect(await chain.dropTransaction(hash)).toBe(true);
      expect(await chain.provider.getTransaction(hash)).toBeNull();
      await waitFor("the same bytes back in the node's pool", async () => ((await chain.provider.getTransaction(hash)) ? true : undefined), WAIT_MS);
      await chain.mine(1);
      const done = await confirmedOnChain(id);
      expect(done.chain!.tx_hash).toBe(hash);
      expect(await chain.provider.getBalance(to)).toBe(parseEther("0.5"));
    } finally {
      await chain.setAutomine(true);
    }
  });

  it("replaces a transaction left unmined for 20 blocks with the same nonce and higher fees; the destination is paid once", { timeout: 120_000 }, async () => {
    await chain.setAutomine(false);
    let id: string;
    let first: Record_;
    const to = destination();
    try {
      id = await sent("eth", 0.25, to);
      first = await chainOf(id, "broadcast", (c) => c.state === "broadcast" && c.tx_hash !== null);
      // a base fee far above what the transaction offers keeps it out of the next 20 blocks
      await chain.setNextBaseFee(1000);
      await chain.mine(21);
    } finally {
      await chain.setAutomine(true);
    }
    const replaced = await chainOf(id, "replaced", (c) => c.tx_hash !== first.chain!.tx_hash);
    expect(replaced.chain!.nonce).toBe(first.chain!.nonce);
    await chain.mine(1);
    const done = await confirmedOnChain(id);
    expect(done.chain!.nonce).toBe(first.chain!.nonce);
    expect(await chain.provider.getBalance(to)).toBe(parseEther("0.25"));
    const sends = await api.sql<{ tx_hashes: string[] }>(`select tx_hashes from chain_send where withdrawal_id = ?`, [id]);
    expect(sends[0]!.tx_hashes.length).toBeGreaterThanOrEqual(2);
  });

  it("waits while the base fee is above the cap, and sends when fees fall", { timeout: 120_000 }, async () => {
    await chain.setNextBaseFee(500); // above CHAIN_ETHEREUM_MAX_FEE_GWEI=200
    await chain.mine(1);
    const to = destination();
    const id = await sent("eth", 0.125, to);
    await waitFor("the send waiting for fees", async () => {
      const rows = await api.sql<{ last_error: string | null; fee_wait_since: Date | null }>(`select last_error, fee_wait_since from chain_send where withdrawal_id = ?`, [id]);
      return rows[0]?.fee_wait_since ? rows[0] : undefined;
    }, WAIT_MS);
    expect((await withdrawal(id)).chain).toMatchObject({ state: "queued", tx_hash: null, nonce: null });
    expect(await chain.provider.getBalance(to)).toBe(0n);
    await chain.mine(12); // 500 × 0.875^12 ≈ 101 gwei: under the cap again
    const done = await confirmedOnChain(id);
    expect(done.chain!.state).toBe("confirmed");
    expect(await chain.provider.getBalance(to)).toBe(parseEther("0.125"));
  });

  it("makes a withdrawal to a reverting destination FAILED, gives the amount back once and sends withdrawal.failed", async () => {
    const deployed = await (await chain.wallet(3).sendTransaction({ data: REVERTING_CONTRACT })).wait();
    const reverting = deployed!.contractAddress!;
    const before = (await api.balances(apiKey(scene.key), scene.walletId)).eth!;
    const id = await sent("eth", 0.75, reverting);
    const failed = await waitFor("the withdrawal FAILED", async () => {
      const w = await withdrawal(id);
      return w.status === "FAILED" ? w : undefined;
    }, WAIT_MS);
    expect(failed.chain).toMatchObject({ state: "failed", tx_hash: null, nonce: null });
    expect((await api.balances(apiKey(scene.key), scene.walletId)).eth).toMatchObject({ balance: before.balance, available: before.available });
    const reversals = (await api.transactions(apiKey(scene.key), scene.walletId)).filter((t) => t.transaction.action === "withdrawal_reversal");
    expect(reversals).toHaveLength(1);
    const hook = await waitFor("withdrawal.failed", () => receiver.received.find((r) => r.json.type === "withdrawal.failed" && r.json.data.withdrawal_id === id), WAIT_MS);
    expect(hook.json.data).toMatchObject({ error_code: "CRYPTO_WITHDRAWAL_FAILED", withdrawal_type: "crypto", currency: "eth", amount: "0.75000000", chain: { state: "failed" } });
    expect(await app.services.ledger.verify(app.db)).toMatchObject({ unbalancedEntries: [], negativeAccounts: [] });
  });

  it("refills every fee the hot wallet paid from the gas wallet, leaving the books equal to the chain plus the hot wallet's funding", { timeout: 120_000 }, async () => {
    const open = () => api.sql<{ n: number }>(`select count(*)::int as n from chain_send where state in ('queued', 'broadcast')`);
    await waitFor("every send and refill confirmed", async () => {
      await chain.mine(1);
      return (await open())[0]!.n === 0 ? true : undefined;
    }, WAIT_MS * 2);
    const rows = await api.sql<{ kind: string; state: string; fee: string | null; amount_units: string; from_address: string; to_address: string }>(
      `select kind, state, fee::text, amount_units::text, from_address, to_address from chain_send order by id`);
    const paid = rows.filter((r) => r.kind === "withdrawal" && r.fee !== null);
    const refills = rows.filter((r) => r.kind === "refill");
    expect(paid.length).toBe(25); // 1 + 1 + 20 + the dropped, replaced and delayed ones; the reverting destination paid none
    expect(refills).toHaveLength(paid.length);
    expect(refills.every((r) => r.state === "confirmed" && r.from_address === gas.toLowerCase() && r.to_address === hot.toLowerCase())).toBe(true);
    const custody = openCustodyKeys([NETWORK], app.config, createLogger("silent"))!;
    const holdings = await reconcileChains(app.config.liveChains, { db: app.db, ledger: app.services.ledger, custody, rpcTimeoutS: 2 });
    const eth = holdings.find((h) => h.currency === "eth")!;
    const usdt = holdings.find((h) => h.currency === "usdt")!;
    // 10 eth deposited; 1.25 + 20 × 0.01 + 0.5 + 0.25 + 0.125 paid out (the reverted 0.75 came back); every fee refilled.
    // The deposits were swept into the hot wallet (docs/decisions/live-chains.md "Sweeps"); what the gas wallet's fee
    // top-ups left at the deposit address is surplus besides the hot wallet's funding
    expect(rows.filter((r) => r.kind === "sweep").map((r) => [r.state, r.from_address, r.to_address])).toEqual([
      ["confirmed", depositAddress.toLowerCase(), hot.toLowerCase()],
      ["confirmed", depositAddress.toLowerCase(), hot.toLowerCase()],
    ]);
    const leftover = await chain.provider.getBalance(depositAddress);
    expect(eth.owed.toFixed(8)).toBe("7.67500000");
    expect(eth.difference!.toFixed(8)).toBe(new Decimal((parseEther("100") + leftover).toString()).div(1e18).toDecimalPlaces(8, Decimal.ROUND_DOWN).toFixed(8));
    expect(usdt.owed.toFixed(8)).toBe("987.50000000");
    expect(usdt.difference!.toFixed(8)).toBe("10000.00000000");
  });
});
