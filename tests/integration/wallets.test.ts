/**
 * Custodial wallets over HTTP on a real PostgreSQL (reference: "Wallet", "Wallet balance", "Wallet
 * transaction", "Wallets (owner API key or user token)" and its "Transaction query parameters",
 * "Currency", "Trading pair", "Currencies (owner API key)", "Authentication", the Wallet codes,
 * "Limits"; decisions.md §3; issue 3): every operation's success path, every error row, the
 * sandbox deposit helper, deterministic deposit addresses, and the access matrix of every operation.
 */
import { readFileSync } from "node:fs";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NETWORKS, deriveDepositAddress, hdSeedFrom, isValidAddress, type NetworkId } from "../../src/providers/chains.js";
import { TEST_MASTER_KEY, startTestApp, type TestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError } from "../support/fixtures.js";

let t: TestApp;
let walk: Walk;
let operator: string;

beforeAll(async () => {
  t = await startTestApp();
  walk = new Walk(t.express);
  operator = await walk.operatorToken();
});
afterAll(async () => {
  await t.dispose();
});

const api = () => request(t.express);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e";
const EIGHT_DECIMALS = /^\d+\.\d{8}$/;
const ZERO = "0.00000000";

/** Hash formats of the sandbox's deposits, per network (decisions.md §3; src/providers/chains.ts). */
const HASH_FORMAT: Record<NetworkId, RegExp> = {
  "networks/bitcoin": /^[0-9a-f]{64}$/,
  "networks/ethereum": /^0x[0-9a-f]{64}$/,
  "networks/polygon": /^0x[0-9a-f]{64}$/,
  "networks/tron": /^[0-9a-f]{64}$/,
  "networks/solana": /^[1-9A-HJ-NP-Za-km-z]{87,88}$/,
};

/** Network/currency pairs of Create Wallet. */
type Net = { name: string; currency: string };
const BTC: Net = { name: "networks/bitcoin", currency: "btc" };
const ETH: Net = { name: "networks/ethereum", currency: "eth" };
const USDT_ETH: Net = { name: "networks/ethereum", currency: "usdt" };
const USDC_ETH: Net = { name: "networks/ethereum", currency: "usdc" };
const USDT_POLYGON: Net = { name: "networks/polygon", currency: "usdt" };
const POL: Net = { name: "networks/polygon", currency: "pol" };
const USDT_TRON: Net = { name: "networks/tron", currency: "usdt" };
const TRX: Net = { name: "networks/tron", currency: "trx" };
const USDC_SOLANA: Net = { name: "networks/solana", currency: "usdc" };
const SOL: Net = { name: "networks/solana", currency: "sol" };
/** One native currency on each of the five sandbox networks. */
const ALL_NATIVE: Net[] = [BTC, ETH, POL, TRX, SOL];

/** A customer id no other test uses. */
let customerSeq = 0;
const customerId = (prefix: string) => `w-${prefix}-${++customerSeq}`;

/** US mobile numbers no other user of this file has, so users never collide. */
let phoneSeq = 0;
const nextPhone = () => `20255${String(++phoneSeq * 7).padStart(5, "0")}`;

/** A unique wallet name. */
let nameSeq = 0;
const walletName = (prefix = "Wallet") => `${prefix} ${++nameSeq}`;

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** How a request carries its credential. */
type Cred = (r: request.Test) => request.Test;
const apiKey = (key: string): Cred => (r) => r.set("x-api-key", key);
const bearer = (token: string): Cred => (r) => r.set("Authorization", `Bearer ${token}`);
const anonymous: Cred = (r) => r;

/** A fresh tenant with its owner key. */
const tenant = (prefix: string) => walk.tenant(customerId(prefix));

/** A PENDING user of `key`'s customer; returns its id. */
async function pendingUser(key: string): Promise<string> {
  const user = await walk.user(key, { phone_number: nextPhone() });
  return user.user_id as string;
}

/** An active (VERIFIED) user of `key`'s customer with a user token. */
async function activeUser(key: string): Promise<{ userId: string; token: string }> {
  const userId = await pendingUser(key);
  const activated = await api().post(`${BASE}/users/${userId}/activate`).set("x-api-key", key);
  expect(activated.status, JSON.stringify(activated.body)).toBe(200);
  const token = await api().post(`${BASE}/users/${userId}/token`).set("x-api-key", key);
  expect(token.status, JSON.stringify(token.body)).toBe(201);
  return { userId, token: token.body.data.token as string };
}

