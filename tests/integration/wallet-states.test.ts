/**
 * Wallet states over HTTP on a real PostgreSQL (docs/decisions/customers-users-and-wallets.md
 * "Wallet states"; spec/platform/wallets.tsp `WalletStates`): who may call each state operation,
 * what each state lets through on every movement (withdrawals, confirms, transfers in and out,
 * sandbox deposits), deactivation, the `wallet.status_changed` notification, and a lock racing
 * outgoing transfers. Every response is validated against the contract.
 */
import type request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { waitFor } from "../support/wait.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { Api, apiKey, bearer, BTC, CLEAN, TO, UNKNOWN_ID, type Cred, type Scene } from "../support/withdrawals-scene.js";

const USDT = { name: "networks/ethereum", currency: "usdt" };

const t = useTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "1" });
const api = () => new Api(t);

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

/** Awaits `pending`, asserts the platform error `status`/`code`, and returns the error entry. */
async function refused(pending: PromiseLike<request.Response>, status: number, code: string): Promise<{ code: string; message: string }> {
  const res = await pending;
  expectPlatformError(res, status, code);
  return res.body.errors[0] as { code: string; message: string };
}

type WalletRecord = { wallet_id: string; status: string; status_reason: string | null; is_active: boolean; name: string };

/** A state call on a wallet with credential `cred`. */
const call = (cred: Cred, walletId: string, verb: "lock" | "unlock" | "suspend" | "reinstate" | "deactivate", reason?: string) => {
  const r = cred(api().http().post(`${BASE}/wallets/${walletId}/${verb}`));
  return reason === undefined ? r.send() : r.send({ reason });
};

/** The state call, asserting 200; returns the wallet. */
async function called(cred: Cred, walletId: string, verb: "lock" | "unlock" | "suspend" | "reinstate" | "deactivate", reason?: string): Promise<WalletRecord> {
  const res = await call(cred, walletId, verb, reason);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as WalletRecord;
}

const transfer = (cred: Cred, from: string, to: string, amount: number | string, currency = "btc") =>
  cred(api().http().post(`${BASE}/transfers`)).send({ from_wallet_id: from, to_wallet_id: to, currency, amount });

const deposit = (key: string, walletId: string, amount = 0.1) =>
  api().http().post(`${BASE}/sandbox/deposits`).set("x-api-key", key).send({ wallet_id: walletId, network: BTC.name, currency: "btc", amount });

/** A scene with a second wallet of the same user, both holding 1 btc. */
async function twoWallets(prefix: string): Promise<Scene & { other: string }> {
  const a = api();
  const s = await a.scene(prefix);
  const other = await a.wallet(apiKey(s.key), s.userId, [BTC]);
  await a.deposit(s.key, other, BTC, 1);
  return { ...s, other };
}

let operator: string;
beforeAll(async () => {
  operator = await api().walk.operatorToken();
});
const op: Cred = (r) => r.set("Authorization", `Bearer ${operator}`);

