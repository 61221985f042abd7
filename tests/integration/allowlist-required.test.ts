/**
 * Initiate Withdrawal under the customer's `allowlist_required` (docs/decisions/limits-and-allowlist.md
 * "Destination allowlist"; the check order in docs/decisions/withdrawals.md "Initiate"), over HTTP
 * on a real PostgreSQL: an address absent from the user's list, or still cooling down, answers
 * 400 INVALID_ADDRESS saying which (and until when); once ACTIVE it is accepted; the check comes
 * right after the address's validity and before the caps; without the policy the list is
 * informational. Every response is validated against the contract.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { clockPast } from "../support/wait.js";
import { Api, apiKey, BAD, bearer, BTC, ETH, TO, type Scene } from "../support/withdrawals-scene.js";

/** A 1-second cooldown, so a test can wait for ACTIVE. */
const t = useTestApp({ ALLOWLIST_COOLDOWN_S: "1" });
const api = () => new Api(t);

/** Sets the scene's customer's `allowlist_required` (and caps, when given) with an operator session. */
async function policy(s: Scene, body: Record<string, unknown>): Promise<void> {
  const operator = await api().walk.operatorToken();
  const res = await api().http().put(`${BASE}/customers/${s.customerId}/limits`).set("Authorization", `Bearer ${operator}`).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** Adds `address` of `currency` to the scene user's list; returns its `activates_at`. */
async function allow(s: Scene, currency: string, address: string): Promise<string> {
  const res = await api().http().post(`${BASE}/users/${s.userId}/addresses`).set("x-api-key", s.key).send({ currency, address, label: "Allowed" });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.activates_at as string;
}

describe("Initiate Withdrawal with allowlist_required", () => {
  it("refuses an absent address, then a cooling one (until activates_at), then accepts it once ACTIVE", async () => {
    const a = api();
    const s = await a.scene("alr-flow", [BTC], [[BTC, 1]]);
    await policy(s, { allowlist_required: true });
    const body = { currency: "btc", amount: 0.1, address: TO.btc };

    const absent = await a.initiate(bearer(s.token), s.userId, body);
    expectPlatformError(absent, 400, "INVALID_ADDRESS");
    expect(absent.body.errors[0].message).toMatch(/is not on the user's btc allowlist/);

    const activatesAt = await allow(s, "btc", TO.btc);
    const cooling = await a.initiate(apiKey(s.key), s.userId, body);
    expectPlatformError(cooling, 400, "INVALID_ADDRESS");
    expect(cooling.body.errors[0].message).toContain(`still cooling down until ${activatesAt}`);
    expect(await a.btc(s)).toMatchObject({ available: "1.00000000", held: "0.00000000" });

    await clockPast(activatesAt);
    expect((await a.started(s, body)).id).toBeTruthy();
    expect(await a.btc(s)).toMatchObject({ held: "0.10000000" });
    // an entry of another currency does not allow the address for this one
    const s2 = await a.scene("alr-flow-currency", [ETH], [[ETH, 1]]);
    await policy(s2, { allowlist_required: true });
    await clockPast(await allow(s2, "usdt", TO.eth));
    expectPlatformError(await a.initiate(apiKey(s2.key), s2.userId, { currency: "eth", amount: 0.1, address: TO.eth }), 400, "INVALID_ADDRESS");
  });

  it("matches a hex address in any case spelling, and stops accepting it once deleted", async () => {
    const a = api();
    const s = await a.scene("alr-case", [ETH], [[ETH, 2]]);
    await policy(s, { allowlist_required: true });
    const res = await a.http().post(`${BASE}/users/${s.userId}/addresses`).set("x-api-key", s.key).send({ currency: "eth", address: TO.eth.toLowerCase(), label: "Lower" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await clockPast(res.body.data.activates_at as string);
    await a.started(s, { currency: "eth", amount: 0.1, address: TO.eth });
    expect((await a.http().delete(`${BASE}/users/${s.userId}/addresses/${res.body.data.address_id}`).set("x-api-key", s.key)).status).toBe(204);
    expectPlatformError(await a.initiate(apiKey(s.key), s.userId, { currency: "eth", amount: 0.1, address: TO.eth }), 400, "INVALID_ADDRESS");
  });

  it("checks the allowlist right after the address's validity and before the caps and the balance", async () => {
    const a = api();
    const s = await a.scene("alr-order", [BTC], [[BTC, 0.5]]);
    await policy(s, { allowlist_required: true, withdrawal: { btc: { per_transaction: "1", daily: "1", monthly: "1" } } });
    // an invalid address: INVALID_CRYPTO_ADDRESS comes first
    expectPlatformError(await a.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: BAD.mainnetBc1 }), 400, "INVALID_CRYPTO_ADDRESS");
    // a valid address not on the list, over the cap and the balance: INVALID_ADDRESS
    expectPlatformError(await a.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 2, address: TO.btc }), 400, "INVALID_ADDRESS");
    // below the minimum: MINIMUM_AMOUNT_NOT_MET still comes before the address checks
    expectPlatformError(await a.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.00001, address: TO.btc }), 400, "MINIMUM_AMOUNT_NOT_MET");
    await clockPast(await allow(s, "btc", TO.btc));
    expectPlatformError(await a.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 2, address: TO.btc }), 400, "WITHDRAWAL_LIMIT_EXCEEDED");
    expectPlatformError(await a.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.6, address: TO.btc }), 400, "INSUFFICIENT_BALANCE");
  });

  it("without allowlist_required the list is informational: any valid address is accepted", async () => {
    const a = api();
    const s = await a.scene("alr-off", [BTC], [[BTC, 1]]);
    await a.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    await allow(s, "btc", TO.btc);
    await policy(s, { allowlist_required: true });
    await policy(s, { allowlist_required: false });
    await a.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
  });
});
