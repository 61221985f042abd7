/**
 * `npm run ledger:check` with a live network, against a real Anvil (docs/decisions/live-chains.md
 * "Reconciliation"; scripts/ledger-check.ts): per currency, what the deposit addresses and the hot
 * wallet hold on chain against what the ledger owes on the network. Clean once the deposits are
 * credited (the gas wallet's coin left out); a surplus (coin sent to the hot wallet) is reported
 * and passes; a deposit address whose tokens are moved away with its own key (derived here from the
 * test's mnemonic) holds less than the ledger owes: the check fails. Without the mnemonic it never
 * writes one and fails.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Contract, HDNodeWallet, Wallet, parseEther, parseUnits } from "ethers";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createTestDatabase, TEST_SECRETS_KEY } from "../support/app.js";
import { liveEnv } from "../support/live-env.js";
import { deployTestToken, startTestChain, type TestChain } from "../support/anvil.js";
import { BASE, Walk } from "../support/fixtures.js";
import { guardTransactions } from "../support/tx-guard.js";
import { waitFor } from "../support/wait.js";

const NETWORK = "networks/ethereum";
const usdt = (amount: string) => parseUnits(amount, 6);

describe("npm run ledger:check against a live network on Anvil", () => {
  let chain: TestChain;
  let token: Contract;
  let tokenAddress: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let mnemonicFile: string;
  let phrase: string;
  let first: string;
  let hot: HDNodeWallet;

  /** Runs the check's script as `npm run ledger:check` does, with the service's configuration. */
  const check = (env: Record<string, string> = {}): Promise<{ code: number; output: string }> =>
    new Promise((done) => {
      execFile(
        process.execPath,
        ["--import", "tsx", "scripts/ledger-check.ts"],
        {
          cwd: resolve(import.meta.dirname, "../.."),
          env: {
            ...process.env,
            DATABASE_URL: database.url,
            SECRETS_KEY: TEST_SECRETS_KEY,
            LOG_LEVEL: "silent",
            DATA_DIR: dataDir,
            CUSTODY_MNEMONIC_FILE: mnemonicFile,
            CHAIN_ETHEREUM_RPC_URL: chain.url,
            CHAIN_ETHEREUM_TOKENS: `usdt=${tokenAddress}:6`,
            ...env,
          },
        },
        (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
      );
    });

  beforeAll(async () => {
    chain = await startTestChain();
    ({ contract: token, address: tokenAddress } = await deployTestToken(chain.wallet(), { name: "Tether USD", symbol: "USDT", decimals: 6 }));
    await (await token.getFunction("mint")(chain.wallet().address, usdt("1000000"))).wait();
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "ledger-check-chains-"));
    mnemonicFile = join(dataDir, "mnemonic.txt");
    phrase = (Wallet.createRandom().mnemonic as { phrase: string }).phrase;
    writeFileSync(mnemonicFile, `${phrase}\n`, { mode: 0o600 });
    hot = HDNodeWallet.fromPhrase(phrase, "", "m/44'/60'/7'/0/1");
    const gas = HDNodeWallet.fromPhrase(phrase, "", "m/44'/60'/7'/0/0");
    await (await chain.wallet(1).sendTransaction({ to: gas.address, value: parseEther("1") })).wait(); // the gas wallet's coin is left out

    guardTransactions();
    const app: App = await createApp(loadConfig(liveEnv(database.url, dataDir, {
      ROLE: "all",
      CUSTODY_MNEMONIC_FILE: mnemonicFile,
      CHAIN_ETHEREUM_RPC_URL: chain.url,
      CHAIN_ETHEREUM_CONFIRMATIONS: "1",
      CHAIN_ETHEREUM_TOKENS: `usdt=${tokenAddress}:6`,
      // no sweeps here (docs/decisions/live-chains.md "Sweeps"): their transactions would mine blocks on this automining
      // Anvil and move the deposits; a minimum no deposit of this test reaches keeps them where they arrived
      CHAIN_ETHEREUM_SWEEP_MIN: "eth=1000000,usdt=1000000",
    })), { validateResponses: true });
    try {
      const walk = new Walk(app.express);
      const { key } = await walk.tenant("ledger-check-chains");
      const { userId } = await walk.activeUserWithToken(key);
      const wallet = async (name: string): Promise<{ id: string; address: string }> => {
        const res = await request(app.express)
          .post(`${BASE}/users/${userId}/wallets`)
          .set("x-api-key", key)
          .send({ name, networks: [{ name: NETWORK, currency: "eth" }, { name: NETWORK, currency: "usdt" }] });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        return { id: res.body.data.wallet_id as string, address: (res.body.data.addresses as { address: string }[])[0]!.address };
      };
      const [a, b] = [await wallet("Live A"), await wallet("Live B")];
      first = a.address;
      await waitFor("the follower's first run", async () => ((await app.services.chains.overview().list())[0]?.scanned !== null ? true : undefined), 25_000);
      await (await chain.wallet(1).sendTransaction({ to: a.address, value: parseEther("2") })).wait();
      await (await chain.wallet(1).sendTransaction({ to: b.address, value: parseEther("0.5") })).wait();
      await (await token.getFunction("transfer")(a.address, usdt("10"))).wait();
      await chain.mine(1);
      const balance = async (walletId: string, currency: string): Promise<string | undefined> => {
        const res = await request(app.express).get(`${BASE}/wallets/${walletId}/balance`).set("x-api-key", key);
        return (res.body.data.balance as { currency: string; balance: string }[]).find((x) => x.currency === currency)?.balance;
      };
      await waitFor("the deposits credited", async () =>
        (await balance(a.id, "eth")) === "2.00000000" && (await balance(a.id, "usdt")) === "10.00000000" && (await balance(b.id, "eth")) === "0.50000000" ? true : undefined, 25_000);
    } finally {
      await app.close();
    }
  }, 120_000);

  afterAll(async () => {
    await database?.drop();
    await chain?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("is clean once the deposits are credited: the addresses hold what the ledger owes", { timeout: 60_000 }, async () => {
    const clean = await check();
    expect(clean.output).toContain("The ledger is consistent.");
    expect(clean.output).toContain(`${NETWORK} eth: held 2.50000000, owed 2.50000000 (balanced)`);
    expect(clean.output).toContain(`${NETWORK} usdt: held 10.00000000, owed 10.00000000 (balanced)`);
    expect(clean.output).toContain("The service's addresses hold what the ledger owes.");
    expect(clean.code, clean.output).toBe(0);
  });

  it("reports a surplus on the hot wallet and passes", { timeout: 60_000 }, async () => {
    await (await chain.wallet(1).sendTransaction({ to: hot.address, value: parseEther("0.3") })).wait();
    const surplus = await check();
    expect(surplus.output).toContain(`${NETWORK} eth: held 2.80000000, owed 2.50000000 (surplus 0.30000000, reported only)`);
    expect(surplus.output).toContain(`${NETWORK} usdt: held 10.00000000, owed 10.00000000 (balanced)`);
    expect(surplus.code, surplus.output).toBe(0);
  });

  it("fails when a deposit address holds less than the ledger owes", { timeout: 60_000 }, async () => {
    let key: HDNodeWallet | undefined;
    for (let i = 0; i < 20 && !key; i++) {
      const candidate = HDNodeWallet.fromPhrase(phrase, "", `m/44'/60'/0'/0/${i}`);
      if (candidate.address.toLowerCase() === first.toLowerCase()) key = candidate;
    }
    expect(key, "the deposit address's key from the custody mnemonic").toBeDefined();
    const owner = (key as HDNodeWallet).connect(chain.provider);
    await (await (token.connect(owner) as Contract).getFunction("transfer")(chain.wallet(2).address, usdt("4"))).wait();
    const short = await check();
    expect(short.output).toContain(`${NETWORK} usdt: held 6.00000000, owed 10.00000000 (DEFICIT 4.00000000)`);
    expect(short.output).toMatch(new RegExp(`${NETWORK} eth: held 2\\.7\\d{7}, owed 2\\.50000000 \\(surplus 0\\.2\\d{7}, reported only\\)`)); // less the transfer's fee
    expect(short.output).toContain("The ledger is consistent.");
    expect(short.output).toContain("The service's addresses hold LESS than the ledger owes.");
    expect(short.code, short.output).toBe(1);
  });

  it("never writes a mnemonic: without one the live networks are not checked and the check fails", { timeout: 60_000 }, async () => {
    const empty = mkdtempSync(join(tmpdir(), "ledger-check-empty-"));
    try {
      const { CUSTODY_MNEMONIC_FILE: _unset, ...rest } = process.env;
      void _unset;
      const result = await new Promise<{ code: number; output: string }>((done) => {
        execFile(
          process.execPath,
          ["--import", "tsx", "scripts/ledger-check.ts"],
          {
            cwd: resolve(import.meta.dirname, "../.."),
            env: { ...rest, DATABASE_URL: database.url, SECRETS_KEY: TEST_SECRETS_KEY, LOG_LEVEL: "silent", DATA_DIR: empty, CHAIN_ETHEREUM_RPC_URL: chain.url },
          },
          (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
        );
      });
      expect(result.output).toContain("not checked: no custody mnemonic");
      expect(result.code, result.output).toBe(1);
      expect(existsSync(join(empty, "custody-mnemonic.txt"))).toBe(false);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