describe("the state calls", () => {
  it("show the state on create, list and balance answers, and each call answers the wallet", async () => {
    const a = api();
    const s = await a.scene("ws-show");
    const list = await a.http().get(`${BASE}/users/${s.userId}/wallets`).set("x-api-key", s.key);
    expect(list.status).toBe(200);
    expect(list.body.data[0]).toMatchObject({ wallet_id: s.walletId, status: "ACTIVE", status_reason: null, is_active: true });

    const locked = await called(apiKey(s.key), s.walletId, "lock", "Card lost");
    expect(locked).toMatchObject({ wallet_id: s.walletId, status: "LOCKED", status_reason: "Card lost", is_active: false });
    const balance = await a.http().get(`${BASE}/wallets/${s.walletId}/balance`).set("x-api-key", s.key);
    expect(balance.body.data).toMatchObject({ status: "LOCKED", status_reason: "Card lost" });

    // the same state again is a no-op that keeps the first reason
    expect(await called(apiKey(s.key), s.walletId, "lock", "Another reason")).toMatchObject({ status: "LOCKED", status_reason: "Card lost" });
    expect(await called(apiKey(s.key), s.walletId, "unlock")).toMatchObject({ status: "ACTIVE", status_reason: null, is_active: true });
    expect(await called(apiKey(s.key), s.walletId, "unlock")).toMatchObject({ status: "ACTIVE" });
  });

  it("takes the credential each operation names: 403 for another kind, 404 for another customer's wallet", async () => {
    const a = api();
    const s = await a.scene("ws-who");
    const other = await a.scene("ws-who-other");
    await refused(call(bearer(s.token), s.walletId, "lock", "mine"), 403, "FORBIDDEN");
    await refused(call(op, s.walletId, "lock", "op"), 403, "FORBIDDEN");
    await refused(call(apiKey(s.key), s.walletId, "suspend", "self"), 403, "FORBIDDEN");
    await refused(call(apiKey(s.key), s.walletId, "reinstate"), 403, "FORBIDDEN");
    await refused(call(apiKey(other.key), s.walletId, "lock", "theirs"), 404, "WALLET_NOT_FOUND");
    await refused(call(apiKey(s.key), UNKNOWN_ID, "lock", "none"), 404, "WALLET_NOT_FOUND");
    await refused(call(apiKey(s.key), "not-a-uuid", "lock", "bad"), 400, "INVALID_WALLET_ID");
    await refused(call(apiKey(s.key), s.walletId, "lock"), 422, "UNPROCESSABLE_ENTITY");
    await refused(call(apiKey(s.key), s.walletId, "lock", "x".repeat(256)), 422, "UNPROCESSABLE_ENTITY");
  });

  it("suspend is the operator's: unlock cannot lift it, reinstate restores the state before it", async () => {
    const a = api();
    const s = await a.scene("ws-susp");
    await called(apiKey(s.key), s.walletId, "lock", "owner hold");
    expect(await called(op, s.walletId, "suspend", "Compliance review")).toMatchObject({ status: "SUSPENDED", status_reason: "Compliance review" });
    await refused(call(apiKey(s.key), s.walletId, "unlock"), 400, "WALLET_SUSPENDED");
    await refused(call(apiKey(s.key), s.walletId, "lock", "again"), 400, "WALLET_SUSPENDED");
    await refused(call(apiKey(s.key), s.walletId, "deactivate"), 400, "WALLET_SUSPENDED");
    expect(await called(op, s.walletId, "reinstate")).toMatchObject({ status: "LOCKED", status_reason: "owner hold" });
    await refused(call(op, s.walletId, "reinstate"), 400, "BAD_REQUEST");
  });
});

