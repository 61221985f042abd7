/**
 * Who may call the wallet endpoints, over HTTP on a real PostgreSQL (reference: "Wallet", "Wallet
 * balance", "Wallet transaction", "Wallets (owner API key or user token)", "Currency", "Trading
 * pair", "Currencies (owner API key)", "Authentication", the Wallet codes, "Limits";
 * docs/decisions/customers-users-and-wallets.md): the access matrix of every wallet operation
 * (owner key, user token, sessions, master key, deactivated users), and that the contract declares
 * every status the wallets-*.test.ts files observe.
 */
import { readFileSync } from "node:fs";
import type request from "supertest";
import { describe, expect, it } from "vitest";
import { NETWORKS } from "../../src/providers/chains.js";
import { TEST_MASTER_KEY } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import {
  ALL_NATIVE, anonymous, apiKey, type BalanceItem, bearer, BTC, type Cred, USDT_ETH,
  useWalletsScene, walletNames,
} from "../support/wallets-scene.js";

const wallets = useWalletsScene();
const {
  api, walletName, tenant, activeUser, deactivate, createWallet, listWallets, getBalance,
  listTransactions, sandboxDeposit, listCurrencies, listPairs, newWallet, deposited, balancesOf,
} = wallets;

describe("access matrix of every wallet operation", () => {
  /** Customer A with users U1 (wallet W1, funded) and U2 (wallet W2); customer B with user V. */
  async function world(prefix: string) {
    const a = await tenant(`${prefix}-a`);
    const u1 = await activeUser(a.key);
    const u2 = await activeUser(a.key);
    const w1 = await newWallet(apiKey(a.key), u1.userId, [BTC, USDT_ETH]);
    const w2 = await newWallet(apiKey(a.key), u2.userId, [BTC]);
    await deposited(a.key, w1.wallet_id, BTC, 1);
    await deposited(a.key, w2.wallet_id, BTC, 2);
    const b = await tenant(`${prefix}-b`);
    const v = await activeUser(b.key);
    const wv = await newWallet(apiKey(b.key), v.userId, [BTC]);
    return { a, u1, u2, w1, w2, b, v, wv };
  }

  /** Every operation of this file, aimed at a user id and a wallet id. */
  const operations = (userId: string, walletId: string): [string, (cred: Cred) => request.Test][] => [
    ["createWallet", (cred) => createWallet(cred, userId, { name: walletName("Matrix"), networks: [BTC] })],
    ["listWallets", (cred) => listWallets(cred, userId)],
    ["getWalletBalance", (cred) => getBalance(cred, walletId)],
    ["listWalletTransactions", (cred) => listTransactions(cred, walletId)],
    ["createSandboxDeposit", (cred) => sandboxDeposit(cred, { wallet_id: walletId, network: BTC.name, currency: "btc", amount: 0.5 })],
    ["listCurrencies", (cred) => listCurrencies(cred)],
    ["listTradingPairs", (cred) => listPairs(cred)],
  ];

  it("answers 401 UNAUTHORIZED without a credential or with an invalid one, on every operation", async () => {
    const { a, u1, w1 } = await world("m401");
    for (const [name, call] of operations(u1.userId, w1.wallet_id)) {
      const none = await call(anonymous);
      expectPlatformError(none, 401, "UNAUTHORIZED");
      expect(none.body.errors[0].message, name).toMatch(/missing/i);
      expectPlatformError(await call(apiKey("sk_not_a_real_key_0123456789")), 401, "UNAUTHORIZED");
      expectPlatformError(await call(bearer("not.a.token")), 401, "UNAUTHORIZED");
    }
    // nothing happened
    expect((await listWallets(apiKey(a.key), u1.userId)).body.meta.pagination.records.total).toBe(1);
    expect((await balancesOf(apiKey(a.key), w1.wallet_id)).btc?.balance).toBe("1.00000000");
  });

  it("answers 403 FORBIDDEN to operator and customer sessions and the master key, on every operation", async () => {
    const { a, u1, w1 } = await world("m403");
    const session = await api().post(`${BASE}/sessions`).send({ customer_id: a.customerId, customer_secret: a.key });
    expect(session.status).toBe(201);
    const credentials: [string, Cred][] = [
      ["operator session", bearer(wallets.operator)],
      ["customer session", bearer(session.body.data.token)],
      ["master key (x-master-api-key)", (r) => r.set("x-master-api-key", TEST_MASTER_KEY)],
      ["master key (x-api-key)", apiKey(TEST_MASTER_KEY)],
    ];
    for (const [credential, cred] of credentials) {
      for (const [name, call] of operations(u1.userId, w1.wallet_id)) {
        const res = await call(cred);
        expect(res.status, `${credential} → ${name}: ${JSON.stringify(res.body)}`).toBe(403);
        expectPlatformError(res, 403, "FORBIDDEN");
      }
    }
    expect((await listWallets(apiKey(a.key), u1.userId)).body.meta.pagination.records.total).toBe(1);
    expect((await balancesOf(apiKey(a.key), w1.wallet_id)).btc?.balance).toBe("1.00000000");
  });

  it("lets the owner key act on the wallets of any user of its customer", async () => {
    const { a, u1, u2, w1, w2 } = await world("mowner");
    for (const [userId, walletId] of [[u1.userId, w1.wallet_id], [u2.userId, w2.wallet_id]] as const) {
      const expected: Record<string, number> = {
        createWallet: 201,
        listWallets: 200,
        getWalletBalance: 200,
        listWalletTransactions: 200,
        createSandboxDeposit: 201,
        listCurrencies: 200,
        listTradingPairs: 200,
      };
      for (const [name, call] of operations(userId, walletId)) {
        const res = await call(apiKey(a.key));
        expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(expected[name]);
      }
    }
    expect((await balancesOf(apiKey(a.key), w1.wallet_id)).btc?.balance).toBe("1.50000000");
    expect((await balancesOf(apiKey(a.key), w2.wallet_id)).btc?.balance).toBe("2.50000000");
    expect((await listWallets(apiKey(a.key), u2.userId)).body.meta.pagination.records.total).toBe(2);
  });

  it("never shows a wallet to another customer's owner key: 404 WALLET_NOT_FOUND / USER_NOT_FOUND, no data, nothing changed", async () => {
    const { a, u1, w1, b } = await world("miso");
    const expected: Record<string, [number, string] | number> = {
      createWallet: [404, "USER_NOT_FOUND"],
      listWallets: [404, "USER_NOT_FOUND"],
      getWalletBalance: [404, "WALLET_NOT_FOUND"],
      listWalletTransactions: [404, "WALLET_NOT_FOUND"],
      createSandboxDeposit: [404, "WALLET_NOT_FOUND"],
      listCurrencies: 200,
      listTradingPairs: 200,
    };
    for (const [name, call] of operations(u1.userId, w1.wallet_id)) {
      const res = await call(apiKey(b.key));
      const want = expected[name] ?? 0;
      if (typeof want === "number") {
        expect(res.status, name).toBe(want);
        continue;
      }
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(want[0]);
      expectPlatformError(res, want[0], want[1]);
      expect(res.body.data, name).toBeUndefined();
      expect(JSON.stringify(res.body), name).not.toContain(w1.addresses[0]?.address ?? "-");
    }
    const list = await listWallets(apiKey(a.key), u1.userId);
    expect(list.body.meta.pagination.records.total).toBe(1);
    expect((await balancesOf(apiKey(a.key), w1.wallet_id)).btc?.balance).toBe("1.00000000");
    expect((await listTransactions(apiKey(a.key), w1.wallet_id)).body.meta.pagination.records.total).toBe(1);
  });

  it("lets a user token act on its own wallets only: another user's wallet id 404, another user's path 403", async () => {
    const { a, u1, u2, w1, w2, v, wv } = await world("mtoken");
    const mine = bearer(u1.token);

    // own user and wallet
    const created = await createWallet(mine, u1.userId, { name: "By token", networks: [BTC] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.user_id).toBe(u1.userId);
    const list = await listWallets(mine, u1.userId);
    expect(list.status).toBe(200);
    expect(walletNames(list)).toEqual(["By token", w1.name]);
    const balance = await getBalance(mine, w1.wallet_id);
    expect(balance.status).toBe(200);
    expect(balance.body.data.balance.find((x: BalanceItem) => x.currency === "btc").balance).toBe("1.00000000");
    const txs = await listTransactions(mine, w1.wallet_id);
    expect(txs.status).toBe(200);
    expect(txs.body.data).toHaveLength(1);

    // another user's wallet, same customer or not: 404, never its data
    for (const other of [w2, wv]) {
      for (const res of [await getBalance(mine, other.wallet_id), await listTransactions(mine, other.wallet_id)]) {
        expectPlatformError(res, 404, "WALLET_NOT_FOUND");
        expect(res.body.data).toBeUndefined();
      }
    }
    // another user's path, same customer or not: 403
    for (const otherUser of [u2.userId, v.userId]) {
      expectPlatformError(await createWallet(mine, otherUser, { name: walletName(), networks: [BTC] }), 403, "FORBIDDEN");
      expectPlatformError(await listWallets(mine, otherUser), 403, "FORBIDDEN");
    }
    // owner-only operations
    expectPlatformError(await sandboxDeposit(mine, { wallet_id: w1.wallet_id, network: BTC.name, currency: "btc", amount: 1 }), 403, "FORBIDDEN");
    expectPlatformError(await listCurrencies(mine), 403, "FORBIDDEN");
    expectPlatformError(await listPairs(mine), 403, "FORBIDDEN");

    // nothing of the others changed
    expect((await listWallets(apiKey(a.key), u2.userId)).body.meta.pagination.records.total).toBe(1);
    expect((await balancesOf(apiKey(a.key), w2.wallet_id)).btc?.balance).toBe("2.00000000");
    expect((await balancesOf(apiKey(a.key), w1.wallet_id)).btc?.balance).toBe("1.00000000");
  });

  it("answers 401 to a deactivated user's token on every operation; the owner key still reads its wallets", async () => {
    const { a, u2, w2 } = await world("mdeact");
    await deactivate(a.key, u2.userId);
    for (const [name, call] of operations(u2.userId, w2.wallet_id)) {
      const res = await call(bearer(u2.token));
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(401);
      expectPlatformError(res, 401, "UNAUTHORIZED");
    }
    // data, wallets and history are kept
    expect((await listWallets(apiKey(a.key), u2.userId)).status).toBe(200);
    expect((await balancesOf(apiKey(a.key), w2.wallet_id)).btc?.balance).toBe("2.00000000");
    expect((await listTransactions(apiKey(a.key), w2.wallet_id)).body.data).toHaveLength(1);
  });
});

describe("the contract declares every status the wallet endpoints answer", () => {
  const doc = JSON.parse(readFileSync(new URL("../../generated/openapi/platform.openapi.json", import.meta.url), "utf8")) as {
    paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
  };
  const declared = (operationId: string): string[] => {
    for (const item of Object.values(doc.paths)) for (const op of Object.values(item)) if (op.operationId === operationId) return Object.keys(op.responses);
    throw new Error(`no operation ${operationId}`);
  };
  // the statuses the wallets-*.test.ts files observe for each operation
  it.each([
    ["createWallet", ["201", "400", "401", "403", "404", "409", "422"]],
    ["listWallets", ["200", "401", "403", "404", "422"]],
    ["getWalletBalance", ["200", "401", "403", "404"]],
    ["listWalletTransactions", ["200", "400", "401", "403", "404", "422"]],
    ["createSandboxDeposit", ["201", "400", "401", "403", "404", "422"]],
    ["listCurrencies", ["200", "401", "403"]],
    ["listTradingPairs", ["200", "401", "403"]],
  ])("%s declares %j", (operationId, statuses) => {
    expect(declared(operationId)).toEqual(expect.arrayContaining(statuses));
  });

  it("knows the five sandbox networks", () => {
    expect([...NETWORKS].sort()).toEqual(ALL_NATIVE.map((n) => n.name).sort());
  });
});
