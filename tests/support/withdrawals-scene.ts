/**
 * The set-up and request helpers of the withdrawals-*.test.ts files (two-step crypto withdrawals
 * over HTTP on a real PostgreSQL; docs/decisions/withdrawals.md, docs/testing.md): the test apps
 * of the three configurations the files use (`useWithdrawalsApp`), valid and invalid destinations,
 * the networks and credentials of the requests, `Api` (one function per withdrawal operation plus
 * the users, wallets, deposits, balances, sandbox outbox and SQL a test needs), and reading the
 * code and expiry of a code email.
 */
import type request from "supertest";
import { afterAll, expect } from "vitest";
import { apiOf, useTestApp, type TestApp, type TestAppHandle } from "./app.js";
import { BASE, Walk } from "./fixtures.js";

/** The small caps of the "smallCaps" app, by currency (decimal strings): btc 1 / 1.5 / 2; eth monthly below daily. */
export const SMALL_CAPS = {
  btc: { perWithdrawal: "1", daily: "1.5", monthly: "2" },
  eth: { perWithdrawal: "1", daily: "5", monthly: "1.5" },
};

/**
 * The configurations of the withdrawals tests' apps (docs/decisions/withdrawals.md "Initiate",
 * "The code"):
 * - `default`: the default configuration (code TTL 600 s, 5 attempts, default caps);
 * - `smallCaps`: short code lifetime (30 s), 3 attempts and `SMALL_CAPS`;
 * - `limits`: the default code limits, the resend spacing (30 s) included (test apps otherwise run
 *   without it).
 */
export type WithdrawalsAppKind = "default" | "smallCaps" | "limits";

const APP_ENV: Record<WithdrawalsAppKind, Record<string, string>> = {
  default: {},
  smallCaps: { WITHDRAWAL_CODE_TTL_S: "30", WITHDRAWAL_CODE_MAX_ATTEMPTS: "3", WITHDRAWAL_CAPS: JSON.stringify(SMALL_CAPS) },
  limits: { WITHDRAWAL_CODE_RESEND_INTERVAL_S: "30" },
};

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const UNKNOWN_ID = "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e";
/** An ISO 8601 UTC instant (milliseconds optional). */
export const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z/;
export const ZERO = "0.00000000";
/** What the ledger's `verify` answers for a consistent ledger. */
export const CLEAN = { unbalancedEntries: [], cacheMismatches: [], negativeAccounts: [], unbalancedCurrencies: [] };

/** Valid testnet destinations, one per network. */
export const TO = {
  btc: "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl",
  eth: "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  tron: "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH",
  sol: "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk",
} as const;
/** Invalid destinations. */
export const BAD = {
  /** A mainnet address (BIP84 vector) on the testnet sandbox. */
  mainnetBc1: "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
  /** TO.eth with one letter's case flipped: a bad EIP-55 checksum. */
  ethChecksum: "0x9858efFD232B4033E47d90003D41EC34EcaEda94",
  /** The hex (41…) form of a TRON address. */
  tronHex: "41c8599111f29c1e1e061265b4af93ea1f274ad78a",
} as const;

/** Network/currency pairs of Create Wallet. */
export type Net = { name: string; currency: string };
export const BTC: Net = { name: "networks/bitcoin", currency: "btc" };
export const ETH: Net = { name: "networks/ethereum", currency: "eth" };
export const USDT_ETH: Net = { name: "networks/ethereum", currency: "usdt" };
export const TRX: Net = { name: "networks/tron", currency: "trx" };
export const SOL: Net = { name: "networks/solana", currency: "sol" };

/** How a request carries its credential. */
export type Cred = (r: request.Test) => request.Test;
export const apiKey = (key: string): Cred => (r) => r.set("x-api-key", key);
export const bearer = (token: string): Cred => (r) => r.set("Authorization", `Bearer ${token}`);
export const anonymous: Cred = (r) => r;

/** One currency of a wallet balance answer (8-decimal strings). */
export type BalanceItem = { currency: string; balance: string; available: string; held: string };
/** An email of the sandbox outbox (`sent_at`: ISO 8601 UTC). */
export type Mail = { to: string; subject: string; text: string; sent_at: string };
/** A withdrawal as getWithdrawal and listWithdrawals show it (`amount` in the currency's units). */
export type WithdrawalRecord = { id: string; withdrawal_type: string; bank_account_id: string | null; payout: { rail: string; reference: string; state: string } | null; currency: string; amount: number; address: string; status: string; created_at: string };
/** A wallet transaction as listWalletTransactions shows it. */
export type TransactionRecord = { id: number; balance: number; transaction: Record<string, unknown> & { action: string; status: string; hash: string; amount: number } };

