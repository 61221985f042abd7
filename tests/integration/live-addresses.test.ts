/**
 * A live ethereum (docs/decisions/live-chains.md): with `CHAIN_ETHEREUM_RPC_URL` set, a wallet's
 * ethereum address derives from the custody mnemonic (`CUSTODY_MNEMONIC_FILE`) at the sandbox's
 * path, while its other networks keep `SANDBOX_SEED`'s addresses; the sandbox deposit helper and
 * Initiate Withdrawal answer 400 on ethereum and work as before elsewhere. Creating a wallet never
 * asks the node, so the URL points at a port nothing listens on. A whole start with a generated
 * mnemonic logs its file's path, and no run of its words.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateMnemonic } from "@scure/bip39";
import { wordlist as english } from "@scure/bip39/wordlists/english.js";
import { HDNodeWallet } from "ethers";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/logging.js";
import { deriveDepositAddress, hdSeedFrom, type NetworkId } from "../../src/providers/chains.js";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY, createTestDatabase, useTestApp } from "../support/app.js";
import { BASE, BTC_DESTINATION, Walk, expectPlatformError } from "../support/fixtures.js";

const folder = mkdtempSync(join(tmpdir(), "live-addresses-"));
const WORDS = generateMnemonic(english, 256);
const MNEMONIC_FILE = join(folder, "custody-mnemonic.txt");
writeFileSync(MNEMONIC_FILE, `${WORDS}\n`, { mode: 0o600 });
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const t = useTestApp({ CHAIN_ETHEREUM_RPC_URL: "http://127.0.0.1:9", CHAIN_ETHEREUM_TOKENS: "usdt=0x5FbDB2315678afecb367f032d93F642f64180aa3:6", CUSTODY_MNEMONIC_FILE: MNEMONIC_FILE });

const NETWORKS = [
  { name: "networks/ethereum", currency: "eth" },
  { name: "networks/ethereum", currency: "usdt" },
  { name: "networks/bitcoin", currency: "btc" },
  { name: "networks/polygon", currency: "usdt" },
];
/** A valid EVM destination (the BIP-39 test mnemonic's first address). */
const EVM_DESTINATION = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94";

let key: string;
let userId: string;
/** The wallets made in order: the n-th one holds derivation index n of each of its networks. */
const wallets: { walletId: string; addresses: Record<string, string> }[] = [];

/** Creates a wallet over {@link NETWORKS}; its address per network. */
async function createWallet(name: string): Promise<{ walletId: string; addresses: Record<string, string> }> {
  const res = await t.api().post(`${BASE}/users/${userId}/wallets`).set("x-api-key", key).send({ name, networks: NETWORKS });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const addresses: Record<string, string> = {};
  for (const a of res.body.data.addresses as { network: string; address: string }[]) addresses[a.network] = a.address;
  return { walletId: res.body.data.wallet_id as string, addresses };
}

const deposit = (walletId: string, network: string, currency: string, amount: number): request.Test =>
  t.api().post(`${BASE}/sandbox/deposits`).set("x-api-key", key).send({ wallet_id: walletId, network, currency, amount });

const initiate = (currency: string, amount: number, address: string): request.Test =>
  t.api().post(`${BASE}/users/${userId}/accounts/crypto/withdrawals`).set("x-api-key", key).send({ currency, amount, address });

beforeAll(async () => {
  const walk = new Walk(t.express);
  ({ key } = await walk.tenant("live-co"));
  ({ userId } = await walk.activeUserWithToken(key));
  wallets.push(await createWallet("First"), await createWallet("Second"));
});

describe("deposit addresses on a live ethereum", () => {
  it("derives the ethereum address from the custody mnemonic at m/44'/60'/0'/0/i, one index after another", () => {
    expect(t.config.liveChains.map((c) => c.network)).toEqual(["networks/ethereum"]);
    for (const [i, wallet] of wallets.entries()) {
      const expected = HDNodeWallet.fromPhrase(WORDS, undefined, `m/44'/60'/0'/0/${i}`).address;
      expect(wallet.addresses["networks/ethereum"], `wallet ${i}`).toBe(expected);
      expect(wallet.addresses["networks/ethereum"]).not.toBe(deriveDepositAddress("networks/ethereum", hdSeedFrom(t.config.sandboxSeed), i).address);
    }
  });

  it("keeps SANDBOX_SEED's addresses on the networks that are not live (bitcoin, polygon)", () => {
    const sandbox = hdSeedFrom(t.config.sandboxSeed);
    for (const [i, wallet] of wallets.entries()) {
      for (const network of ["networks/bitcoin", "networks/polygon"] as NetworkId[]) {
        expect(wallet.addresses[network], `${network} of wallet ${i}`).toBe(deriveDepositAddress(network, sandbox, i).address);
      }
    }
  });
});

