/**
 * Two-step crypto withdrawals over HTTP on a real PostgreSQL (reference: "Withdrawal", "Withdrawals
 * (owner API key or user token)", "States and transitions › Withdrawal", the Withdrawal codes,
 * "Authentication"; docs/decisions/withdrawals.md): initiate with its checks in order, caps,
 * Idempotency-Key, the code email in the sandbox outbox, confirm / resend / cancel and their state
 * rules, read and list, the user-token rule, and the concurrency the issue asks for (parallel
 * confirms, initiates over the balance, initiates with one key). Every response is validated
 * against the contract by the test app.
 */
import type request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiOf, startTestApp, type TestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError } from "../support/fixtures.js";

/** The default configuration (code TTL 600 s, 5 attempts, default caps). */
let t: TestApp;
/** Short code lifetime, 3 attempts and small caps (btc: 1 / 1.5 / 2; eth: monthly below daily). */
let tc: TestApp;
/** The default code limits, the resend spacing included (test apps otherwise run without it). */
let tl: TestApp;
const SMALL_CAPS = {
  btc: { perWithdrawal: "1", daily: "1.5", monthly: "2" },
  eth: { perWithdrawal: "1", daily: "5", monthly: "1.5" },
};

beforeAll(async () => {
  [t, tc, tl] = await Promise.all([
    startTestApp(),
    startTestApp({ WITHDRAWAL_CODE_TTL_S: "30", WITHDRAWAL_CODE_MAX_ATTEMPTS: "3", WITHDRAWAL_CAPS: JSON.stringify(SMALL_CAPS) }),
    startTestApp({ WITHDRAWAL_CODE_RESEND_INTERVAL_S: "30" }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.dispose(), tc?.dispose(), tl?.dispose()]);
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e";
const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z/;
const ZERO = "0.00000000";
const CLEAN = { unbalancedEntries: [], cacheMismatches: [], negativeAccounts: [], unbalancedCurrencies: [] };

/** Valid testnet destinations, one per network. */
const TO = {
  btc: "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl",
  eth: "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  tron: "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH",
  sol: "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk",
} as const;
/** Invalid destinations. */
const BAD = {
  /** A mainnet address (BIP84 vector) on the testnet sandbox. */
  mainnetBc1: "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
  /** TO.eth with one letter's case flipped: a bad EIP-55 checksum. */
  ethChecksum: "0x9858efFD232B4033E47d90003D41EC34EcaEda94",
  /** The hex (41…) form of a TRON address. */
  tronHex: "41c8599111f29c1e1e061265b4af93ea1f274ad78a",
} as const;

type Net = { name: string; currency: string };
const BTC: Net = { name: "networks/bitcoin", currency: "btc" };
const ETH: Net = { name: "networks/ethereum", currency: "eth" };
const USDT_ETH: Net = { name: "networks/ethereum", currency: "usdt" };
const TRX: Net = { name: "networks/tron", currency: "trx" };
const SOL: Net = { name: "networks/solana", currency: "sol" };

type Cred = (r: request.Test) => request.Test;
const apiKey = (key: string): Cred => (r) => r.set("x-api-key", key);
const bearer = (token: string): Cred => (r) => r.set("Authorization", `Bearer ${token}`);
const anonymous: Cred = (r) => r;

type BalanceItem = { currency: string; balance: string; available: string; held: string };
type Mail = { to: string; subject: string; text: string; sent_at: string };
type WithdrawalRecord = { id: string; withdrawal_type: string; currency: string; amount: number; address: string; status: string; created_at: string };
type TransactionRecord = { id: number; balance: number; transaction: Record<string, unknown> & { action: string; status: string; hash: string; amount: number } };

let seq = 0;
const next = () => ++seq;

/** A user of a scene: owner key of its customer, id, email, token (when active), first wallet. */
interface Scene {
  app: TestApp;
  customerId: string;
  key: string;
  userId: string;
  email: string;
  token: string;
  walletId: string;
}

/** HTTP helpers bound to one app. */
class Api {
  readonly walk: Walk;
  constructor(readonly app: TestApp) {
    this.walk = new Walk(app.express);
  }

  http() {
    return apiOf(this.app);
  }

  base(userId: string): string {
    return `${BASE}/users/${userId}/accounts/crypto/withdrawals`;
  }

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

  async deactivate(key: string, userId: string): Promise<void> {
    const res = await this.http().post(`${BASE}/users/${userId}/deactivate`).set("x-api-key", key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }

  async wallet(cred: Cred, userId: string, networks: Net[]): Promise<string> {
    const res = await cred(this.http().post(`${BASE}/users/${userId}/wallets`)).send({ name: `Wallet ${next()}`, networks });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.wallet_id as string;
  }

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

  async balances(cred: Cred, walletId: string): Promise<Record<string, BalanceItem>> {
    const res = await cred(this.http().get(`${BASE}/wallets/${walletId}/balance`));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return Object.fromEntries((res.body.data.balance as BalanceItem[]).map((b) => [b.currency, b]));
  }

  async btc(s: Scene, walletId = s.walletId): Promise<BalanceItem | undefined> {
    return (await this.balances(apiKey(s.key), walletId)).btc;
  }

  async transactions(cred: Cred, walletId: string, query: Record<string, string> = {}): Promise<TransactionRecord[]> {
    const res = await cred(this.http().get(`${BASE}/wallets/${walletId}/transactions`)).query(query);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as TransactionRecord[];
  }

  initiate(cred: Cred, userId: string, body: Record<string, unknown>, idempotencyKey?: string) {
    const r = cred(this.http().post(this.base(userId)));
    return (idempotencyKey === undefined ? r : r.set("Idempotency-Key", idempotencyKey)).send(body);
  }
  confirm(cred: Cred, userId: string, id: string, code: string) {
    return cred(this.http().post(`${this.base(userId)}/${id}/confirm`)).send({ code });
  }
  resend(cred: Cred, userId: string, id: string) {
    return cred(this.http().post(`${this.base(userId)}/${id}/verification/codes`));
  }
  cancel(cred: Cred, userId: string, id: string) {
    return cred(this.http().delete(`${this.base(userId)}/${id}`));
  }
  get(cred: Cred, userId: string, id: string) {
    return cred(this.http().get(`${this.base(userId)}/${id}`));
  }
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
function codeIn(mail: Mail, withdrawalId: string): string {
  const codes = mail.text.replaceAll(withdrawalId, "").match(/(?<![0-9A-Za-z.])\d{6}(?![0-9A-Za-z.])/g) ?? [];
  expect(codes, mail.text).toHaveLength(1);
  return codes[0] as string;
}

/** The expiry an email names. */
function expiryIn(mail: Mail): Date {
  const found = mail.text.match(ISO);
  expect(found, mail.text).not.toBeNull();
  return new Date((found as RegExpMatchArray)[0]);
}

/** A wrong code for `code` (same format). */
const wrong = (code: string, i = 1) => String((Number(code) + i) % 1_000_000).padStart(6, "0");

const A = () => new Api(t);
const C = () => new Api(tc);
const L = () => new Api(tl);

/** Balance item of `held` withdrawn from a deposit of `deposit`, as 8-decimal strings. */
const item = (currency: string, balance: string, available: string, held: string): BalanceItem => ({ currency, balance, available, held });

describe("POST …/withdrawals (initiateWithdrawal)", () => {
  it("answers 201 with the initiate shape, moves the amount from available to held and emails a code", async () => {
    const api = A();
    const s = await api.scene("init");
    const before = Date.now();
    const res = await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.25, address: TO.btc, memo: "rent" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.success).toBe(true);
    const data = res.body.data;
    expect(data).toEqual({
      id: expect.stringMatching(UUID),
      withdraw: { id: data.id, status: "PENDING", idempotency_key: expect.any(String), is_duplicate: false },
      currency: "btc",
      amount: 0.25,
      address: TO.btc,
    });
    // without the header a key is generated
    expect(data.withdraw.idempotency_key.length).toBeGreaterThan(0);

    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.75000000", "0.25000000"));

    // the code email: to the user's address, plain text, naming the withdrawal and its expiry
    const mails = await api.mails(s.key, s.email);
    expect(mails).toHaveLength(1);
    const mail = mails[0] as Mail;
    expect(mail.to).toBe(s.email);
    expect(mail.subject).toContain(data.id);
    expect(mail.text).toContain(data.id);
    expect(mail.text).not.toMatch(/<\/?[a-z][^>]*>/i);
    const code = codeIn(mail, data.id);
    expect(code).toMatch(/^\d{6}$/);
    const expiry = expiryIn(mail).getTime();
    expect(expiry).toBeGreaterThanOrEqual(before + 600_000 - 2_000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 600_000 + 2_000);
    // the `to` filter is case-insensitive and exact; other addresses see nothing
    expect(await api.mails(s.key, s.email.toUpperCase())).toHaveLength(1);
    expect(await api.mails(s.key, `x${s.email}`)).toHaveLength(0);
    for (const pattern of ["%", "_%", s.email.replace(/^./, "_")]) expect(await api.mails(s.key, pattern)).toHaveLength(0);

    // the code is kept only as a keyed hash
    const [row] = await api.sql<Record<string, unknown>>(`select * from withdrawal where id = ?`, [data.id]);
    expect(row?.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.values(row ?? {}).some((v) => String(v).includes(code))).toBe(false);
    expect(row?.status).toBe("PENDING");
  });

  it("generates a different key per request without the header (two withdrawals, two holds)", async () => {
    const api = A();
    const s = await api.scene("init-nokey");
    const body = { currency: "btc", amount: 0.1, address: TO.btc };
    const a = await api.initiate(apiKey(s.key), s.userId, body);
    const b = await api.initiate(apiKey(s.key), s.userId, body);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.data.id).not.toBe(b.body.data.id);
    expect(a.body.data.withdraw.idempotency_key).not.toBe(b.body.data.withdraw.idempotency_key);
    expect(b.body.data.withdraw.is_duplicate).toBe(false);
    expect((await api.btc(s))?.held).toBe("0.20000000");
  });

  it("accepts every sandbox network's testnet address, the minimum amount exactly and a 255-character memo", async () => {
    const api = A();
    const s = await api.scene("init-networks", [BTC, ETH, USDT_ETH, TRX, SOL], [
      [BTC, 1],
      [ETH, 1],
      [USDT_ETH, 10],
      [TRX, 10],
      [SOL, 1],
    ]);
    const cases: [string, number, string][] = [
      ["btc", 0.0001, TO.btc],
      ["eth", 0.001, TO.eth],
      ["eth", 0.001, TO.eth.toLowerCase()],
      ["usdt", 1, TO.eth],
      ["trx", 1, TO.tron],
      ["sol", 0.01, TO.sol],
      ["BTC", 0.12345678, TO.btc],
    ];
    for (const [currency, amount, address] of cases) {
      const res = await api.initiate(apiKey(s.key), s.userId, { currency, amount, address, memo: "m".repeat(255) });
      expect(res.status, `${currency} ${address}: ${JSON.stringify(res.body)}`).toBe(201);
      expect(res.body.data.currency).toBe(currency.toLowerCase());
    }
    const balances = await api.balances(apiKey(s.key), s.walletId);
    expect(balances.btc?.held).toBe("0.12355678");
    expect(balances.eth?.held).toBe("0.00200000");
    expect(balances.usdt?.held).toBe("1.00000000");
    expect(balances.trx?.held).toBe("1.00000000");
    expect(balances.sol?.held).toBe("0.01000000");
  });

  describe("every error of docs/decisions/withdrawals.md, in its order", () => {
    it("answers 404 USER_NOT_FOUND for an unknown user and RESOURCE_NOT_FOUND for a PENDING, SUSPENDED or deleted user", async () => {
      const api = A();
      const s = await api.scene("init-users");
      const body = { currency: "btc", amount: 0.1, address: TO.btc };
      expectPlatformError(await api.initiate(apiKey(s.key), UNKNOWN_ID, body), 404, "USER_NOT_FOUND");
      expectPlatformError(await api.initiate(apiKey(s.key), "not-a-uuid", body), 404, "USER_NOT_FOUND");
      const pending = await api.user(s.key, true);
      expectPlatformError(await api.initiate(apiKey(s.key), pending.userId, body), 404, "RESOURCE_NOT_FOUND");
      // a SUSPENDED user who still has money in a wallet
      const suspended = await api.user(s.key);
      const wallet = await api.wallet(apiKey(s.key), suspended.userId, [BTC]);
      await api.deposit(s.key, wallet, BTC, 1);
      await api.deactivate(s.key, suspended.userId);
      expectPlatformError(await api.initiate(apiKey(s.key), suspended.userId, body), 404, "RESOURCE_NOT_FOUND");
      expect(await api.btc(s, wallet)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
      // deleted
      const deleted = await api.user(s.key);
      await api.deactivate(s.key, deleted.userId);
      expect((await api.http().delete(`${BASE}/users/${deleted.userId}`).set("x-api-key", s.key)).status).toBe(204);
      expectPlatformError(await api.initiate(apiKey(s.key), deleted.userId, body), 404, "RESOURCE_NOT_FOUND");
      expect(await api.mails(s.key)).toHaveLength(0);
    });

    it("reads the amount from the JSON text: digits beyond a double's precision still answer INVALID_AMOUNT, trailing zeros do not (docs/security.md#money-stays-exact)", async () => {
      const api = A();
      const s = await api.scene("init-raw-amount");
      const raw = (amount: string) =>
        apiKey(s.key)(api.http().post(`${BASE}/users/${s.userId}/accounts/crypto/withdrawals`))
          .set("Content-Type", "application/json")
          .send(`{"currency":"btc","amount":${amount},"address":"${TO.btc}"}`);
      // each of these is the double 0.1 (or 0.2) once parsed, but has more than btc's 8 decimals
      for (const amount of ["0.10000000000000000001", "0.1000000000000000000000000001", "0.19999999999999999999"]) {
        expectPlatformError(await raw(amount), 400, "INVALID_AMOUNT");
      }
      expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
      const zeros = await raw("0.10000000000000000000");
      expect(zeros.status, JSON.stringify(zeros.body)).toBe(201);
      const exponent = await raw("1.5e-1");
      expect(exponent.status, JSON.stringify(exponent.body)).toBe(201);
      expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.75000000", "0.25000000"));
    });

    it.each<[string, number, string, Record<string, unknown>]>([
      ["an unknown currency", 400, "INVALID_CURRENCY", { currency: "doge", amount: 0.1, address: TO.btc }],
      ["a fiat currency (usd)", 400, "UNSUPPORTED_CURRENCY", { currency: "usd", amount: 20, address: TO.btc }],
      ["a fiat currency (EUR)", 400, "UNSUPPORTED_CURRENCY", { currency: "EUR", amount: 20, address: TO.btc }],
      ["amount 0", 400, "AMOUNT_MUST_BE_POSITIVE", { currency: "btc", amount: 0, address: TO.btc }],
      ["a negative amount", 400, "AMOUNT_MUST_BE_POSITIVE", { currency: "btc", amount: -0.5, address: TO.btc }],
      ["btc below the 0.0001 minimum", 400, "MINIMUM_AMOUNT_NOT_MET", { currency: "btc", amount: 0.00009999, address: TO.btc }],
      ["usdt below the 1 minimum", 400, "MINIMUM_AMOUNT_NOT_MET", { currency: "usdt", amount: 0.99, address: TO.eth }],
      ["btc with 9 decimals", 400, "INVALID_AMOUNT", { currency: "btc", amount: 0.123456789, address: TO.btc }],
      ["usdt with 7 decimals", 400, "INVALID_AMOUNT", { currency: "usdt", amount: 1.1234567, address: TO.eth }],
      ["a mainnet bc1 address on bitcoin", 400, "INVALID_CRYPTO_ADDRESS", { currency: "btc", amount: 0.1, address: BAD.mainnetBc1 }],
      ["a bad EIP-55 checksum", 400, "INVALID_CRYPTO_ADDRESS", { currency: "eth", amount: 0.1, address: BAD.ethChecksum }],
      ["a hex TRON address", 400, "INVALID_CRYPTO_ADDRESS", { currency: "trx", amount: 1, address: BAD.tronHex }],
      ["an ethereum address for solana", 400, "INVALID_CRYPTO_ADDRESS", { currency: "sol", amount: 0.1, address: TO.eth }],
      ["a bitcoin address for usdt (no usdt network takes it)", 400, "INVALID_CRYPTO_ADDRESS", { currency: "usdt", amount: 2, address: TO.btc }],
      ["over the per-withdrawal cap (btc 2)", 400, "WITHDRAWAL_LIMIT_EXCEEDED", { currency: "btc", amount: 2.5, address: TO.btc }],
      ["more than the available balance", 400, "INSUFFICIENT_BALANCE", { currency: "btc", amount: 1.5, address: TO.btc }],
      ["usdt the wallet holds none of", 400, "INSUFFICIENT_BALANCE", { currency: "usdt", amount: 5, address: TO.eth }],
      // two rules broken: the earlier check wins
      ["unknown currency and amount 0", 400, "INVALID_CURRENCY", { currency: "doge", amount: 0, address: "nope" }],
      ["fiat and a negative amount", 400, "UNSUPPORTED_CURRENCY", { currency: "usd", amount: -1, address: "nope" }],
      ["amount 0 and a bad address", 400, "AMOUNT_MUST_BE_POSITIVE", { currency: "btc", amount: 0, address: BAD.mainnetBc1 }],
      ["below the minimum and a bad address", 400, "MINIMUM_AMOUNT_NOT_MET", { currency: "btc", amount: 0.00001, address: BAD.mainnetBc1 }],
      ["a bad address and over the balance", 400, "INVALID_CRYPTO_ADDRESS", { currency: "btc", amount: 1.5, address: BAD.mainnetBc1 }],
      ["a bad address and over the cap", 400, "INVALID_CRYPTO_ADDRESS", { currency: "btc", amount: 3, address: BAD.mainnetBc1 }],
      ["over the cap and over the balance", 400, "WITHDRAWAL_LIMIT_EXCEEDED", { currency: "btc", amount: 3, address: TO.btc }],
      // schema
      ["a memo of 256 characters", 422, "UNPROCESSABLE_ENTITY", { currency: "btc", amount: 0.1, address: TO.btc, memo: "m".repeat(256) }],
      ["no amount", 422, "UNPROCESSABLE_ENTITY", { currency: "btc", address: TO.btc }],
      ["an amount as a string", 422, "UNPROCESSABLE_ENTITY", { currency: "btc", amount: "0.1", address: TO.btc }],
      ["no address", 422, "UNPROCESSABLE_ENTITY", { currency: "btc", amount: 0.1 }],
    ])("%s → %i %s, and nothing is held, recorded or emailed", async (_label, status, code, body) => {
      const api = A();
      const s = await api.scene("init-err", [BTC, USDT_ETH]);
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body), status, code);
      expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
      expect((await api.list(apiKey(s.key), s.userId)).body.meta.pagination.records.total).toBe(0);
      expect(await api.mails(s.key)).toHaveLength(0);
    });

    it("checks the user before anything else: unknown user with an unknown currency → USER_NOT_FOUND, PENDING user → RESOURCE_NOT_FOUND", async () => {
      const api = A();
      const { key } = await api.tenant("init-order-user");
      const body = { currency: "doge", amount: -1, address: "nope" };
      expectPlatformError(await api.initiate(apiKey(key), UNKNOWN_ID, body), 404, "USER_NOT_FOUND");
      const pending = await api.user(key, true);
      expectPlatformError(await api.initiate(apiKey(key), pending.userId, body), 404, "RESOURCE_NOT_FOUND");
    });

    it("answers a 160 000-character address with 422 on field address at once (it held the process 23 s), in a short message that does not repeat it; other requests are not held up", async () => {
      const api = A();
      const s = await api.scene("init-huge-address", [BTC]);
      const address = `tb1q${"q".repeat(160_000)}`;
      const started = performance.now();
      const [res, meanwhile] = await Promise.all([
        api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address }),
        apiOf(t).get(`${BASE}/currencies`).set("x-api-key", s.key),
      ]);
      const elapsed = performance.now() - started;
      expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
      expect(res.body.errors).toEqual([{ code: "UNPROCESSABLE_ENTITY", field: "address", message: expect.any(String) }]);
      expect(meanwhile.status).toBe(200);
      expect(JSON.stringify(res.body).length).toBeLessThan(1000);
      expect(JSON.stringify(res.body)).not.toContain("q".repeat(64));
      // generous: a 160 000-character body crosses the HTTP stack, the decoders never see it
      expect(elapsed).toBeLessThan(2000);
      expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
    });

    it("repeats at most a 32-character quoted prefix of an invalid address in the 400 INVALID_CRYPTO_ADDRESS message", async () => {
      const api = A();
      const s = await api.scene("init-long-address", [BTC]);
      const address = `tb1q${"z".repeat(124)}`; // 128 characters: within the schema, not an address
      const res = await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address });
      expectPlatformError(res, 400, "INVALID_CRYPTO_ADDRESS");
      expect(res.body.errors[0].message).toContain(`"tb1q${"z".repeat(28)}…"`);
      expect(res.body.errors[0].message).not.toContain("z".repeat(29));
    });
  });

  describe("the wallet withdrawn from (docs/decisions/withdrawals.md)", () => {
    it("takes wallet_id when given, else the oldest wallet with enough available; never splits across wallets", async () => {
      const api = A();
      const s = await api.scene("choose", [BTC], [[BTC, 0.5]]);
      const older = s.walletId;
      const newer = await api.wallet(apiKey(s.key), s.userId, [BTC]);
      await api.deposit(s.key, newer, BTC, 2);
      const onlyEth = await api.wallet(apiKey(s.key), s.userId, [ETH]);
      await api.deposit(s.key, onlyEth, ETH, 5);

      // 1 btc: the older wallet has only 0.5 available, so the newer one
      expect((await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1, address: TO.btc })).status).toBe(201);
      expect(await api.btc(s, older)).toEqual(item("btc", "0.50000000", "0.50000000", ZERO));
      expect(await api.btc(s, newer)).toEqual(item("btc", "2.00000000", "1.00000000", "1.00000000"));
      // 0.2 btc: the older wallet has enough
      expect((await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.2, address: TO.btc })).status).toBe(201);
      expect((await api.btc(s, older))?.held).toBe("0.20000000");
      // wallet_id picks the newer one although the older could pay
      const named = await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc, wallet_id: newer });
      expect(named.status, JSON.stringify(named.body)).toBe(201);
      expect((await api.btc(s, newer))?.held).toBe("1.10000000");
      expect((await api.btc(s, older))?.held).toBe("0.20000000");
      // wallet_id of a wallet without enough available
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.5, address: TO.btc, wallet_id: older }), 400, "INSUFFICIENT_BALANCE");
      // 0.3 + 0.9 available over two wallets, but no single wallet covers 1
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1, address: TO.btc }), 400, "INSUFFICIENT_BALANCE");
      // the named wallet holds no btc
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc, wallet_id: onlyEth }), 400, "INSUFFICIENT_BALANCE");

      // confirm: the withdrawal transaction is on the named wallet
      const id = named.body.data.id as string;
      const code = codeIn((await api.mailsOf(s, id))[0] as Mail, id);
      expect((await api.confirm(apiKey(s.key), s.userId, id, code)).status).toBe(200);
      const onNewer = await api.transactions(apiKey(s.key), newer, { "filter[where][type]": "withdrawal" });
      expect(onNewer.map((x) => x.transaction.order_id)).toEqual([id]);
      expect(await api.transactions(apiKey(s.key), older, { "filter[where][type]": "withdrawal" })).toEqual([]);
    });

    it("answers 404 WALLET_NOT_FOUND for a wallet_id of another user, of another customer, or unknown; nothing is held", async () => {
      const api = A();
      const s = await api.scene("choose-404");
      const other = await api.user(s.key);
      const theirs = await api.wallet(apiKey(s.key), other.userId, [BTC]);
      await api.deposit(s.key, theirs, BTC, 1);
      const foreign = await api.scene("choose-404-foreign");
      for (const walletId of [theirs, foreign.walletId, UNKNOWN_ID]) {
        const res = await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc, wallet_id: walletId });
        expectPlatformError(res, 404, "WALLET_NOT_FOUND");
      }
      // nor through the user's own token
      expectPlatformError(await api.initiate(bearer(s.token), s.userId, { currency: "btc", amount: 0.1, address: TO.btc, wallet_id: theirs }), 404, "WALLET_NOT_FOUND");
      expect(await api.btc(s, theirs)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
      expect(await api.btc(foreign)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
      expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
    });
  });

  describe("caps from WITHDRAWAL_CAPS (btc 1 / 1.5 / 2; eth monthly 1.5 under daily 5)", () => {
    it("allows the per-withdrawal cap exactly and refuses one satoshi more", async () => {
      const api = C();
      const s = await api.scene("cap-per", [BTC], [[BTC, 5]]);
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1.00000001, address: TO.btc }), 400, "WITHDRAWAL_LIMIT_EXCEEDED");
      expect((await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1, address: TO.btc })).status).toBe(201);
    });

    it("counts PENDING and COMPLETED withdrawals of the UTC day against the daily cap, not CANCELLED ones", async () => {
      const api = C();
      const s = await api.scene("cap-day", [BTC], [[BTC, 5]]);
      const body = (amount: number) => ({ currency: "btc", amount, address: TO.btc });
      const first = await api.started(s, body(1));
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(0.6)), 400, "DAILY_LIMIT_EXCEEDED");
      const second = await api.started(s, body(0.5)); // 1.5: the cap exactly
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(0.0001)), 400, "DAILY_LIMIT_EXCEEDED");
      // a cancelled withdrawal no longer counts
      expect((await api.cancel(apiKey(s.key), s.userId, second.id)).status).toBe(204);
      const third = await api.started(s, body(0.5));
      // a completed one still does
      expect((await api.confirm(apiKey(s.key), s.userId, first.id, first.code)).status).toBe(200);
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(0.0001)), 400, "DAILY_LIMIT_EXCEEDED");
      // the caps are per user: another user of the customer is not affected
      const other = await api.user(s.key);
      const wallet = await api.wallet(apiKey(s.key), other.userId, [BTC]);
      await api.deposit(s.key, wallet, BTC, 1);
      expect((await api.initiate(apiKey(s.key), other.userId, body(1))).status).toBe(201);
      // Withdrawals of an earlier UTC month count in neither period: the service reads the real
      // clock, so the test moves the user's withdrawals back in time through SQL instead.
      await api.sql(`update withdrawal set created_at = date_trunc('month', now() at time zone 'utc') at time zone 'utc' - interval '1 second' where user_id = ?`, [s.userId]);
      expect((await api.initiate(apiKey(s.key), s.userId, body(1))).status).toBe(201);
      expect((await api.btc(s))?.held).toBe("1.50000000"); // third (0.5) + the last (1)
      expect(third.id).toMatch(UUID);
    });

    it("refuses what would pass the monthly cap (configured below the daily one) with MONTHLY_LIMIT_EXCEEDED", async () => {
      const api = C();
      const s = await api.scene("cap-month", [ETH], [[ETH, 5]]);
      const body = (amount: number) => ({ currency: "eth", amount, address: TO.eth });
      expect((await api.initiate(apiKey(s.key), s.userId, body(1))).status).toBe(201);
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(0.6)), 400, "MONTHLY_LIMIT_EXCEEDED");
      expect((await api.initiate(apiKey(s.key), s.userId, body(0.5))).status).toBe(201); // 1.5 exactly
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(0.001)), 400, "MONTHLY_LIMIT_EXCEEDED");
      // caps are checked before the balance
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(4)), 400, "WITHDRAWAL_LIMIT_EXCEEDED");
      expect((await api.balances(apiKey(s.key), s.walletId)).eth).toEqual(item("eth", "5.00000000", "3.50000000", "1.50000000"));
    });

    it("checks the caps before the balance and after the address", async () => {
      const api = C();
      const s = await api.scene("cap-order", [BTC], [[BTC, 0.5]]);
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1.2, address: TO.btc }), 400, "WITHDRAWAL_LIMIT_EXCEEDED");
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1.2, address: BAD.mainnetBc1 }), 400, "INVALID_CRYPTO_ADDRESS");
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.6, address: TO.btc }), 400, "INSUFFICIENT_BALANCE");
    });
  });

  describe("Idempotency-Key", () => {
    it("answers a repeat with the first withdrawal and is_duplicate true: one hold, one email", async () => {
      const api = A();
      const s = await api.scene("idem");
      const body = { currency: "btc", amount: 0.3, address: TO.btc, memo: "once" };
      const first = await api.initiate(apiKey(s.key), s.userId, body, "key-1");
      expect(first.status).toBe(201);
      expect(first.body.data.withdraw).toEqual({ id: first.body.data.id, status: "PENDING", idempotency_key: "key-1", is_duplicate: false });
      // repeated, also through the user's token (same customer, same body)
      for (const cred of [apiKey(s.key), bearer(s.token)]) {
        const again = await api.initiate(cred, s.userId, body, "key-1");
        expect(again.status, JSON.stringify(again.body)).toBe(201);
        expect(again.body.data).toEqual({ ...first.body.data, withdraw: { ...first.body.data.withdraw, is_duplicate: true } });
      }
      expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.70000000", "0.30000000"));
      expect(await api.mails(s.key)).toHaveLength(1);
      expect((await api.list(apiKey(s.key), s.userId)).body.data).toHaveLength(1);

      // after confirm a repeat still answers the first withdrawal, with its current status
      const code = codeIn((await api.mailsOf(s, first.body.data.id))[0] as Mail, first.body.data.id);
      expect((await api.confirm(apiKey(s.key), s.userId, first.body.data.id, code)).status).toBe(200);
      const later = await api.initiate(apiKey(s.key), s.userId, body, "key-1");
      expect(later.status).toBe(201);
      expect(later.body.data.withdraw).toEqual({ id: first.body.data.id, status: "COMPLETED", idempotency_key: "key-1", is_duplicate: true });
      expect(await api.btc(s)).toEqual(item("btc", "0.70000000", "0.70000000", ZERO));
    });

    it.each<[string, Record<string, unknown>]>([
      ["another amount", { amount: 0.31 }],
      ["another address", { address: "tb1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq" }],
      ["another memo", { memo: "twice" }],
      ["no memo", { memo: undefined }],
      ["another currency", { currency: "eth", address: TO.eth }],
      ["a wallet_id", { wallet_id: "WALLET" }],
    ])("answers 409 IDEMPOTENCY_KEY_REUSED for the same key with %s, and changes nothing", async (_label, change) => {
      const api = A();
      const s = await api.scene("idem-409", [BTC, ETH], [[BTC, 1], [ETH, 1]]);
      const body = { currency: "btc", amount: 0.3, address: TO.btc, memo: "once" };
      expect((await api.initiate(apiKey(s.key), s.userId, body, "key-409")).status).toBe(201);
      const other: Record<string, unknown> = { ...body, ...change };
      if (other.wallet_id === "WALLET") other.wallet_id = s.walletId;
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, other, "key-409"), 409, "IDEMPOTENCY_KEY_REUSED");
      expect((await api.btc(s))?.held).toBe("0.30000000");
      expect(await api.mails(s.key)).toHaveLength(1);
    });

    it("scopes keys to the customer: another user of the customer gets 409, another customer's user a new withdrawal", async () => {
      const api = A();
      const a = await api.scene("idem-scope-a");
      const b = await api.scene("idem-scope-b");
      const body = { currency: "btc", amount: 0.2, address: TO.btc };
      const first = await api.initiate(apiKey(a.key), a.userId, body, "shared-key");
      const second = await api.initiate(apiKey(b.key), b.userId, body, "shared-key");
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.body.data.withdraw.is_duplicate).toBe(false);
      expect(second.body.data.id).not.toBe(first.body.data.id);
      expect((await api.btc(a))?.held).toBe("0.20000000");
      expect((await api.btc(b))?.held).toBe("0.20000000");
      // a second user of customer a reusing a's key
      const other = await api.user(a.key);
      const wallet = await api.wallet(apiKey(a.key), other.userId, [BTC]);
      await api.deposit(a.key, wallet, BTC, 1);
      expectPlatformError(await api.initiate(apiKey(a.key), other.userId, body, "shared-key"), 409, "IDEMPOTENCY_KEY_REUSED");
      expect((await api.btc(a, wallet))?.held).toBe(ZERO);
    });

    it("treats an empty Idempotency-Key as no key (or refuses it): never an empty key, never a 409 between two requests", async () => {
      const api = A();
      const s = await api.scene("idem-empty");
      const a = await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }, "");
      const b = await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.2, address: TO.btc }, "");
      for (const res of [a, b]) {
        expect([201, 422], JSON.stringify(res.body)).toContain(res.status);
        if (res.status === 201) expect(res.body.data.withdraw.idempotency_key).not.toBe("");
      }
    });

    it("answers 422 to a key over 255 characters", async () => {
      const api = A();
      const s = await api.scene("idem-long");
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }, "k".repeat(256)), 422, "UNPROCESSABLE_ENTITY");
      expect((await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }, "k".repeat(255))).status).toBe(201);
    });
  });
});