let seq = 0;
const next = () => ++seq;

/** A user of a scene: owner key of its customer, id, email, token (when active), first wallet. */
export interface Scene {
  app: TestApp;
  customerId: string;
  key: string;
  userId: string;
  email: string;
  token: string;
  walletId: string;
}

/** HTTP helpers bound to one app. */
export class Api {
  readonly walk: Walk;
  constructor(readonly app: TestApp) {
    this.walk = new Walk(app.express);
  }

  /** A request builder on the app. */
  http() {
    return apiOf(this.app);
  }

  /** The withdrawals path of user `userId`. */
  base(userId: string): string {
    return `${BASE}/users/${userId}/accounts/crypto/withdrawals`;
  }

  /** A fresh tenant (customer `wd-<prefix>-<n>`) with its owner key. */
  tenant(prefix: string) {
    return this.walk.tenant(`wd-${prefix}-${next()}`);
  }

  /** A user of `key`'s customer; activated with a token unless `pending`. */
  async user(key: string, pending = false): Promise<{ userId: string; email: string; token: string }> {
    const record = await this.walk.user(key, { phone_number: `20255${String(next() * 7).padStart(5, "0")}` });
    const userId = record.user_id as string;
    if (pending) return { userId, email: record.email as string, token: "" };
    const activated = await this.http().post(`${BASE}/users/${userId}/activate`).set("x-api-key", key);
    expect(activated.status, JSON.stringify(activated.body)).toBe(200);
    const token = await this.http().post(`${BASE}/users/${userId}/token`).set("x-api-key", key);
    expect(token.status, JSON.stringify(token.body)).toBe(201);
    return { userId, email: record.email as string, token: token.body.data.token as string };
  }

