/**
 * Market orders over HTTP on a real PostgreSQL (docs/decisions/trading.md "Market orders";
 * spec/platform/trading.tsp Create Order without `quote_id`): a buy and a sell fill at the price a
 * quote would give now and move the same amounts a quoted order moves; the price guard on both
 * sides (exactly at the bound fills); the 422s of the body's two forms; QUANTITY_REQUIRED and the
 * quote's refusals; ORDER_FAILED after the bounds and the balance, moving nothing; the
 * Idempotency-Key space shared with quoted orders. Every response is checked against the platform
 * document by the test app.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError, Walk } from "../support/fixtures.js";

const t = useTestApp();
const CLEAN = { unbalancedEntries: [], cacheMismatches: [], negativeAccounts: [], unbalancedCurrencies: [] };
type Net = { name: string; currency: string };
const NETWORKS: Net[] = [
  { name: "networks/bitcoin", currency: "btc" },
  { name: "networks/ethereum", currency: "eth" },
  { name: "networks/ethereum", currency: "usdt" },
  { name: "networks/polygon", currency: "pol" },
];

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

/** A fresh tenant, an active user with a wallet of btc, eth, usdt and pol, funded with `usdt` and `btc`. */
async function scene(funds: { usdt?: number; btc?: number } = { usdt: 10000, btc: 1 }): Promise<Scene> {
  const { key } = await walk.tenant(`mkt-${++seq}-${Date.now().toString(36)}`);
  const u = await walk.activeUserWithToken(key);
  const res = await t.api().post(`${BASE}/users/${u.userId}/wallets`).set("x-api-key", key).send({ name: `market ${++seq}`, networks: NETWORKS });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const walletId = res.body.data.wallet_id as string;
  for (const [currency, network, amount] of [["usdt", "networks/ethereum", funds.usdt], ["btc", "networks/bitcoin", funds.btc]] as const) {
    if (!amount) continue;
    const dep = await t.api().post(`${BASE}/sandbox/deposits`).set("x-api-key", key).send({ wallet_id: walletId, network, currency, amount });
    expect(dep.status, JSON.stringify(dep.body)).toBe(201);
  }
  return { key, userId: u.userId, token: u.token, walletId };
}

/** Create Order as a market order of `s` (a 0.01 btc buy of BTCUSDT unless `body` says otherwise; `undefined` drops a field). */
const market = (s: Scene, body: Record<string, unknown> = {}, key?: string) => {
  const r = t.api().post(`${BASE}/users/${s.userId}/orders`).set("x-api-key", s.key);
  if (key) r.set("Idempotency-Key", key);
  return r.send({ wallet_id: s.walletId, symbol: "BTCUSDT", side: "buy", quantity: 0.01, ...body });
};
const quoted = async (s: Scene, key: string) => {
  const q = await t.api().post(`${BASE}/users/${s.userId}/quotes`).set("x-api-key", s.key).send({ wallet_id: s.walletId, symbol: "BTCUSDT", side: "buy", quantity: 0.01 });
  expect(q.status, JSON.stringify(q.body)).toBe(201);
  return t.api().post(`${BASE}/users/${s.userId}/orders`).set("x-api-key", s.key).set("Idempotency-Key", key).send({ quote_id: q.body.data.quote_id });
};
const balances = async (s: Scene): Promise<Record<string, string>> => {
  const res = await t.api().get(`${BASE}/wallets/${s.walletId}/balance`).set("x-api-key", s.key);
  expect(res.status).toBe(200);
  return Object.fromEntries((res.body.data.balance as { currency: string; available: string }[]).map((b) => [b.currency, b.available]));
};
const trades = async (s: Scene): Promise<Record<string, unknown>[]> => {
  const txs = await t.api().get(`${BASE}/wallets/${s.walletId}/transactions?filter[where][type]=trade`).set("x-api-key", s.key);
  expect(txs.status, JSON.stringify(txs.body)).toBe(200);
  return (txs.body.data as { transaction: Record<string, unknown> }[]).map((x) => x.transaction).filter((x) => x.action === "trade");
};
const orders = async (s: Scene): Promise<Record<string, unknown>[]> => {
  const list = await t.api().get(`${BASE}/users/${s.userId}/orders?filter[limit]=100`).set("x-api-key", s.key);
  expect(list.status).toBe(200);
  return list.body.data as Record<string, unknown>[];
};
const verify = () => t.services.ledger.verify(t.db);
const setPrice = async (s: Scene, symbol: string, price: number | string) => {
  const res = await t.api().put(`${BASE}/sandbox/prices/${symbol}`).set("x-api-key", s.key).send({ price });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
};

