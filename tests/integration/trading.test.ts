/**
 * Trading over HTTP on a real PostgreSQL (docs/decisions/trading.md; spec/platform/trading.tsp):
 * quote and order end to end with the balances, the `trade` wallet transactions and the ledger
 * after; every refusal of the trading group the sandbox can produce; the owner key and user tokens;
 * Idempotency-Key; Set Sandbox Price; and under concurrency: parallel orders of distinct quotes over
 * the balance, and one quote sent ten times at once. Every response is checked against the
 * platform document by the test app.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError, Walk } from "../support/fixtures.js";
import { SANDBOX_MID_PRICES } from "../../src/providers/sandbox-trading.js";
import { SWITCH_REFRESH_MS } from "../../src/modules/currencies/service.js";

const t = useTestApp({ QUOTE_TTL_S: "2" });
const CLEAN = { unbalancedEntries: [], cacheMismatches: [], negativeAccounts: [], unbalancedCurrencies: [] };
type Net = { name: string; currency: string };
const BTC: Net = { name: "networks/bitcoin", currency: "btc" };
const ETH: Net = { name: "networks/ethereum", currency: "eth" };
const USDT: Net = { name: "networks/ethereum", currency: "usdt" };

let walk: Walk;
let seq = 0;
beforeAll(() => {
  walk = new Walk(t.express);
});

interface Scene {
  key: string;
  userId: string;
  token: string;
  walletId: string;
}

/** A fresh tenant, an active user with a wallet of btc, eth and usdt, funded with `usdt` and `btc`. */
async function scene(funds: { usdt?: number; btc?: number } = { usdt: 10000, btc: 1 }): Promise<Scene> {
  const { key } = await walk.tenant(`trd-${++seq}-${Date.now().toString(36)}`);
  const u = await walk.activeUserWithToken(key);
  const res = await t.api().post(`${BASE}/users/${u.userId}/wallets`).set("x-api-key", key).send({ name: `trader ${++seq}`, networks: [BTC, ETH, USDT] });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const walletId = res.body.data.wallet_id as string;
  for (const [net, amount] of [[USDT, funds.usdt], [BTC, funds.btc]] as const) {
    if (!amount) continue;
    const dep = await t.api().post(`${BASE}/sandbox/deposits`).set("x-api-key", key).send({ wallet_id: walletId, network: net.name, currency: net.currency, amount });
    expect(dep.status, JSON.stringify(dep.body)).toBe(201);
  }
  return { key, userId: u.userId, token: u.token, walletId };
}

const quote = (s: Scene, body: Record<string, unknown>) =>
  t.api().post(`${BASE}/users/${s.userId}/quotes`).set("x-api-key", s.key).send({ wallet_id: s.walletId, symbol: "BTCUSDT", side: "buy", quantity: 0.01, ...body });
const order = (s: Scene, quoteId: string, key?: string) => {
  const r = t.api().post(`${BASE}/users/${s.userId}/orders`).set("x-api-key", s.key);
  if (key) r.set("Idempotency-Key", key);
  return r.send({ quote_id: quoteId });
};
const balances = async (s: Scene): Promise<Record<string, string>> => {
  const res = await t.api().get(`${BASE}/wallets/${s.walletId}/balance`).set("x-api-key", s.key);
  expect(res.status).toBe(200);
  return Object.fromEntries((res.body.data.balance as { currency: string; available: string }[]).map((b) => [b.currency, b.available]));
};
const verify = () => t.services.ledger.verify(t.db);