async function deactivate(key: string, userId: string): Promise<void> {
  const res = await api().post(`${BASE}/users/${userId}/deactivate`).set("x-api-key", key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** A tenant with one active user and its token. */
async function scene(prefix: string) {
  const t0 = await tenant(prefix);
  const user = await activeUser(t0.key);
  return { ...t0, ...user };
}

const createWallet = (cred: Cred, userId: string, body: Record<string, unknown>) => cred(api().post(`${BASE}/users/${userId}/wallets`)).send(body);
const listWallets = (cred: Cred, userId: string, query: Record<string, string | number> = {}) =>
  cred(api().get(`${BASE}/users/${userId}/wallets`)).query(query);
const getBalance = (cred: Cred, walletId: string) => cred(api().get(`${BASE}/wallets/${walletId}/balance`));
const listTransactions = (cred: Cred, walletId: string, query: Record<string, string | number> = {}) =>
  cred(api().get(`${BASE}/wallets/${walletId}/transactions`)).query(query);
const sandboxDeposit = (cred: Cred, body: Record<string, unknown>) => cred(api().post(`${BASE}/sandbox/deposits`)).send(body);
const listCurrencies = (cred: Cred) => cred(api().get(`${BASE}/currencies`));
const listPairs = (cred: Cred) => cred(api().get(`${BASE}/currencies/pairs`));

/** Wallet as the API shows it. */
type WalletRecord = {
  wallet_id: string;
  vault_wallet_id: string;
  user_id: string;
  name: string;
  description: string | null;
  wallet_type: string;
  networks: Net[];
  is_active: boolean;
  addresses: { address_id: string; currency: string; network: string; address: string }[];
  created_at: string;
  updated_at: string;
};

/** Wallet transaction as the API shows it. */
type TransactionRecord = {
  id: number;
  balance: number;
  transaction: {
    order_id: string;
    trade_id: string;
    client_id: string;
    idempotency_id: string | null;
    symbol: string;
    created_at: string;
    hash: string;
    action: string;
    currency: string;
    memo: string;
    amount: number;
    net_proceeds: number;
    price: number;
    fees: number;
    status: string;
    description: string;
  };
};

type BalanceItem = { currency: string; balance: string; available: string; held: string };

/** Creates a wallet (asserting 201) and returns it. */
async function newWallet(cred: Cred, userId: string, networks: Net[] = [BTC], extra: Record<string, unknown> = {}): Promise<WalletRecord> {
  const res = await createWallet(cred, userId, { name: walletName(), networks, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as WalletRecord;
}

/** Credits a wallet through the sandbox helper (asserting 201) and returns the transaction. */
async function deposited(key: string, walletId: string, net: Net, amount: number): Promise<TransactionRecord> {
  const res = await sandboxDeposit(apiKey(key), { wallet_id: walletId, network: net.name, currency: net.currency, amount });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as TransactionRecord;
}

/** The balance items of a wallet, by currency (asserting 200). */
async function balancesOf(cred: Cred, walletId: string): Promise<Record<string, BalanceItem>> {
  const res = await getBalance(cred, walletId);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return Object.fromEntries((res.body.data.balance as BalanceItem[]).map((b) => [b.currency, b]));
}

/** An 8-decimal string as an integer number of 1e-8 units (exact). */
const units = (amount: string): bigint => {
  expect(amount).toMatch(EIGHT_DECIMALS);
  return BigInt(amount.replace(".", ""));
};

const txIds = (res: request.Response): number[] => (res.body.data as TransactionRecord[]).map((x) => x.id);
const walletNames = (res: request.Response): string[] => (res.body.data as WalletRecord[]).map((w) => w.name);

/** Query parameters of a relative navigation link, as a plain object. */
const linkQuery = (link: string): Record<string, string> => Object.fromEntries(new URL(link, "http://x").searchParams);
const linkPath = (link: string): string => new URL(link, "http://x").pathname;

describe("POST /users/{user_id}/wallets (createWallet)", () => {
  it("creates a virtual wallet with one valid deposit address per networks[] entry, shared within a network", async () => {
    const { key, userId } = await scene("create");
    const networks = [USDT_ETH, BTC, ETH, USDT_POLYGON, USDT_TRON, USDC_SOLANA, USDC_ETH];
    const before = Date.now();
    const res = await createWallet(apiKey(key), userId, { name: "  Main wallet  ", networks });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.meta).toMatchObject({ version: "v1", trace_id: expect.any(String) });
    const wallet = res.body.data as WalletRecord;
    expect(wallet.wallet_id).toMatch(UUID);
    expect(typeof wallet.vault_wallet_id).toBe("string");
    expect(wallet.vault_wallet_id.length).toBeGreaterThan(0);
    expect(wallet).toMatchObject({
      user_id: userId,
      name: "Main wallet",
      description: null,
      wallet_type: "virtual",
      is_active: true,
      networks,
    });
    expect(Date.parse(wallet.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(wallet.created_at)).toBeLessThanOrEqual(Date.now() + 1000);

    // one address per networks[] entry, in the same order, each valid for its network
    expect(wallet.addresses).toHaveLength(networks.length);
    wallet.addresses.forEach((a, i) => {
      expect(a).toMatchObject({ network: networks[i]?.name, currency: networks[i]?.currency });
      expect(a.address_id).toMatch(UUID);
      expect(isValidAddress(a.network as NetworkId, a.address), `${a.network} ${a.address}`).toBe(true);
    });
    expect(new Set(wallet.addresses.map((a) => a.address_id)).size).toBe(networks.length);

    // entries of one network share its address; different networks have different addresses
    const byNetwork = new Map<string, Set<string>>();
    for (const a of wallet.addresses) byNetwork.set(a.network, (byNetwork.get(a.network) ?? new Set()).add(a.address));
    for (const [network, addresses] of byNetwork) expect(addresses.size, network).toBe(1);
    const distinct = [...byNetwork.values()].map((s) => [...s][0]);
    expect(new Set(distinct).size).toBe(byNetwork.size);

    // real-format addresses: testnet bech32 for bitcoin, 0x… for EVM, T… for tron
    const addressOf = (network: string) => wallet.addresses.find((a) => a.network === network)?.address ?? "";
    expect(addressOf("networks/bitcoin")).toMatch(/^tb1q[02-9ac-hj-np-z]{38}$/);
    expect(addressOf("networks/ethereum")).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(addressOf("networks/polygon")).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(addressOf("networks/tron")).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    expect(addressOf("networks/solana")).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);

    // the list shows the same wallet
    const list = await listWallets(apiKey(key), userId);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ ...wallet, updated_at: expect.any(String) });
  });

  it("keeps wallet_type real and a description", async () => {
    const { key, userId } = await scene("create-real");
    const wallet = await newWallet(apiKey(key), userId, [BTC], { wallet_type: "real", description: "Cold storage" });
    expect(wallet).toMatchObject({ wallet_type: "real", description: "Cold storage" });
    const virtual = await newWallet(apiKey(key), userId, [ETH], { wallet_type: "virtual" });
    expect(virtual.wallet_type).toBe("virtual");
  });

  it("gives every wallet its own addresses", async () => {
    const { key, userId } = await scene("create-distinct");
    const a = await newWallet(apiKey(key), userId, ALL_NATIVE);
    const b = await newWallet(apiKey(key), userId, ALL_NATIVE);
    for (const [i, address] of a.addresses.entries()) {
      expect(address.address, address.network).not.toBe(b.addresses[i]?.address);
      expect(isValidAddress(b.addresses[i]?.network as NetworkId, b.addresses[i]?.address ?? "")).toBe(true);
    }
  });

  it("answers 404 USER_NOT_FOUND for an unknown user", async () => {
    const { key } = await tenant("create-unknown");
    expectPlatformError(await createWallet(apiKey(key), UNKNOWN_ID, { name: "W", networks: [BTC] }), 404, "USER_NOT_FOUND");
    expectPlatformError(await createWallet(apiKey(key), "not-a-uuid", { name: "W", networks: [BTC] }), 404, "USER_NOT_FOUND");
  });

  it("answers 404 RESOURCE_NOT_FOUND for a PENDING and for a SUSPENDED user, and creates nothing", async () => {
    const { key } = await tenant("create-inactive");
    const pending = await pendingUser(key);
    expectPlatformError(await createWallet(apiKey(key), pending, { name: "W", networks: [BTC] }), 404, "RESOURCE_NOT_FOUND");
    const suspended = await activeUser(key);
    await deactivate(key, suspended.userId);
    expectPlatformError(await createWallet(apiKey(key), suspended.userId, { name: "W", networks: [BTC] }), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await listWallets(apiKey(key), pending), 404, "WALLET_NOT_FOUND");
    expectPlatformError(await listWallets(apiKey(key), suspended.userId), 404, "WALLET_NOT_FOUND");
  });

  it("answers 404 RESOURCE_NOT_FOUND for a deleted user", async () => {
    const { key } = await tenant("create-deleted");
    const user = await activeUser(key);
    await deactivate(key, user.userId);
    expect((await api().delete(`${BASE}/users/${user.userId}`).set("x-api-key", key)).status).toBe(204);
    expectPlatformError(await createWallet(apiKey(key), user.userId, { name: "W", networks: [BTC] }), 404, "RESOURCE_NOT_FOUND");
  });

  it.each([
    ["empty", ""],
    ["blanks", "   "],
    ["tabs and newlines", "\t\n "],
  ])("answers 400 WALLET_NAME_REQUIRED for a %s name", async (_label, name) => {
    const { key, userId } = await scene("name-required");
    const res = await createWallet(apiKey(key), userId, { name, networks: [BTC] });
    expectPlatformError(res, 400, "WALLET_NAME_REQUIRED");
    expectPlatformError(await listWallets(apiKey(key), userId), 404, "WALLET_NOT_FOUND");
  });

  it("answers 422 when name or networks is missing", async () => {
    const { key, userId } = await scene("required");
    expectPlatformError(await createWallet(apiKey(key), userId, { networks: [BTC] }), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await createWallet(apiKey(key), userId, { name: "W" }), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await createWallet(apiKey(key), userId, { name: "W", networks: [BTC], wallet_type: "cold" }), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await listWallets(apiKey(key), userId), 404, "WALLET_NOT_FOUND");
  });

  it("accepts a name of exactly 100 characters and answers 400 WALLET_NAME_MAX_LENGTH for 101", async () => {
    const { key, userId } = await scene("name-length");
    const res = await createWallet(apiKey(key), userId, { name: "a".repeat(101), networks: [BTC] });
    expectPlatformError(res, 400, "WALLET_NAME_MAX_LENGTH");
    const ok = await newWallet(apiKey(key), userId, [BTC], { name: "a".repeat(100) });
    expect(ok.name).toBe("a".repeat(100));
    // surrounding blanks are trimmed before the length is counted
    const padded = await newWallet(apiKey(key), userId, [BTC], { name: `  ${"b".repeat(100)}  ` });
    expect(padded.name).toBe("b".repeat(100));
  });

  it("counts characters, not bytes or UTF-16 units: 100 emoji are fine, 101 are too long", async () => {
    const { key, userId } = await scene("name-emoji");
    expectPlatformError(await createWallet(apiKey(key), userId, { name: "😀".repeat(101), networks: [BTC] }), 400, "WALLET_NAME_MAX_LENGTH");
    const emoji = await newWallet(apiKey(key), userId, [BTC], { name: "😀".repeat(100) });
    expect(emoji.name).toBe("😀".repeat(100));
    const accents = await newWallet(apiKey(key), userId, [BTC], { name: "é".repeat(100) });
    expect(accents.name).toBe("é".repeat(100));
  });

  it("answers 422 on name for zero-width and bidirectional-control characters (a name that would read reversed or look like another)", async () => {
    const { key, userId } = await scene("name-bidi");
    for (const name of ["Savings\u202egnivas", "Sav\u200bings", "\u2066Main\u2069", "Main\ufeff"]) {
      const res = await createWallet(apiKey(key), userId, { name, networks: [BTC] });
      expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
      expect(res.body.errors).toEqual([{ code: "UNPROCESSABLE_ENTITY", field: "name", message: expect.stringMatching(/zero-width or bidirectional-control/) }]);
    }
    expectPlatformError(await listWallets(apiKey(key), userId), 404, "WALLET_NOT_FOUND");
  });

  it("answers 409 RESOURCE_CONFLICT for a name the user already has (trimmed); another user may reuse it", async () => {
    const { key, userId } = await scene("name-taken");
    const first = await newWallet(apiKey(key), userId, [BTC], { name: "Savings" });
    expectPlatformError(await createWallet(apiKey(key), userId, { name: "Savings", networks: [ETH] }), 409, "RESOURCE_CONFLICT");
    expectPlatformError(await createWallet(apiKey(key), userId, { name: " Savings ", networks: [ETH] }), 409, "RESOURCE_CONFLICT");
    const list = await listWallets(apiKey(key), userId);
    expect(list.body.data).toEqual([expect.objectContaining({ wallet_id: first.wallet_id })]);

    const other = await activeUser(key);
    const reused = await newWallet(apiKey(key), other.userId, [BTC], { name: "Savings" });
    expect(reused.name).toBe("Savings");
  });

  it("compares names after NFKC normalisation and case folding: \"main\", \"MAIN\" and fullwidth \"Ｍａｉｎ\" answer 409 RESOURCE_CONFLICT next to \"Main\" (docs/security.md \"Names people compare\")", async () => {
    const { key, userId } = await scene("name-lookalike");
    const first = await newWallet(apiKey(key), userId, [BTC], { name: "Main" });
    for (const name of ["main", "MAIN", "\uff2d\uff41\uff49\uff4e", " mAiN "]) {
      const res = await createWallet(apiKey(key), userId, { name, networks: [ETH] });
      expectPlatformError(res, 409, "RESOURCE_CONFLICT");
      expect(res.body.errors[0].field, name).toBe("name");
    }
    // full case folding: ß and ss, final and medial sigma, are one name
    await newWallet(apiKey(key), userId, [BTC], { name: "Straße" });
    expectPlatformError(await createWallet(apiKey(key), userId, { name: "STRASSE", networks: [BTC] }), 409, "RESOURCE_CONFLICT");
    await newWallet(apiKey(key), userId, [BTC], { name: "Σίσυφος" });
    for (const name of ["ΣΊΣΥΦΟΣ", "σίσυφοσ"]) expectPlatformError(await createWallet(apiKey(key), userId, { name, networks: [BTC] }), 409, "RESOURCE_CONFLICT");
    const list = await listWallets(apiKey(key), userId);
    expect(walletNames(list).sort()).toEqual(["Main", "Straße", "Σίσυφος"].sort());
    expect(list.body.data).toContainEqual(expect.objectContaining({ wallet_id: first.wallet_id, name: "Main" }));
    // another user may hold the same name
    const other = await activeUser(key);
    expect((await newWallet(apiKey(key), other.userId, [BTC], { name: "ＭＡＩＮ" })).name).toBe("ＭＡＩＮ");
  });

  it("answers 422 on name for a word mixing Latin with Cyrillic or Greek letters (\"Mаin\" with a Cyrillic а), and accepts single-script names", async () => {
    const { key, userId } = await scene("name-mixed");
    for (const name of ["M\u0430in", "Sav\u03b9ngs 2", "My \u0441ash"]) {
      const res = await createWallet(apiKey(key), userId, { name, networks: [BTC] });
      expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
      expect(res.body.errors).toEqual([{ code: "UNPROCESSABLE_ENTITY", field: "name", message: expect.stringMatching(/mix Latin, Cyrillic or Greek letters/) }]);
    }
    expectPlatformError(await listWallets(apiKey(key), userId), 404, "WALLET_NOT_FOUND");
    for (const name of ["Основной", "Κύριο 1", "Main кошелёк", "BTC-2024 (cold)"]) expect((await newWallet(apiKey(key), userId, [BTC], { name })).name).toBe(name);
  });

  it("10 parallel creates with look-alike names (\"Main\", \"main\", \"ＭＡＩＮ\"…): exactly one 201, nine 409 RESOURCE_CONFLICT", async () => {
    const { key, userId } = await scene("race-lookalike");
    const names = ["Main", "main", "MAIN", "\uff2d\uff41\uff49\uff4e", "mAIN", "Main ", "ｍａｉｎ", "MaiN", "maIn", "\uff2dain"];
    const responses = await Promise.all(names.map((name) => createWallet(apiKey(key), userId, { name, networks: [BTC] })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201), JSON.stringify(responses.map((r) => r.body))).toHaveLength(1);
    for (const r of responses.filter((x) => x.status !== 201)) expectPlatformError(r, 409, "RESOURCE_CONFLICT");
    expect((await listWallets(apiKey(key), userId)).body.meta.pagination.records.total).toBe(1);
  });

  it("answers 422 for an empty networks list", async () => {
    const { key, userId } = await scene("networks-empty");
    expectPlatformError(await createWallet(apiKey(key), userId, { name: "W", networks: [] }), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await listWallets(apiKey(key), userId), 404, "WALLET_NOT_FOUND");
  });

  it.each([
    ["an unknown network", [{ name: "networks/dogecoin", currency: "btc" }], 400, "BAD_REQUEST"],
    ["a network without the networks/ prefix", [{ name: "bitcoin", currency: "btc" }], 400, "BAD_REQUEST"],
    ["an unknown network after a valid entry", [BTC, { name: "networks/ripple", currency: "xrp" }], 400, "BAD_REQUEST"],
    ["an unknown currency", [{ name: "networks/bitcoin", currency: "doge" }], 400, "INVALID_CURRENCY"],
    ["btc on ethereum", [{ name: "networks/ethereum", currency: "btc" }], 400, "UNSUPPORTED_CURRENCY"],
    ["trx on polygon", [{ name: "networks/polygon", currency: "trx" }], 400, "UNSUPPORTED_CURRENCY"],
    ["fiat usd", [{ name: "networks/ethereum", currency: "usd" }], 400, "UNSUPPORTED_CURRENCY"],
    ["fiat eur", [{ name: "networks/bitcoin", currency: "eur" }], 400, "UNSUPPORTED_CURRENCY"],
    ["the same pair twice", [USDT_ETH, BTC, USDT_ETH], 400, "BAD_REQUEST"],
  ])("answers %s with %i %s and creates nothing", async (_label, networks, status, code) => {
    const { key, userId } = await scene("networks-bad");
    expectPlatformError(await createWallet(apiKey(key), userId, { name: "W", networks }), status, code);
    expectPlatformError(await listWallets(apiKey(key), userId), 404, "WALLET_NOT_FOUND");
  });

  it("answers 400 CLIENT_NO_SUPPLIER_ID for a customer without a custody vault (novault…), and creates nothing", async () => {
    const { key } = await walk.tenant(`novault-${++customerSeq}`);
    const { userId } = await activeUser(key);
    const res = await createWallet(apiKey(key), userId, { name: "W", networks: [BTC] });
    expectPlatformError(res, 400, "CLIENT_NO_SUPPLIER_ID");
    expectPlatformError(await listWallets(apiKey(key), userId), 404, "WALLET_NOT_FOUND");
  });

  it("10 parallel creates with one name: exactly one 201, nine 409 RESOURCE_CONFLICT", async () => {
    const { key, userId } = await scene("race");
    const responses = await Promise.all(Array.from({ length: 10 }, () => createWallet(apiKey(key), userId, { name: "Race", networks: ALL_NATIVE })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201), JSON.stringify(responses.map((r) => r.body))).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(9);
    for (const r of responses.filter((x) => x.status === 409)) expectPlatformError(r, 409, "RESOURCE_CONFLICT");
    const list = await listWallets(apiKey(key), userId);
    expect(list.body.meta.pagination.records.total).toBe(1);
    // the losers left no address behind: the next wallet still works and gets fresh addresses
    const next = await newWallet(apiKey(key), userId, ALL_NATIVE);
    const winner = list.body.data[0] as WalletRecord;
    for (const [i, a] of next.addresses.entries()) expect(a.address).not.toBe(winner.addresses[i]?.address);
  });

  it("10 parallel creates with distinct names: ten 201 with ten distinct addresses per network", async () => {
    const { key, userId } = await scene("race-distinct");
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => createWallet(apiKey(key), userId, { name: `Parallel ${i}`, networks: ALL_NATIVE })),
    );
    for (const r of responses) expect(r.status, JSON.stringify(r.body)).toBe(201);
    for (const net of ALL_NATIVE) {
      const addresses = responses.map((r) => (r.body.data as WalletRecord).addresses.find((a) => a.network === net.name)?.address);
      expect(new Set(addresses).size, net.name).toBe(10);
    }
  });
});