describe("a market order fills at the price of the moment", () => {
  it("a buy: the quote's figures at this instant, quote_id null, the balances, both trade transactions, Get Order, a balanced ledger", async () => {
    const s = await scene();
    const o = await market(s);
    expect(o.status, JSON.stringify(o.body)).toBe(201);
    expect(o.body.data).toMatchObject({
      quote_id: null, wallet_id: s.walletId, user_id: s.userId, symbol: "BTCUSDT", base: "btc", quote: "usdt", side: "buy",
      quantity: "0.01000000", price: "65065.00000000", fees: "0.65065000", total: "651.30065000", status: "FILLED", is_duplicate: false,
    });
    expect(await balances(s)).toMatchObject({ usdt: "9348.69935000", btc: "1.01000000" });
    const orderId = o.body.data.order_id as string;
    expect((await trades(s)).map((x) => [x.currency, x.amount, x.fees, x.net_proceeds, x.price, x.symbol, x.order_id, x.trade_id]).sort()).toEqual([
      ["btc", 0.01, 0, 0.01, 65065, "BTCUSDT", orderId, o.body.data.trade_id],
      ["usdt", 651.30065, 0.65065, 651.30065, 65065, "BTCUSDT", orderId, o.body.data.trade_id],
    ]);
    const got = await t.api().get(`${BASE}/users/${s.userId}/orders/${orderId}`).set("x-api-key", s.key);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.data).toMatchObject({ order_id: orderId, quote_id: null, total: "651.30065000", is_duplicate: false });
    expect((await orders(s)).map((x) => [x.order_id, x.quote_id])).toEqual([[orderId, null]]);
    expect(await verify()).toEqual(CLEAN);
  });

  it("a sell with the user's token, case-insensitive symbol; the sandbox price moves the next market order", async () => {
    const s = await scene();
    const o = await t.api().post(`${BASE}/users/${s.userId}/orders`).set("Authorization", `Bearer ${s.token}`).send({ wallet_id: s.walletId, symbol: "btcusdt", side: "sell", quantity: 0.01 });
    expect(o.status, JSON.stringify(o.body)).toBe(201);
    expect(o.body.data).toMatchObject({ quote_id: null, side: "sell", price: "64935.00000000", fees: "0.64935000", total: "648.70065000" });
    expect(await balances(s)).toMatchObject({ usdt: "10648.70065000", btc: "0.99000000" });
    await setPrice(s, "BTCUSDT", 70000);
    const next = await market(s);
    expect(next.status, JSON.stringify(next.body)).toBe(201);
    expect(next.body.data).toMatchObject({ price: "70070.00000000", fees: "0.70070000", total: "701.40070000" });
    expect(await balances(s)).toMatchObject({ usdt: "9947.29995000", btc: "1.00000000" });
    expect(await verify()).toEqual(CLEAN);
  });
});