describe("POST …/{withdrawal_id}/confirm (confirmWithdrawal)", () => {
  it("completes with the right code: 200 {id, status}, the debit in the balance, a done withdrawal transaction with a hash; the code works once", async () => {
    const api = A();
    const s = await api.scene("confirm");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.25, address: TO.btc, memo: "invoice 42" }, "confirm-key");
    const res = await api.confirm(apiKey(s.key), s.userId, id, code);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ id, status: "COMPLETED" });

    expect(await api.btc(s)).toEqual(item("btc", "0.75000000", "0.75000000", ZERO));
    const txs = await api.transactions(apiKey(s.key), s.walletId, { "filter[where][type]": "withdrawal" });
    expect(txs).toHaveLength(1);
    const tx = txs[0] as TransactionRecord;
    expect(tx.balance).toBe(0.75);
    expect(tx.transaction).toMatchObject({
      action: "withdrawal",
      status: "done",
      currency: "btc",
      amount: 0.25,
      order_id: id,
      idempotency_id: "confirm-key",
      memo: "invoice 42",
    });
    expect(tx.transaction.hash).toMatch(/^[0-9a-f]{64}$/);
    // the deposit is still there, the withdrawal is the newest
    expect((await api.transactions(apiKey(s.key), s.walletId)).map((x) => x.transaction.action)).toEqual(["withdrawal", "deposit"]);

    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("COMPLETED");
    // one use: the same code again
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 400, "ALREADY_CONFIRMED");
    expect(await api.btc(s)).toEqual(item("btc", "0.75000000", "0.75000000", ZERO));
    const [row] = await api.sql<{ code_hash: string | null; tx_hash: string | null }>(`select code_hash, tx_hash from withdrawal where id = ?`, [id]);
    expect(row?.code_hash).toBeNull();
    expect(row?.tx_hash).toBe(tx.transaction.hash);
  });

  it("completes through the user's own token, and accepts an upper-case withdrawal id", async () => {
    const api = A();
    const s = await api.scene("confirm-token");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const res = await api.confirm(bearer(s.token), s.userId, id.toUpperCase(), code);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ id, status: "COMPLETED" });
  });

  it("answers 400 CONFIRMATION_CODE_INVALID to a wrong code and leaves the withdrawal PENDING and held", async () => {
    const api = A();
    const s = await api.scene("confirm-wrong");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const other = await api.started(s, { currency: "btc", amount: 0.2, address: TO.btc });
    // a near miss, a shorter code (5 digits: still of the 4–8 digit form), another near miss: three wrong attempts
    for (const attempt of [wrong(code), code.slice(1), wrong(code, 3)]) {
      expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, attempt), 400, "CONFIRMATION_CODE_INVALID");
    }
    // another withdrawal's code does not work here (codes are bound to their withdrawal): the fourth
    const foreign = other.code === code ? wrong(code, 2) : other.code;
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, foreign), 400, "CONFIRMATION_CODE_INVALID");
    // not a code at all (empty, not digits, too short or long: the schema's 4–8 digits): 422, and no attempt is used
    for (const notACode of ["", "abcdef", "123", "123456789"]) {
      expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, notACode), 422, "UNPROCESSABLE_ENTITY");
    }
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("PENDING");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.70000000", "0.30000000"));
    // the right code still works (4 of 5 attempts used), and the other withdrawal's code on its own
    expect((await api.confirm(apiKey(s.key), s.userId, other.id, other.code)).status).toBe(200);
    expect((await api.confirm(apiKey(s.key), s.userId, id, code)).status).toBe(200);
  });

  it("blocks after 5 wrong codes (403 WITHDRAWAL_BLOCKED even for the right code); Resend Code resets the counter and voids the old code", async () => {
    const api = A();
    const s = await api.scene("confirm-block");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    for (let i = 1; i <= 5; i++) expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(code, i)), 400, "CONFIRMATION_CODE_INVALID");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 403, "WITHDRAWAL_BLOCKED");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(code)), 403, "WITHDRAWAL_BLOCKED");
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("PENDING");
    expect((await api.btc(s))?.held).toBe("0.10000000");

    let fresh = await api.resent(s, id);
    while (fresh === code) fresh = await api.resent(s, id); // one chance in a million
    // the old code no longer works, but no longer blocks either: the counter was reset
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 400, "CONFIRMATION_CODE_INVALID");
    for (let i = 0; i < 3; i++) expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(fresh, 500 + i)), 400, "CONFIRMATION_CODE_INVALID");
    const ok = await api.confirm(apiKey(s.key), s.userId, id, fresh);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(await api.btc(s)).toEqual(item("btc", "0.90000000", "0.90000000", ZERO));
  });

  it("honours WITHDRAWAL_CODE_MAX_ATTEMPTS (3 here), and a blocked code answers 403 even once expired", async () => {
    const api = C();
    const s = await api.scene("confirm-block-3");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    for (let i = 1; i <= 3; i++) expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(code, i)), 400, "CONFIRMATION_CODE_INVALID");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 403, "WITHDRAWAL_BLOCKED");
    // the service reads the real clock: expire the code through SQL instead of waiting 30 s
    await api.sql(`update withdrawal set code_expires_at = now() - interval '1 second' where id = ?`, [id]);
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 403, "WITHDRAWAL_BLOCKED");
  });

  it("answers 400 CONFIRMATION_CODE_EXPIRED after WITHDRAWAL_CODE_TTL_S (30 s here); a resent code works", async () => {
    const api = C();
    const s = await api.scene("confirm-expired");
    const before = Date.now();
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    // the email and the record name an expiry 30 s after initiation
    const mail = (await api.mailsOf(s, id))[0] as Mail;
    expect(expiryIn(mail).getTime()).toBeGreaterThanOrEqual(before + 30_000 - 2_000);
    expect(expiryIn(mail).getTime()).toBeLessThanOrEqual(Date.now() + 30_000 + 2_000);
    const [row] = await api.sql<{ ttl: string }>(`select extract(epoch from code_expires_at - created_at)::text as ttl from withdrawal where id = ?`, [id]);
    expect(Number(row?.ttl)).toBeCloseTo(30, 0);

    // The service reads the real clock, so instead of waiting 30 s this test moves the code's
    // expiry into the past through SQL.
    await api.sql(`update withdrawal set code_expires_at = now() - interval '1 second' where id = ?`, [id]);
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 400, "CONFIRMATION_CODE_EXPIRED");
    // expired is judged before wrong, and an expired attempt is not a wrong one
    for (let i = 1; i <= 4; i++) expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(code, i)), 400, "CONFIRMATION_CODE_EXPIRED");
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("PENDING");
    expect((await api.btc(s))?.held).toBe("0.10000000");

    const fresh = await api.resent(s, id);
    const ok = await api.confirm(apiKey(s.key), s.userId, id, fresh);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(await api.btc(s)).toEqual(item("btc", "0.90000000", "0.90000000", ZERO));
  });

  it("answers 400 to a CANCELLED withdrawal with its right code, and 404 WITHDRAWAL_NOT_FOUND to unknown ids and other users' withdrawals", async () => {
    const api = A();
    const s = await api.scene("confirm-cancelled");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    expect((await api.cancel(apiKey(s.key), s.userId, id)).status).toBe(204);
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 400, "BAD_REQUEST");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));

    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, UNKNOWN_ID, "123456"), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, "not-a-uuid", "123456"), 404, "WITHDRAWAL_NOT_FOUND");
    // another user's withdrawal, under this user's path, with its right code
    const other = await api.user(s.key);
    const wallet = await api.wallet(apiKey(s.key), other.userId, [BTC]);
    await api.deposit(s.key, wallet, BTC, 1);
    const theirs = await api.started({ ...s, ...other, walletId: wallet }, { currency: "btc", amount: 0.1, address: TO.btc });
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, theirs.id, theirs.code), 404, "WITHDRAWAL_NOT_FOUND");
    expect((await api.get(apiKey(s.key), other.userId, theirs.id)).body.data.status).toBe("PENDING");
    expectPlatformError(await api.confirm(apiKey(s.key), UNKNOWN_ID, theirs.id, theirs.code), 404, "USER_NOT_FOUND");
  });
});