describe("deterministic deposit addresses (SANDBOX_SEED)", () => {
  /** On a fresh app: a tenant, a user, and two wallets over every network; returns their addresses. */
  async function addressesOnFreshApp(env: Record<string, string> = {}): Promise<{ seed: string; addresses: string[][] }> {
    const app = await startTestApp(env);
    try {
      const w = new Walk(app.express);
      const { key } = await w.tenant("det-co");
      const user = await w.user(key, { phone_number: "2025550143" });
      const userId = user.user_id as string;
      expect((await request(app.express).post(`${BASE}/users/${userId}/activate`).set("x-api-key", key)).status).toBe(200);
      const addresses: string[][] = [];
      for (const name of ["First", "Second"]) {
        const res = await request(app.express).post(`${BASE}/users/${userId}/wallets`).set("x-api-key", key).send({ name, networks: ALL_NATIVE });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        addresses.push((res.body.data as WalletRecord).addresses.map((a) => a.address));
      }
      return { seed: app.config.sandboxSeed, addresses };
    } finally {
      await app.dispose();
    }
  }

  it("gives the same addresses on two fresh apps with the same seed, and different ones with another seed", { timeout: 120_000 }, async () => {
    const a = await addressesOnFreshApp();
    const b = await addressesOnFreshApp();
    expect(b.addresses).toEqual(a.addresses);
    // derived from SANDBOX_SEED: the first wallet's addresses are the first derivation of each network
    const seed = hdSeedFrom(a.seed);
    expect(a.addresses[0]).toEqual(ALL_NATIVE.map((n) => deriveDepositAddress(n.name as NetworkId, seed, 0).address));

    const c = await addressesOnFreshApp({ SANDBOX_SEED: "another sandbox seed for this test" });
    expect(c.seed).toBe("another sandbox seed for this test");
    for (const [w, wallet] of c.addresses.entries()) {
      for (const [i, address] of wallet.entries()) {
        expect(address).not.toBe(a.addresses[w]?.[i]);
        expect(isValidAddress(ALL_NATIVE[i]?.name as NetworkId, address)).toBe(true);
      }
    }
  });
});