  /** Deactivates user `userId` (it becomes SUSPENDED), asserting 200. */
  async deactivate(key: string, userId: string): Promise<void> {
    const res = await this.http().post(`${BASE}/users/${userId}/deactivate`).set("x-api-key", key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }

  /** Creates a wallet on `networks` (asserting 201); returns its id. */
  async wallet(cred: Cred, userId: string, networks: Net[]): Promise<string> {
    const res = await cred(this.http().post(`${BASE}/users/${userId}/wallets`)).send({ name: `Wallet ${next()}`, networks });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.wallet_id as string;
  }

  /** Credits `amount` of `net` to a wallet through the sandbox helper, asserting 201. */
  async deposit(key: string, walletId: string, net: Net, amount: number): Promise<void> {
    const res = await this.http()
      .post(`${BASE}/sandbox/deposits`)
      .set("x-api-key", key)
      .send({ wallet_id: walletId, network: net.name, currency: net.currency, amount });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }

  /** A tenant, an active user with a token, one wallet on `nets` and deposits into it. */
  async scene(prefix: string, nets: Net[] = [BTC], deposits: [Net, number][] = [[BTC, 1]]): Promise<Scene> {
    const { customerId, key } = await this.tenant(prefix);
    const user = await this.user(key);
    const walletId = await this.wallet(apiKey(key), user.userId, nets);
    for (const [net, amount] of deposits) await this.deposit(key, walletId, net, amount);
    return { app: this.app, customerId, key, ...user, walletId };
  }

  /** The balance items of a wallet, by currency (asserting 200). */
  async balances(cred: Cred, walletId: string): Promise<Record<string, BalanceItem>> {
    const res = await cred(this.http().get(`${BASE}/wallets/${walletId}/balance`));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return Object.fromEntries((res.body.data.balance as BalanceItem[]).map((b) => [b.currency, b]));
  }

  /** The btc balance item of a wallet of the scene (its first wallet unless named). */
  async btc(s: Scene, walletId = s.walletId): Promise<BalanceItem | undefined> {
    return (await this.balances(apiKey(s.key), walletId)).btc;
  }

  /** A wallet's transactions, newest first (asserting 200). */
  async transactions(cred: Cred, walletId: string, query: Record<string, string> = {}): Promise<TransactionRecord[]> {
    const res = await cred(this.http().get(`${BASE}/wallets/${walletId}/transactions`)).query(query);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as TransactionRecord[];
  }

  /** Initiate Withdrawal, with an `Idempotency-Key` header when `idempotencyKey` is given. */
  initiate(cred: Cred, userId: string, body: Record<string, unknown>, idempotencyKey?: string) {
    const r = cred(this.http().post(this.base(userId)));
    return (idempotencyKey === undefined ? r : r.set("Idempotency-Key", idempotencyKey)).send(body);
  }
  /** Confirm Withdrawal with `code`. */
  confirm(cred: Cred, userId: string, id: string, code: string) {
    return cred(this.http().post(`${this.base(userId)}/${id}/confirm`)).send({ code });
  }
  /** Resend Code. */
  resend(cred: Cred, userId: string, id: string) {
    return cred(this.http().post(`${this.base(userId)}/${id}/verification/codes`));
  }
  /** Cancel Withdrawal. */
  cancel(cred: Cred, userId: string, id: string) {
    return cred(this.http().delete(`${this.base(userId)}/${id}`));
  }
  /** Get Withdrawal. */
  get(cred: Cred, userId: string, id: string) {
    return cred(this.http().get(`${this.base(userId)}/${id}`));
  }
  /** List Withdrawals with `query` (filter[…] parameters). */
  list(cred: Cred, userId: string, query: Record<string, string | number> = {}) {
    return cred(this.http().get(this.base(userId))).query(query);
  }

  /** The sandbox outbox of `key`'s customer for `to`, newest first. */
  async mails(key: string, to?: string): Promise<Mail[]> {
    const r = this.http().get(`${BASE}/sandbox/mail`).set("x-api-key", key);
    const res = await (to === undefined ? r : r.query({ to }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as Mail[];
  }

  /** The code emails of one withdrawal, newest first. */
  async mailsOf(s: Scene, withdrawalId: string): Promise<Mail[]> {
    return (await this.mails(s.key, s.email)).filter((m) => m.text.includes(withdrawalId));
  }

  /** Initiates with the owner key (asserting 201) and reads the code from the sandbox outbox. */
  async started(s: Scene, body: Record<string, unknown>, idempotencyKey?: string): Promise<{ id: string; code: string }> {
    const res = await this.initiate(apiKey(s.key), s.userId, body, idempotencyKey);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.data.id as string;
    const mails = await this.mailsOf(s, id);
    expect(mails).toHaveLength(1);
    return { id, code: codeIn(mails[0] as Mail, id) };
  }

  /** Resend Code (asserting 200); returns the new code, read from the one new email. */
  async resent(s: Scene, id: string): Promise<string> {
    const before = new Set((await this.mailsOf(s, id)).map((m) => m.text));
    const res = await this.resend(apiKey(s.key), s.userId, id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const fresh = (await this.mailsOf(s, id)).filter((m) => !before.has(m.text));
    expect(fresh).toHaveLength(1);
    return codeIn(fresh[0] as Mail, id);
  }

  /** Runs SQL on the app's database. */
  sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
    return this.app.orm.em.fork().execute<T[]>(query, params);
  }
}

/** The single 6-digit code of a code email (the withdrawal id is taken out first). */
export function codeIn(mail: Mail, withdrawalId: string): string {
  const codes = mail.text.replaceAll(withdrawalId, "").match(/(?<![0-9A-Za-z.])\d{6}(?![0-9A-Za-z.])/g) ?? [];
  expect(codes, mail.text).toHaveLength(1);
  return codes[0] as string;
}

/** The expiry an email names. */
export function expiryIn(mail: Mail): Date {
  const found = mail.text.match(ISO);
  expect(found, mail.text).not.toBeNull();
  return new Date((found as RegExpMatchArray)[0]);
}

/** A wrong code for `code` (same format). */
export const wrong = (code: string, i = 1) => String((Number(code) + i) % 1_000_000).padStart(6, "0");

/** A balance item as the API shows it (amounts as 8-decimal strings). */
export const item = (currency: string, balance: string, available: string, held: string): BalanceItem => ({ currency, balance, available, held });

/**
 * Starts a test app of configuration `kind` for the calling test file (`useTestApp`) and returns it
 * with `api()`, a new `Api` on it. After the file's tests (before the app is disposed of) it asserts
 * that the app's whole custody ledger is consistent (docs/decisions/customers-users-and-wallets.md
 * "The custody ledger"). Call it at the top of the file; the app's fields are set once the file's
 * `beforeAll` hooks ran.
 */
export function useWithdrawalsApp(kind: WithdrawalsAppKind): { app: TestAppHandle; api: () => Api } {
  const app = useTestApp(APP_ENV[kind]);
  afterAll(async () => {
    if (!app.express) return; // the app did not start: its own hook reported why
    expect(await app.services.ledger.verify(app.db)).toEqual(CLEAN);
  });
  return { app, api: () => new Api(app) };
}