describe("POST …/{withdrawal_id}/verification/codes (resendWithdrawalCode)", () => {
  it("answers 200 {message}, emails a new code (a new outbox email) and keeps the withdrawal PENDING and held", async () => {
    const api = A();
    const s = await api.scene("resend");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const res = await api.resend(apiKey(s.key), s.userId, id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ message: expect.any(String) });
    expect(res.body.data.message.length).toBeGreaterThan(0);
    const mails = await api.mailsOf(s, id);
    expect(mails).toHaveLength(2);
    const fresh = codeIn(mails[0] as Mail, id);
    expect(codeIn(mails[1] as Mail, id)).toBe(code);
    for (const m of mails) expect(m.to).toBe(s.email);
    // through the user's token too
    expect((await api.resend(bearer(s.token), s.userId, id)).status).toBe(200);
    expect(await api.mailsOf(s, id)).toHaveLength(3);
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("PENDING");
    expect((await api.btc(s))?.held).toBe("0.10000000");
    expect(fresh).toMatch(/^\d{6}$/);
  });

  it("answers 400 for COMPLETED and CANCELLED withdrawals (no email) and 404 WITHDRAWAL_NOT_FOUND for an unknown one", async () => {
    const api = A();
    const s = await api.scene("resend-400");
    const done = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    expect((await api.confirm(apiKey(s.key), s.userId, done.id, done.code)).status).toBe(200);
    expectPlatformError(await api.resend(apiKey(s.key), s.userId, done.id), 400, "ALREADY_CONFIRMED");
    const gone = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    expect((await api.cancel(apiKey(s.key), s.userId, gone.id)).status).toBe(204);
    expectPlatformError(await api.resend(apiKey(s.key), s.userId, gone.id), 400, "BAD_REQUEST");
    expect(await api.mails(s.key)).toHaveLength(2);
    expectPlatformError(await api.resend(apiKey(s.key), s.userId, UNKNOWN_ID), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.resend(apiKey(s.key), UNKNOWN_ID, done.id), 404, "USER_NOT_FOUND");
  });
});

