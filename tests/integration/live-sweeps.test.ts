/**
 * Sweeps on a live EVM network, against a real Anvil (docs/decisions/live-chains.md "Sweeps";
 * tests/support/anvil.ts): credited deposits move from their deposit addresses into the hot wallet,
 * each address's fee first topped up by the gas wallet; a total under `CHAIN_<NET>_SWEEP_MIN` stays
 * where it is; the ledger does not move; a withdrawal is then paid from swept money alone (the hot
 * wallet starts empty); and the reconciliation still equals the chain, its surplus exactly what the
 * top-ups left at the deposit addresses. The custody mnemonic is the test's own file.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Decimal } from "decimal.js";
import { HDNodeWallet, Wallet, parseEther, parseUnits, type Contract } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { reconcileChains } from "../../src/modules/chains/overview-reconcile.js";
import { createLogger } from "../../src/logging.js";
import { GAS_WALLET_INDEX, HOT_WALLET_INDEX, openCustodyKeys, serviceWalletPath } from "../../src/providers/evm/keys.js";
import { createTestDatabase, type TestApp } from "../support/app.js";
import { liveEnv } from "../support/live-env.js";
import { deployTestToken, startTestChain, type TestChain } from "../support/anvil.js";
import { BASE } from "../support/fixtures.js";
import { guardTransactions } from "../support/tx-guard.js";
import { waitFor } from "../support/wait.js";
import { Api, apiKey, bearer, type Scene } from "../support/withdrawals-scene.js";

const NETWORK = "networks/ethereum";
const ETH = { name: NETWORK, currency: "eth" };
const USDT = { name: NETWORK, currency: "usdt" };
const WAIT_MS = 30_000;
const CONFIRMATIONS = 3;
const MAX_FEE_GWEI = 200n;

type SendRow = { id: number; kind: string; state: string; from_address: string; to_address: string; currency: string; amount_units: string; tx_hash: string | null; depends_on: number | null; fee: string | null };

let chain: TestChain;
let token: Contract;
let tokenAddress: string;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let dataDir: string;
let app: TestApp;
let api: Api;
let hot: string;
let gas: string;
/** Wallet A: 2 eth and 500 usdt deposited; wallet B: 1 eth and 50 usdt (under the usdt minimum of 100). */
let a: Scene & { address: string };
let b: Scene & { address: string };

const tokenBalance = async (address: string): Promise<bigint> => BigInt(await token.getFunction("balanceOf")(address));
const sends = (): Promise<SendRow[]> =>
  api.sql<SendRow>(`select id::int, kind, state, from_address, to_address, currency, amount_units::text, tx_hash, depends_on::int, fee::text from chain_send order by id`);

/**
 * Mines a block at a time (the sender and the follower run every 2 s) until `sweeps` sweeps exist
 * and no send is open: an address's next sweep is planned once its previous one ended.
 */
async function settled(sweeps: number): Promise<SendRow[]> {
  return waitFor(`${sweeps} sweeps and every send ended`, async () => {
    await chain.mine(1);
    const rows = await sends();
    const ended = rows.every((r) => r.state === "confirmed" || r.state === "failed");
    return rows.filter((r) => r.kind === "sweep").length === sweeps && ended ? rows : undefined;
  }, WAIT_MS * 3);
}

/** The fee a mined transaction cost its sender, in wei. */
async function feeOf(hash: string): Promise<bigint> {
  const receipt = await chain.provider.getTransactionReceipt(hash);
  return receipt!.gasUsed * receipt!.gasPrice;
}

async function walletOf(api: Api, key: string, userId: string, name: string): Promise<{ walletId: string; address: string }> {
  const created = await api.http().post(`${BASE}/users/${userId}/wallets`).set("x-api-key", key).send({ name, networks: [ETH, USDT] });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { walletId: created.body.data.wallet_id as string, address: (created.body.data.addresses as { address: string }[])[0]!.address };
}

