/**
 * Create Transfer, Get Transfer and List Wallet Transfers over HTTP on a real PostgreSQL
 * (docs/decisions/limits-and-allowlist.md "Transfers"; spec/platform/transfers.tsp): the booked
 * transfer and both sides' history, the amount read exactly, every refusal of the check order, who
 * may send, read and list, and another customer's wallets answering 404. Idempotency, concurrency
 * and caps: transfers-concurrency.test.ts.
 */
import pg from "pg";
import type request from "supertest";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { quote } from "../../src/domain/errors.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import {
  apiKey, bearer, BTC, ETH, UNKNOWN_ID, USDT_ETH, USDT_TRON, useWalletsScene, UUID,
  type Cred, type TransactionRecord, type WalletRecord,
} from "../support/wallets-scene.js";

const scene = useWalletsScene();
const { api } = scene;

const CLEAN = { unbalancedEntries: [], cacheMismatches: [], negativeAccounts: [], unbalancedCurrencies: [] };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type TransferRecord = {
  transfer_id: string; from_wallet_id: string; to_wallet_id: string; from_user_id: string; to_user_id: string;
  currency: string; amount: string; memo: string | null; status: string; idempotency_key: string; is_duplicate: boolean; created_at: string;
};

const createTransfer = (cred: Cred, body: Record<string, unknown> | string, key?: string): request.Test => {
  let r = cred(api().post(`${BASE}/transfers`));
  if (key !== undefined) r = r.set("Idempotency-Key", key);
  return typeof body === "string" ? r.set("Content-Type", "application/json").send(body) : r.send(body);
};
const getTransfer = (cred: Cred, id: string) => cred(api().get(`${BASE}/transfers/${id}`));
const listTransfers = (cred: Cred, walletId: string, query: Record<string, string | number> = {}) => cred(api().get(`${BASE}/wallets/${walletId}/transfers`)).query(query);

/** The transactions of a wallet of action `type` (owner key). */
async function history(key: string, walletId: string, type: string): Promise<TransactionRecord[]> {
  const res = await scene.listTransactions(apiKey(key), walletId, { "filter[where][type]": type });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as TransactionRecord[];
}

/** How many transfers the database holds. */
async function transferCount(): Promise<number> {
  const [row] = await scene.t.orm.em.fork().execute<{ n: number }[]>(`select count(*)::int as n from transfer`);
  return row?.n ?? 0;
}

/** One tenant: alice (two wallets), bob, a deactivated user's wallet; another tenant with a wallet. */
let key: string;
let alice: { userId: string; token: string };
let bob: { userId: string; token: string };
let dave: { userId: string; token: string };
let aliceMain: WalletRecord;
let aliceEth: WalletRecord;
let bobMain: WalletRecord;
let gone: WalletRecord;
let otherKey: string;
let otherWallet: WalletRecord;

beforeAll(async () => {
  ({ key } = await scene.tenant("tr"));
  [alice, bob, dave] = [await scene.activeUser(key), await scene.activeUser(key), await scene.activeUser(key)];
  aliceMain = await scene.newWallet(apiKey(key), alice.userId, [BTC, USDT_ETH]);
  aliceEth = await scene.newWallet(apiKey(key), alice.userId, [ETH]);
  bobMain = await scene.newWallet(apiKey(key), bob.userId, [BTC, USDT_TRON]);
  const leaver = await scene.activeUser(key);
  gone = await scene.newWallet(apiKey(key), leaver.userId, [BTC]);
  await scene.deactivate(key, leaver.userId);
  await scene.deposited(key, aliceMain.wallet_id, BTC, 1);
  await scene.deposited(key, aliceMain.wallet_id, USDT_ETH, 100);
  await scene.deposited(key, aliceEth.wallet_id, ETH, 2);
  await scene.deposited(key, gone.wallet_id, BTC, 1);
  const other = await scene.scene("tr-other");
  otherKey = other.key;
  otherWallet = await scene.newWallet(apiKey(otherKey), other.userId, [BTC]);
  await scene.deposited(otherKey, otherWallet.wallet_id, BTC, 1);
});