describe("code limits: resends spaced and counted, wrong codes counted over the withdrawal's life (docs/decisions/withdrawals.md)", () => {
  /** Moves the current code's issue time `s` seconds into the past (the service reads the real clock). */
  const age = (api: Api, id: string, s = 31) =>
    api.sql(`update withdrawal set code_issued_at = code_issued_at - make_interval(secs => ?) where id = ?`, [s, id]);

  it("answers 429 RATE_LIMIT_EXCEEDED with Retry-After within 30 s of the previous code, and 403 WITHDRAWAL_BLOCKED after the third resend", async () => {
    const api = L();
    const s = await api.scene("resend-limits");
    const { id } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const early = await api.resend(apiKey(s.key), s.userId, id);
    expectPlatformError(early, 429, "RATE_LIMIT_EXCEEDED");
    const retryAfter = Number(early.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThanOrEqual(29);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(await api.mailsOf(s, id)).toHaveLength(1);

    for (let n = 1; n <= 3; n++) {
      await age(api, id);
      await api.resent(s, id);
      // each new code restarts the spacing; once the resends are used up that is the answer
      if (n < 3) expectPlatformError(await api.resend(bearer(s.token), s.userId, id), 429, "RATE_LIMIT_EXCEEDED");
    }
    expectPlatformError(await api.resend(bearer(s.token), s.userId, id), 403, "WITHDRAWAL_BLOCKED");
    await age(api, id, 3600);
    const fourth = await api.resend(apiKey(s.key), s.userId, id);
    expectPlatformError(fourth, 403, "WITHDRAWAL_BLOCKED");
    expect(fourth.body.errors[0].message).toMatch(/cancel/i);
    expect(await api.mailsOf(s, id)).toHaveLength(4);
    // the last code still confirms
    const [latest] = await api.mailsOf(s, id);
    expect((await api.confirm(apiKey(s.key), s.userId, id, codeIn(latest as Mail, id))).status).toBe(200);
  });

  it("cancels the withdrawal and releases its hold at the 15th wrong code over its life, whatever the resends", async () => {
    const api = L();
    const s = await api.scene("life-attempts");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.25, address: TO.btc });
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.75000000", "0.25000000"));
    let current = code;
    let wrongSent = 0;
    // 5 wrong codes per code, a new code after each block: 5 + 5 + 4 wrong answers 400, the 15th cancels
    while (wrongSent < 14) {
      for (let i = 0; i < 5 && wrongSent < 14; i++) {
        expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(current, 700 + wrongSent)), 400, "CONFIRMATION_CODE_INVALID");
        wrongSent++;
      }
      if (wrongSent < 14) {
        expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, current), 403, "WITHDRAWAL_BLOCKED");
        await age(api, id);
        current = await api.resent(s, id);
      }
    }
    const last = await api.confirm(bearer(s.token), s.userId, id, wrong(current, 999));
    expectPlatformError(last, 403, "WITHDRAWAL_BLOCKED");
    expect(last.body.errors[0].message).toMatch(/cancelled/);
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("CANCELLED");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
    // the right code of the cancelled withdrawal no longer confirms, and no new code can be asked for
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, current), 400, "BAD_REQUEST");
    await age(api, id);
    expectPlatformError(await api.resend(apiKey(s.key), s.userId, id), 400, "BAD_REQUEST");
    const [row] = await api.sql<{ cancel_reason: string; code_failures_total: number }>(
      `select cancel_reason, code_failures_total from withdrawal where id = ?`,
      [id],
    );
    expect(row).toEqual({ cancel_reason: "too_many_attempts", code_failures_total: 15 });
    expect(await tl.services.ledger.verify(tl.orm.em.fork())).toEqual(CLEAN);
  });
});

