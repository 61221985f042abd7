/**
 * The set-up and request helpers of the wallets-*.test.ts files (custodial wallets over HTTP on a
 * real PostgreSQL; docs/decisions/customers-users-and-wallets.md, docs/testing.md): one test app
 * per file, an operator session, tenants with active users, the networks of Create Wallet, the
 * records the API shows, and one function per wallet operation taking how the request carries its
 * credential.
 */
import type request from "supertest";
import { beforeAll, expect } from "vitest";
import type { NetworkId } from "../../src/providers/chains.js";
import type { RailId } from "../../src/providers/virtual-accounts.js";
import { useTestApp, type TestAppHandle } from "./app.js";
import { BASE, Walk } from "./fixtures.js";

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const UNKNOWN_ID = "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e";
export const EIGHT_DECIMALS = /^\d+\.\d{8}$/;
export const ZERO = "0.00000000";

/**
 * Hash formats of the sandbox's deposits, per network (docs/decisions/provider-and-sandbox.md;
 * src/providers/chains.ts), and on the bank rails the transfer's reference (docs/decisions/fiat.md
 * "Rails and virtual accounts"; src/providers/virtual-accounts.ts).
 */
export const HASH_FORMAT: Record<NetworkId | RailId, RegExp> = {
  "networks/bitcoin": /^[0-9a-f]{64}$/,
  "networks/ethereum": /^0x[0-9a-f]{64}$/,
  "networks/polygon": /^0x[0-9a-f]{64}$/,
  "networks/tron": /^[0-9a-f]{64}$/,
  "networks/solana": /^[1-9A-HJ-NP-Za-km-z]{87,88}$/,
  "networks/ach": /^11000000\d{7}$/,
  "networks/sepa": /^E2E[0-9A-F]{32}$/,
};

/** Network/currency pairs of Create Wallet. */
export type Net = { name: string; currency: string };
export const BTC: Net = { name: "networks/bitcoin", currency: "btc" };
export const ETH: Net = { name: "networks/ethereum", currency: "eth" };
export const USDT_ETH: Net = { name: "networks/ethereum", currency: "usdt" };
export const USDC_ETH: Net = { name: "networks/ethereum", currency: "usdc" };
export const USDT_POLYGON: Net = { name: "networks/polygon", currency: "usdt" };
export const POL: Net = { name: "networks/polygon", currency: "pol" };
export const USDT_TRON: Net = { name: "networks/tron", currency: "usdt" };
export const TRX: Net = { name: "networks/tron", currency: "trx" };
export const USDC_SOLANA: Net = { name: "networks/solana", currency: "usdc" };
export const SOL: Net = { name: "networks/solana", currency: "sol" };
/** The fiat currencies on their bank rails. */
export const USD_ACH: Net = { name: "networks/ach", currency: "usd" };
export const EUR_SEPA: Net = { name: "networks/sepa", currency: "eur" };
/** One native currency on each of the five sandbox chain networks. */
export const ALL_NATIVE: Net[] = [BTC, ETH, POL, TRX, SOL];

/** A Create Sandbox Deposit answer as its transaction is listed: without the request's `idempotency_key` and `is_duplicate` (spec/platform/sandbox.tsp `SandboxDeposit`). */
export function asListed(data: TransactionRecord & { idempotency_key?: string; is_duplicate?: boolean }): TransactionRecord {
  const { idempotency_key: _key, is_duplicate: _duplicate, ...listed } = data;
  return listed;
}

/** How a request carries its credential. */
export type Cred = (r: request.Test) => request.Test;
export const apiKey = (key: string): Cred => (r) => r.set("x-api-key", key);
export const bearer = (token: string): Cred => (r) => r.set("Authorization", `Bearer ${token}`);
export const anonymous: Cred = (r) => r;

