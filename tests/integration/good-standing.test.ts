/**
 * One rule for "a user in good standing" (src/modules/users/repository.ts;
 * docs/decisions/customers-users-and-wallets.md "Users"), over HTTP on a real PostgreSQL: Create
 * Order refuses a user who has been deactivated or deleted since the quote was issued, 404
 * `USER_NOT_FOUND` (docs/decisions/trading.md "Check orders"), and fills nothing; Create Quote,
 * Create Transfer and Initiate Withdrawal refuse the same user, each with the code its page names;
 * a user activated again trades as before.
 */
import { describe, expect, it } from "vitest";
import { quote as quoted } from "../../src/domain/errors.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { apiKey, BTC, USDT_ETH, useWalletsScene, type BalanceItem } from "../support/wallets-scene.js";
import { TO } from "../support/withdrawals-scene.js";

const w = useWalletsScene();
const api = w.api;

let seq = 0;

/** A tenant with an active user whose wallet holds btc and usdt, funded, and a firm quote of that user (a buy of 0.01 btc). */
async function quotedScene(): Promise<{ key: string; userId: string; walletId: string; quoteId: string }> {
  const s = await w.scene(`standing-${++seq}`);
  const wallet = await w.newWallet(apiKey(s.key), s.userId, [BTC, USDT_ETH]);
  await w.deposited(s.key, wallet.wallet_id, USDT_ETH, 1000);
  await w.deposited(s.key, wallet.wallet_id, BTC, 0.5);
  const q = await api().post(`${BASE}/users/${s.userId}/quotes`).set("x-api-key", s.key).send({ wallet_id: wallet.wallet_id, symbol: "BTCUSDT", side: "buy", quantity: 0.01 });
  expect(q.status, JSON.stringify(q.body)).toBe(201);
  return { key: s.key, userId: s.userId, walletId: wallet.wallet_id, quoteId: q.body.data.quote_id as string };
}

const order = (key: string, userId: string, quoteId: string) => api().post(`${BASE}/users/${userId}/orders`).set("x-api-key", key).send({ quote_id: quoteId });

/** The wallet's available balances by currency, read in the database (a deleted user's wallet is still there). */
async function available(walletId: string): Promise<Record<string, string>> {
  const rows = await w.t.orm.em.fork().getConnection().execute<{ currency: string; balance: string }[]>(
    `select currency, balance::text as balance from ledger_account where wallet_id = ? and bucket = 'available' order by currency`,
    [walletId],
  );
  return Object.fromEntries(rows.map((r) => [r.currency, r.balance]));
}

/** How many orders and `trade` wallet transactions the wallet has. */
async function fills(walletId: string): Promise<{ orders: number; trades: number }> {
  const conn = w.t.orm.em.fork().getConnection();
  const [o] = await conn.execute<{ n: number }[]>(`select count(*)::int as n from trade_order where wallet_id = ?`, [walletId]);
  const [x] = await conn.execute<{ n: number }[]>(`select count(*)::int as n from wallet_transaction where wallet_id = ? and action = 'trade'`, [walletId]);
  return { orders: o?.n ?? -1, trades: x?.n ?? -1 };
}