describe("GET /users/{user_id}/wallets (listWallets)", () => {
  it("lists the user's wallets newest first with addresses and meta.pagination", async () => {
    const { key, userId } = await scene("list");
    const created: WalletRecord[] = [];
    for (const name of ["Alpha", "Bravo", "Charlie"]) {
      created.push(await newWallet(apiKey(key), userId, [BTC, USDT_ETH], { name }));
      await pause(5);
    }
    // another user's wallet never shows up
    const other = await activeUser(key);
    await newWallet(apiKey(key), other.userId, [BTC], { name: "Not mine" });

    const res = await listWallets(apiKey(key), userId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(walletNames(res)).toEqual(["Charlie", "Bravo", "Alpha"]);
    for (const w of res.body.data as WalletRecord[]) {
      expect(w.user_id).toBe(userId);
      expect(w.addresses).toHaveLength(2);
      expect(typeof w.updated_at).toBe("string");
      expect(w).toMatchObject(created.find((c) => c.wallet_id === w.wallet_id) ?? {});
    }
    expect(res.body.meta.pagination).toEqual({
      records: { skip: 0, has_next: false, has_previous: false, total: 3, limit: 20 },
      navigation: {
        first: `/users/${userId}/wallets?filter[limit]=20&filter[skip]=0`,
        last: `/users/${userId}/wallets?filter[limit]=20&filter[skip]=0`,
        previous: null,
        next: null,
      },
    });
  });

  it("pages with filter[limit] and filter[skip]", async () => {
    const { key, userId } = await scene("list-page");
    for (const name of ["One", "Two", "Three"]) {
      await newWallet(apiKey(key), userId, [BTC], { name });
      await pause(5);
    }
    const first = await listWallets(apiKey(key), userId, { "filter[limit]": 2 });
    expect(first.status).toBe(200);
    expect(walletNames(first)).toEqual(["Three", "Two"]);
    expect(first.body.meta.pagination.records).toEqual({ skip: 0, has_next: true, has_previous: false, total: 3, limit: 2 });
    const nav = first.body.meta.pagination.navigation;
    expect(nav.previous).toBeNull();
    expect(linkPath(nav.next)).toBe(`/users/${userId}/wallets`);
    expect(linkQuery(nav.next)).toEqual({ "filter[limit]": "2", "filter[skip]": "2" });
    expect(linkQuery(nav.last)).toEqual({ "filter[limit]": "2", "filter[skip]": "2" });
    expect(linkQuery(nav.first)).toEqual({ "filter[limit]": "2", "filter[skip]": "0" });

    const second = await apiKey(key)(api().get(`${BASE}${nav.next}`));
    expect(second.status).toBe(200);
    expect(walletNames(second)).toEqual(["One"]);
    expect(second.body.meta.pagination.records).toEqual({ skip: 2, has_next: false, has_previous: true, total: 3, limit: 2 });
    expect(second.body.meta.pagination.navigation.next).toBeNull();
    expect(linkQuery(second.body.meta.pagination.navigation.previous)).toEqual({ "filter[limit]": "2", "filter[skip]": "0" });

    const beyond = await listWallets(apiKey(key), userId, { "filter[skip]": 10 });
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta.pagination.records.total).toBe(3);
  });

  it("answers 404 WALLET_NOT_FOUND when the user has no wallets, 404 USER_NOT_FOUND for an unknown user", async () => {
    const { key, userId } = await scene("list-none");
    expectPlatformError(await listWallets(apiKey(key), userId), 404, "WALLET_NOT_FOUND");
    expectPlatformError(await listWallets(apiKey(key), UNKNOWN_ID), 404, "USER_NOT_FOUND");
  });

  it.each([
    [{ "filter[limit]": 101 }],
    [{ "filter[limit]": 0 }],
    [{ "filter[skip]": -1 }],
    [{ "filter[limit]": "abc" }],
  ])("answers 422 for %j", async (query) => {
    const { key, userId } = await scene("list-422");
    await newWallet(apiKey(key), userId);
    expectPlatformError(await listWallets(apiKey(key), userId, query), 422, "UNPROCESSABLE_ENTITY");
  });

  it("accepts filter[limit]=100", async () => {
    const { key, userId } = await scene("list-100");
    await newWallet(apiKey(key), userId);
    const res = await listWallets(apiKey(key), userId, { "filter[limit]": 100 });
    expect(res.status).toBe(200);
    expect(res.body.meta.pagination.records.limit).toBe(100);
  });
});

describe("GET /wallets/{wallet_id}/balance (getWalletBalance)", () => {
  it("answers zeros as 8-decimal strings for every currency of the wallet, once per currency", async () => {
    const { key, userId } = await scene("balance-zero");
    const wallet = await newWallet(apiKey(key), userId, [BTC, USDT_ETH, USDT_POLYGON, SOL, USDC_SOLANA]);
    const res = await getBalance(apiKey(key), wallet.wallet_id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.wallet_id).toBe(wallet.wallet_id);
    expect(res.body.data.user_id).toBe(userId);
    const items = res.body.data.balance as BalanceItem[];
    expect(items.map((b) => b.currency).sort()).toEqual(["btc", "sol", "usdc", "usdt"]);
    for (const item of items) expect(item).toEqual({ currency: item.currency, balance: ZERO, available: ZERO, held: ZERO });
  });

  it("sums deposits exactly: 0.1 + 0.2 = 0.30000000, 12345678.12345678, across networks of one currency", async () => {
    const { key, userId } = await scene("balance-sum");
    const wallet = await newWallet(apiKey(key), userId, [BTC, SOL, USDT_ETH, USDT_POLYGON, USDT_TRON, ETH]);
    await deposited(key, wallet.wallet_id, BTC, 0.1);
    const second = await deposited(key, wallet.wallet_id, BTC, 0.2);
    expect(second.balance).toBe(0.3);
    await deposited(key, wallet.wallet_id, SOL, 12345678.12345678);
    await deposited(key, wallet.wallet_id, USDT_ETH, 1.5);
    await deposited(key, wallet.wallet_id, USDT_POLYGON, 2.25);
    await deposited(key, wallet.wallet_id, USDT_TRON, 0.000001);
    await deposited(key, wallet.wallet_id, BTC, 0.00000001);

    const balances = await balancesOf(apiKey(key), wallet.wallet_id);
    expect(balances.btc).toEqual({ currency: "btc", balance: "0.30000001", available: "0.30000001", held: ZERO });
    expect(balances.sol).toEqual({ currency: "sol", balance: "12345678.12345678", available: "12345678.12345678", held: ZERO });
    expect(balances.usdt).toEqual({ currency: "usdt", balance: "3.75000100", available: "3.75000100", held: ZERO });
    expect(balances.eth).toEqual({ currency: "eth", balance: ZERO, available: ZERO, held: ZERO });
    for (const item of Object.values(balances)) expect(units(item.available) + units(item.held)).toBe(units(item.balance));
  });

  it("loses no deposit under concurrency: 20 parallel deposits of 0.1 btc make 2.00000000", async () => {
    const { key, userId } = await scene("balance-race");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, network: BTC.name, currency: "btc", amount: 0.1 })),
    );
    for (const r of responses) expect(r.status, JSON.stringify(r.body)).toBe(201);
    // every transaction saw a distinct balance after it: 0.1, 0.2, … 2.0
    const after = responses.map((r) => Math.round((r.body.data as TransactionRecord).balance * 10)).sort((x, y) => x - y);
    expect(after).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect((await balancesOf(apiKey(key), wallet.wallet_id)).btc).toEqual({ currency: "btc", balance: "2.00000000", available: "2.00000000", held: ZERO });
    expect((await listTransactions(apiKey(key), wallet.wallet_id)).body.meta.pagination.records.total).toBe(20);
  });

  it("answers 404 WALLET_NOT_FOUND for an unknown or malformed wallet id", async () => {
    const { key } = await tenant("balance-404");
    expectPlatformError(await getBalance(apiKey(key), UNKNOWN_ID), 404, "WALLET_NOT_FOUND");
    expectPlatformError(await getBalance(apiKey(key), "not-a-wallet"), 404, "WALLET_NOT_FOUND");
  });
});

