/**
 * Customer limits over HTTP on a real PostgreSQL (docs/decisions/limits-and-allowlist.md "Limits"):
 * Get and Set Limits (defaults from WITHDRAWAL_CAPS and TRANSFER_CAPS, the customer's own caps,
 * `customized`, `allowlist_required`, validation, who may call), Initiate Withdrawal under the
 * customer's caps with the refusal messages, and Get User Limits after movements: PENDING and
 * COMPLETED withdrawals counted, cancelled ones released, the remainder bounded by the month, the
 * UTC day boundary at 00:00:00.000. Every response is validated against the contract.
 */
import type request from "supertest";
import { describe, expect, it } from "vitest";
import { DEFAULT_WITHDRAWAL_CAPS } from "../../src/config.js";
import { windowsAt } from "../../src/domain/limits.js";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { Api, apiKey, bearer, BTC, ETH, TO, UNKNOWN_ID, type Cred } from "../support/withdrawals-scene.js";

/** Transfer defaults from TRANSFER_CAPS (btc 0.7 / 1.4 / 3); withdrawal eth's monthly cap under its daily one. */
const t = useTestApp({
  TRANSFER_CAPS: JSON.stringify({ btc: { perTransaction: "0.7", daily: "1.4", monthly: "3" } }),
  WITHDRAWAL_CAPS: JSON.stringify({ eth: { perWithdrawal: "1", daily: "5", monthly: "1.5" } }),
});
const api = () => new Api(t);

const limitsPath = (customerId: string) => `${BASE}/customers/${customerId}/limits`;
const userLimitsPath = (userId: string) => `${BASE}/users/${userId}/limits`;
const session = (token: string): Cred => (r: request.Test) => r.set("Authorization", `Bearer ${token}`);
const caps = (per_transaction: string, daily: string, monthly: string) => ({ per_transaction, daily, monthly });
const fixed = (v: string) => Number(v).toFixed(8);

/** A customer session of the tenant `customerId` with owner key `key`. */
async function customerSession(customerId: string, key: string): Promise<string> {
  const res = await api().http().post(`${BASE}/sessions`).send({ customer_id: customerId, customer_secret: key });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.token as string;
}

/** Set Limits with an operator session, asserting 200; returns the answer's data. */
async function setLimits(customerId: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const operator = await api().walk.operatorToken();
  const res = await session(operator)(api().http().put(limitsPath(customerId))).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Record<string, unknown>;
}