describe("Create Order needs a user in good standing", () => {
  it("a user deactivated after the quote: 404 USER_NOT_FOUND, nothing filled; activated again, the same quote fills", async () => {
    const s = await quotedScene();
    const before = await available(s.walletId);
    await w.deactivate(s.key, s.userId);

    const refused = await order(s.key, s.userId, s.quoteId);
    expectPlatformError(refused, 404, "USER_NOT_FOUND");
    expect(refused.body.errors[0].message).toBe(`User ${quoted(s.userId)} is not active.`);
    expect(await fills(s.walletId)).toEqual({ orders: 0, trades: 0 });
    expect(await available(s.walletId)).toEqual(before);

    // the refusal was the user's standing, not the quote: once active again, the quote fills
    expect((await api().post(`${BASE}/users/${s.userId}/activate`).set("x-api-key", s.key)).status).toBe(200);
    const filled = await order(s.key, s.userId, s.quoteId);
    expect(filled.status, JSON.stringify(filled.body)).toBe(201);
    expect(filled.body.data).toMatchObject({ status: "FILLED", quote_id: s.quoteId });
    expect(await fills(s.walletId)).toEqual({ orders: 1, trades: 2 });
  });

  it("a user deleted after the quote (deactivated, then deleted): 404 USER_NOT_FOUND, nothing filled", async () => {
    const s = await quotedScene();
    const before = await available(s.walletId);
    await w.deactivate(s.key, s.userId);
    expect((await api().delete(`${BASE}/users/${s.userId}`).set("x-api-key", s.key)).status).toBe(204);

    const refused = await order(s.key, s.userId, s.quoteId);
    expectPlatformError(refused, 404, "USER_NOT_FOUND");
    expect(refused.body.errors[0].message).toBe(`User ${quoted(s.userId)} has been deleted.`);
    expect(await fills(s.walletId)).toEqual({ orders: 0, trades: 0 });
    expect(await available(s.walletId)).toEqual(before);
  });

  it("a user of another customer is unknown: 404 USER_NOT_FOUND, nothing filled", async () => {
    const s = await quotedScene();
    const other = await w.tenant(`standing-other-${++seq}`);
    const refused = await order(other.key, s.userId, s.quoteId);
    expectPlatformError(refused, 404, "USER_NOT_FOUND");
    expect(refused.body.errors[0].message).toBe(`User ${quoted(s.userId)} not found.`);
    expect(await fills(s.walletId)).toEqual({ orders: 0, trades: 0 });
  });
});

describe("one rule: the money-moving operations refuse the same user", () => {
  /** Create Quote, Create Order, Create Transfer (from the user's wallet) and Initiate Withdrawal for user `s`, each answer's status, code and message. */
  async function answers(s: { key: string; userId: string; walletId: string; quoteId: string }, to: string): Promise<Record<string, [number, string, string]>> {
    const of = (res: { status: number; body: { errors?: { code: string; message: string }[] } }): [number, string, string] => [res.status, res.body.errors?.[0]?.code ?? "", res.body.errors?.[0]?.message ?? ""];
    return {
      quote: of(await api().post(`${BASE}/users/${s.userId}/quotes`).set("x-api-key", s.key).send({ wallet_id: s.walletId, symbol: "BTCUSDT", side: "buy", quantity: 0.01 })),
      order: of(await order(s.key, s.userId, s.quoteId)),
      transfer: of(await api().post(`${BASE}/transfers`).set("x-api-key", s.key).send({ from_wallet_id: s.walletId, to_wallet_id: to, currency: "btc", amount: 0.01 })),
      withdrawal: of(await api().post(`${BASE}/users/${s.userId}/accounts/crypto/withdrawals`).set("x-api-key", s.key).send({ currency: "btc", amount: 0.01, address: TO.btc })),
    };
  }

  it("deactivated, then deleted: every operation refuses with 404 and its own code, and no balance moves", async () => {
    const s = await quotedScene();
    const peer = await w.activeUser(s.key);
    const peerWallet = await w.newWallet(apiKey(s.key), peer.userId, [BTC]);
    const before = await available(s.walletId);
    const id = quoted(s.userId);

    await w.deactivate(s.key, s.userId);
    const inactive = `User ${id} is not active.`;
    expect(await answers(s, peerWallet.wallet_id)).toEqual({
      quote: [404, "USER_NOT_FOUND", inactive],
      order: [404, "USER_NOT_FOUND", inactive],
      transfer: [404, "USER_NOT_FOUND", inactive],
      withdrawal: [404, "RESOURCE_NOT_FOUND", inactive],
    });

    expect((await api().delete(`${BASE}/users/${s.userId}`).set("x-api-key", s.key)).status).toBe(204);
    const deleted = `User ${id} has been deleted.`;
    expect(await answers(s, peerWallet.wallet_id)).toEqual({
      quote: [404, "RESOURCE_NOT_FOUND", deleted],
      order: [404, "USER_NOT_FOUND", deleted],
      transfer: [404, "USER_NOT_FOUND", deleted],
      withdrawal: [404, "RESOURCE_NOT_FOUND", deleted],
    });

    expect(await available(s.walletId)).toEqual(before);
    expect(await fills(s.walletId)).toEqual({ orders: 0, trades: 0 });
    const peerBalance: Record<string, BalanceItem> = await w.balancesOf(apiKey(s.key), peerWallet.wallet_id);
    expect(peerBalance.btc?.available).toBe("0.00000000");
  });
});