describe("POST /sandbox/deposits (createSandboxDeposit)", () => {
  it("credits a confirmed deposit: 201, a done deposit transaction with a hash in the network's format and the balance after", async () => {
    const { key, userId, customerId: cid } = await scene("deposit");
    const wallet = await newWallet(apiKey(key), userId, ALL_NATIVE);
    const hashes: string[] = [];
    for (const net of ALL_NATIVE) {
      const before = Date.now();
      const res = await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, network: net.name, currency: net.currency, amount: 1.5 });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.success).toBe(true);
      const tx = res.body.data as TransactionRecord;
      expect(Number.isInteger(tx.id)).toBe(true);
      expect(tx.balance).toBe(1.5);
      expect(tx.transaction).toMatchObject({
        action: "deposit",
        status: "done",
        currency: net.currency,
        symbol: net.currency.toUpperCase(),
        amount: 1.5,
        net_proceeds: 1.5,
        fees: 0,
        client_id: cid,
        idempotency_id: null,
      });
      expect(tx.transaction.hash, net.name).toMatch(HASH_FORMAT[net.name as NetworkId]);
      expect(Date.parse(tx.transaction.created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(tx.transaction.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
      hashes.push(tx.transaction.hash);
    }
    expect(new Set(hashes).size).toBe(hashes.length);

    // the balance after accumulates
    const again = await deposited(key, wallet.wallet_id, BTC, 0.25);
    expect(again.balance).toBe(1.75);
    expect(again.transaction.hash).toMatch(HASH_FORMAT["networks/bitcoin"]);

    // and the transaction list holds exactly what the helper answered
    const list = await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][currency]": "btc" });
    expect(list.body.data[0]).toEqual(again);
  });

  it("accepts a usdt amount with 6 decimals and a btc amount with 8", async () => {
    const { key, userId } = await scene("deposit-precision-ok");
    const wallet = await newWallet(apiKey(key), userId, [USDT_ETH, BTC]);
    expect((await deposited(key, wallet.wallet_id, USDT_ETH, 1.123456)).transaction.amount).toBe(1.123456);
    expect((await deposited(key, wallet.wallet_id, BTC, 0.12345678)).transaction.amount).toBe(0.12345678);
    const balances = await balancesOf(apiKey(key), wallet.wallet_id);
    expect(balances.usdt?.balance).toBe("1.12345600");
    expect(balances.btc?.balance).toBe("0.12345678");
  });

  it("answers 404 WALLET_NOT_FOUND for another customer's wallet and an unknown wallet, and credits nothing", async () => {
    const mine = await scene("deposit-iso-a");
    const theirs = await scene("deposit-iso-b");
    const wallet = await newWallet(apiKey(theirs.key), theirs.userId, [BTC]);
    const res = await sandboxDeposit(apiKey(mine.key), { wallet_id: wallet.wallet_id, network: BTC.name, currency: "btc", amount: 1 });
    expectPlatformError(res, 404, "WALLET_NOT_FOUND");
    expect(res.body.data).toBeUndefined();
    expectPlatformError(await sandboxDeposit(apiKey(mine.key), { wallet_id: UNKNOWN_ID, network: BTC.name, currency: "btc", amount: 1 }), 404, "WALLET_NOT_FOUND");
    expect((await balancesOf(apiKey(theirs.key), wallet.wallet_id)).btc?.balance).toBe(ZERO);
  });

  it.each([
    ["a currency the wallet lacks", { network: "networks/ethereum", currency: "eth" }],
    ["a currency it holds on another network", { network: "networks/tron", currency: "usdt" }],
    ["a network it lacks", { network: "networks/solana", currency: "sol" }],
    ["a network that does not exist", { network: "networks/dogecoin", currency: "btc" }],
  ])("answers 404 ADDRESS_NOT_FOUND for %s", async (_label, where) => {
    const { key, userId } = await scene("deposit-no-address");
    const wallet = await newWallet(apiKey(key), userId, [BTC, USDT_ETH]);
    expectPlatformError(await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, amount: 1, ...where }), 404, "ADDRESS_NOT_FOUND");
    const balances = await balancesOf(apiKey(key), wallet.wallet_id);
    expect(balances.btc?.balance).toBe(ZERO);
    expect(balances.usdt?.balance).toBe(ZERO);
  });

  it.each([
    ["zero", "btc", 0, "AMOUNT_MUST_BE_POSITIVE"],
    ["negative", "btc", -1, "AMOUNT_MUST_BE_POSITIVE"],
    ["more decimals than usdt's precision (6)", "usdt", 1.1234567, "INVALID_AMOUNT"],
    ["more decimals than btc's precision (8)", "btc", 0.123456789, "INVALID_AMOUNT"],
  ])("answers 400 for a %s amount with the right code and credits nothing", async (_label, currency, amount, code) => {
    const { key, userId } = await scene("deposit-amount");
    const wallet = await newWallet(apiKey(key), userId, [BTC, USDT_ETH]);
    const network = currency === "btc" ? BTC.name : USDT_ETH.name;
    expectPlatformError(await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, network, currency, amount }), 400, code);
    const balances = await balancesOf(apiKey(key), wallet.wallet_id);
    expect(balances.btc?.balance).toBe(ZERO);
    expect(balances.usdt?.balance).toBe(ZERO);
    expect((await listTransactions(apiKey(key), wallet.wallet_id)).body.data).toEqual([]);
  });

  it("reads a deposit's amount from the JSON text: 2.00000000000000001 btc answers INVALID_AMOUNT, not a deposit of 2 (issue 8)", async () => {
    const { key, userId } = await scene("deposit-raw-amount");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    const raw = (amount: string) =>
      apiKey(key)(api().post(`${BASE}/sandbox/deposits`))
        .set("Content-Type", "application/json")
        .send(`{"wallet_id":"${wallet.wallet_id}","network":"${BTC.name}","currency":"btc","amount":${amount}}`);
    expectPlatformError(await raw("2.00000000000000001"), 400, "INVALID_AMOUNT");
    expect((await balancesOf(apiKey(key), wallet.wallet_id)).btc?.balance).toBe(ZERO);
    expect((await raw("2.000000000000000000")).status).toBe(201);
    expect((await balancesOf(apiKey(key), wallet.wallet_id)).btc?.balance).toBe("2.00000000");
  });

  it("answers 400 INVALID_CURRENCY for an unknown currency", async () => {
    const { key, userId } = await scene("deposit-currency");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    expectPlatformError(await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, network: BTC.name, currency: "doge", amount: 1 }), 400, "INVALID_CURRENCY");
  });

  it("answers 422 for a body without amount or wallet_id", async () => {
    const { key, userId } = await scene("deposit-422");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    expectPlatformError(await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, network: BTC.name, currency: "btc" }), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await sandboxDeposit(apiKey(key), { network: BTC.name, currency: "btc", amount: 1 }), 422, "UNPROCESSABLE_ENTITY");
  });

  it("answers 403 FORBIDDEN to a user token, even for its own wallet (owner key only)", async () => {
    const { key, userId, token } = await scene("deposit-token");
    const wallet = await newWallet(bearer(token), userId, [BTC]);
    expectPlatformError(await sandboxDeposit(bearer(token), { wallet_id: wallet.wallet_id, network: BTC.name, currency: "btc", amount: 1 }), 403, "FORBIDDEN");
    expect((await balancesOf(apiKey(key), wallet.wallet_id)).btc?.balance).toBe(ZERO);
  });
});