describe("quote and order", () => {
  it("a buy: the quote's terms, the order, the balances, both trade transactions, and a balanced ledger", async () => {
    const s = await scene();
    const q = await quote(s, {});
    expect(q.status, JSON.stringify(q.body)).toBe(201);
    expect(q.body.data).toMatchObject({ symbol: "BTCUSDT", base: "btc", quote: "usdt", side: "buy", quantity: "0.01000000", price: "65065.00000000", fees: "0.65065000", total: "651.30065000" });
    const o = await order(s, q.body.data.quote_id as string);
    expect(o.status, JSON.stringify(o.body)).toBe(201);
    expect(o.body.data).toMatchObject({ quote_id: q.body.data.quote_id, status: "FILLED", total: "651.30065000", is_duplicate: false });
    expect(await balances(s)).toMatchObject({ usdt: "9348.69935000", btc: "1.01000000" });

    const txs = await t.api().get(`${BASE}/wallets/${s.walletId}/transactions?filter[where][type]=trade`).set("x-api-key", s.key);
    expect(txs.status, JSON.stringify(txs.body)).toBe(200);
    const trades = (txs.body.data as { transaction: Record<string, unknown> }[]).map((x) => x.transaction).filter((x) => x.action === "trade");
    expect(trades.map((x) => [x.currency, x.amount, x.fees, x.net_proceeds, x.price, x.symbol, x.order_id, x.trade_id]).sort()).toEqual([
      ["btc", 0.01, 0, 0.01, 65065, "BTCUSDT", o.body.data.order_id, o.body.data.trade_id],
      ["usdt", 651.30065, 0.65065, 651.30065, 65065, "BTCUSDT", o.body.data.order_id, o.body.data.trade_id],
    ]);
    expect(await verify()).toEqual(CLEAN);
  });

  it("a sell with a user token; Get Order and List Orders; the sandbox price moves the next quote", async () => {
    const s = await scene();
    const q = await t.api().post(`${BASE}/users/${s.userId}/quotes`).set("Authorization", `Bearer ${s.token}`).send({ wallet_id: s.walletId, symbol: "btcusdt", side: "sell", quantity: 0.01 });
    expect(q.status, JSON.stringify(q.body)).toBe(201);
    expect(q.body.data).toMatchObject({ price: "64935.00000000", total: "648.70065000" });
    const o = await t.api().post(`${BASE}/users/${s.userId}/orders`).set("Authorization", `Bearer ${s.token}`).send({ quote_id: q.body.data.quote_id });
    expect(o.status, JSON.stringify(o.body)).toBe(201);
    expect(await balances(s)).toMatchObject({ usdt: "10648.70065000", btc: "0.99000000" });
    const got = await t.api().get(`${BASE}/users/${s.userId}/orders/${o.body.data.order_id as string}`).set("x-api-key", s.key);
    expect(got.body.data).toMatchObject({ order_id: o.body.data.order_id, side: "sell", is_duplicate: false });
    const list = await t.api().get(`${BASE}/users/${s.userId}/orders?filter[limit]=10`).set("x-api-key", s.key);
    expect(list.status).toBe(200);
    expect((list.body.data as { order_id: string }[]).map((x) => x.order_id)).toEqual([o.body.data.order_id]);
    const price = await t.api().put(`${BASE}/sandbox/prices/BTCUSDT`).set("x-api-key", s.key).send({ price: 70000 });
    expect(price.status, JSON.stringify(price.body)).toBe(200);
    expect((await quote(s, {})).body.data).toMatchObject({ price: "70070.00000000" });
    expectPlatformError(await t.api().put(`${BASE}/sandbox/prices/BTCUSDT`).set("x-api-key", s.key).send({ price: 65000.123456789 }), 400, "INVALID_AMOUNT");
    expectPlatformError(await t.api().get(`${BASE}/users/${s.userId}/orders/${q.body.data.quote_id as string}`).set("x-api-key", s.key), 404, "NOT_FOUND");
  });
});

describe("the catalogue", () => {
  it("every pair GET /currencies/pairs lists is tradable (a quote) or answers PAIR_NOT_AVAILABLE", async () => {
    const { key } = await walk.tenant(`trd-cat-${++seq}-${Date.now().toString(36)}`);
    const u = await walk.activeUserWithToken(key);
    const networks = [BTC, ETH, USDT, { name: "networks/ethereum", currency: "usdc" }, { name: "networks/solana", currency: "sol" }, { name: "networks/tron", currency: "trx" }, { name: "networks/polygon", currency: "pol" }];
    const made = await t.api().post(`${BASE}/users/${u.userId}/wallets`).set("x-api-key", key).send({ name: `catalogue ${++seq}`, networks });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const pairs = await t.api().get(`${BASE}/currencies/pairs`).set("x-api-key", key);
    expect(pairs.status).toBe(200);
    const answers: Record<string, string> = {};
    for (const pair of pairs.body.data as { symbol: string; base: string; quote: string }[]) {
      const mid = SANDBOX_MID_PRICES[`${pair.base.toLowerCase()}/${pair.quote.toLowerCase()}`];
      // about 20 units of the quote currency: inside the sandbox's bounds for every pair it trades
      const quantity = mid === undefined ? 1 : Number((20 / Number(mid)).toFixed(6));
      const res = await t.api().post(`${BASE}/users/${u.userId}/quotes`).set("x-api-key", key).send({ wallet_id: made.body.data.wallet_id, symbol: pair.symbol, side: "buy", quantity });
      answers[pair.symbol] = res.status === 201 ? "quote" : String(res.body.errors?.[0]?.code);
    }
    expect(Object.keys(answers).length).toBeGreaterThan(0);
    for (const [symbol, answer] of Object.entries(answers)) expect(["quote", "PAIR_NOT_AVAILABLE"], symbol).toContain(answer);
    expect(Object.values(answers).filter((a) => a === "quote")).toHaveLength(Object.keys(SANDBOX_MID_PRICES).length);
  });
});

