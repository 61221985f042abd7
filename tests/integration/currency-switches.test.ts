/**
 * The operator's currency switches over HTTP on a real PostgreSQL
 * (docs/decisions/provider-and-sandbox.md "Currency switches"; spec/platform/currencies.tsp
 * `updateCurrency`): who may switch, what each flag governs (new wallets and transfers, sandbox
 * deposits, Initiate Withdrawal, the pair list), and the switches read back by a new process's copy.
 * The switches are global: each test switches back what it switched off.
 */
import type request from "supertest";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { CurrencySwitches } from "../../src/modules/currencies/service.js";
import { SandboxProvider } from "../../src/providers/sandbox.js";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { Api, apiKey, BTC, TO, type Cred } from "../support/withdrawals-scene.js";

const USDT = { name: "networks/ethereum", currency: "usdt" };

const t = useTestApp();
const api = () => new Api(t);

let operator: string;
beforeAll(async () => {
  operator = await api().walk.operatorToken();
});
const op: Cred = (r) => r.set("Authorization", `Bearer ${operator}`);
const master: Cred = (r) => r.set("x-master-api-key", t.config.masterApiKey as string);

const patch = (cred: Cred, code: string, body: unknown) => cred(api().http().patch(`${BASE}/currencies/${code}`)).send(body as object);

