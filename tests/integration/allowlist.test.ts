/**
 * The withdrawal allowlist over HTTP on a real PostgreSQL (docs/decisions/limits-and-allowlist.md
 * "Destination allowlist"): Add Address (validated for the currency's network like a withdrawal's
 * destination, PENDING for ALLOWLIST_COOLDOWN_S then ACTIVE), the same address twice (409, also
 * under concurrent adds and in another spelling), List (newest first, paged), Delete, who may
 * call, and the signed `address.added` notification a real receiver gets. Every response is
 * validated against the contract.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { clockPast, waitFor } from "../support/wait.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { Api, apiKey, BAD, bearer, TO, UNKNOWN_ID, UUID, type Cred } from "../support/withdrawals-scene.js";

/** A 2-second cooldown, so a test can wait for ACTIVE; loopback webhook targets allowed. */
const t = useTestApp({ ALLOWLIST_COOLDOWN_S: "2", ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "1" });
const api = () => new Api(t);

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const addresses = (userId: string) => `${BASE}/users/${userId}/addresses`;
type Entry = { address_id: string; user_id: string; currency: string; address: string; label: string; status: string; created_at: string; activates_at: string };

/** Add Address with `cred`. */
const add = (cred: Cred, userId: string, body: Record<string, unknown>) => cred(api().http().post(addresses(userId))).send(body);