/** Wallet as the API shows it. */
export type WalletRecord = {
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
export type TransactionRecord = {
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

/** One currency of a wallet balance answer (8-decimal strings). */
export type BalanceItem = { currency: string; balance: string; available: string; held: string };

/** An 8-decimal string as an integer number of 1e-8 units (exact). */
export const units = (amount: string): bigint => {
  expect(amount).toMatch(EIGHT_DECIMALS);
  return BigInt(amount.replace(".", ""));
};

/** The transaction ids of a list answer, in its order. */
export const txIds = (res: request.Response): number[] => (res.body.data as TransactionRecord[]).map((x) => x.id);
/** The wallet names of a list answer, in its order. */
export const walletNames = (res: request.Response): string[] => (res.body.data as WalletRecord[]).map((w) => w.name);

/** Query parameters of a relative navigation link, as a plain object. */
export const linkQuery = (link: string): Record<string, string> => Object.fromEntries(new URL(link, "http://x").searchParams);
/** The path of a relative navigation link. */
export const linkPath = (link: string): string => new URL(link, "http://x").pathname;

type Query = Record<string, string | number>;

/**
 * Starts the file's test app (`useTestApp`) and an operator session, and returns the helpers bound
 * to them. `walk` and `operator` are set once the file's `beforeAll` hooks ran.
 */
export function useWalletsScene() {
  const t: TestAppHandle = useTestApp();
  let walk!: Walk;
  let operator!: string;
  beforeAll(async () => {
    walk = new Walk(t.express);
    operator = await walk.operatorToken();
  });
  const api = t.api;

  /** Customer ids no other test of the file uses. */
  let customerSeq = 0;
  const customerId = (prefix: string) => `w-${prefix}-${++customerSeq}`;
  /** US mobile numbers no other user of the file has, so users never collide. */
  let phoneSeq = 0;
  const nextPhone = () => `20255${String(++phoneSeq * 7).padStart(5, "0")}`;
  /** Unique wallet names. */
  let nameSeq = 0;
  const walletName = (prefix = "Wallet") => `${prefix} ${++nameSeq}`;

  const tenant = (prefix: string) => walk.tenant(customerId(prefix));
  const pendingUser = async (key: string): Promise<string> => (await walk.user(key, { phone_number: nextPhone() })).user_id as string;
  async function activeUser(key: string): Promise<{ userId: string; token: string }> {
    const userId = await pendingUser(key);
    const activated = await api().post(`${BASE}/users/${userId}/activate`).set("x-api-key", key);
    expect(activated.status, JSON.stringify(activated.body)).toBe(200);
    const token = await api().post(`${BASE}/users/${userId}/token`).set("x-api-key", key);
    expect(token.status, JSON.stringify(token.body)).toBe(201);
    return { userId, token: token.body.data.token as string };
  }
  const createWallet = (cred: Cred, userId: string, body: Record<string, unknown>) => cred(api().post(`${BASE}/users/${userId}/wallets`)).send(body);
  const getBalance = (cred: Cred, walletId: string) => cred(api().get(`${BASE}/wallets/${walletId}/balance`));
  const sandboxDeposit = (cred: Cred, body: Record<string, unknown>) => cred(api().post(`${BASE}/sandbox/deposits`)).send(body);

  return {
    t,
    api,
    /** The file's request helpers on the test app (set once the file's `beforeAll` hooks ran). */
    get walk(): Walk {
      return walk;
    },
    /** An operator session token (set once the file's `beforeAll` hooks ran). */
    get operator(): string {
      return operator;
    },
    /** Takes the next customer number of the file (for customer ids of a prescribed prefix). */
    nextCustomerSeq: () => ++customerSeq,
    nextPhone,
    walletName,
    /** A fresh tenant with its owner key. */
    tenant,
    /** A PENDING user of `key`'s customer; returns its id. */
    pendingUser,
    /** An active (VERIFIED) user of `key`'s customer with a user token. */
    activeUser,
    /** Deactivates user `userId`, asserting 200. */
    async deactivate(key: string, userId: string): Promise<void> {
      const res = await api().post(`${BASE}/users/${userId}/deactivate`).set("x-api-key", key);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    },
    /** A tenant with one active user and its token. */
    async scene(prefix: string) {
      const t0 = await tenant(prefix);
      const user = await activeUser(t0.key);
      return { ...t0, ...user };
    },
    createWallet,
    listWallets: (cred: Cred, userId: string, query: Query = {}) => cred(api().get(`${BASE}/users/${userId}/wallets`)).query(query),
    getBalance,
    listTransactions: (cred: Cred, walletId: string, query: Query = {}) => cred(api().get(`${BASE}/wallets/${walletId}/transactions`)).query(query),
    sandboxDeposit,
    listCurrencies: (cred: Cred) => cred(api().get(`${BASE}/currencies`)),
    listPairs: (cred: Cred) => cred(api().get(`${BASE}/currencies/pairs`)),
    /** Creates a wallet (asserting 201) and returns it. */
    async newWallet(cred: Cred, userId: string, networks: Net[] = [BTC], extra: Record<string, unknown> = {}): Promise<WalletRecord> {
      const res = await createWallet(cred, userId, { name: walletName(), networks, ...extra });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data as WalletRecord;
    },
    /** Credits a wallet through the sandbox helper (asserting 201) and returns the transaction. */
    async deposited(key: string, walletId: string, net: Net, amount: number): Promise<TransactionRecord> {
      const res = await sandboxDeposit(apiKey(key), { wallet_id: walletId, network: net.name, currency: net.currency, amount });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return asListed(res.body.data);
    },
    /** The balance items of a wallet, by currency (asserting 200). */
    async balancesOf(cred: Cred, walletId: string): Promise<Record<string, BalanceItem>> {
      const res = await getBalance(cred, walletId);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return Object.fromEntries((res.body.data.balance as BalanceItem[]).map((b) => [b.currency, b]));
    },
  };
}