describe("refusals of the trading group", () => {
  it.each([
    ["INVALID_SIDE", { side: "hold" }],
    ["INVALID_CURRENCY_PAIR", { symbol: "DOGEUSDT" }],
    ["PAIR_NOT_AVAILABLE", { symbol: "BTCUSD" }],
    ["QUANTITY_REQUIRED", { quantity: undefined }],
    ["QUANTITY_MUST_BE_POSITIVE", { quantity: 0 }],
    ["INVALID_AMOUNT", { quantity: 0.000000001 }],
    ["MARKET_CLOSED", { quantity: 13.13131313 }],
    ["LIQUIDITY_INSUFFICIENT", { quantity: 66.66666666 }],
    ["MINIMUM_ORDER_NOT_MET", { quantity: 0.00001 }],
    ["MAXIMUM_ORDER_EXCEEDED", { quantity: 16 }],
    ["UNSUPPORTED_CURRENCY", { symbol: "SOLUSDT" }],
  ])("%s", async (code, body) => {
    const s = await scene({});
    expectPlatformError(await quote(s, body), 400, code);
  });

  it("orders: QUOTE_NOT_FOUND, QUOTE_INVALID (executed; another user's), QUOTE_EXPIRED, INSUFFICIENT_BALANCE", async () => {
    const s = await scene({ usdt: 700 });
    expectPlatformError(await order(s, "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e"), 404, "QUOTE_NOT_FOUND");
    const q = (await quote(s, {})).body.data.quote_id as string;
    expect((await order(s, q)).status).toBe(201);
    expectPlatformError(await order(s, q), 400, "QUOTE_INVALID");

    const other = await walk.activeUserWithToken(s.key);
    expectPlatformError(await t.api().post(`${BASE}/users/${other.userId}/orders`).set("x-api-key", s.key).send({ quote_id: (await quote(s, {})).body.data.quote_id }), 400, "QUOTE_INVALID");

    const stale = (await quote(s, {})).body.data.quote_id as string;
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expectPlatformError(await order(s, stale), 400, "QUOTE_EXPIRED");

    const big = (await quote(s, { quantity: 0.01 })).body.data.quote_id as string;
    expectPlatformError(await order(s, big), 400, "INSUFFICIENT_BALANCE");
    expect(await verify()).toEqual(CLEAN);
  });

  it("a user token acts only for its own user (403); another customer's quote is not found", async () => {
    const s = await scene();
    const other = await walk.activeUserWithToken(s.key);
    const res = await t.api().post(`${BASE}/users/${s.userId}/quotes`).set("Authorization", `Bearer ${other.token}`).send({ wallet_id: s.walletId, symbol: "BTCUSDT", side: "buy", quantity: 0.01 });
    expectPlatformError(res, 403, "FORBIDDEN");
    const stranger = await scene();
    const q = (await quote(s, {})).body.data.quote_id as string;
    expectPlatformError(await order(stranger, q), 404, "QUOTE_NOT_FOUND");
  });

  it("a quote's wallet_id that is no UUID answers 400 INVALID_WALLET_ID before the user and the pair are checked", async () => {
    const s = await scene();
    // docs/decisions/customers-users-and-wallets.md "Wallets"
    const res = await quote(s, { wallet_id: "main-wallet", symbol: "NOPE" });
    expectPlatformError(res, 400, "INVALID_WALLET_ID");
    expect(res.body.errors[0].field).toBe("wallet_id");
  });
});

describe("exactly once", () => {
  it("the same Idempotency-Key and body answers the first order; another quote with that key is 409", async () => {
    const s = await scene();
    const q = (await quote(s, {})).body.data.quote_id as string;
    const first = await order(s, q, "ord-1");
    const again = await order(s, q, "ord-1");
    expect(again.status).toBe(201);
    expect(again.body.data).toMatchObject({ order_id: first.body.data.order_id, is_duplicate: true });
    const q2 = (await quote(s, {})).body.data.quote_id as string;
    expectPlatformError(await order(s, q2, "ord-1"), 409, "IDEMPOTENCY_KEY_REUSED");
  });

  it("one quote sent 10 times at once fills once", async () => {
    const s = await scene();
    const q = (await quote(s, {})).body.data.quote_id as string;
    const answers = await Promise.all(Array.from({ length: 10 }, () => order(s, q)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 201)) expectPlatformError(r, 400, "QUOTE_INVALID");
    expect(await balances(s)).toMatchObject({ usdt: "9348.69935000", btc: "1.01000000" });
  });

  it("one quote sent 10 times at once when the switches' copy is due for a read: no stall, fills once", async () => {
    // Ten orders hold the pool's ten connections; were the switches read inside the order's
    // transaction, the one holding the quote's lock would wait for an eleventh (docs/architecture.md
    // "Reaching the database").
    const s = await scene();
    const q = (await quote(s, {})).body.data.quote_id as string;
    await new Promise((resolve) => setTimeout(resolve, SWITCH_REFRESH_MS + 100));
    const answers = await Promise.all(Array.from({ length: 10 }, () => order(s, q)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 201)) expectPlatformError(r, 400, "QUOTE_INVALID");
  });

  it("10 parallel orders of distinct quotes over the balance: the balance never goes negative and the ledger stays balanced", async () => {
    const s = await scene({ usdt: 2000 });
    const quotes = await Promise.all(Array.from({ length: 10 }, () => quote(s, {})));
    const answers = await Promise.all(quotes.map((q) => order(s, q.body.data.quote_id as string)));
    const filled = answers.filter((r) => r.status === 201);
    expect(filled).toHaveLength(3);
    for (const r of answers.filter((x) => x.status !== 201)) expectPlatformError(r, 400, "INSUFFICIENT_BALANCE");
    expect(await balances(s)).toMatchObject({ usdt: "46.09805000", btc: "0.03000000" });
    expect(await verify()).toEqual(CLEAN);
  });
});