describe("DELETE …/{withdrawal_id} (cancelWithdrawal)", () => {
  it("answers 204, returns the held amount to available and makes the withdrawal CANCELLED; again → 400", async () => {
    const api = A();
    const s = await api.scene("cancel");
    const { id } = await api.started(s, { currency: "btc", amount: 0.4, address: TO.btc });
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.60000000", "0.40000000"));
    const res = await api.cancel(apiKey(s.key), s.userId, id);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(res.text).toBe("");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("CANCELLED");
    expectPlatformError(await api.cancel(apiKey(s.key), s.userId, id), 400, "BAD_REQUEST");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
    // no withdrawal transaction
    expect(await api.transactions(apiKey(s.key), s.walletId, { "filter[where][type]": "withdrawal" })).toEqual([]);
  });

  it("answers 400 for a COMPLETED withdrawal (cannot be reversed) and leaves the debit alone", async () => {
    const api = A();
    const s = await api.scene("cancel-done");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.4, address: TO.btc });
    expect((await api.confirm(bearer(s.token), s.userId, id, code)).status).toBe(200);
    const res = await api.cancel(apiKey(s.key), s.userId, id);
    expectPlatformError(res, 400, "ALREADY_CONFIRMED");
    expect(res.body.errors[0].message).toMatch(/revers/i);
    expect(await api.btc(s)).toEqual(item("btc", "0.60000000", "0.60000000", ZERO));
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("COMPLETED");
  });

  it("answers 404 WITHDRAWAL_NOT_FOUND for an unknown id; cancels through the user's token", async () => {
    const api = A();
    const s = await api.scene("cancel-404");
    expectPlatformError(await api.cancel(apiKey(s.key), s.userId, UNKNOWN_ID), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.cancel(apiKey(s.key), s.userId, "not-a-uuid"), 404, "WITHDRAWAL_NOT_FOUND");
    const { id } = await api.started(s, { currency: "btc", amount: 0.4, address: TO.btc });
    expect((await api.cancel(bearer(s.token), s.userId, id)).status).toBe(204);
    expect((await api.btc(s))?.available).toBe("1.00000000");
  });
});