describe("GET /wallets/{wallet_id}/transactions (listWalletTransactions)", () => {
  /** A wallet with five deposits at distinct milliseconds, and a second wallet of the same user with one. */
  async function history(prefix: string) {
    const s = await scene(prefix);
    const wallet = await newWallet(apiKey(s.key), s.userId, [BTC, USDT_ETH, ETH]);
    const second = await newWallet(apiKey(s.key), s.userId, [BTC]);
    const plan: [Net, number][] = [
      [BTC, 0.5],
      [USDT_ETH, 100],
      [ETH, 1.25],
      [BTC, 2],
      [USDT_ETH, 0.000001],
    ];
    const txs: TransactionRecord[] = [];
    for (const [net, amount] of plan) {
      txs.push(await deposited(s.key, wallet.wallet_id, net, amount));
      await pause(5);
    }
    const foreign = await deposited(s.key, second.wallet_id, BTC, 7);
    return { ...s, wallet, second, txs, foreign };
  }

  const ms = (tx: TransactionRecord | undefined) => Date.parse(tx?.transaction.created_at ?? "");

  it("lists the wallet's own transactions, newest first by default, with meta.pagination", async () => {
    const { key, wallet, second, txs, foreign } = await history("tx-list");
    const res = await listTransactions(apiKey(key), wallet.wallet_id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual([...txs].reverse());
    expect(txIds(res)).not.toContain(foreign.id);
    expect(res.body.meta.pagination.records).toEqual({ skip: 0, has_next: false, has_previous: false, total: 5, limit: 20 });
    // running balance per currency
    expect(txs.map((x) => x.balance)).toEqual([0.5, 100, 1.25, 2.5, 100.000001]);

    const other = await listTransactions(apiKey(key), second.wallet_id);
    expect(other.body.data).toEqual([foreign]);
  });

  it("sorts by date with filter[sort] ASC and DESC", async () => {
    const { key, wallet, txs } = await history("tx-sort");
    const asc = await listTransactions(apiKey(key), wallet.wallet_id, { "filter[sort]": "ASC" });
    expect(asc.status).toBe(200);
    expect(txIds(asc)).toEqual(txs.map((x) => x.id));
    const desc = await listTransactions(apiKey(key), wallet.wallet_id, { "filter[sort]": "DESC" });
    expect(txIds(desc)).toEqual(txs.map((x) => x.id).reverse());
    expectPlatformError(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[sort]": "sideways" }), 422, "UNPROCESSABLE_ENTITY");
  });

  it("filters by type, single and comma-separated", async () => {
    const { key, wallet, txs } = await history("tx-type");
    const all = txs.map((x) => x.id).reverse();
    expect(txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][type]": "deposit" }))).toEqual(all);
    expect(txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][type]": "withdrawal" }))).toEqual([]);
    expect(txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][type]": "deposit,withdrawal" }))).toEqual(all);
    expect(txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][type]": "withdrawal,deposit" }))).toEqual(all);
    const none = await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][type]": "withdrawal,trade" });
    expect(none.body.data).toEqual([]);
    expect(none.body.meta.pagination.records.total).toBe(0);
  });

  it("filters by currency, case-insensitively", async () => {
    const { key, wallet, txs } = await history("tx-currency");
    const [btc1, usdt1, eth1, btc2, usdt2] = txs;
    for (const currency of ["btc", "BTC", "Btc"]) {
      expect(txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][currency]": currency })), currency).toEqual([btc2?.id, btc1?.id]);
    }
    expect(txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][currency]": "USDT" }))).toEqual([usdt2?.id, usdt1?.id]);
    expect(txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][currency]": "eth" }))).toEqual([eth1?.id]);
    expect(txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][currency]": "sol" }))).toEqual([]);
  });

  it("filters by status", async () => {
    const { key, wallet, txs } = await history("tx-status");
    expect(txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][status]": "done" }))).toEqual(txs.map((x) => x.id).reverse());
    expect(txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][status]": "pending" }))).toEqual([]);
  });

  it("filters by from/to in Unix ms, both inclusive", async () => {
    const { key, wallet, txs } = await history("tx-dates");
    const [t1, t2, t3, t4, t5] = txs;
    const ids = async (query: Record<string, number>) => txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[sort]": "ASC", ...query }));
    expect(ms(t1)).toBeLessThan(ms(t2));
    expect(ms(t4)).toBeLessThan(ms(t5));
    expect(await ids({ "filter[where][from]": ms(t2), "filter[where][to]": ms(t4) })).toEqual([t2?.id, t3?.id, t4?.id]);
    expect(await ids({ "filter[where][from]": ms(t3), "filter[where][to]": ms(t3) })).toEqual([t3?.id]);
    expect(await ids({ "filter[where][from]": ms(t4) + 1 })).toEqual([t5?.id]);
    expect(await ids({ "filter[where][to]": ms(t1) })).toEqual([t1?.id]);
    expect(await ids({ "filter[where][to]": ms(t1) - 1 })).toEqual([]);
    expect(await ids({ "filter[where][from]": ms(t5) + 1 })).toEqual([]);
    expect(await ids({ "filter[where][from]": 0 })).toEqual(txs.map((x) => x.id));
    expectPlatformError(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][from]": "yesterday" }), 422, "UNPROCESSABLE_ENTITY");
    // the last instant of year 9999 is accepted; beyond it answers 422, not 500 (issue 8)
    const last = await listTransactions(apiKey(key), wallet.wallet_id, { "filter[sort]": "ASC", "filter[where][to]": 253_402_300_799_999 });
    expect(last.status, JSON.stringify(last.body)).toBe(200);
    expect(txIds(last)).toEqual(txs.map((x) => x.id));
    for (const beyond of ["253402300800000", "8640000000000000", "99999999999999999999", "1e400"]) {
      for (const name of ["filter[where][from]", "filter[where][to]"]) {
        const res = await listTransactions(apiKey(key), wallet.wallet_id, { [name]: beyond });
        expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
        expect(res.body.errors[0].field).toBe(name);
      }
    }
  });

  it("filters by amount gte/lte, both inclusive, combined with the other filters", async () => {
    const { key, wallet, txs } = await history("tx-amount");
    const [btc05, usdt100, eth125, btc2, usdtTiny] = txs;
    const ids = async (query: Record<string, string | number>) => txIds(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[sort]": "ASC", ...query }));
    expect(await ids({ "filter[where][amount][gte]": 1 })).toEqual([usdt100?.id, eth125?.id, btc2?.id]);
    expect(await ids({ "filter[where][amount][lte]": 0.5 })).toEqual([btc05?.id, usdtTiny?.id]);
    expect(await ids({ "filter[where][amount][gte]": 0.5, "filter[where][amount][lte]": 2 })).toEqual([btc05?.id, eth125?.id, btc2?.id]);
    expect(await ids({ "filter[where][amount][gte]": 1.25, "filter[where][amount][lte]": 1.25 })).toEqual([eth125?.id]);
    expect(await ids({ "filter[where][amount][gte]": 0.000001, "filter[where][amount][lte]": 0.000001 })).toEqual([usdtTiny?.id]);
    expect(await ids({ "filter[where][amount][gte]": 1000 })).toEqual([]);
    expect(await ids({ "filter[where][currency]": "btc", "filter[where][amount][gte]": 1 })).toEqual([btc2?.id]);
    expect(
      await ids({ "filter[where][type]": "deposit", "filter[where][status]": "done", "filter[where][currency]": "usdt", "filter[where][amount][lte]": 100, "filter[where][from]": ms(usdt100) }),
    ).toEqual([usdt100?.id, usdtTiny?.id]);
  });

  it("pages with filter[limit]/filter[skip]; navigation links keep the other filters", async () => {
    const { key, wallet, txs } = await history("tx-page");
    const query = { "filter[where][type]": "deposit", "filter[sort]": "ASC", "filter[where][status]": "done", "filter[limit]": 2 };
    const first = await listTransactions(apiKey(key), wallet.wallet_id, query);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(txIds(first)).toEqual([txs[0]?.id, txs[1]?.id]);
    expect(first.body.meta.pagination.records).toEqual({ skip: 0, has_next: true, has_previous: false, total: 5, limit: 2 });
    const nav = first.body.meta.pagination.navigation;
    const kept = { "filter[where][type]": "deposit", "filter[sort]": "ASC", "filter[where][status]": "done" };
    expect(linkPath(nav.first)).toBe(`/wallets/${wallet.wallet_id}/transactions`);
    expect(linkQuery(nav.first)).toEqual({ ...kept, "filter[limit]": "2", "filter[skip]": "0" });
    expect(linkQuery(nav.next)).toEqual({ ...kept, "filter[limit]": "2", "filter[skip]": "2" });
    expect(linkQuery(nav.last)).toEqual({ ...kept, "filter[limit]": "2", "filter[skip]": "4" });
    expect(nav.previous).toBeNull();

    // following the links walks the same filtered list
    const second = await apiKey(key)(api().get(`${BASE}${nav.next}`));
    expect(second.status).toBe(200);
    expect(txIds(second)).toEqual([txs[2]?.id, txs[3]?.id]);
    expect(second.body.meta.pagination.records).toEqual({ skip: 2, has_next: true, has_previous: true, total: 5, limit: 2 });
    expect(linkQuery(second.body.meta.pagination.navigation.previous)).toEqual({ ...kept, "filter[limit]": "2", "filter[skip]": "0" });
    const last = await apiKey(key)(api().get(`${BASE}${nav.last}`));
    expect(txIds(last)).toEqual([txs[4]?.id]);
    expect(last.body.meta.pagination.records).toEqual({ skip: 4, has_next: false, has_previous: true, total: 5, limit: 2 });
    expect(last.body.meta.pagination.navigation.next).toBeNull();

    // a filtered total
    const btc = await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][currency]": "btc", "filter[limit]": 1 });
    expect(btc.body.meta.pagination.records).toEqual({ skip: 0, has_next: true, has_previous: false, total: 2, limit: 1 });
    expect(linkQuery(btc.body.meta.pagination.navigation.next)).toEqual({ "filter[where][currency]": "btc", "filter[limit]": "1", "filter[skip]": "1" });
  });

  it("accepts filter[limit]=100 and answers 400 BAD_REQUEST (not 422) for filter[limit]=101", async () => {
    const { key, userId } = await scene("tx-limit");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    const ok = await listTransactions(apiKey(key), wallet.wallet_id, { "filter[limit]": 100 });
    expect(ok.status).toBe(200);
    expect(ok.body.meta.pagination.records.limit).toBe(100);
    const over = await listTransactions(apiKey(key), wallet.wallet_id, { "filter[limit]": 101 });
    expectPlatformError(over, 400, "BAD_REQUEST");
    // a literal URL with the bracketed name works the same
    expectPlatformError(await apiKey(key)(api().get(`${BASE}/wallets/${wallet.wallet_id}/transactions?filter[limit]=101`)), 400, "BAD_REQUEST");
    expectPlatformError(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[limit]": 0 }), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await listTransactions(apiKey(key), wallet.wallet_id, { "filter[skip]": -1 }), 422, "UNPROCESSABLE_ENTITY");
  });

  it("answers an empty list for a wallet without transactions, and 404 WALLET_NOT_FOUND for an unknown wallet", async () => {
    const { key, userId } = await scene("tx-empty");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    const res = await listTransactions(apiKey(key), wallet.wallet_id);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.pagination.records).toEqual({ skip: 0, has_next: false, has_previous: false, total: 0, limit: 20 });
    expectPlatformError(await listTransactions(apiKey(key), UNKNOWN_ID), 404, "WALLET_NOT_FOUND");
    expectPlatformError(await listTransactions(apiKey(key), "not-a-wallet"), 404, "WALLET_NOT_FOUND");
  });
});

describe("GET /currencies and /currencies/pairs (listCurrencies, listTradingPairs)", () => {
  it("answers the catalogue to the owner key", async () => {
    const { key } = await tenant("currencies");
    const res = await listCurrencies(apiKey(key));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.meta.pagination).toBeUndefined();
    const currencies = res.body.data as Record<string, unknown>[];
    const codes = currencies.map((c) => c.code);
    expect(codes).toEqual(expect.arrayContaining(["btc", "eth", "usdt", "usdc", "trx", "sol", "pol", "usd", "eur"]));
    expect(new Set(codes).size).toBe(codes.length);
    for (const c of currencies) {
      expect(c.currency, String(c.code)).toBe(c.code);
      expect(c.is_fiat, String(c.code)).toBe(c.code === "usd" || c.code === "eur");
      expect(Number.isInteger(c.precision)).toBe(true);
      expect(c).toMatchObject({
        id: expect.any(Number),
        symbol: expect.any(String),
        name: expect.any(String),
        ascii_sign: expect.any(String),
        min_withdrawal: expect.any(Number),
        can_deposit: expect.any(Boolean),
        can_withdraw: expect.any(Boolean),
        is_confirmations_needed: expect.any(Boolean),
        is_custody_enabled: expect.any(Boolean),
        is_trading_enabled: expect.any(Boolean),
      });
    }
    expect(currencies.find((c) => c.code === "usdt")).toMatchObject({ precision: 6, is_fiat: false, can_deposit: true });
    expect(currencies.find((c) => c.code === "btc")).toMatchObject({ precision: 8, symbol: "BTC" });
  });

  it("answers the trading pairs to the owner key, formatted BASE/QUOTE with symbol BASEQUOTE", async () => {
    const { key } = await tenant("pairs");
    const codes = new Set(((await listCurrencies(apiKey(key))).body.data as { code: string }[]).map((c) => c.code));
    const res = await listPairs(apiKey(key));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const pairs = res.body.data as { formatted: string; symbol: string; base: string; quote: string }[];
    expect(pairs.length).toBeGreaterThan(0);
    expect(pairs).toContainEqual(expect.objectContaining({ formatted: "BTC/USDT", symbol: "BTCUSDT" }));
    for (const p of pairs) {
      expect(p.formatted).toBe(`${p.base.toUpperCase()}/${p.quote.toUpperCase()}`);
      expect(p.symbol).toBe(`${p.base.toUpperCase()}${p.quote.toUpperCase()}`);
      expect(codes.has(p.base.toLowerCase()), p.base).toBe(true);
      expect(codes.has(p.quote.toLowerCase()), p.quote).toBe(true);
    }
  });

  it("answers 401 without a key and 403 to a user token or a session", async () => {
    const { key, customerId: cid } = await tenant("currencies-auth");
    const { token } = await activeUser(key);
    const session = await api().post(`${BASE}/sessions`).send({ customer_id: cid, customer_secret: key });
    expect(session.status).toBe(201);
    for (const call of [listCurrencies, listPairs]) {
      expectPlatformError(await call(anonymous), 401, "UNAUTHORIZED");
      expectPlatformError(await call(apiKey("sk_not_a_real_key_0123456789")), 401, "UNAUTHORIZED");
      expectPlatformError(await call(bearer(token)), 403, "FORBIDDEN");
      expectPlatformError(await call(bearer(session.body.data.token)), 403, "FORBIDDEN");
      expectPlatformError(await call(bearer(operator)), 403, "FORBIDDEN");
    }
  });
});