describe("the price guard", () => {
  // At the sandbox's mid 65000 with a 20 bps spread, a buy executes at 65065 and a sell at 64935.
  it.each([
    ["buy", 65000, 10, 201], // bound 65065: exactly the execution price
    ["buy", 65000, 9, 400], // bound 65058.5
    ["buy", 64800, undefined, 201], // default 50 bps: bound 65124
    ["buy", 64700, undefined, 400], // default 50 bps: bound 65023.5
    ["buy", 65065, 0, 201],
    ["buy", 66000, 0, 201], // better than expected
    ["sell", 65000, 10, 201], // bound 64935: exactly the execution price
    ["sell", 65000, 9, 400], // bound 64941.5
    ["sell", 65200, undefined, 201], // default 50 bps: bound 64874
    ["sell", 65300, undefined, 400], // default 50 bps: bound 64973.5
    ["sell", 64000, 0, 201], // better than expected
  ] as const)("%s expecting %d with %s bps: %d", async (side, expected, bps, status) => {
    const s = await scene();
    const before = await balances(s);
    const res = await market(s, { side, expected_price: expected, max_slippage_bps: bps });
    if (status === 201) {
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.data.price).toBe(side === "buy" ? "65065.00000000" : "64935.00000000");
      return;
    }
    expectPlatformError(res, 400, "PRICE_CHANGED");
    expect(res.body.errors[0].message).toContain(side === "buy" ? "65065.00000000" : "64935.00000000");
    expect(res.body.errors[0].message).toContain(String(expected));
    expect(await balances(s)).toEqual(before);
    expect(await orders(s)).toEqual([]);
    expect(await trades(s)).toEqual([]);
  });

  it("max_slippage_bps without expected_price is ignored; the guard reads the price exactly", async () => {
    const s = await scene();
    expect((await market(s, { max_slippage_bps: 0 })).status).toBe(201);
    // 65064.99999999999999999 is 65065 as a double; read exactly, the buy at 65065 is above it
    const raw = (expected: string) =>
      t.api().post(`${BASE}/users/${s.userId}/orders`).set("x-api-key", s.key).set("Content-Type", "application/json")
        .send(`{"wallet_id":"${s.walletId}","symbol":"BTCUSDT","side":"buy","quantity":0.01,"expected_price":${expected},"max_slippage_bps":0}`);
    expectPlatformError(await raw("65064.99999999999999999"), 400, "PRICE_CHANGED");
    expect((await raw("65065.00000000000000001")).status).toBe(201);
  });
});

describe("the body's forms", () => {
  it.each([
    ["quote_id with a market field", { quote_id: "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e" }, "wallet_id"],
    ["no wallet_id", { wallet_id: undefined }, "wallet_id"],
    ["no symbol", { symbol: undefined }, "symbol"],
    ["no side", { side: undefined }, "side"],
    ["expected_price 0", { expected_price: 0 }, "expected_price"],
    ["expected_price negative", { expected_price: -1 }, "expected_price"],
    ["expected_price not a number", { expected_price: "65000" }, "expected_price"],
    ["max_slippage_bps above 1000", { expected_price: 65000, max_slippage_bps: 1001 }, "max_slippage_bps"],
    ["max_slippage_bps negative", { expected_price: 65000, max_slippage_bps: -1 }, "max_slippage_bps"],
    ["max_slippage_bps not an integer", { expected_price: 65000, max_slippage_bps: 1.5 }, "max_slippage_bps"],
  ])("%s: 422", async (_name, body, field) => {
    const s = await scene({});
    const res = await market(s, body);
    expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
    expect((res.body.errors as { field: string }[]).map((e) => e.field).join(" ")).toContain(field);
  });

  it("quote_id with only the guard's fields: 422 too; quote_id alone stays a quoted order", async () => {
    const s = await scene({});
    const res = await t.api().post(`${BASE}/users/${s.userId}/orders`).set("x-api-key", s.key).send({ quote_id: "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e", expected_price: 65000 });
    expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await t.api().post(`${BASE}/users/${s.userId}/orders`).set("x-api-key", s.key).send({ quote_id: "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e" }), 404, "QUOTE_NOT_FOUND");
  });

  it.each([
    ["QUANTITY_REQUIRED", { quantity: undefined }],
    ["QUANTITY_MUST_BE_POSITIVE", { quantity: 0 }],
    ["INVALID_AMOUNT", { quantity: 0.000000001 }],
    ["INVALID_SIDE", { side: "hold" }],
    ["INVALID_CURRENCY_PAIR", { symbol: "DOGEUSDT" }],
    ["PAIR_NOT_AVAILABLE", { symbol: "BTCUSD" }],
    ["UNSUPPORTED_CURRENCY", { symbol: "SOLUSDT" }],
    ["MARKET_CLOSED", { quantity: 13.13131313 }],
    ["LIQUIDITY_INSUFFICIENT", { quantity: 66.66666666 }],
    ["MINIMUM_ORDER_NOT_MET", { quantity: 0.00001 }],
    ["MAXIMUM_ORDER_EXCEEDED", { quantity: 16 }],
    ["INVALID_WALLET_ID", { wallet_id: "main-wallet" }],
    ["INSUFFICIENT_BALANCE", { quantity: 1 }],
  ])("%s (400), as a quote or a quoted order answers", async (code, body) => {
    const s = await scene({ usdt: 100 });
    expectPlatformError(await market(s, body), 400, code);
    expect(await balances(s)).toMatchObject({ usdt: "100.00000000" });
  });

  it("another user's wallet: 404 WALLET_NOT_FOUND", async () => {
    const s = await scene({});
    const other = await walk.activeUserWithToken(s.key);
    const res = await t.api().post(`${BASE}/users/${other.userId}/orders`).set("x-api-key", s.key).send({ wallet_id: s.walletId, symbol: "BTCUSDT", side: "buy", quantity: 0.01 });
    expectPlatformError(res, 404, "WALLET_NOT_FOUND");
  });
});