describe("GET …/{withdrawal_id} and GET …/withdrawals (getWithdrawal, listWithdrawals)", () => {
  /** A user with, oldest first: w1 btc COMPLETED, w2 eth CANCELLED, w3 btc PENDING, w4 usdt PENDING. */
  async function history(prefix: string) {
    const api = A();
    const s = await api.scene(prefix, [BTC, ETH, USDT_ETH], [[BTC, 1], [ETH, 1], [USDT_ETH, 10]]);
    const w1 = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    expect((await api.confirm(apiKey(s.key), s.userId, w1.id, w1.code)).status).toBe(200);
    const w2 = await api.started(s, { currency: "eth", amount: 0.01, address: TO.eth });
    expect((await api.cancel(apiKey(s.key), s.userId, w2.id)).status).toBe(204);
    const w3 = await api.started(s, { currency: "btc", amount: 0.2, address: TO.btc });
    const w4 = await api.started(s, { currency: "usdt", amount: 2, address: TO.eth });
    return { api, s, ids: [w1.id, w2.id, w3.id, w4.id] as const };
  }
  const ids = (res: request.Response) => (res.body.data as WithdrawalRecord[]).map((w) => w.id);

  it("reads the withdrawal record (withdrawal_type crypto) by the id of withdraw.id", async () => {
    const { api, s, ids: [w1, w2, w3] } = await history("get");
    const res = await api.get(apiKey(s.key), s.userId, w1);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({
      id: w1,
      withdrawal_type: "crypto",
      currency: "btc",
      amount: 0.1,
      address: TO.btc,
      status: "COMPLETED",
      created_at: expect.stringMatching(ISO),
    });
    expect(Math.abs(Date.parse(res.body.data.created_at) - Date.now())).toBeLessThan(60_000);
    expect((await api.get(apiKey(s.key), s.userId, w2)).body.data).toMatchObject({ status: "CANCELLED", currency: "eth", amount: 0.01, address: TO.eth });
    expect((await api.get(bearer(s.token), s.userId, w3)).body.data).toMatchObject({ status: "PENDING", amount: 0.2 });
    expectPlatformError(await api.get(apiKey(s.key), s.userId, UNKNOWN_ID), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.get(apiKey(s.key), s.userId, "nope"), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.get(apiKey(s.key), UNKNOWN_ID, w1), 404, "USER_NOT_FOUND");
    // another user of the customer cannot read it under their path
    const other = await api.user(s.key);
    expectPlatformError(await api.get(apiKey(s.key), other.userId, w1), 404, "WITHDRAWAL_NOT_FOUND");
  });

  it("lists newest first with meta.pagination; filters by status and currency (case-insensitive); sorts ASC", async () => {
    const { api, s, ids: [w1, w2, w3, w4] } = await history("list");
    const all = await api.list(apiKey(s.key), s.userId);
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(ids(all)).toEqual([w4, w3, w2, w1]);
    for (const w of all.body.data as WithdrawalRecord[]) expect(w.withdrawal_type).toBe("crypto");
    expect(all.body.meta.pagination.records).toEqual({ skip: 0, has_next: false, has_previous: false, total: 4, limit: 20 });

    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][status]": "PENDING" }))).toEqual([w4, w3]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][status]": "COMPLETED" }))).toEqual([w1]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][status]": "CANCELLED" }))).toEqual([w2]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][currency]": "BTC" }))).toEqual([w3, w1]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][currency]": "btc" }))).toEqual([w3, w1]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][currency]": "Usdt", "filter[where][status]": "PENDING" }))).toEqual([w4]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][currency]": "sol" }))).toEqual([]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[sort]": "ASC" }))).toEqual([w1, w2, w3, w4]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[sort]": "DESC" }))).toEqual([w4, w3, w2, w1]);
    expect(ids(await api.list(bearer(s.token), s.userId))).toEqual([w4, w3, w2, w1]);
    // another user of the customer has none
    const other = await api.user(s.key);
    expect(ids(await api.list(apiKey(s.key), other.userId))).toEqual([]);
  });

  it("pages with filter[limit] and filter[skip], keeping the filters in the links; filter[limit]=101 → 422", async () => {
    const { api, s, ids: [w1, w2, w3, w4] } = await history("page");
    const first = await api.list(apiKey(s.key), s.userId, { "filter[limit]": 2 });
    expect(ids(first)).toEqual([w4, w3]);
    expect(first.body.meta.pagination.records).toEqual({ skip: 0, has_next: true, has_previous: false, total: 4, limit: 2 });
    const nav = first.body.meta.pagination.navigation;
    expect(nav.previous).toBeNull();
    expect(Object.fromEntries(new URL(nav.next, "http://x").searchParams)).toEqual({ "filter[limit]": "2", "filter[skip]": "2" });
    expect(new URL(nav.next, "http://x").pathname).toBe(`/users/${s.userId}/accounts/crypto/withdrawals`);
    const second = await api.list(apiKey(s.key), s.userId, { "filter[limit]": 2, "filter[skip]": 2 });
    expect(ids(second)).toEqual([w2, w1]);
    expect(second.body.meta.pagination.records).toEqual({ skip: 2, has_next: false, has_previous: true, total: 4, limit: 2 });
    expect(second.body.meta.pagination.navigation.next).toBeNull();

    const filtered = await api.list(apiKey(s.key), s.userId, { "filter[limit]": 1, "filter[where][status]": "PENDING", "filter[sort]": "ASC" });
    expect(ids(filtered)).toEqual([w3]);
    expect(filtered.body.meta.pagination.records.total).toBe(2);
    expect(Object.fromEntries(new URL(filtered.body.meta.pagination.navigation.next, "http://x").searchParams)).toEqual({
      "filter[limit]": "1",
      "filter[skip]": "1",
      "filter[where][status]": "PENDING",
      "filter[sort]": "ASC",
    });
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[skip]": 10 }))).toEqual([]);
    expect((await api.list(apiKey(s.key), s.userId, { "filter[limit]": 100 })).body.meta.pagination.records.limit).toBe(100);

    const invalid: Record<string, string | number>[] = [{ "filter[limit]": 101 }, { "filter[limit]": 0 }, { "filter[where][status]": "DONE" }, { "filter[sort]": "sideways" }];
    for (const query of invalid) {
      expectPlatformError(await api.list(apiKey(s.key), s.userId, query), 422, "UNPROCESSABLE_ENTITY");
    }
  });

  it("answers 404 USER_NOT_FOUND for an unknown user", async () => {
    const api = A();
    const { key } = await api.tenant("list-404");
    expectPlatformError(await api.list(apiKey(key), UNKNOWN_ID), 404, "USER_NOT_FOUND");
    expectPlatformError(await api.list(apiKey(key), "not-a-uuid"), 404, "USER_NOT_FOUND");
  });
});