/** Add Address, asserting 201; returns the entry. */
async function added(cred: Cred, userId: string, body: Record<string, unknown>): Promise<Entry> {
  const res = await add(cred, userId, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as Entry;
}

/** List Addresses, asserting 200. */
async function list(cred: Cred, userId: string, query: Record<string, number> = {}): Promise<{ items: Entry[]; total: number }> {
  const res = await cred(api().http().get(addresses(userId))).query(query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { items: res.body.data as Entry[], total: res.body.meta.pagination.records.total as number };
}

describe("Add and List Address", () => {
  it("adds an address PENDING until created_at + ALLOWLIST_COOLDOWN_S, then lists it ACTIVE", async () => {
    const a = api();
    const s = await a.scene("al-add");
    const entry = await added(bearer(s.token), s.userId, { currency: "BTC", address: TO.btc, label: "Cold storage" });
    expect(entry).toMatchObject({ user_id: s.userId, currency: "btc", address: TO.btc, label: "Cold storage", status: "PENDING" });
    expect(entry.address_id).toMatch(UUID);
    expect(Date.parse(entry.activates_at) - Date.parse(entry.created_at)).toBe(2000);
    expect((await list(apiKey(s.key), s.userId)).items).toEqual([entry]);
    await clockPast(entry.activates_at);
    expect((await list(bearer(s.token), s.userId)).items).toEqual([{ ...entry, status: "ACTIVE" }]);
  });

  it("refuses the same currency and address twice for a user with 409 ADDRESS_ALREADY_EXISTS, in any case spelling of a hex address", async () => {
    const a = api();
    const s = await a.scene("al-dup");
    await added(apiKey(s.key), s.userId, { currency: "eth", address: TO.eth, label: "Exchange" });
    expectPlatformError(await add(apiKey(s.key), s.userId, { currency: "eth", address: TO.eth, label: "Again" }), 409, "ADDRESS_ALREADY_EXISTS");
    expectPlatformError(await add(apiKey(s.key), s.userId, { currency: "ETH", address: TO.eth.toLowerCase(), label: "Lower" }), 409, "ADDRESS_ALREADY_EXISTS");
    // another currency on the same network, and another user, may have it
    await added(apiKey(s.key), s.userId, { currency: "usdt", address: TO.eth, label: "Exchange USDT" });
    const other = await a.user(s.key);
    await added(apiKey(s.key), other.userId, { currency: "eth", address: TO.eth, label: "Exchange" });
    expect((await list(apiKey(s.key), s.userId)).total).toBe(2);
  });

  it("10 concurrent adds of one address: one 201, nine 409", async () => {
    const a = api();
    const s = await a.scene("al-race");
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => add(apiKey(s.key), s.userId, { currency: "sol", address: TO.sol, label: `Race ${i}` })));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of responses.filter((x) => x.status !== 201)) expectPlatformError(r, 409, "ADDRESS_ALREADY_EXISTS");
    expect((await list(apiKey(s.key), s.userId)).total).toBe(1);
  });

  it.each<[string, Record<string, unknown>, number, string]>([
    ["a mainnet address on the testnet sandbox", { currency: "btc", address: BAD.mainnetBc1, label: "x" }, 400, "INVALID_CRYPTO_ADDRESS"],
    ["a bad EIP-55 checksum", { currency: "eth", address: BAD.ethChecksum, label: "x" }, 400, "INVALID_CRYPTO_ADDRESS"],
    ["an address of another network", { currency: "btc", address: TO.eth, label: "x" }, 400, "INVALID_CRYPTO_ADDRESS"],
    ["an unknown currency", { currency: "xyz", address: TO.btc, label: "x" }, 400, "INVALID_CURRENCY"],
    // fiat is held on a bank rail, where no address is a crypto destination (docs/decisions/fiat.md "Rails and virtual accounts")
    ["a fiat currency", { currency: "usd", address: TO.btc, label: "x" }, 400, "INVALID_CRYPTO_ADDRESS"],
    ["a fiat currency with an IBAN", { currency: "eur", address: "DE89370400440532013000", label: "x" }, 400, "INVALID_CRYPTO_ADDRESS"],
    ["a label with a zero-width character", { currency: "btc", address: TO.btc, label: "Cold\u200bstorage" }, 422, "UNPROCESSABLE_ENTITY"],
    ["no label", { currency: "btc", address: TO.btc }, 422, "UNPROCESSABLE_ENTITY"],
    ["a label of 101 characters", { currency: "btc", address: TO.btc, label: "x".repeat(101) }, 422, "UNPROCESSABLE_ENTITY"],
  ])("refuses %s and adds nothing", async (_label, body, status, code) => {
    const a = api();
    const s = await a.scene("al-bad");
    expectPlatformError(await add(apiKey(s.key), s.userId, body), status, code);
    expect((await list(apiKey(s.key), s.userId)).total).toBe(0);
  });

  it("lists newest first with filter[limit] and filter[skip]", async () => {
    const a = api();
    const s = await a.scene("al-page");
    const first = await added(apiKey(s.key), s.userId, { currency: "btc", address: TO.btc, label: "One" });
    await clockPast(first.created_at);
    const second = await added(apiKey(s.key), s.userId, { currency: "eth", address: TO.eth, label: "Two" });
    await clockPast(second.created_at);
    const third = await added(apiKey(s.key), s.userId, { currency: "trx", address: TO.tron, label: "Three" });
    expect((await list(apiKey(s.key), s.userId)).items.map((e) => e.label)).toEqual(["Three", "Two", "One"]);
    const page = await list(apiKey(s.key), s.userId, { "filter[limit]": 1, "filter[skip]": 1 });
    expect(page).toEqual({ items: [second], total: 3 });
    expect(third.currency).toBe("trx");
  });
});

describe("Delete Address", () => {
  it("deletes the user's entry (204); a second delete, another user's entry or an unknown id answers 404 RESOURCE_NOT_FOUND", async () => {
    const a = api();
    const s = await a.scene("al-del");
    const other = await a.user(s.key);
    const mine = await added(apiKey(s.key), s.userId, { currency: "btc", address: TO.btc, label: "Mine" });
    const theirs = await added(apiKey(s.key), other.userId, { currency: "btc", address: TO.btc, label: "Theirs" });
    const del = (cred: Cred, userId: string, id: string) => cred(a.http().delete(`${addresses(userId)}/${id}`));
    expectPlatformError(await del(apiKey(s.key), s.userId, theirs.address_id), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await del(apiKey(s.key), s.userId, UNKNOWN_ID), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await del(apiKey(s.key), s.userId, "not-a-uuid"), 404, "RESOURCE_NOT_FOUND");
    expect((await del(bearer(s.token), s.userId, mine.address_id.toUpperCase())).status).toBe(204);
    expectPlatformError(await del(apiKey(s.key), s.userId, mine.address_id), 404, "RESOURCE_NOT_FOUND");
    expect((await list(apiKey(s.key), s.userId)).total).toBe(0);
    expect((await list(apiKey(s.key), other.userId)).items).toEqual([theirs]);
    // once deleted, the address can be added again (a new entry, a new cooldown)
    const again = await added(apiKey(s.key), s.userId, { currency: "btc", address: TO.btc, label: "Mine again" });
    expect(again.address_id).not.toBe(mine.address_id);
  });
});