describe("a provider that cannot fill", () => {
  // 77.77777777 pol at the sandbox's 0.5: about 38.93 usdt, inside the bounds.
  it("ORDER_FAILED moves nothing, and the key it was sent with stays free", async () => {
    const s = await scene();
    const before = await balances(s);
    const body = { symbol: "POLUSDT", quantity: 77.77777777 };
    expectPlatformError(await market(s, body, "fail-1"), 400, "ORDER_FAILED");
    expectPlatformError(await market(s, { ...body, side: "sell" }), 400, "INSUFFICIENT_BALANCE"); // the wallet holds no pol
    expect(await balances(s)).toEqual(before);
    expect(await orders(s)).toEqual([]);
    expect(await trades(s)).toEqual([]);
    expect(await verify()).toEqual(CLEAN);
    // a refused order does not use its key up: the same key and body are refused again, not answered as a duplicate
    expectPlatformError(await market(s, body, "fail-1"), 400, "ORDER_FAILED");
    expect((await market(s, { symbol: "POLUSDT", quantity: 77 }, "fail-1")).status).toBe(201);
  });

  it("is checked after the order bounds and the balance", async () => {
    const s = await scene({ usdt: 30, btc: 1 });
    expectPlatformError(await market(s, { quantity: 77.77777777 }), 400, "MAXIMUM_ORDER_EXCEEDED"); // 77.78 btc: about 5 million usdt
    expectPlatformError(await market(s, { symbol: "POLUSDT", quantity: 77.77777777 }), 400, "INSUFFICIENT_BALANCE"); // 38.93 usdt > 30
    expect(await balances(s)).toMatchObject({ usdt: "30.00000000", btc: "1.00000000" });
  });
});

describe("one Idempotency-Key space", () => {
  it("a repeat answers the first market order; another body with the key is 409", async () => {
    const s = await scene();
    const first = await market(s, {}, "mkt-1");
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    await setPrice(s, "BTCUSDT", 70000);
    const again = await market(s, { symbol: "btcusdt" }, "mkt-1"); // the pair in any case is the same body
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.data).toMatchObject({ order_id: first.body.data.order_id, quote_id: null, price: "65065.00000000", is_duplicate: true, idempotency_key: "mkt-1" });
    expect(await balances(s)).toMatchObject({ usdt: "9348.69935000", btc: "1.01000000" });
    expectPlatformError(await market(s, { quantity: 0.02 }, "mkt-1"), 409, "IDEMPOTENCY_KEY_REUSED");
    expectPlatformError(await market(s, { expected_price: 70000 }, "mkt-1"), 409, "IDEMPOTENCY_KEY_REUSED");
    expect(await orders(s)).toHaveLength(1);
  });

  it("a key of a quoted order, reused for a market order (and the other way round): 409 IDEMPOTENCY_KEY_REUSED", async () => {
    const s = await scene();
    const q = await quoted(s, "shared-1");
    expect(q.status, JSON.stringify(q.body)).toBe(201);
    expectPlatformError(await market(s, {}, "shared-1"), 409, "IDEMPOTENCY_KEY_REUSED");
    expect((await market(s, {}, "shared-2")).status).toBe(201);
    expectPlatformError(await quoted(s, "shared-2"), 409, "IDEMPOTENCY_KEY_REUSED");
    expect(await orders(s)).toHaveLength(2);
    expect(await balances(s)).toMatchObject({ usdt: "8697.39870000", btc: "1.02000000" });
  });

  it("parallel market orders over the balance: the balance never goes negative and the ledger stays balanced", async () => {
    const s = await scene({ usdt: 2000 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => market(s)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(3);
    for (const r of answers.filter((x) => x.status !== 201)) expectPlatformError(r, 400, "INSUFFICIENT_BALANCE");
    expect(await balances(s)).toMatchObject({ usdt: "46.09805000", btc: "0.03000000" });
    expect(await verify()).toEqual(CLEAN);
  });
});