describe("who may act (reference: Authentication; a user token acts only on its own account)", () => {
  /** Every withdrawal operation on `userId`'s withdrawal `id`. */
  const operations = (api: Api, userId: string, id: string): [string, (cred: Cred) => request.Test][] => [
    ["initiate", (c) => api.initiate(c, userId, { currency: "btc", amount: 0.1, address: TO.btc })],
    ["confirm", (c) => api.confirm(c, userId, id, "123456")],
    ["resend", (c) => api.resend(c, userId, id)],
    ["cancel", (c) => api.cancel(c, userId, id)],
    ["get", (c) => api.get(c, userId, id)],
    ["list", (c) => api.list(c, userId)],
  ];

  it("answers 403 FORBIDDEN to a user token on another user's path and changes nothing", async () => {
    const api = A();
    const s = await api.scene("who-403");
    const other = await api.user(s.key);
    const wallet = await api.wallet(apiKey(s.key), other.userId, [BTC]);
    await api.deposit(s.key, wallet, BTC, 1);
    const theirs = await api.started({ ...s, ...other, walletId: wallet }, { currency: "btc", amount: 0.1, address: TO.btc });
    for (const [name, call] of operations(api, other.userId, theirs.id)) {
      const res = await call(bearer(s.token));
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(403);
      expectPlatformError(res, 403, "FORBIDDEN");
    }
    // nor with the other user's withdrawal id under its own path
    expectPlatformError(await api.confirm(bearer(s.token), s.userId, theirs.id, theirs.code), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.cancel(bearer(s.token), s.userId, theirs.id), 404, "WITHDRAWAL_NOT_FOUND");
    expect((await api.get(apiKey(s.key), other.userId, theirs.id)).body.data.status).toBe("PENDING");
    expect((await api.btc(s, wallet))?.held).toBe("0.10000000");
    // the sandbox outbox is the owner's
    expectPlatformError(await api.http().get(`${BASE}/sandbox/mail`).set("Authorization", `Bearer ${s.token}`), 403, "FORBIDDEN");
  });

  it("answers 401 to a deactivated user's token: it can no longer initiate or confirm", async () => {
    const api = A();
    const s = await api.scene("who-401");
    const res = await api.initiate(bearer(s.token), s.userId, { currency: "btc", amount: 0.1, address: TO.btc });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.data.id as string;
    const code = codeIn((await api.mailsOf(s, id))[0] as Mail, id);
    await api.deactivate(s.key, s.userId);
    expectPlatformError(await api.confirm(bearer(s.token), s.userId, id, code), 401, "UNAUTHORIZED");
    for (const [name, call] of operations(api, s.userId, id)) {
      const r = await call(bearer(s.token));
      expect(r.status, `${name}: ${JSON.stringify(r.body)}`).toBe(401);
      expectPlatformError(r, 401, "UNAUTHORIZED");
    }
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("PENDING");
    expect((await api.btc(s))?.held).toBe("0.10000000");
    // nor can the owner start, confirm or re-code one for the inactive user
    expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await api.resend(apiKey(s.key), s.userId, id), 404, "RESOURCE_NOT_FOUND");
    expect(await api.mailsOf(s, id)).toHaveLength(1);
    expect((await api.btc(s))?.held).toBe("0.10000000");
  });

  it("keeps a deactivated or deleted user's withdrawals readable by the owner, who can still cancel them (the held money returns)", async () => {
    const api = A();
    const s = await api.scene("who-gone");
    const first = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const second = await api.started(s, { currency: "btc", amount: 0.2, address: TO.btc });
    await api.deactivate(s.key, s.userId);
    expect((await api.get(apiKey(s.key), s.userId, first.id)).body.data.status).toBe("PENDING");
    expect((await api.cancel(apiKey(s.key), s.userId, first.id)).status).toBe(204);
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.80000000", "0.20000000"));
    expect((await api.http().delete(`${BASE}/users/${s.userId}`).set("x-api-key", s.key)).status).toBe(204);
    const list = await api.list(apiKey(s.key), s.userId);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect((list.body.data as WithdrawalRecord[]).map((w) => [w.id, w.status])).toEqual([
      [second.id, "PENDING"],
      [first.id, "CANCELLED"],
    ]);
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, second.id, second.code), 404, "RESOURCE_NOT_FOUND");
    expect((await api.cancel(apiKey(s.key), s.userId, second.id)).status).toBe(204);
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
  });

  it("answers 404 to the owner key of another customer and 401 without a credential", async () => {
    const api = A();
    const s = await api.scene("who-404");
    const mine = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const stranger = await api.tenant("who-404-stranger");
    for (const [name, call] of operations(api, s.userId, mine.id)) {
      const res = await call(apiKey(stranger.key));
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(404);
      expectPlatformError(res, 404, "USER_NOT_FOUND");
      expectPlatformError(await call(anonymous), 401, "UNAUTHORIZED");
    }
    // the stranger's outbox does not show this customer's emails
    expect(await api.mails(stranger.key)).toHaveLength(0);
    expect(await api.mails(stranger.key, s.email)).toHaveLength(0);
    expect((await api.get(apiKey(s.key), s.userId, mine.id)).body.data.status).toBe("PENDING");
  });
});

