/**
 * Reading custodial wallets over HTTP on a real PostgreSQL (reference: "Wallet", "Wallet balance",
 * "Wallet transaction", "Wallets (owner API key or user token)", "Currency", "Trading pair",
 * "Currencies (owner API key)", "Authentication", the Wallet codes, "Limits";
 * docs/decisions/customers-users-and-wallets.md): listWallets (order, paging, meta.pagination),
 * getWalletBalance, listCurrencies and listTradingPairs.
 */
import { describe, expect, it } from "vitest";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import {
  anonymous, apiKey, type BalanceItem, bearer, BTC, ETH, linkPath, linkQuery, SOL,
  type TransactionRecord, units, UNKNOWN_ID, USDC_SOLANA, USDT_ETH, USDT_POLYGON, USDT_TRON,
  useWalletsScene, walletNames, type WalletRecord, ZERO,
} from "../support/wallets-scene.js";
import { clockPast } from "../support/wait.js";

const wallets = useWalletsScene();
const {
  api, tenant, activeUser, scene, listWallets, getBalance, listTransactions, sandboxDeposit,
  listCurrencies, listPairs, newWallet, deposited, balancesOf,
} = wallets;

describe("GET /users/{user_id}/wallets (listWallets)", () => {
  it("lists the user's wallets newest first with addresses and meta.pagination", async () => {
    const { key, userId } = await scene("list");
    const created: WalletRecord[] = [];
    for (const name of ["Alpha", "Bravo", "Charlie"]) {
      const wallet = await newWallet(apiKey(key), userId, [BTC, USDT_ETH], { name });
      created.push(wallet);
      await clockPast(wallet.created_at); // the next wallet's created_at is a later millisecond
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
      const wallet = await newWallet(apiKey(key), userId, [BTC], { name });
      await clockPast(wallet.created_at); // the next wallet's created_at is a later millisecond
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

  it("answers 404 WALLET_NOT_FOUND for an unknown wallet id (any case) and 400 INVALID_WALLET_ID for one that is no UUID", async () => {
    const { key } = await tenant("balance-404");
    expectPlatformError(await getBalance(apiKey(key), UNKNOWN_ID), 404, "WALLET_NOT_FOUND");
    expectPlatformError(await getBalance(apiKey(key), UNKNOWN_ID.toUpperCase()), 404, "WALLET_NOT_FOUND");
    // docs/decisions/customers-users-and-wallets.md "Wallets"
    expectPlatformError(await getBalance(apiKey(key), "not-a-wallet"), 400, "INVALID_WALLET_ID");
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
    // fiat is held on its bank rail (docs/decisions/fiat.md "Rails and virtual accounts")
    for (const code of ["usd", "eur"]) {
      expect(currencies.find((c) => c.code === code)).toMatchObject({ precision: 2, is_fiat: true, can_deposit: true, can_withdraw: true, is_custody_enabled: true, is_confirmations_needed: false });
    }
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
      expectPlatformError(await call(bearer(wallets.operator)), 403, "FORBIDDEN");
    }
  });
});