describe("access matrix of every wallet operation", () => {
  /** Customer A with users U1 (wallet W1, funded) and U2 (wallet W2); customer B with user V. */
  async function world(prefix: string) {
    const a = await tenant(`${prefix}-a`);
    const u1 = await activeUser(a.key);
    const u2 = await activeUser(a.key);
    const w1 = await newWallet(apiKey(a.key), u1.userId, [BTC, USDT_ETH]);
    const w2 = await newWallet(apiKey(a.key), u2.userId, [BTC]);
    await deposited(a.key, w1.wallet_id, BTC, 1);
    await deposited(a.key, w2.wallet_id, BTC, 2);
    const b = await tenant(`${prefix}-b`);
    const v = await activeUser(b.key);
    const wv = await newWallet(apiKey(b.key), v.userId, [BTC]);
    return { a, u1, u2, w1, w2, b, v, wv };
  }

  /** Every operation of this file, aimed at a user id and a wallet id. */
  const operations = (userId: string, walletId: string): [string, (cred: Cred) => request.Test][] => [
    ["createWallet", (cred) => createWallet(cred, userId, { name: walletName("Matrix"), networks: [BTC] })],
    ["listWallets", (cred) => listWallets(cred, userId)],
    ["getWalletBalance", (cred) => getBalance(cred, walletId)],
    ["listWalletTransactions", (cred) => listTransactions(cred, walletId)],
    ["createSandboxDeposit", (cred) => sandboxDeposit(cred, { wallet_id: walletId, network: BTC.name, currency: "btc", amount: 0.5 })],
    ["listCurrencies", (cred) => listCurrencies(cred)],
    ["listTradingPairs", (cred) => listPairs(cred)],
  ];

  it("answers 401 UNAUTHORIZED without a credential or with an invalid one, on every operation", async () => {
    const { a, u1, w1 } = await world("m401");
    for (const [name, call] of operations(u1.userId, w1.wallet_id)) {
      const none = await call(anonymous);
      expectPlatformError(none, 401, "UNAUTHORIZED");
      expect(none.body.errors[0].message, name).toMatch(/missing/i);
      expectPlatformError(await call(apiKey("sk_not_a_real_key_0123456789")), 401, "UNAUTHORIZED");
      expectPlatformError(await call(bearer("not.a.token")), 401, "UNAUTHORIZED");
    }
    // nothing happened
    expect((await listWallets(apiKey(a.key), u1.userId)).body.meta.pagination.records.total).toBe(1);
    expect((await balancesOf(apiKey(a.key), w1.wallet_id)).btc?.balance).toBe("1.00000000");
  });

  it("answers 403 FORBIDDEN to operator and customer sessions and the master key, on every operation", async () => {
    const { a, u1, w1 } = await world("m403");
    const session = await api().post(`${BASE}/sessions`).send({ customer_id: a.customerId, customer_secret: a.key });
    expect(session.status).toBe(201);
    const credentials: [string, Cred][] = [
      ["operator session", bearer(operator)],
      ["customer session", bearer(session.body.data.token)],
      ["master key (x-master-api-key)", (r) => r.set("x-master-api-key", TEST_MASTER_KEY)],
      ["master key (x-api-key)", apiKey(TEST_MASTER_KEY)],
    ];
    for (const [credential, cred] of credentials) {
      for (const [name, call] of operations(u1.userId, w1.wallet_id)) {
        const res = await call(cred);
        expect(res.status, `${credential} → ${name}: ${JSON.stringify(res.body)}`).toBe(403);
        expectPlatformError(res, 403, "FORBIDDEN");
      }
    }
    expect((await listWallets(apiKey(a.key), u1.userId)).body.meta.pagination.records.total).toBe(1);
    expect((await balancesOf(apiKey(a.key), w1.wallet_id)).btc?.balance).toBe("1.00000000");
  });

  it("lets the owner key act on the wallets of any user of its customer", async () => {
    const { a, u1, u2, w1, w2 } = await world("mowner");
    for (const [userId, walletId] of [[u1.userId, w1.wallet_id], [u2.userId, w2.wallet_id]] as const) {
      const expected: Record<string, number> = {
        createWallet: 201,
        listWallets: 200,
        getWalletBalance: 200,
        listWalletTransactions: 200,
        createSandboxDeposit: 201,
        listCurrencies: 200,
        listTradingPairs: 200,
      };
      for (const [name, call] of operations(userId, walletId)) {
        const res = await call(apiKey(a.key));
        expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(expected[name]);
      }
    }
    expect((await balancesOf(apiKey(a.key), w1.wallet_id)).btc?.balance).toBe("1.50000000");
    expect((await balancesOf(apiKey(a.key), w2.wallet_id)).btc?.balance).toBe("2.50000000");
    expect((await listWallets(apiKey(a.key), u2.userId)).body.meta.pagination.records.total).toBe(2);
  });

  it("never shows a wallet to another customer's owner key: 404 WALLET_NOT_FOUND / USER_NOT_FOUND, no data, nothing changed", async () => {
    const { a, u1, w1, b } = await world("miso");
    const expected: Record<string, [number, string] | number> = {
      createWallet: [404, "USER_NOT_FOUND"],
      listWallets: [404, "USER_NOT_FOUND"],
      getWalletBalance: [404, "WALLET_NOT_FOUND"],
      listWalletTransactions: [404, "WALLET_NOT_FOUND"],
      createSandboxDeposit: [404, "WALLET_NOT_FOUND"],
      listCurrencies: 200,
      listTradingPairs: 200,
    };
    for (const [name, call] of operations(u1.userId, w1.wallet_id)) {
      const res = await call(apiKey(b.key));
      const want = expected[name] ?? 0;
      if (typeof want === "number") {
        expect(res.status, name).toBe(want);
        continue;
      }
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(want[0]);
      expectPlatformError(res, want[0], want[1]);
      expect(res.body.data, name).toBeUndefined();
      expect(JSON.stringify(res.body), name).not.toContain(w1.addresses[0]?.address ?? "-");
    }
    const list = await listWallets(apiKey(a.key), u1.userId);
    expect(list.body.meta.pagination.records.total).toBe(1);
    expect((await balancesOf(apiKey(a.key), w1.wallet_id)).btc?.balance).toBe("1.00000000");
    expect((await listTransactions(apiKey(a.key), w1.wallet_id)).body.meta.pagination.records.total).toBe(1);
  });

  it("lets a user token act on its own wallets only: another user's wallet id 404, another user's path 403", async () => {
    const { a, u1, u2, w1, w2, v, wv } = await world("mtoken");
    const mine = bearer(u1.token);

    // own user and wallet
    const created = await createWallet(mine, u1.userId, { name: "By token", networks: [BTC] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.user_id).toBe(u1.userId);
    const list = await listWallets(mine, u1.userId);
    expect(list.status).toBe(200);
    expect(walletNames(list)).toEqual(["By token", w1.name]);
    const balance = await getBalance(mine, w1.wallet_id);
    expect(balance.status).toBe(200);
    expect(balance.body.data.balance.find((x: BalanceItem) => x.currency === "btc").balance).toBe("1.00000000");
    const txs = await listTransactions(mine, w1.wallet_id);
    expect(txs.status).toBe(200);
    expect(txs.body.data).toHaveLength(1);

    // another user's wallet, same customer or not: 404, never its data
    for (const other of [w2, wv]) {
      for (const res of [await getBalance(mine, other.wallet_id), await listTransactions(mine, other.wallet_id)]) {
        expectPlatformError(res, 404, "WALLET_NOT_FOUND");
        expect(res.body.data).toBeUndefined();
      }
    }
    // another user's path, same customer or not: 403
    for (const otherUser of [u2.userId, v.userId]) {
      expectPlatformError(await createWallet(mine, otherUser, { name: walletName(), networks: [BTC] }), 403, "FORBIDDEN");
      expectPlatformError(await listWallets(mine, otherUser), 403, "FORBIDDEN");
    }
    // owner-only operations
    expectPlatformError(await sandboxDeposit(mine, { wallet_id: w1.wallet_id, network: BTC.name, currency: "btc", amount: 1 }), 403, "FORBIDDEN");
    expectPlatformError(await listCurrencies(mine), 403, "FORBIDDEN");
    expectPlatformError(await listPairs(mine), 403, "FORBIDDEN");

    // nothing of the others changed
    expect((await listWallets(apiKey(a.key), u2.userId)).body.meta.pagination.records.total).toBe(1);
    expect((await balancesOf(apiKey(a.key), w2.wallet_id)).btc?.balance).toBe("2.00000000");
    expect((await balancesOf(apiKey(a.key), w1.wallet_id)).btc?.balance).toBe("1.00000000");
  });

  it("answers 401 to a deactivated user's token on every operation; the owner key still reads its wallets", async () => {
    const { a, u2, w2 } = await world("mdeact");
    await deactivate(a.key, u2.userId);
    for (const [name, call] of operations(u2.userId, w2.wallet_id)) {
      const res = await call(bearer(u2.token));
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(401);
      expectPlatformError(res, 401, "UNAUTHORIZED");
    }
    // data, wallets and history are kept
    expect((await listWallets(apiKey(a.key), u2.userId)).status).toBe(200);
    expect((await balancesOf(apiKey(a.key), w2.wallet_id)).btc?.balance).toBe("2.00000000");
    expect((await listTransactions(apiKey(a.key), w2.wallet_id)).body.data).toHaveLength(1);
  });
});

describe("the contract declares every status the wallet endpoints answer", () => {
  const doc = JSON.parse(readFileSync(new URL("../../generated/openapi/platform.openapi.json", import.meta.url), "utf8")) as {
    paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
  };
  const declared = (operationId: string): string[] => {
    for (const item of Object.values(doc.paths)) for (const op of Object.values(item)) if (op.operationId === operationId) return Object.keys(op.responses);
    throw new Error(`no operation ${operationId}`);
  };
  // the statuses this file observes for each operation
  it.each([
    ["createWallet", ["201", "400", "401", "403", "404", "409", "422"]],
    ["listWallets", ["200", "401", "403", "404", "422"]],
    ["getWalletBalance", ["200", "401", "403", "404"]],
    ["listWalletTransactions", ["200", "400", "401", "403", "404", "422"]],
    ["createSandboxDeposit", ["201", "400", "401", "403", "404", "422"]],
    ["listCurrencies", ["200", "401", "403"]],
    ["listTradingPairs", ["200", "401", "403"]],
  ])("%s declares %j", (operationId, statuses) => {
    expect(declared(operationId)).toEqual(expect.arrayContaining(statuses));
  });

  it("knows the five sandbox networks", () => {
    expect([...NETWORKS].sort()).toEqual(ALL_NATIVE.map((n) => n.name).sort());
  });
});
