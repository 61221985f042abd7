/**
 * Reading withdrawals over HTTP on a real PostgreSQL (reference: "Withdrawal", "Withdrawals (owner
 * API key or user token)", the Withdrawal codes, "Limits"; docs/decisions/withdrawals.md):
 * getWithdrawal and listWithdrawals (newest first, filters by status and currency, sort, paging
 * with meta.pagination and its links, the 422 of invalid filters). Every response is validated
 * against the contract by the test app.
 */
import type request from "supertest";
import { describe, expect, it } from "vitest";
import { expectPlatformError } from "../support/fixtures.js";
import {
  apiKey, bearer, BTC, ETH, ISO, TO, UNKNOWN_ID, USDT_ETH, useWithdrawalsApp, type WithdrawalRecord,
} from "../support/withdrawals-scene.js";

/** The default configuration (code TTL 600 s, 5 attempts, default caps). */
const { api: A } = useWithdrawalsApp("default");

describe("GET …/{withdrawal_id} and GET …/withdrawals (getWithdrawal, listWithdrawals)", () => {
  /** A user with, oldest first: w1 btc COMPLETED, w2 eth CANCELLED, w3 btc PENDING, w4 usdt PENDING. */
  async function history(prefix: string) {
    const api = A();
    const s = await api.scene(prefix, [BTC, ETH, USDT_ETH], [[BTC, 1], [ETH, 1], [USDT_ETH, 10]]);
    const w1 = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    expect((await api.confirm(apiKey(s.key), s.userId, w1.id, w1.code)).status).toBe(200);
    const w2 = await api.started(s, { currency: "eth", amount: 0.01, address: TO.eth });
    expect((await api.cancel(apiKey(s.key), s.userId, w2.id)).status).toBe(204);
    const w3 = await api.started(s, { currency: "btc", amount: 0.2, address: TO.btc });
    const w4 = await api.started(s, { currency: "usdt", amount: 2, address: TO.eth });
    return { api, s, ids: [w1.id, w2.id, w3.id, w4.id] as const };
  }
  const ids = (res: request.Response) => (res.body.data as WithdrawalRecord[]).map((w) => w.id);

  it("reads the withdrawal record (withdrawal_type crypto) by the id of withdraw.id", async () => {
    const { api, s, ids: [w1, w2, w3] } = await history("get");
    const res = await api.get(apiKey(s.key), s.userId, w1);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({
      id: w1,
      withdrawal_type: "crypto",
      bank_account_id: null,
      payout: null,
      chain: null, // bitcoin is not a live network: no on-chain send of the service's own
      currency: "btc",
      amount: 0.1,
      address: TO.btc,
      status: "COMPLETED",
      created_at: expect.stringMatching(ISO),
    });
    expect(Math.abs(Date.parse(res.body.data.created_at) - Date.now())).toBeLessThan(60_000);
    expect((await api.get(apiKey(s.key), s.userId, w2)).body.data).toMatchObject({ status: "CANCELLED", currency: "eth", amount: 0.01, address: TO.eth });
    expect((await api.get(bearer(s.token), s.userId, w3)).body.data).toMatchObject({ status: "PENDING", amount: 0.2 });
    expectPlatformError(await api.get(apiKey(s.key), s.userId, UNKNOWN_ID), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.get(apiKey(s.key), s.userId, "nope"), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.get(apiKey(s.key), UNKNOWN_ID, w1), 404, "USER_NOT_FOUND");
    // another user of the customer cannot read it under their path
    const other = await api.user(s.key);
    expectPlatformError(await api.get(apiKey(s.key), other.userId, w1), 404, "WITHDRAWAL_NOT_FOUND");
  });

  it("lists newest first with meta.pagination; filters by status and currency (case-insensitive); sorts ASC", async () => {
    const { api, s, ids: [w1, w2, w3, w4] } = await history("list");
    const all = await api.list(apiKey(s.key), s.userId);
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(ids(all)).toEqual([w4, w3, w2, w1]);
    for (const w of all.body.data as WithdrawalRecord[]) expect(w.withdrawal_type).toBe("crypto");
    expect(all.body.meta.pagination.records).toEqual({ skip: 0, has_next: false, has_previous: false, total: 4, limit: 20 });

    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][status]": "PENDING" }))).toEqual([w4, w3]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][status]": "COMPLETED" }))).toEqual([w1]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][status]": "CANCELLED" }))).toEqual([w2]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][currency]": "BTC" }))).toEqual([w3, w1]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][currency]": "btc" }))).toEqual([w3, w1]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][currency]": "Usdt", "filter[where][status]": "PENDING" }))).toEqual([w4]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[where][currency]": "sol" }))).toEqual([]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[sort]": "ASC" }))).toEqual([w1, w2, w3, w4]);
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[sort]": "DESC" }))).toEqual([w4, w3, w2, w1]);
    expect(ids(await api.list(bearer(s.token), s.userId))).toEqual([w4, w3, w2, w1]);
    // another user of the customer has none
    const other = await api.user(s.key);
    expect(ids(await api.list(apiKey(s.key), other.userId))).toEqual([]);
  });

  it("pages with filter[limit] and filter[skip], keeping the filters in the links; filter[limit]=101 → 422", async () => {
    const { api, s, ids: [w1, w2, w3, w4] } = await history("page");
    const first = await api.list(apiKey(s.key), s.userId, { "filter[limit]": 2 });
    expect(ids(first)).toEqual([w4, w3]);
    expect(first.body.meta.pagination.records).toEqual({ skip: 0, has_next: true, has_previous: false, total: 4, limit: 2 });
    const nav = first.body.meta.pagination.navigation;
    expect(nav.previous).toBeNull();
    expect(Object.fromEntries(new URL(nav.next, "http://x").searchParams)).toEqual({ "filter[limit]": "2", "filter[skip]": "2" });
    expect(new URL(nav.next, "http://x").pathname).toBe(`/users/${s.userId}/accounts/crypto/withdrawals`);
    const second = await api.list(apiKey(s.key), s.userId, { "filter[limit]": 2, "filter[skip]": 2 });
    expect(ids(second)).toEqual([w2, w1]);
    expect(second.body.meta.pagination.records).toEqual({ skip: 2, has_next: false, has_previous: true, total: 4, limit: 2 });
    expect(second.body.meta.pagination.navigation.next).toBeNull();

    const filtered = await api.list(apiKey(s.key), s.userId, { "filter[limit]": 1, "filter[where][status]": "PENDING", "filter[sort]": "ASC" });
    expect(ids(filtered)).toEqual([w3]);
    expect(filtered.body.meta.pagination.records.total).toBe(2);
    expect(Object.fromEntries(new URL(filtered.body.meta.pagination.navigation.next, "http://x").searchParams)).toEqual({
      "filter[limit]": "1",
      "filter[skip]": "1",
      "filter[where][status]": "PENDING",
      "filter[sort]": "ASC",
    });
    expect(ids(await api.list(apiKey(s.key), s.userId, { "filter[skip]": 10 }))).toEqual([]);
    expect((await api.list(apiKey(s.key), s.userId, { "filter[limit]": 100 })).body.meta.pagination.records.limit).toBe(100);

    const invalid: Record<string, string | number>[] = [{ "filter[limit]": 101 }, { "filter[limit]": 0 }, { "filter[where][status]": "DONE" }, { "filter[sort]": "sideways" }];
    for (const query of invalid) {
      expectPlatformError(await api.list(apiKey(s.key), s.userId, query), 422, "UNPROCESSABLE_ENTITY");
    }
  });

  it("answers 404 USER_NOT_FOUND for an unknown user", async () => {
    const api = A();
    const { key } = await api.tenant("list-404");
    expectPlatformError(await api.list(apiKey(key), UNKNOWN_ID), 404, "USER_NOT_FOUND");
    expectPlatformError(await api.list(apiKey(key), "not-a-uuid"), 404, "USER_NOT_FOUND");
  });
});