describe("Create Transfer", () => {
  it("moves the amount at once, records both sides and answers the Transfer", async () => {
    const res = await createTransfer(apiKey(key), { from_wallet_id: aliceMain.wallet_id, to_wallet_id: bobMain.wallet_id, currency: "BTC", amount: 0.1, memo: "Dinner" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const t = res.body.data as TransferRecord;
    expect(t).toEqual({
      transfer_id: expect.stringMatching(UUID),
      from_wallet_id: aliceMain.wallet_id,
      to_wallet_id: bobMain.wallet_id,
      from_user_id: alice.userId,
      to_user_id: bob.userId,
      currency: "btc",
      amount: "0.10000000",
      memo: "Dinner",
      status: "COMPLETED",
      idempotency_key: expect.stringMatching(UUID),
      is_duplicate: false,
      created_at: expect.stringMatching(ISO),
    });
    expect((await scene.balancesOf(apiKey(key), aliceMain.wallet_id)).btc).toEqual({ currency: "btc", balance: "0.90000000", available: "0.90000000", held: "0.00000000" });
    expect((await scene.balancesOf(apiKey(key), bobMain.wallet_id)).btc).toEqual({ currency: "btc", balance: "0.10000000", available: "0.10000000", held: "0.00000000" });

    const [out] = await history(key, aliceMain.wallet_id, "transfer_out");
    const [into] = await history(key, bobMain.wallet_id, "transfer_in");
    for (const [row, balance] of [[out, 0.9], [into, 0.1]] as const) {
      expect(row?.balance).toBe(balance);
      expect(row?.transaction).toMatchObject({ order_id: t.transfer_id, status: "done", currency: "btc", symbol: "BTC", amount: 0.1, net_proceeds: 0.1, fees: 0, memo: "Dinner", idempotency_id: t.idempotency_key, hash: "" });
    }
    expect(out?.transaction.description).toContain(bobMain.wallet_id);
    expect(into?.transaction.description).toContain(aliceMain.wallet_id);

    // one ledger entry between the two available accounts, nothing else; the ledger stays consistent
    const entries = await scene.t.orm.em.fork().execute<{ kind: string; wallet_id: string; postings: string[] }[]>(
      `select e.kind, e.wallet_id, array_agg(a.code || ' ' || p.amount::text order by p.amount) as postings
         from journal_entry e join ledger_posting p on p.entry_id = e.id join ledger_account a on a.id = p.account_id
        where e.reference = ? group by e.id`,
      [`transfer:${t.transfer_id}`],
    );
    expect(entries).toEqual([{
      kind: "transfer",
      wallet_id: aliceMain.wallet_id,
      postings: [`wallet:${aliceMain.wallet_id}:available:btc -0.100000000000000000`, `wallet:${bobMain.wallet_id}:available:btc 0.100000000000000000`],
    }]);
    expect(await scene.t.services.ledger.verify(scene.t.db)).toEqual(CLEAN);

    // Get and List answer the same record
    expect((await getTransfer(apiKey(key), t.transfer_id.toUpperCase())).body.data).toEqual(t);
    for (const wallet of [aliceMain, bobMain]) {
      const list = await listTransfers(apiKey(key), wallet.wallet_id);
      expect(list.status).toBe(200);
      expect(list.body.data).toEqual([t]);
    }
  });

  it("records each side on the network its wallet holds the currency on (usdt: ethereum → tron)", async () => {
    const res = await createTransfer(apiKey(key), { from_wallet_id: aliceMain.wallet_id, to_wallet_id: bobMain.wallet_id, currency: "usdt", amount: 12.5 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.memo).toBeNull();
    const rows = await scene.t.orm.em.fork().execute<{ wallet_id: string; action: string; network: string; address: string }[]>(
      `select wallet_id, action, network, address from wallet_transaction where order_id = ? order by action`,
      [res.body.data.transfer_id],
    );
    const addressOf = (w: WalletRecord, network: string) => w.addresses.find((a) => a.network === network && a.currency === "usdt")?.address;
    expect(rows).toEqual([
      { wallet_id: bobMain.wallet_id, action: "transfer_in", network: USDT_TRON.name, address: addressOf(bobMain, USDT_TRON.name) },
      { wallet_id: aliceMain.wallet_id, action: "transfer_out", network: USDT_ETH.name, address: addressOf(aliceMain, USDT_ETH.name) },
    ]);
    expect((await scene.balancesOf(apiKey(key), bobMain.wallet_id)).usdt?.available).toBe("12.50000000");
  });

  it("reads the amount exactly as written: 21 decimals are refused, not rounded to 0.1", async () => {
    const before = await transferCount();
    const body = `{"from_wallet_id":"${aliceMain.wallet_id}","to_wallet_id":"${bobMain.wallet_id}","currency":"btc","amount":0.100000000000000000001}`;
    const res = await createTransfer(apiKey(key), body);
    expectPlatformError(res, 400, "INVALID_AMOUNT");
    expect(await transferCount()).toBe(before);
  });

  it("refuses in the contract's order, each with 400 and nothing booked", async () => {
    const base = { from_wallet_id: aliceMain.wallet_id, to_wallet_id: bobMain.wallet_id, currency: "btc", amount: 0.01 };
    const before = await transferCount();
    const balances = await scene.balancesOf(apiKey(key), aliceMain.wallet_id);
    const cases: [string, Record<string, unknown>, string, string][] = [
      // each row also breaks the later rules where it can, to show which check runs first
      ["same wallet", { to_wallet_id: aliceMain.wallet_id, currency: "xyz", amount: 0 }, "SAME_WALLET_TRANSFER", "to_wallet_id"],
      ["same wallet, other case", { to_wallet_id: aliceMain.wallet_id.toUpperCase() }, "SAME_WALLET_TRANSFER", "to_wallet_id"],
      ["unknown currency", { currency: "xyz", amount: 0 }, "INVALID_CURRENCY", "currency"],
      ["destination lacks the currency", { to_wallet_id: aliceEth.wallet_id, amount: 0 }, "UNSUPPORTED_CURRENCY", "currency"],
      ["source lacks the currency", { from_wallet_id: aliceEth.wallet_id, amount: -1 }, "UNSUPPORTED_CURRENCY", "currency"],
      ["zero", { amount: 0 }, "AMOUNT_MUST_BE_POSITIVE", "amount"],
      ["negative", { amount: -0.0000001 }, "AMOUNT_MUST_BE_POSITIVE", "amount"],
      ["below 0.000001", { amount: 0.00000099 }, "AMOUNT_TOO_SMALL", "amount"],
      ["more decimals than usdt's 6", { currency: "usdt", amount: 1.1234567 }, "INVALID_AMOUNT", "amount"],
      ["more decimals than btc's 8, over the balance", { amount: 5.000000001 }, "INVALID_AMOUNT", "amount"],
      ["more than available (under the caps)", { amount: 0.95 }, "INSUFFICIENT_BALANCE", ""],
    ];
    for (const [name, change, code, field] of cases) {
      const res = await createTransfer(apiKey(key), { ...base, ...change });
      expectPlatformError(res, 400, code);
      if (field !== "") expect(res.body.errors[0].field, name).toBe(field);
    }
    expect(await transferCount()).toBe(before);
    expect(await scene.balancesOf(apiKey(key), aliceMain.wallet_id)).toEqual(balances);
  });

  it("answers 404 for unknown wallets, another customer's wallets and a user not VERIFIED; 422 for malformed bodies", async () => {
    const before = await transferCount();
    const base = { from_wallet_id: aliceMain.wallet_id, to_wallet_id: bobMain.wallet_id, currency: "btc", amount: 0.01 };
    for (const change of [
      { from_wallet_id: UNKNOWN_ID },
      { to_wallet_id: UNKNOWN_ID },
      { to_wallet_id: otherWallet.wallet_id },
      // checked before the same-wallet rule: a wallet that is not found is not found
      { from_wallet_id: otherWallet.wallet_id, to_wallet_id: otherWallet.wallet_id },
    ]) {
      const res = await createTransfer(apiKey(key), { ...base, ...change });
      expectPlatformError(res, 404, "WALLET_NOT_FOUND");
      expect(JSON.stringify(res.body)).not.toContain(otherWallet.user_id);
    }
    // the other tenant cannot pull from or push to this tenant's wallets either
    expectPlatformError(await createTransfer(apiKey(otherKey), { ...base, to_wallet_id: otherWallet.wallet_id }), 404, "WALLET_NOT_FOUND");
    expectPlatformError(await createTransfer(apiKey(otherKey), { ...base, from_wallet_id: otherWallet.wallet_id }), 404, "WALLET_NOT_FOUND");
    // a deactivated owner, at either end
    expectPlatformError(await createTransfer(apiKey(key), { ...base, to_wallet_id: gone.wallet_id }), 404, "USER_NOT_FOUND");
    expectPlatformError(await createTransfer(apiKey(key), { ...base, from_wallet_id: gone.wallet_id }), 404, "USER_NOT_FOUND");
    for (const body of [
      { ...base, amount: 1e13 },
      { ...base, amount: "0.1" },
      { ...base, memo: "x".repeat(256) },
      { to_wallet_id: bobMain.wallet_id, currency: "btc", amount: 0.01 },
    ]) {
      expectPlatformError(await createTransfer(apiKey(key), body), 422, "UNPROCESSABLE_ENTITY");
    }
    expect(await transferCount()).toBe(before);
  });
});

describe("who may transfer, read and list", () => {
  let fromAlice: TransferRecord;

  it("a user token sends from its own wallets only: another user's wallet is 403, another customer's 404", async () => {
    const res = await createTransfer(bearer(alice.token), { from_wallet_id: aliceMain.wallet_id, to_wallet_id: bobMain.wallet_id, currency: "btc", amount: 0.05 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    fromAlice = res.body.data as TransferRecord;
    expect(fromAlice.from_user_id).toBe(alice.userId);
    const before = await transferCount();
    const pull = await createTransfer(bearer(alice.token), { from_wallet_id: bobMain.wallet_id, to_wallet_id: aliceMain.wallet_id, currency: "btc", amount: 0.01 });
    expectPlatformError(pull, 403, "FORBIDDEN");
    const foreign = await createTransfer(bearer(alice.token), { from_wallet_id: otherWallet.wallet_id, to_wallet_id: aliceMain.wallet_id, currency: "btc", amount: 0.01 });
    expectPlatformError(foreign, 404, "WALLET_NOT_FOUND");
    expect(await transferCount()).toBe(before);
  });

  it("Get Transfer: the owner key and both parties' tokens read it; anyone else gets 404", async () => {
    for (const cred of [apiKey(key), bearer(alice.token), bearer(bob.token)]) {
      const res = await getTransfer(cred, fromAlice.transfer_id);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data).toEqual(fromAlice);
    }
    for (const [cred, id] of [[bearer(dave.token), fromAlice.transfer_id], [apiKey(otherKey), fromAlice.transfer_id], [apiKey(key), UNKNOWN_ID], [apiKey(key), "nope"]] as const) {
      const res = await getTransfer(cred, id);
      expectPlatformError(res, 404, "RESOURCE_NOT_FOUND");
      expect(res.body.data).toBeUndefined();
    }
    expectPlatformError(await getTransfer(apiKey(key), "x".repeat(37)), 422, "UNPROCESSABLE_ENTITY");
  });

  it("List Wallet Transfers: a user token lists its own wallets only (403), another customer's wallet is 404", async () => {
    expect((await listTransfers(bearer(bob.token), bobMain.wallet_id)).status).toBe(200);
    expectPlatformError(await listTransfers(bearer(alice.token), bobMain.wallet_id), 403, "FORBIDDEN");
    expectPlatformError(await listTransfers(bearer(dave.token), aliceMain.wallet_id), 403, "FORBIDDEN");
    expectPlatformError(await listTransfers(apiKey(otherKey), aliceMain.wallet_id), 404, "WALLET_NOT_FOUND");
    expectPlatformError(await listTransfers(bearer(alice.token), otherWallet.wallet_id), 404, "WALLET_NOT_FOUND");
    expectPlatformError(await listTransfers(apiKey(key), UNKNOWN_ID), 404, "WALLET_NOT_FOUND");
    expectPlatformError(await listTransfers(apiKey(key), aliceMain.wallet_id, { "filter[limit]": 101 }), 422, "UNPROCESSABLE_ENTITY");
    expect((await listTransfers(apiKey(otherKey), otherWallet.wallet_id)).body.data).toEqual([]);
  });

  it("lists both directions, newest first, with meta.pagination", async () => {
    const w = await scene.newWallet(apiKey(key), dave.userId, [BTC]);
    await scene.deposited(key, w.wallet_id, BTC, 1);
    const sent: string[] = [];
    for (const [from, to] of [[w, bobMain], [bobMain, w], [w, aliceMain], [aliceMain, w], [w, bobMain]] as const) {
      const res = await createTransfer(apiKey(key), { from_wallet_id: from.wallet_id, to_wallet_id: to.wallet_id, currency: "btc", amount: 0.01 });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      sent.push(res.body.data.transfer_id as string);
    }
    const all = await listTransfers(bearer(dave.token), w.wallet_id);
    expect((all.body.data as TransferRecord[]).map((x) => x.transfer_id)).toEqual([...sent].reverse());
    const page = await listTransfers(apiKey(key), w.wallet_id, { "filter[limit]": 2, "filter[skip]": 2 });
    expect((page.body.data as TransferRecord[]).map((x) => x.transfer_id)).toEqual([sent[2], sent[1]]);
    expect(page.body.meta.pagination.records).toEqual({ skip: 2, has_next: true, has_previous: true, total: 5, limit: 2 });
    expect(page.body.meta.pagination.navigation.next).toBe(`/wallets/${w.wallet_id}/transfers?filter[limit]=2&filter[skip]=4`);
    expect((await scene.balancesOf(apiKey(key), w.wallet_id)).btc?.available).toBe("0.99000000"); // 3 sent, 2 received
  });
});

describe("how Create Transfer reads its parties", () => {
  /** The statements every `pg` client of this process sends while `record` is set (text and values as one string). */
  let record: string[] | undefined;
  const original = pg.Client.prototype.query;
  afterEach(() => {
    pg.Client.prototype.query = original;
    record = undefined;
  });
  const recording = (): void => {
    record = [];
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const [config, values] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
      const text = typeof config === "string" ? config : config.text;
      record?.push(`${text} ${JSON.stringify(values ?? (typeof config === "string" ? [] : config.values ?? []))}`);
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
  };

  it("checks the wallets, then their owners, source first, with the users' own messages", async () => {
    const remover = await scene.activeUser(key);
    const removed = await scene.newWallet(apiKey(key), remover.userId, [BTC]);
    await scene.deactivate(key, remover.userId);
    expect((await api().delete(`${BASE}/users/${remover.userId}`).set("x-api-key", key)).status).toBe(204);
    const before = await transferCount();
    const body = (from: string, to: string) => ({ from_wallet_id: from, to_wallet_id: to, currency: "btc", amount: 0.01 });
    const cases: [string, Cred, Record<string, unknown>, number, string, string][] = [
      // docs/decisions/customers-users-and-wallets.md "Wallets": an id that is no UUID answers first
      ["a destination that is no UUID before an unknown source", apiKey(key), body(UNKNOWN_ID, "not-a-uuid"), 400, "INVALID_WALLET_ID", `${quote("not-a-uuid")} is not a wallet id (a UUID).`],
      ["a source that is no UUID", apiKey(key), body("not-a-uuid", UNKNOWN_ID), 400, "INVALID_WALLET_ID", `${quote("not-a-uuid")} is not a wallet id (a UUID).`],
      ["an id that is no UUID before a foreign source", bearer(alice.token), body(bobMain.wallet_id, "x"), 400, "INVALID_WALLET_ID", `${quote("x")} is not a wallet id (a UUID).`],
      ["unknown source before an unknown destination", apiKey(key), body(UNKNOWN_ID, UNKNOWN_ID.replace(/^./, "1")), 404, "WALLET_NOT_FOUND", `Wallet ${quote(UNKNOWN_ID)} not found.`],
      ["wallets before owners", apiKey(key), body(gone.wallet_id, UNKNOWN_ID), 404, "WALLET_NOT_FOUND", `Wallet ${quote(UNKNOWN_ID)} not found.`],
      ["a foreign source before the destination", bearer(alice.token), body(bobMain.wallet_id, UNKNOWN_ID), 403, "FORBIDDEN", "A user token can only send from its own wallets."],
      ["a foreign source before its owner", bearer(alice.token), body(removed.wallet_id, aliceMain.wallet_id), 403, "FORBIDDEN", "A user token can only send from its own wallets."],
      ["the source's owner first", apiKey(key), body(gone.wallet_id, removed.wallet_id), 404, "USER_NOT_FOUND", `User ${quote(gone.user_id)} is not active.`],
      ["a deleted source owner", apiKey(key), body(removed.wallet_id, gone.wallet_id), 404, "USER_NOT_FOUND", `User ${quote(remover.userId)} has been deleted.`],
      ["a deleted destination owner", bearer(alice.token), body(aliceMain.wallet_id, removed.wallet_id), 404, "USER_NOT_FOUND", `User ${quote(remover.userId)} has been deleted.`],
      ["owners before the same-wallet rule", apiKey(key), body(gone.wallet_id, gone.wallet_id.toUpperCase()), 404, "USER_NOT_FOUND", `User ${quote(gone.user_id)} is not active.`],
    ];
    for (const [name, cred, change, status, code, message] of cases) {
      const res = await createTransfer(cred, change);
      expectPlatformError(res, status, code);
      expect(res.body.errors[0].message, name).toBe(message);
    }
    expect(await transferCount()).toBe(before);
  });

  it("reads both wallets, their owners and their addresses in one statement (docs/performance.md)", async () => {
    const [carol, erin] = [await scene.activeUser(key), await scene.activeUser(key)];
    const [from, to] = [await scene.newWallet(apiKey(key), carol.userId, [BTC]), await scene.newWallet(apiKey(key), erin.userId, [BTC])];
    await scene.deposited(key, from.wallet_id, BTC, 1);
    recording();
    const res = await createTransfer(bearer(carol.token), { from_wallet_id: from.wallet_id, to_wallet_id: to.wallet_id.toUpperCase(), currency: "BTC", amount: 0.25 });
    const statements = record ?? [];
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const parties = [from.wallet_id, to.wallet_id, carol.userId, erin.userId];
    // the movement guard's share lock in the transaction (src/modules/wallets/states.ts) is no read of the parties
    const partyReads = statements.filter(
      (s) => /^\s*select\b/i.test(s) && /\b(?:from|join)\s+"?(?:wallet|wallet_address|app_user)"?\s/i.test(s) && !/\bcredential\b/i.test(s) && !/\bfor share\b/i.test(s) && parties.some((id) => s.includes(id)),
    );
    expect(partyReads, statements.join("\n")).toHaveLength(1);
    const rows = await scene.t.orm.em.fork().execute<{ wallet_id: string; action: string; address: string }[]>(
      `select wallet_id, action, address from wallet_transaction where order_id = ? order by action`,
      [res.body.data.transfer_id],
    );
    const btcAddress = (w: WalletRecord) => w.addresses.find((a) => a.currency === "btc")?.address;
    expect(rows).toEqual([
      { wallet_id: to.wallet_id, action: "transfer_in", address: btcAddress(to) },
      { wallet_id: from.wallet_id, action: "transfer_out", address: btcAddress(from) },
    ]);
  });
});