/** Switches `body` on `code` with the operator session, asserting 200; returns the currency. */
async function switched(code: string, body: Record<string, boolean>): Promise<Record<string, unknown>> {
  const res = await patch(op, code, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Record<string, unknown>;
}

async function refused(pending: PromiseLike<request.Response>, status: number, code: string): Promise<void> {
  expectPlatformError(await pending, status, code);
}

afterEach(async () => {
  await switched("btc", { can_deposit: true, can_withdraw: true, is_custody_enabled: true, is_trading_enabled: true });
});

describe("Update Currency", () => {
  it("takes an operator session or the master key; another credential is 403, an unknown code 404, a bad body 422", async () => {
    const s = await api().scene("cs-who");
    await refused(patch(apiKey(s.key), "btc", { can_withdraw: false }), 403, "FORBIDDEN");
    await refused(patch(op, "xyz", { can_withdraw: false }), 404, "NOT_FOUND");
    await refused(patch(op, "btc", { can_withdraw: "no" }), 422, "UNPROCESSABLE_ENTITY");
    const viaMaster = await patch(master, "BTC", { can_withdraw: false });
    expect(viaMaster.status, JSON.stringify(viaMaster.body)).toBe(200);
    expect(viaMaster.body.data).toMatchObject({ code: "btc", can_withdraw: false, can_deposit: true });
  });

  it("List Currencies shows the flags as switched, and a new process reads the same switches", async () => {
    const s = await api().scene("cs-list");
    expect(await switched("btc", { can_deposit: false, is_trading_enabled: false })).toMatchObject({ can_deposit: false, is_trading_enabled: false, can_withdraw: true });
    const list = await api().http().get(`${BASE}/currencies`).set("x-api-key", s.key);
    expect(list.status).toBe(200);
    expect((list.body.data as { code: string }[]).find((c) => c.code === "btc")).toMatchObject({ can_deposit: false, is_trading_enabled: false, can_withdraw: true, is_custody_enabled: true });

    const fresh = new CurrencySwitches(t.db, new SandboxProvider("seed"));
    const btc = (await fresh.currencies()).find((c) => c.code === "btc");
    expect(btc).toMatchObject({ canDeposit: false, isTradingEnabled: false, canWithdraw: true });
  });

  it("a switch cannot turn on what the provider does not offer", async () => {
    // The sandbox offers every flag of every currency, so the rule is read through a provider whose
    // catalogue does not offer usd custody: its switched-on flags stay off there.
    expect(await switched("usd", { can_deposit: true, is_custody_enabled: true })).toMatchObject({ can_deposit: true, is_custody_enabled: true });
    const sandbox = new SandboxProvider("seed");
    const noUsdCustody = {
      listTradingPairs: () => sandbox.listTradingPairs(),
      listCurrencies: async () => (await sandbox.listCurrencies()).map((c) => (c.code === "usd" ? { ...c, canDeposit: false, isCustodyEnabled: false } : c)),
    };
    const usd = (await new CurrencySwitches(t.db, noUsdCustody).currencies()).find((c) => c.code === "usd");
    expect(usd).toMatchObject({ canDeposit: false, isCustodyEnabled: false, canWithdraw: true });
  });
});

describe("what each flag governs", () => {
  it("is_custody_enabled: new wallets and transfers answer CURRENCY_NOT_ACTIVE; reads go on", async () => {
    const a = api();
    const s = await a.scene("cs-custody");
    const second = await a.wallet(apiKey(s.key), s.userId, [BTC]);
    await switched("btc", { is_custody_enabled: false });
    const created = await a.http().post(`${BASE}/users/${s.userId}/wallets`).set("x-api-key", s.key).send({ name: "Blocked", networks: [BTC] });
    expectPlatformError(created, 400, "CURRENCY_NOT_ACTIVE");
    expect(created.body.errors[0].field).toBe("networks.0.currency");
    await refused(a.http().post(`${BASE}/transfers`).set("x-api-key", s.key).send({ from_wallet_id: s.walletId, to_wallet_id: second, currency: "btc", amount: 0.1 }), 400, "CURRENCY_NOT_ACTIVE");
    expect((await a.balances(apiKey(s.key), s.walletId)).btc?.available).toBe("1.00000000");
  });

  it("can_deposit: sandbox deposits answer CURRENCY_NOT_ACTIVE", async () => {
    const a = api();
    const s = await a.scene("cs-deposit");
    await switched("btc", { can_deposit: false });
    await refused(a.http().post(`${BASE}/sandbox/deposits`).set("x-api-key", s.key).send({ wallet_id: s.walletId, network: BTC.name, currency: "btc", amount: 1 }), 400, "CURRENCY_NOT_ACTIVE");
  });

  it("can_withdraw: Initiate Withdrawal answers CURRENCY_NOT_ACTIVE; a PENDING withdrawal may still be confirmed", async () => {
    const a = api();
    const s = await a.scene("cs-withdraw");
    const { id, code } = await a.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    await switched("btc", { can_withdraw: false });
    await refused(a.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }), 400, "CURRENCY_NOT_ACTIVE");
    const confirmed = await a.confirm(apiKey(s.key), s.userId, id, code);
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  });

  it("is_trading_enabled: quotes and orders on its pairs answer PAIR_NOT_AVAILABLE, on an open quote too", async () => {
    const a = api();
    const s = await a.scene("cs-trade", [BTC, USDT], [[BTC, 1], [USDT, 1000]]);
    const quoteBody = { wallet_id: s.walletId, symbol: "BTCUSDT", side: "sell", quantity: 0.01 };
    const open = await a.http().post(`${BASE}/users/${s.userId}/quotes`).set("x-api-key", s.key).send(quoteBody);
    expect(open.status, JSON.stringify(open.body)).toBe(201);
    await switched("btc", { is_trading_enabled: false });
    await refused(a.http().post(`${BASE}/users/${s.userId}/quotes`).set("x-api-key", s.key).send(quoteBody), 400, "PAIR_NOT_AVAILABLE");
    await refused(a.http().post(`${BASE}/users/${s.userId}/orders`).set("x-api-key", s.key).send({ quote_id: open.body.data.quote_id }), 400, "PAIR_NOT_AVAILABLE");
    await refused(a.http().post(`${BASE}/users/${s.userId}/orders`).set("x-api-key", s.key).send(quoteBody), 400, "PAIR_NOT_AVAILABLE");
  });

  it("is_trading_enabled: List Trading Pairs leaves the currency's pairs out", async () => {
    const s = await api().scene("cs-pairs");
    const before = await api().http().get(`${BASE}/currencies/pairs`).set("x-api-key", s.key);
    expect((before.body.data as { symbol: string }[]).map((p) => p.symbol)).toContain("BTCUSDT");
    await switched("btc", { is_trading_enabled: false });
    const after = await api().http().get(`${BASE}/currencies/pairs`).set("x-api-key", s.key);
    const symbols = (after.body.data as { base: string; quote: string }[]);
    expect(symbols.length).toBeGreaterThan(0);
    expect(symbols.filter((p) => p.base === "btc" || p.quote === "btc")).toEqual([]);
  });
});