describe("the sandbox deposit helper", () => {
  it("answers 400 BAD_REQUEST on the live ethereum, for the native coin and a token, and credits nothing", async () => {
    const { walletId } = wallets[0]!;
    for (const currency of ["eth", "usdt"]) {
      const res = await deposit(walletId, "networks/ethereum", currency, 1);
      expectPlatformError(res, 400, "BAD_REQUEST");
      expect(res.body.errors[0].message).toMatch(/live network: deposits on it arrive on chain only/);
    }
    const balances = await t.api().get(`${BASE}/wallets/${walletId}/balance`).set("x-api-key", key);
    expect(balances.status, JSON.stringify(balances.body)).toBe(200);
    const items = balances.body.data.balance as { currency: string; balance: string }[];
    expect(items.filter((b) => ["eth", "usdt"].includes(b.currency) && b.balance !== "0.00000000")).toEqual([]);
  });

  it("answers the live network's 400 before it looks at the wallet", async () => {
    const res = await deposit("not-a-uuid", "networks/ethereum", "eth", 1);
    expectPlatformError(res, 400, "BAD_REQUEST");
  });

  it("still credits bitcoin and polygon", async () => {
    const { walletId } = wallets[0]!;
    expect((await deposit(walletId, "networks/bitcoin", "btc", 1)).status).toBe(201);
    expect((await deposit(walletId, "networks/polygon", "usdt", 50)).status).toBe(201);
  });
});

describe("Initiate Withdrawal", () => {
  it("takes an address valid on the live ethereum only past the address check: with no eth arrived on chain, INSUFFICIENT_BALANCE", async () => {
    // the send itself: tests/integration/live-sends.test.ts
    expectPlatformError(await initiate("eth", 0.01, EVM_DESTINATION), 400, "INSUFFICIENT_BALANCE");
  });

  it("checks the address first: an invalid one still answers INVALID_CRYPTO_ADDRESS", async () => {
    expectPlatformError(await initiate("eth", 0.01, "0x1234"), 400, "INVALID_CRYPTO_ADDRESS");
  });

  it("lets usdt to a 0x address leave on polygon, which is not live", async () => {
    const res = await initiate("usdt", 10, EVM_DESTINATION);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.withdraw.status).toBe("PENDING");
  });

  it("still initiates a bitcoin withdrawal", async () => {
    const res = await initiate("btc", 0.001, BTC_DESTINATION);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.withdraw.status).toBe("PENDING");
  });
});

describe("a start without CUSTODY_MNEMONIC_FILE", () => {
  it("writes DATA_DIR/custody-mnemonic.txt (0600), logs its path once and no run of its words", { timeout: 60_000 }, async () => {
    const db = await createTestDatabase();
    const dataDir = join(folder, "data");
    const lines: string[] = [];
    const config = loadConfig({ DATABASE_URL: db.url, MASTER_API_KEY: TEST_MASTER_KEY, SECRETS_KEY: TEST_SECRETS_KEY, DATA_DIR: dataDir, CHAIN_POLYGON_RPC_URL: "http://127.0.0.1:9", LOG_LEVEL: "debug" });
    const app = await createApp(config, { logger: createLogger("debug", { write: (line: string) => void lines.push(line) }) });
    try {
      const file = join(dataDir, "custody-mnemonic.txt");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const words = readFileSync(file, "utf8").trim().split(" ");
      expect(words).toHaveLength(24);
      const log = lines.join("");
      expect(log.split(file).length - 1).toBe(1);
      // single words of the list may be ordinary log words ("level", "time"); two in a row of the mnemonic are not
      for (let i = 0; i + 1 < words.length; i++) expect(log).not.toContain(`${words[i]} ${words[i + 1]}`);
      expect(log).not.toContain(Buffer.from(hdSeedFrom(words.join(" "))).toString("hex"));
      expect(log).toContain(HDNodeWallet.fromPhrase(words.join(" "), undefined, "m/44'/60'/7'/0/0").address); // the gas wallet, to fund
    } finally {
      await app.close();
      await db.drop();
    }
  });
});

describe("currencies a live ethereum holds", () => {
  it("refuses a token whose contract CHAIN_ETHEREUM_TOKENS does not name (400 UNSUPPORTED_CURRENCY); the same token on polygon, not live, is held", async () => {
    const refused = await t.api().post(`${BASE}/users/${userId}/wallets`).set("x-api-key", key).send({ name: "Usdc", networks: [{ name: "networks/ethereum", currency: "usdc" }] });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ code: "UNSUPPORTED_CURRENCY", field: "networks.0.currency" });
    const held = await t.api().post(`${BASE}/users/${userId}/wallets`).set("x-api-key", key).send({ name: "Usdc on polygon", networks: [{ name: "networks/polygon", currency: "usdc" }] });
    expect(held.status, JSON.stringify(held.body)).toBe(201);
  });
});