describe("what each state lets through", () => {
  it("LOCKED: money arrives (deposit, transfer in) but does not leave (withdrawal, transfer out)", async () => {
    const a = api();
    const s = await twoWallets("ws-locked");
    await called(apiKey(s.key), s.walletId, "lock", "Card lost");
    expect((await deposit(s.key, s.walletId)).status).toBe(201);
    expect((await transfer(apiKey(s.key), s.other, s.walletId, 0.2)).status).toBe(201);
    const out = await refused(transfer(apiKey(s.key), s.walletId, s.other, 0.1), 400, "WALLET_LOCKED");
    expect(out.message).toContain("Card lost");
    await refused(a.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.01, address: TO.btc, wallet_id: s.walletId }), 400, "WALLET_LOCKED");
    // without wallet_id the withdrawal comes from the other, ACTIVE wallet
    const picked = await a.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.01, address: TO.btc });
    expect(picked.status, JSON.stringify(picked.body)).toBe(201);
    expect((await a.balances(apiKey(s.key), s.other)).btc?.held).toBe("0.01000000");
    expect((await a.balances(apiKey(s.key), s.walletId)).btc).toMatchObject({ available: "1.30000000", held: "0.00000000" });
  });

  it("LOCKED after initiate: confirm is refused without counting an attempt; cancel releases the hold", async () => {
    const a = api();
    const s = await a.scene("ws-confirm");
    const { id, code } = await a.started(s, { currency: "btc", amount: 0.1, address: TO.btc, wallet_id: s.walletId });
    await called(apiKey(s.key), s.walletId, "lock", "stop");
    await refused(a.confirm(apiKey(s.key), s.userId, id, code), 400, "WALLET_LOCKED");
    await called(apiKey(s.key), s.walletId, "unlock");
    const confirmed = await a.confirm(apiKey(s.key), s.userId, id, code);
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect((await a.btc(s))?.balance).toBe("0.90000000");

    const second = await a.started(s, { currency: "btc", amount: 0.1, address: TO.btc, wallet_id: s.walletId });
    await called(apiKey(s.key), s.walletId, "lock", "stop");
    expect((await a.cancel(apiKey(s.key), s.userId, second.id)).status).toBe(204);
    expect((await a.btc(s))?.available).toBe("0.90000000");
  });

  it("LOCKED: quotes and orders from the wallet are refused, an order on a quote taken before the lock too", async () => {
    const a = api();
    const s = await a.scene("ws-trade", [BTC, USDT], [[BTC, 1], [USDT, 1000]]);
    const quoteBody = { wallet_id: s.walletId, symbol: "BTCUSDT", side: "sell", quantity: 0.01 };
    const open = await a.http().post(`${BASE}/users/${s.userId}/quotes`).set("x-api-key", s.key).send(quoteBody);
    expect(open.status, JSON.stringify(open.body)).toBe(201);
    await called(apiKey(s.key), s.walletId, "lock", "hold");
    await refused(a.http().post(`${BASE}/users/${s.userId}/quotes`).set("x-api-key", s.key).send(quoteBody), 400, "WALLET_LOCKED");
    await refused(a.http().post(`${BASE}/users/${s.userId}/orders`).set("x-api-key", s.key).send({ quote_id: open.body.data.quote_id }), 400, "WALLET_LOCKED");
    await refused(a.http().post(`${BASE}/users/${s.userId}/orders`).set("x-api-key", s.key).send(quoteBody), 400, "WALLET_LOCKED");
    expect((await a.balances(apiKey(s.key), s.walletId)).btc?.available).toBe("1.00000000");
  });

  it("SUSPENDED: nothing moves by request, in or out", async () => {
    const a = api();
    const s = await twoWallets("ws-suspended");
    await called(op, s.walletId, "suspend", "review");
    await refused(deposit(s.key, s.walletId), 400, "WALLET_SUSPENDED");
    await refused(transfer(apiKey(s.key), s.other, s.walletId, 0.1), 400, "WALLET_SUSPENDED");
    await refused(transfer(apiKey(s.key), s.walletId, s.other, 0.1), 400, "WALLET_SUSPENDED");
    await refused(a.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.01, address: TO.btc, wallet_id: s.walletId }), 400, "WALLET_SUSPENDED");
    expect((await a.balances(apiKey(s.key), s.walletId)).btc?.available).toBe("1.00000000");
  });

  it("the state check comes after the wallet is found, before the amount", async () => {
    const s = await twoWallets("ws-order");
    await called(apiKey(s.key), s.walletId, "lock", "hold");
    await refused(transfer(apiKey(s.key), s.walletId, s.other, -1), 400, "WALLET_LOCKED");
    await refused(transfer(apiKey(s.key), s.walletId, UNKNOWN_ID, -1), 404, "WALLET_NOT_FOUND");
    await called(op, s.walletId, "suspend", "review");
    await refused(deposit(s.key, s.walletId, -1), 400, "WALLET_SUSPENDED");
  });
});