/** Get User Limits with `cred`, asserting 200. */
async function userLimits(cred: Cred, userId: string): Promise<Record<string, Record<string, Record<string, unknown>>>> {
  const res = await cred(api().http().get(userLimitsPath(userId)));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

describe("Get and Set Limits", () => {
  it("answers the defaults to an operator session and to the customer's own session; others are refused", async () => {
    const a = api();
    const { customerId, key } = await a.tenant("lim-get");
    const other = await a.tenant("lim-get-other");
    const operator = await a.walk.operatorToken();
    const res = await session(operator)(a.http().get(limitsPath(customerId)));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const data = res.body.data;
    expect(data.customer_id).toBe(customerId);
    expect(data.allowlist_required).toBe(false);
    expect(data.customized).toEqual({ withdrawal: [], transfer: [] });
    expect(data.withdrawal.btc).toEqual(caps("2.00000000", "5.00000000", "20.00000000"));
    expect(data.withdrawal.eth).toEqual(caps("1.00000000", "5.00000000", "1.50000000")); // WITHDRAWAL_CAPS
    expect(Object.keys(data.withdrawal)).toEqual(Object.keys(DEFAULT_WITHDRAWAL_CAPS).sort());
    expect(data.transfer.btc).toEqual(caps("0.70000000", "1.40000000", "3.00000000")); // TRANSFER_CAPS
    const sol = DEFAULT_WITHDRAWAL_CAPS.sol as { perTransaction: string; daily: string; monthly: string };
    expect(data.transfer.sol).toEqual(caps(fixed(sol.perTransaction), fixed(sol.daily), fixed(sol.monthly))); // the withdrawal defaults

    const own = await customerSession(customerId, key);
    expect((await session(own)(a.http().get(limitsPath(customerId)))).body.data).toEqual(data);
    expectPlatformError(await session(own)(a.http().get(limitsPath(other.customerId))), 403, "FORBIDDEN");
    expectPlatformError(await session(own)(a.http().put(limitsPath(other.customerId))).send({}), 403, "FORBIDDEN");
    expectPlatformError(await apiKey(key)(a.http().get(limitsPath(customerId))), 403, "FORBIDDEN");
    expectPlatformError(await a.http().get(limitsPath(customerId)), 401, "UNAUTHORIZED");
    expectPlatformError(await session(operator)(a.http().get(limitsPath("no-such-customer"))), 404, "CUSTOMER_NOT_FOUND");
  });

  it("replaces the customer's own caps, keeps allowlist_required when omitted, and answers what is in force", async () => {
    const a = api();
    const { customerId, key } = await a.tenant("lim-set");
    const first = await setLimits(customerId, {
      allowlist_required: true,
      withdrawal: { BTC: caps("1", "2.5", "10") },
      transfer: { eth: caps("0.5", "1", "1") },
    });
    expect(first.allowlist_required).toBe(true);
    expect(first.customized).toEqual({ withdrawal: ["btc"], transfer: ["eth"] });
    expect((first.withdrawal as Record<string, unknown>).btc).toEqual(caps("1.00000000", "2.50000000", "10.00000000"));
    expect((first.transfer as Record<string, unknown>).eth).toEqual(caps("0.50000000", "1.00000000", "1.00000000"));

    // a new body replaces the overrides; allowlist_required is kept when omitted
    const second = await setLimits(customerId, { withdrawal: { sol: caps("1", "1", "1") } });
    expect(second.allowlist_required).toBe(true);
    expect(second.customized).toEqual({ withdrawal: ["sol"], transfer: [] });
    expect((second.withdrawal as Record<string, unknown>).btc).toEqual(caps("2.00000000", "5.00000000", "20.00000000"));
    expect((second.transfer as Record<string, unknown>).eth).toEqual(caps("50.00000000", "100.00000000", "500.00000000"));

    const third = await setLimits(customerId, { allowlist_required: false });
    expect(third.allowlist_required).toBe(false);
    expect(third.customized).toEqual({ withdrawal: [], transfer: [] });
    // the customer's own session may set its limits too, and reads what was set
    const own = await customerSession(customerId, key);
    const put = await session(own)(a.http().put(limitsPath(customerId))).send({ transfer: { btc: caps("0", "0", "0") } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect((await session(own)(a.http().get(limitsPath(customerId)))).body.data).toEqual(put.body.data);
    expect(put.body.data.transfer.btc).toEqual(caps("0.00000000", "0.00000000", "0.00000000"));
  });

  it.each<[string, Record<string, unknown>, number, string]>([
    ["an unknown currency", { withdrawal: { xyz: caps("1", "2", "3") } }, 400, "INVALID_CURRENCY"],
    ["more than 32 currencies", { transfer: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`c${i}`, caps("1", "1", "1")])) }, 400, "BAD_REQUEST"],
    ["per_transaction above daily", { withdrawal: { btc: caps("3", "2", "10") } }, 400, "BAD_REQUEST"],
    ["daily above monthly", { transfer: { btc: caps("1", "20", "10") } }, 400, "BAD_REQUEST"],
    ["a negative cap", { withdrawal: { btc: caps("-1", "2", "10") } }, 422, "UNPROCESSABLE_ENTITY"],
    ["a cap with 9 decimals", { withdrawal: { btc: caps("0.123456789", "2", "10") } }, 422, "UNPROCESSABLE_ENTITY"],
  ])("refuses %s and changes nothing", async (_label, body, status, code) => {
    const a = api();
    const { customerId } = await a.tenant("lim-bad");
    await setLimits(customerId, { allowlist_required: true, withdrawal: { btc: caps("1", "1", "1") } });
    const operator = await a.walk.operatorToken();
    expectPlatformError(await session(operator)(a.http().put(limitsPath(customerId))).send({ allowlist_required: false, ...body }), status, code);
    const after = (await session(operator)(a.http().get(limitsPath(customerId)))).body.data;
    expect(after.allowlist_required).toBe(true);
    expect(after.customized).toEqual({ withdrawal: ["btc"], transfer: [] });
  });
});

describe("Initiate Withdrawal under the customer's caps", () => {
  it("refuses with messages naming the cap, the use and the remainder; other customers keep the defaults", async () => {
    const a = api();
    const s = await a.scene("lim-wd", [BTC], [[BTC, 10]]);
    await setLimits(s.customerId, { withdrawal: { btc: caps("1", "1.5", "2") } });
    const body = (amount: number) => ({ currency: "btc", amount, address: TO.btc });
    const over = await a.initiate(apiKey(s.key), s.userId, body(1.2));
    expectPlatformError(over, 400, "WITHDRAWAL_LIMIT_EXCEEDED");
    expect(over.body.errors[0].message).toBe("Per-transaction withdrawal limit for btc is 1.00000000; this withdrawal of 1.20000000 is over it by 0.20000000.");
    await a.started(s, body(1));
    const daily = await a.initiate(apiKey(s.key), s.userId, body(0.6));
    expectPlatformError(daily, 400, "DAILY_LIMIT_EXCEEDED");
    const { dayEnd } = windowsAt(new Date());
    expect(daily.body.errors[0].message).toBe(
      `Daily withdrawal limit for btc is 1.50000000; 1.00000000 used today; 0.50000000 remains until ${dayEnd.toISOString().replace(".000Z", "Z")}.`,
    );
    expect((await a.initiate(apiKey(s.key), s.userId, body(0.5))).status).toBe(201);

    const other = await a.scene("lim-wd-other", [BTC], [[BTC, 10]]);
    expect((await a.initiate(apiKey(other.key), other.userId, body(1.2))).status).toBe(201);
  });
});

