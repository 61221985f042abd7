/**
 * Idempotency-Keys are scoped per caller (docs/idempotency.md "Whose key it is";
 * src/modules/idempotency/service.ts `keyCaller`), on a real PostgreSQL: over HTTP, two users of
 * one customer sending Create Transfer with their user tokens and the same key each get their own
 * transfer, while the same user reusing the key with another body still gets 409
 * `IDEMPOTENCY_KEY_REUSED` and its repeat the first answer; the owner key's key space is apart from
 * the users'. Through the services, with the caller the HTTP layer authenticated: two owner
 * credentials of one customer, and a user's token next to the owner key, on Create Order,
 * Initiate Withdrawal and the credit core's PayOutCredit.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { KeyCaller } from "../../src/modules/idempotency/service.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { apiKey, bearer, BTC, USDT_ETH, useWalletsScene, type Cred } from "../support/wallets-scene.js";
import { TO } from "../support/withdrawals-scene.js";

const w = useWalletsScene();
const api = w.api;
let seq = 0;

const transfer = (cred: Cred, key: string, body: { from: string; to: string; amount: number }) =>
  cred(api().post(`${BASE}/transfers`))
    .set("Idempotency-Key", key)
    .send({ from_wallet_id: body.from, to_wallet_id: body.to, currency: "btc", amount: body.amount });

/** The available btc of a wallet (8-decimal text). */
const btc = async (key: string, walletId: string): Promise<string | undefined> => (await w.balancesOf(apiKey(key), walletId)).btc?.available;

describe("Create Transfer over HTTP: one key, its caller's", () => {
  it("two users' tokens send the same key: two transfers; each user's repeat answers its own; a user's other body answers 409", async () => {
    const { key: owner } = await w.tenant(`scope-${++seq}`);
    const [alice, bob, carol] = [await w.activeUser(owner), await w.activeUser(owner), await w.activeUser(owner)];
    if (!alice || !bob || !carol) throw new Error("no users");
    const [aliceWallet, bobWallet, carolWallet] = await Promise.all([alice, bob, carol].map((u) => w.newWallet(apiKey(owner), u.userId, [BTC])));
    if (!aliceWallet || !bobWallet || !carolWallet) throw new Error("no wallets");
    await w.deposited(owner, aliceWallet.wallet_id, BTC, 1);
    await w.deposited(owner, bobWallet.wallet_id, BTC, 1);
    const key = `shared-${randomUUID()}`;
    const fromAlice = { from: aliceWallet.wallet_id, to: carolWallet.wallet_id, amount: 0.1 };
    const fromBob = { from: bobWallet.wallet_id, to: carolWallet.wallet_id, amount: 0.2 };

    const a = await transfer(bearer(alice.token), key, fromAlice);
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(a.body.data).toMatchObject({ idempotency_key: key, is_duplicate: false, amount: "0.10000000" });
    const b = await transfer(bearer(bob.token), key, fromBob);
    expect(b.status, JSON.stringify(b.body)).toBe(201);
    expect(b.body.data).toMatchObject({ idempotency_key: key, is_duplicate: false, amount: "0.20000000" });
    expect(b.body.data.transfer_id).not.toBe(a.body.data.transfer_id);

    const again = await transfer(bearer(alice.token), key, fromAlice);
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.data).toMatchObject({ transfer_id: a.body.data.transfer_id, is_duplicate: true });
    expect((await transfer(bearer(bob.token), key, fromBob)).body.data).toMatchObject({ transfer_id: b.body.data.transfer_id, is_duplicate: true });
    const reused = await transfer(bearer(alice.token), key, { ...fromAlice, amount: 0.3 });
    expectPlatformError(reused, 409, "IDEMPOTENCY_KEY_REUSED");
    expect(reused.body.errors[0].message).toBe("This Idempotency-Key was already used with a different request.");

    expect(await btc(owner, aliceWallet.wallet_id)).toBe("0.90000000");
    expect(await btc(owner, bobWallet.wallet_id)).toBe("0.80000000");
    expect(await btc(owner, carolWallet.wallet_id)).toBe("0.30000000");
  });

  it("the owner key and a user token sending the same key do not meet, in either order", async () => {
    const s = await w.scene(`scope-${++seq}`);
    const peer = await w.activeUser(s.key);
    const [mine, theirs] = [await w.newWallet(apiKey(s.key), s.userId, [BTC]), await w.newWallet(apiKey(s.key), peer.userId, [BTC])];
    await w.deposited(s.key, mine.wallet_id, BTC, 1);
    const body = { from: mine.wallet_id, to: theirs.wallet_id, amount: 0.1 };

    // the user first, then the owner key with the very same body: a second transfer, not a repeat
    const userFirst = `user-first-${randomUUID()}`;
    const u1 = await transfer(bearer(s.token), userFirst, body);
    const o1 = await transfer(apiKey(s.key), userFirst, body);
    expect([u1.status, o1.status]).toEqual([201, 201]);
    expect([u1.body.data.is_duplicate, o1.body.data.is_duplicate]).toEqual([false, false]);
    expect(o1.body.data.transfer_id).not.toBe(u1.body.data.transfer_id);

    // the owner key first, then the user with another body: no 409
    const ownerFirst = `owner-first-${randomUUID()}`;
    const o2 = await transfer(apiKey(s.key), ownerFirst, body);
    const u2 = await transfer(bearer(s.token), ownerFirst, { ...body, amount: 0.2 });
    expect([o2.status, u2.status]).toEqual([201, 201]);
    expect(u2.body.data).toMatchObject({ is_duplicate: false, amount: "0.20000000" });

    // each keeps its own key: the owner's repeat, and its reuse with another body
    expect((await transfer(apiKey(s.key), ownerFirst, body)).body.data).toMatchObject({ transfer_id: o2.body.data.transfer_id, is_duplicate: true });
    expectPlatformError(await transfer(apiKey(s.key), ownerFirst, { ...body, amount: 0.3 }), 409, "IDEMPOTENCY_KEY_REUSED");
    expect(await btc(s.key, mine.wallet_id)).toBe("0.50000000");
  });
});