describe("deactivation", () => {
  it("needs an empty wallet, then refuses every movement and every state call; reads go on and the name is free", async () => {
    const a = api();
    const s = await twoWallets("ws-close");
    const notEmpty = await refused(call(apiKey(s.key), s.walletId, "deactivate"), 400, "BAD_REQUEST");
    expect(notEmpty.message).toContain("btc");
    const { id } = await a.started(s, { currency: "btc", amount: 0.5, address: TO.btc, wallet_id: s.walletId });
    expect((await transfer(apiKey(s.key), s.walletId, s.other, 0.5)).status).toBe(201);
    const held = await refused(call(apiKey(s.key), s.walletId, "deactivate"), 400, "BAD_REQUEST");
    expect(held.message).toContain("pending withdrawals");
    expect((await a.cancel(apiKey(s.key), s.userId, id)).status).toBe(204);
    expect((await transfer(apiKey(s.key), s.walletId, s.other, 0.5)).status).toBe(201);

    const closed = await called(apiKey(s.key), s.walletId, "deactivate");
    expect(closed).toMatchObject({ status: "INACTIVE", is_active: false });
    await refused(deposit(s.key, s.walletId), 400, "WALLET_INACTIVE");
    await refused(transfer(apiKey(s.key), s.other, s.walletId, 0.1), 400, "WALLET_INACTIVE");
    for (const verb of ["lock", "unlock", "deactivate"] as const) await refused(call(apiKey(s.key), s.walletId, verb, "r"), 400, "WALLET_INACTIVE");
    for (const verb of ["suspend", "reinstate"] as const) await refused(call(op, s.walletId, verb, "r"), 400, "WALLET_INACTIVE");
    expect((await a.balances(apiKey(s.key), s.walletId)).btc?.balance).toBe("0.00000000");
    const list = await a.http().get(`${BASE}/users/${s.userId}/wallets`).set("x-api-key", s.key);
    const mine = (list.body.data as WalletRecord[]).find((w) => w.wallet_id === s.walletId) as WalletRecord;
    expect(mine.status).toBe("INACTIVE");
    const again = await a.http().post(`${BASE}/users/${s.userId}/wallets`).set("x-api-key", s.key).send({ name: mine.name, networks: [BTC] });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
  });
});

describe("the wallet.status_changed notification", () => {
  it("reaches the customer's webhook for each change, and not for a no-op", async () => {
    const a = api();
    const s = await a.scene("ws-hook");
    const registered = await a.http().post(`${BASE}/customers/${s.customerId}/webhooks`).set("Authorization", `Bearer ${operator}`).send({ url: receiver.url });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    receiver.trust(registered.body.data.signing_secret as string);

    await called(apiKey(s.key), s.walletId, "lock", "Card lost");
    await called(apiKey(s.key), s.walletId, "lock", "Card lost");
    await called(op, s.walletId, "suspend", "review");
    await called(op, s.walletId, "reinstate");
    const ofWallet = () => receiver.received.filter((r) => r.json.type === "wallet.status_changed" && r.json.data.wallet_id === s.walletId);
    const hooks = await waitFor("three wallet.status_changed notifications", () => (ofWallet().length >= 3 ? ofWallet() : undefined), 10_000);
    const data = hooks.map((h) => h.json.data as Record<string, unknown>).sort((x, y) => String(x.changed_at).localeCompare(String(y.changed_at)));
    expect(data.map((d) => [d.previous_status, d.status, d.reason])).toEqual([
      ["ACTIVE", "LOCKED", "Card lost"],
      ["LOCKED", "SUSPENDED", "review"],
      ["SUSPENDED", "LOCKED", null],
    ]);
    expect(data[0]).toMatchObject({ event: "wallet.status_changed", wallet_id: s.walletId, user_id: s.userId });
    expect(hooks.every((h) => Object.values(h.verifiedBy).some(Boolean))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(ofWallet()).toHaveLength(3);
  });
});

describe("a lock racing outgoing transfers", () => {
  it("each transfer either completes before the lock or is refused, never half", async () => {
    const a = api();
    const s = await twoWallets("ws-race");
    for (let round = 0; round < 6; round++) {
      const before = (await a.balances(apiKey(s.key), s.walletId)).btc?.available;
      const transfers = Array.from({ length: 4 }, () => transfer(apiKey(s.key), s.walletId, s.other, 0.01));
      const lock = call(apiKey(s.key), s.walletId, "lock", `round ${round}`);
      const answers = await Promise.all(transfers);
      expect((await lock).status).toBe(200);
      const done = answers.filter((r) => r.status === 201).length;
      for (const r of answers) if (r.status !== 201) expect(r.body.errors[0].code, JSON.stringify(r.body)).toBe("WALLET_LOCKED");
      const after = (await a.balances(apiKey(s.key), s.walletId)).btc?.available;
      expect(Number(before) - Number(after)).toBeCloseTo(done * 0.01, 8);
      await called(apiKey(s.key), s.walletId, "unlock");
    }
    expect(await t.services.ledger.verify(t.db)).toEqual(CLEAN);
  });
});