describe("concurrency on the real database (docs/decisions/withdrawals.md)", () => {
  it("50 parallel confirms with the right code: exactly one 200 COMPLETED, one debit, the others ALREADY_CONFIRMED", async () => {
    const api = A();
    const s = await api.scene("race-confirm");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.4, address: TO.btc });
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => api.confirm(i % 2 ? apiKey(s.key) : bearer(s.token), s.userId, id, code)));
    const ok = responses.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]?.body.data).toEqual({ id, status: "COMPLETED" });
    const refused = responses.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(49);
    for (const r of refused) expectPlatformError(r, 400, "ALREADY_CONFIRMED");

    expect(await api.btc(s)).toEqual(item("btc", "0.60000000", "0.60000000", ZERO));
    const txs = await api.transactions(apiKey(s.key), s.walletId, { "filter[where][type]": "withdrawal" });
    expect(txs).toHaveLength(1);
    const entries = await api.sql<{ kind: string; n: string }>(`select kind, count(*)::text as n from journal_entry where reference = ? group by kind order by kind`, [`withdrawal:${id}`]);
    expect(entries).toEqual([
      { kind: "debit", n: "1" },
      { kind: "hold", n: "1" },
    ]);
    expect(await t.services.ledger.verify(t.orm.em.fork())).toEqual(CLEAN);
  });

  it("50 parallel wrong codes: exactly 5 answer CONFIRMATION_CODE_INVALID, the rest WITHDRAWAL_BLOCKED (the counter loses no attempt)", async () => {
    const api = A();
    const s = await api.scene("race-wrong");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => api.confirm(apiKey(s.key), s.userId, id, wrong(code, i + 1))));
    const invalid = responses.filter((r) => r.status === 400);
    const blocked = responses.filter((r) => r.status === 403);
    expect(invalid).toHaveLength(5);
    expect(blocked).toHaveLength(45);
    for (const r of invalid) expectPlatformError(r, 400, "CONFIRMATION_CODE_INVALID");
    for (const r of blocked) expectPlatformError(r, 403, "WITHDRAWAL_BLOCKED");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 403, "WITHDRAWAL_BLOCKED");
  });

  it("25 confirms racing 25 cancels: exactly one wins and the money moves once", async () => {
    const api = A();
    const s = await api.scene("race-confirm-cancel");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.4, address: TO.btc });
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? api.confirm(apiKey(s.key), s.userId, id, code) : api.cancel(apiKey(s.key), s.userId, id))),
    );
    const wins = responses.filter((r) => r.status === 200 || r.status === 204);
    expect(wins).toHaveLength(1);
    for (const r of responses.filter((x) => x.status !== 200 && x.status !== 204)) expect(r.status).toBe(400);
    const status = (await api.get(apiKey(s.key), s.userId, id)).body.data.status;
    if (wins[0]?.status === 200) {
      expect(status).toBe("COMPLETED");
      expect(await api.btc(s)).toEqual(item("btc", "0.60000000", "0.60000000", ZERO));
    } else {
      expect(status).toBe("CANCELLED");
      expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
    }
    expect(await t.services.ledger.verify(t.orm.em.fork())).toEqual(CLEAN);
  });

  it("20 parallel initiates of 0.1 btc against a balance of 1: exactly 10 accepted, available never below zero, held 1", async () => {
    const api = A();
    const s = await api.scene("race-initiate");
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }, `race-${i}`)),
    );
    const accepted = responses.filter((r) => r.status === 201);
    expect(accepted).toHaveLength(10);
    for (const r of responses.filter((x) => x.status !== 201)) expectPlatformError(r, 400, "INSUFFICIENT_BALANCE");
    expect(new Set(accepted.map((r) => r.body.data.id)).size).toBe(10);
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", ZERO, "1.00000000"));
    const list = await api.list(apiKey(s.key), s.userId, { "filter[where][status]": "PENDING" });
    expect(list.body.meta.pagination.records.total).toBe(10);
    expect(await api.mails(s.key, s.email)).toHaveLength(10);
    expect(await t.services.ledger.verify(t.orm.em.fork())).toEqual(CLEAN);
  });

  it("50 parallel initiates with one Idempotency-Key: one withdrawal, one hold, one email; every answer is that withdrawal", async () => {
    const api = A();
    const s = await api.scene("race-idem");
    // the whole balance: a repeat must not be refused for the money its own first request holds
    const body = { currency: "btc", amount: 1, address: TO.btc };
    const responses = await Promise.all(Array.from({ length: 50 }, () => api.initiate(apiKey(s.key), s.userId, body, "one-key")));
    const answers: Record<string, number> = {};
    for (const r of responses) {
      const answer = `${r.status} ${r.body.errors?.[0]?.code ?? ""}`.trim();
      answers[answer] = (answers[answer] ?? 0) + 1;
    }
    expect(answers).toEqual({ "201": 50 });
    const ids = new Set(responses.map((r) => r.body.data?.id));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.body.data?.withdraw.is_duplicate === false)).toHaveLength(1);
    expect(responses.filter((r) => r.body.data?.withdraw.is_duplicate === true)).toHaveLength(49);
    for (const r of responses) expect(r.body.data?.withdraw.idempotency_key).toBe("one-key");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", ZERO, "1.00000000"));
    expect((await api.list(apiKey(s.key), s.userId)).body.meta.pagination.records.total).toBe(1);
    expect(await api.mails(s.key, s.email)).toHaveLength(1);
  });

  it("50 parallel initiates with one Idempotency-Key and a small amount: one withdrawal, no 409", async () => {
    const api = A();
    const s = await api.scene("race-idem-small");
    const body = { currency: "btc", amount: 0.1, address: TO.btc };
    const responses = await Promise.all(Array.from({ length: 50 }, () => api.initiate(bearer(s.token), s.userId, body, "small-key")));
    expect(responses.map((r) => r.status).filter((x) => x !== 201)).toEqual([]);
    expect(new Set(responses.map((r) => r.body.data.id)).size).toBe(1);
    expect(responses.filter((r) => r.body.data.withdraw.is_duplicate === false)).toHaveLength(1);
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.90000000", "0.10000000"));
    expect(await api.mails(s.key, s.email)).toHaveLength(1);
  });

  it("20 parallel initiates of 0.1 btc against a daily cap of 1.5: exactly 15 accepted (caps hold under concurrency)", async () => {
    const api = C();
    const s = await api.scene("race-caps", [BTC], [[BTC, 5]]);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }, `cap-race-${i}`)),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(15);
    for (const r of responses.filter((x) => x.status !== 201)) expectPlatformError(r, 400, "DAILY_LIMIT_EXCEEDED");
    expect(await api.btc(s)).toEqual(item("btc", "5.00000000", "3.50000000", "1.50000000"));
  });

  it("20 parallel initiates with one Idempotency-Key for the whole daily cap: every answer is the one withdrawal", async () => {
    const api = C();
    const s = await api.scene("race-idem-cap", [BTC], [[BTC, 5]]);
    // 1 btc (the per-withdrawal cap) twice would pass the daily 1.5: a repeat must not count itself
    const body = { currency: "btc", amount: 1, address: TO.btc };
    const responses = await Promise.all(Array.from({ length: 20 }, () => api.initiate(apiKey(s.key), s.userId, body, "cap-key")));
    const answers: Record<string, number> = {};
    for (const r of responses) {
      const answer = `${r.status} ${r.body.errors?.[0]?.code ?? ""}`.trim();
      answers[answer] = (answers[answer] ?? 0) + 1;
    }
    expect(answers).toEqual({ "201": 20 });
    expect(new Set(responses.map((r) => r.body.data?.id)).size).toBe(1);
    expect(await api.btc(s)).toEqual(item("btc", "5.00000000", "4.00000000", "1.00000000"));
  });

  it("leaves the whole ledger consistent after every test of this file", async () => {
    expect(await t.services.ledger.verify(t.orm.em.fork())).toEqual(CLEAN);
    expect(await tc.services.ledger.verify(tc.orm.em.fork())).toEqual(CLEAN);
  });
});
