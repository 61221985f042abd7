/**
 * Caps under concurrency on a real PostgreSQL (docs/decisions/limits-and-allowlist.md "Limits"):
 * parallel withdrawals of one user, each under the customer's per-transaction cap but together
 * over its daily cap, never pass the daily cap together (the check and the hold commit under one
 * lock per user and currency), while another user of the same customer is not held up.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { Api, apiKey, BTC, item, TO } from "../support/withdrawals-scene.js";

const t = useTestApp();
const api = () => new Api(t);

describe("parallel withdrawals against the customer's daily cap", () => {
  it("10 parallel withdrawals of 0.5 btc under a 1 / 3 / 100 cap: exactly 6 pass, the other 4 answer DAILY_LIMIT_EXCEEDED", async () => {
    const a = api();
    const s = await a.scene("lim-race", [BTC], [[BTC, 20]]);
    const neighbour = await a.user(s.key);
    const neighbourWallet = await a.wallet(apiKey(s.key), neighbour.userId, [BTC]);
    await a.deposit(s.key, neighbourWallet, BTC, 1);
    const operator = await a.walk.operatorToken();
    const set = await a.http().put(`${BASE}/customers/${s.customerId}/limits`).set("Authorization", `Bearer ${operator}`)
      .send({ withdrawal: { btc: { per_transaction: "1", daily: "3", monthly: "100" } } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);

    const body = { currency: "btc", amount: 0.5, address: TO.btc };
    const [responses, neighbourAnswer] = await Promise.all([
      Promise.all(Array.from({ length: 10 }, () => a.initiate(apiKey(s.key), s.userId, body))),
      a.initiate(apiKey(s.key), neighbour.userId, body),
    ]);
    expect(responses.filter((r) => r.status === 201)).toHaveLength(6);
    for (const r of responses.filter((x) => x.status !== 201)) expectPlatformError(r, 400, "DAILY_LIMIT_EXCEEDED");
    expect(neighbourAnswer.status, JSON.stringify(neighbourAnswer.body)).toBe(201);

    expect(await a.btc(s)).toEqual(item("btc", "20.00000000", "17.00000000", "3.00000000"));
    const [sum] = await a.sql<{ total: string }>(`select sum(amount)::text as total from withdrawal where user_id = ? and status = 'PENDING'`, [s.userId]);
    expect(Number(sum?.total)).toBe(3);
    const limits = await apiKey(s.key)(a.http().get(`${BASE}/users/${s.userId}/limits`));
    expect(limits.body.data.withdrawal.btc).toMatchObject({ used: { today: "3.00000000", this_month: "3.00000000" }, remaining_today: "0.00000000" });
  });
});