describe("the services, told who calls", () => {
  const owner = (credentialId: string): KeyCaller => ({ kind: "owner", credentialId });
  const user = (userId: string): KeyCaller => ({ kind: "user", userId });

  it("Create Order: the user's token and the owner key, and two owner credentials, each have the key to themselves", async () => {
    const s = await w.scene(`scope-${++seq}`);
    const wallet = await w.newWallet(apiKey(s.key), s.userId, [BTC, USDT_ETH]);
    await w.deposited(s.key, wallet.wallet_id, USDT_ETH, 5000);
    const quoteId = async (): Promise<string> => {
      const q = await api().post(`${BASE}/users/${s.userId}/quotes`).set("x-api-key", s.key).send({ wallet_id: wallet.wallet_id, symbol: "BTCUSDT", side: "buy", quantity: 0.01 });
      expect(q.status, JSON.stringify(q.body)).toBe(201);
      return q.body.data.quote_id as string;
    };
    const order = async (by: KeyCaller, quote: string) => w.t.services.trading.createOrder(w.t.orm.em.fork(), s.customerId, s.userId, quote, "order-key", by);
    const [q1, q2, q3] = [await quoteId(), await quoteId(), await quoteId()];
    const other = randomUUID();

    const byUser = await order(user(s.userId), q1);
    const byOwner = await order(owner(s.credentialId), q2);
    const byOther = await order(owner(other), q3);
    expect([byUser.is_duplicate, byOwner.is_duplicate, byOther.is_duplicate]).toEqual([false, false, false]);
    expect(new Set([byUser.order_id, byOwner.order_id, byOther.order_id]).size).toBe(3);

    expect(await order(owner(s.credentialId), q2)).toMatchObject({ order_id: byOwner.order_id, is_duplicate: true });
    await expect(order(owner(s.credentialId), q1)).rejects.toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" });
    await expect(order(user(s.userId), q3)).rejects.toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" });
  });

  it("Initiate Withdrawal: two owner credentials of one customer send the same key: two withdrawals; each one's other body answers 409", async () => {
    const s = await w.scene(`scope-${++seq}`);
    const wallet = await w.newWallet(apiKey(s.key), s.userId, [BTC]);
    await w.deposited(s.key, wallet.wallet_id, BTC, 1);
    const initiate = (by: KeyCaller, amount: number) =>
      w.t.services.withdrawals.initiate(w.t.orm.em.fork(), s.customerId, s.userId, { currency: "btc", amount, address: TO.btc }, "withdrawal-key", by);
    const [first, second] = [owner(s.credentialId), owner(randomUUID())];

    const a = await initiate(first, 0.01);
    const b = await initiate(second, 0.02);
    expect([a.withdraw.is_duplicate, b.withdraw.is_duplicate]).toEqual([false, false]);
    expect(b.withdraw.id).not.toBe(a.withdraw.id);
    expect((await initiate(first, 0.01)).withdraw).toMatchObject({ id: a.withdraw.id, is_duplicate: true });
    await expect(initiate(first, 0.03)).rejects.toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" });
    await expect(initiate(user(s.userId), 0.03)).resolves.toMatchObject({ withdraw: { is_duplicate: false } });
  });

  it("PayOutCredit: two owner credentials of one tenant send the same key: two charges; each one's other body answers 409 RESOURCE_CONFLICT", async () => {
    const c = await w.walk.creditWallet(`scope-credit-${++seq}`);
    const charge = (credentialId: string, amount: number) =>
      w.t.services.creditWallets.charge(w.t.orm.em.fork(), c.customerId, c.walletId, { amount, description: "coffee" }, "charge-key", owner(credentialId));
    const [first, second] = [randomUUID(), randomUUID()];

    const a = await charge(first, 1000);
    const b = await charge(second, 2000);
    expect([a.isDuplicate, b.isDuplicate]).toEqual([false, false]);
    expect(b.id).not.toBe(a.id);
    expect(await charge(first, 1000)).toMatchObject({ id: a.id, isDuplicate: true });
    await expect(charge(first, 1500)).rejects.toMatchObject({ code: "RESOURCE_CONFLICT" });
    expect(b.wallet.availableAmount).toBe(100000 - 3000);
  });
});
