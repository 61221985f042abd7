/**
 * A wallet's transaction history over HTTP on a real PostgreSQL (reference: "Wallet", "Wallet
 * balance", "Wallet transaction", "Wallets (owner API key or user token)", "Currency", "Trading
 * pair", "Currencies (owner API key)", "Authentication", the Wallet codes, "Limits";
 * docs/decisions/customers-users-and-wallets.md): listWalletTransactions' order, paging,
 * meta.pagination, the "Transaction query parameters" and their errors.
 */
import { describe, expect, it } from "vitest";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import {
  apiKey, BTC, ETH, linkPath, linkQuery, type Net, type TransactionRecord, txIds, UNKNOWN_ID,
  USDT_ETH, useWalletsScene,
} from "../support/wallets-scene.js";
import { clockPast } from "../support/wait.js";

const wallets = useWalletsScene();
const { api, scene, listTransactions, newWallet, deposited } = wallets;

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
      const tx = await deposited(s.key, wallet.wallet_id, net, amount);
      txs.push(tx);
      await clockPast(tx.transaction.created_at); // the next deposit's created_at is a later millisecond
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
    // the last instant of year 9999 is accepted; beyond it answers 422, not 500 (docs/security.md
    // "Paths, queries and validation answers")
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
    expectPlatformError(await listTransactions(apiKey(key), "not-a-wallet"), 400, "INVALID_WALLET_ID");
  });
});