describe("Get User Limits", () => {
  it("counts PENDING and COMPLETED withdrawals, releases cancelled ones, and bounds today's remainder by the month", async () => {
    const a = api();
    const s = await a.scene("lim-user", [BTC, ETH], [[BTC, 5], [ETH, 5]]);
    await setLimits(s.customerId, { withdrawal: { btc: caps("1", "1.5", "2") } });
    const btc = (amount: number) => ({ currency: "btc", amount, address: TO.btc });
    await a.started(s, btc(0.3));
    const cancelled = await a.started(s, btc(0.2));
    expect((await a.cancel(apiKey(s.key), s.userId, cancelled.id)).status).toBe(204);
    const completed = await a.started(s, btc(0.4));
    expect((await a.confirm(apiKey(s.key), s.userId, completed.id, completed.code)).status).toBe(200);
    await a.started(s, { currency: "eth", amount: 0.5, address: TO.eth });

    const { dayEnd, monthEnd } = windowsAt(new Date());
    const resets_at = { today: dayEnd.toISOString(), this_month: monthEnd.toISOString() };
    const data = await userLimits(bearer(s.token), s.userId);
    expect(data.user_id).toBe(s.userId);
    expect(data.withdrawal?.btc).toEqual({
      ...caps("1.00000000", "1.50000000", "2.00000000"),
      used: { today: "0.70000000", this_month: "0.70000000" },
      remaining_today: "0.80000000",
      remaining_this_month: "1.30000000",
      resets_at,
    });
    // eth (WITHDRAWAL_CAPS 1 / 5 / 1.5): the month leaves less than the day
    expect(data.withdrawal?.eth).toMatchObject({ used: { today: "0.50000000", this_month: "0.50000000" }, remaining_today: "1.00000000", remaining_this_month: "1.00000000" });
    expect(data.transfer?.btc).toEqual({
      ...caps("0.70000000", "1.40000000", "3.00000000"),
      used: { today: "0.00000000", this_month: "0.00000000" },
      remaining_today: "1.40000000",
      remaining_this_month: "3.00000000",
      resets_at,
    });
    expect(Object.keys(data.withdrawal ?? {})).toEqual(Object.keys(DEFAULT_WITHDRAWAL_CAPS).sort());
    // the owner key reads the same
    expect(await userLimits(apiKey(s.key), s.userId)).toEqual(data);
  });

  it("answers 403 to another user's token and 404 for a user of another customer or an unknown one", async () => {
    const a = api();
    const s = await a.scene("lim-user-access");
    const other = await a.user(s.key);
    const foreign = await a.scene("lim-user-access-foreign");
    expectPlatformError(await bearer(other.token)(a.http().get(userLimitsPath(s.userId))), 403, "FORBIDDEN");
    expectPlatformError(await apiKey(foreign.key)(a.http().get(userLimitsPath(s.userId))), 404, "USER_NOT_FOUND");
    expectPlatformError(await apiKey(s.key)(a.http().get(userLimitsPath(UNKNOWN_ID))), 404, "USER_NOT_FOUND");
  });

  it("counts a withdrawal made at 00:00:00.000 UTC today, and one at 23:59:59.999 yesterday only in this month (unless today is the 1st)", async () => {
    const a = api();
    const s = await a.scene("lim-user-day", [BTC], [[BTC, 5]]);
    const today = await a.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const yesterday = await a.started(s, { currency: "btc", amount: 0.2, address: TO.btc });
    const midnight = `date_trunc('day', now() at time zone 'utc') at time zone 'utc'`;
    await a.sql(`update withdrawal set created_at = ${midnight} where id = ?`, [today.id]);
    await a.sql(`update withdrawal set created_at = ${midnight} - interval '1 millisecond' where id = ?`, [yesterday.id]);
    const firstOfMonth = new Date().getUTCDate() === 1;
    const used = (await userLimits(apiKey(s.key), s.userId)).withdrawal?.btc?.used;
    expect(used).toEqual({ today: "0.10000000", this_month: firstOfMonth ? "0.10000000" : "0.30000000" });
  });
});
