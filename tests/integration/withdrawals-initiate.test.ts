/**
 * Initiating two-step crypto withdrawals over HTTP on a real PostgreSQL (reference: "Withdrawal",
 * "Withdrawals (owner API key or user token)", the Withdrawal codes; docs/decisions/withdrawals.md
 * #initiate, #funds, #how-a-code-reaches-the-user): initiateWithdrawal's answer, the move from
 * available to held, the code email in the sandbox outbox, every sandbox network's addresses, and
 * every refusal in the order of the checks (an amount read from the JSON text:
 * docs/security.md#money-stays-exact). The wallet withdrawn from and the caps:
 * withdrawals-wallet-and-caps.test.ts; Idempotency-Key: withdrawals-idempotency.test.ts. Every
 * response is validated against the contract by the test app.
 */
import { describe, expect, it } from "vitest";
import { apiOf } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import {
  apiKey, BAD, BTC, codeIn, ETH, expiryIn, item, type Mail, SOL, TO, TRX, UNKNOWN_ID, USDT_ETH,
  useWithdrawalsApp, UUID, ZERO,
} from "../support/withdrawals-scene.js";

/** The default configuration (code TTL 600 s, 5 attempts, default caps). */
const { app: t, api: A } = useWithdrawalsApp("default");

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
      withdrawal_type: "crypto",
      bank_account_id: null,
      payout: null,
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
      ["a fiat currency (usd): the fiat path's", 400, "INVALID_CURRENCY", { currency: "usd", amount: 20, address: TO.btc }],
      ["a fiat currency (EUR): the fiat path's", 400, "INVALID_CURRENCY", { currency: "EUR", amount: 20, address: TO.btc }],
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
      ["fiat and a negative amount", 400, "INVALID_CURRENCY", { currency: "usd", amount: -1, address: "nope" }],
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
});