describe("who may call", () => {
  it("answers 403 to another user's token, 404 USER_NOT_FOUND to another customer's key or an unknown user, 401 without a credential", async () => {
    const a = api();
    const s = await a.scene("al-access");
    const other = await a.user(s.key);
    const foreign = await a.scene("al-access-foreign");
    const body = { currency: "btc", address: TO.btc, label: "x" };
    expectPlatformError(await add(bearer(other.token), s.userId, body), 403, "FORBIDDEN");
    expectPlatformError(await bearer(other.token)(a.http().get(addresses(s.userId))), 403, "FORBIDDEN");
    expectPlatformError(await add(apiKey(foreign.key), s.userId, body), 404, "USER_NOT_FOUND");
    expectPlatformError(await apiKey(foreign.key)(a.http().get(addresses(s.userId))), 404, "USER_NOT_FOUND");
    expectPlatformError(await add(apiKey(s.key), UNKNOWN_ID, body), 404, "USER_NOT_FOUND");
    expectPlatformError(await a.http().post(addresses(s.userId)).send(body), 401, "UNAUTHORIZED");
  });
});

describe("the address.added notification", () => {
  it("reaches the customer's webhook, signed like withdrawal.pin, with the entry's data", async () => {
    const a = api();
    const s = await a.scene("al-hook");
    const operator = await a.walk.operatorToken();
    const registered = await a.http().post(`${BASE}/customers/${s.customerId}/webhooks`).set("Authorization", `Bearer ${operator}`)
      .send({ url: receiver.url, headers: [{ key: "X-Acme", value: "custody" }] });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const secret = registered.body.data.signing_secret as string;
    receiver.trust(secret);

    const entry = await added(bearer(s.token), s.userId, { currency: "btc", address: TO.btc, label: "Cold storage" });
    const hook = await waitFor("the address.added notification", () =>
      receiver.received.find((r) => r.json.type === "address.added" && r.json.data.address_id === entry.address_id), 8_000);
    expect(hook.verifiedBy[secret]).toBe(true);
    expect(hook.headers["webhook-id"]).toMatch(/^msg_/);
    expect(hook.headers["x-acme"]).toBe("custody");
    expect(hook.json.data).toEqual({
      address_id: entry.address_id,
      user_id: s.userId,
      customer_id: s.customerId,
      currency: "btc",
      address: TO.btc,
      label: "Cold storage",
      created_at: entry.created_at,
      activates_at: entry.activates_at,
    });
    expect(Number.isNaN(Date.parse(hook.json.timestamp))).toBe(false);

    // the delivery log shows it with its payload (responses are validated against the document here)
    const log = await waitFor("the address.added delivery succeeded", async () => {
      const res = await a.http().get(`${BASE}/customers/${s.customerId}/webhooks/deliveries`).set("Authorization", `Bearer ${operator}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const row = (res.body.data as { event_type: string; status: string; payload: { data: { address_id: string } } }[])
        .find((d) => d.event_type === "address.added" && d.payload.data.address_id === entry.address_id);
      return row?.status === "succeeded" ? row : undefined;
    }, 8_000);
    expect(log.payload).toEqual(hook.json);

    // a customer without a webhook adds addresses all the same, and nothing is sent
    const quiet = await a.scene("al-hook-quiet");
    const silent = await added(apiKey(quiet.key), quiet.userId, { currency: "btc", address: TO.btc, label: "Quiet" });
    const [rows] = await a.sql<{ n: number }>(`select count(*)::int as n from webhook_delivery where reference = ?`, [`address:${silent.address_id}`]);
    expect(rows?.n).toBe(0);
  });
});