beforeAll(async () => {
  chain = await startTestChain();
  ({ contract: token, address: tokenAddress } = await deployTestToken(chain.wallet(), { name: "Tether USD", symbol: "USDT", decimals: 6 }));
  await (await token.getFunction("mint")(chain.wallet().address, parseUnits("1000000", 6))).wait();
  database = await createTestDatabase();
  dataDir = mkdtempSync(join(tmpdir(), "live-sweeps-"));
  const mnemonic = Wallet.createRandom().mnemonic!.phrase;
  writeFileSync(join(dataDir, "mnemonic.txt"), mnemonic, { mode: 0o600 });
  hot = HDNodeWallet.fromPhrase(mnemonic, undefined, serviceWalletPath(HOT_WALLET_INDEX)).address.toLowerCase();
  gas = HDNodeWallet.fromPhrase(mnemonic, undefined, serviceWalletPath(GAS_WALLET_INDEX)).address.toLowerCase();
  await (await chain.wallet(4).sendTransaction({ to: gas, value: parseEther("5") })).wait(); // the hot wallet gets nothing from the operator
  guardTransactions();
  const config = loadConfig(liveEnv(database.url, dataDir, {
    ROLE: "all",
    CUSTODY_MNEMONIC_FILE: join(dataDir, "mnemonic.txt"),
    CHAIN_ETHEREUM_RPC_URL: chain.url,
    CHAIN_ETHEREUM_CONFIRMATIONS: String(CONFIRMATIONS),
    CHAIN_ETHEREUM_TOKENS: `usdt=${tokenAddress}:6`,
    CHAIN_ETHEREUM_MAX_FEE_GWEI: String(MAX_FEE_GWEI),
    CHAIN_ETHEREUM_SWEEP_MIN: "usdt=100",
    CHAIN_RPC_TIMEOUT_S: "2",
  }));
  const built = await createApp(config, { validateResponses: true });
  app = { ...built, config, dispose: () => built.close() } as TestApp;
  api = new Api(app);
  const { customerId, key } = await api.tenant("live-sweeps");
  const userA = await api.user(key);
  const userB = await api.user(key);
  a = { app, customerId, key, ...userA, ...(await walletOf(api, key, userA.userId, "A")) };
  b = { app, customerId, key, ...userB, ...(await walletOf(api, key, userB.userId, "B")) };
  await (await chain.wallet(2).sendTransaction({ to: a.address, value: parseEther("2") })).wait();
  await (await chain.wallet(3).sendTransaction({ to: b.address, value: parseEther("1") })).wait();
  await (await token.getFunction("transfer")(a.address, parseUnits("500", 6))).wait();
  await (await token.getFunction("transfer")(b.address, parseUnits("50", 6))).wait();
  await chain.mine(CONFIRMATIONS);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await database?.drop();
  await chain?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("sweeps into the hot wallet", () => {
  it("moves each address's credited deposits to the hot wallet, the gas wallet topping up the fees first", { timeout: 120_000 }, async () => {
    const rows = await settled(3);
    const sweeps = rows.filter((r) => r.kind === "sweep");
    const topups = rows.filter((r) => r.kind === "topup");
    expect(rows.every((r) => r.state === "confirmed"), JSON.stringify(rows)).toBe(true);
    // a's eth and usdt, b's eth; b's 50 usdt is under the minimum of 100
    expect(sweeps.map((r) => [r.from_address, r.currency, r.amount_units]).sort()).toEqual([
      [a.address.toLowerCase(), "eth", parseEther("2").toString()],
      [a.address.toLowerCase(), "usdt", parseUnits("500", 6).toString()],
      [b.address.toLowerCase(), "eth", parseEther("1").toString()],
    ].sort());
    expect(sweeps.every((r) => r.to_address === hot)).toBe(true);
    for (const sweep of sweeps) {
      const mined = await chain.provider.getTransaction(sweep.tx_hash!);
      expect(mined!.from.toLowerCase()).toBe(sweep.from_address); // signed with the deposit address's own key
    }
    // each top-up comes from the gas wallet, to the address of the sweep waiting for it, and is at most the fee at the cap
    expect(topups).toHaveLength(3); // a's eth sweep, then a's usdt sweep (more gas than the first one left), b's eth sweep
    for (const topup of topups) {
      expect(topup).toMatchObject({ from_address: gas, currency: "eth" });
      const waiting = sweeps.find((s) => s.depends_on === topup.id);
      expect(waiting?.from_address).toBe(topup.to_address);
      expect(BigInt(topup.amount_units)).toBeLessThanOrEqual(100_000n * MAX_FEE_GWEI * 1_000_000_000n);
    }
    expect(await chain.provider.getBalance(hot)).toBe(parseEther("3"));
    expect(await tokenBalance(hot)).toBe(parseUnits("500", 6));
    expect(await tokenBalance(a.address)).toBe(0n);
    expect(await tokenBalance(b.address)).toBe(parseUnits("50", 6));
    // what each deposit address holds of the native coin now is exactly its top-ups less its sweeps' fees
    for (const address of [a.address.toLowerCase(), b.address.toLowerCase()]) {
      const toppedUp = topups.filter((t) => t.to_address === address).reduce((sum, t) => sum + BigInt(t.amount_units), 0n);
      let fees = 0n;
      for (const s of sweeps.filter((x) => x.from_address === address)) fees += await feeOf(s.tx_hash!);
      expect(await chain.provider.getBalance(address), address).toBe(toppedUp - fees);
    }
    // the top-ups and sweeps are no deposits, and the ledger did not move
    const deposits = await api.sql<{ currency: string; swept: boolean }>(`select currency, swept_by is not null as swept from chain_deposit order by id`);
    expect(deposits).toEqual([
      { currency: "eth", swept: true },
      { currency: "eth", swept: true },
      { currency: "usdt", swept: true },
      { currency: "usdt", swept: false },
    ]);
    expect((await api.balances(apiKey(a.key), a.walletId)).eth).toMatchObject({ balance: "2.00000000", available: "2.00000000" });
    expect((await api.balances(apiKey(b.key), b.walletId)).usdt).toMatchObject({ balance: "50.00000000", available: "50.00000000" });
  });

  it("pays a withdrawal from swept money alone, and sweeps a later deposit to a swept address again", { timeout: 120_000 }, async () => {
    const to = Wallet.createRandom().address;
    const { id, code } = await api.started(a, { currency: "eth", amount: 1.5, address: to });
    const confirmed = await api.confirm(bearer(a.token), a.userId, id, code);
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    await (await chain.wallet(2).sendTransaction({ to: a.address, value: parseEther("0.25") })).wait();
    await chain.mine(CONFIRMATIONS);
    const rows = await settled(4);
    expect(rows.every((r) => r.state === "confirmed"), JSON.stringify(rows)).toBe(true);
    expect(await chain.provider.getBalance(to)).toBe(parseEther("1.5"));
    const withdrawal = rows.find((r) => r.kind === "withdrawal")!;
    expect(withdrawal.from_address).toBe(hot);
    // the hot wallet: 3 swept + 0.25 swept − 1.5 paid; the withdrawal's fee came back from the gas wallet
    expect(rows.filter((r) => r.kind === "refill")).toHaveLength(1);
    expect(await chain.provider.getBalance(hot)).toBe(parseEther("1.75"));
    const last = rows.filter((r) => r.kind === "sweep").at(-1)!;
    expect(last).toMatchObject({ from_address: a.address.toLowerCase(), currency: "eth", amount_units: parseEther("0.25").toString() });
    // what a's usdt sweep's top-up left there pays this native sweep's fee at the cap: no new top-up
    expect(last.depends_on).toBeNull();
    expect(rows.filter((r) => r.kind === "topup")).toHaveLength(3);
    expect((await api.balances(apiKey(a.key), a.walletId)).eth).toMatchObject({ balance: "0.75000000", available: "0.75000000" });
  });

  it("leaves the books equal to the chain: the surplus is what the top-ups left at the deposit addresses", { timeout: 60_000 }, async () => {
    const rows = await sends();
    let leftover = 0n;
    for (const address of [a.address, b.address]) leftover += await chain.provider.getBalance(address);
    const swept = rows.filter((r) => r.kind === "sweep" && r.currency === "eth").reduce((sum, r) => sum + BigInt(r.amount_units), 0n);
    expect(swept).toBe(parseEther("3.25")); // every eth deposit, and no more
    expect(await app.services.ledger.verify(app.db)).toMatchObject({ unbalancedEntries: [], negativeAccounts: [] });
    const custody = openCustodyKeys([NETWORK], app.config, createLogger("silent"))!;
    const holdings = await reconcileChains(app.config.liveChains, { db: app.db, ledger: app.services.ledger, custody, rpcTimeoutS: 2 });
    const eth = holdings.find((h) => h.currency === "eth")!;
    const usdt = holdings.find((h) => h.currency === "usdt")!;
    expect(eth.owed.toFixed(8)).toBe("1.75000000"); // 3.25 deposited, 1.5 paid out
    expect(eth.difference!.toFixed(8)).toBe(new Decimal(leftover.toString()).div(1e18).toDecimalPlaces(8, Decimal.ROUND_DOWN).toFixed(8));
    expect(usdt.owed.toFixed(8)).toBe("550.00000000");
    expect(usdt.difference!.toFixed(8)).toBe("0.00000000");
  });
});
