/**
 * Who may act on withdrawals, over HTTP on a real PostgreSQL (reference: "Authentication",
 * "Withdrawals (owner API key or user token)", the Withdrawal codes; docs/decisions/withdrawals.md,
 * docs/decisions/credentials-and-tokens.md#401-or-403): a user token only on its own account
 * (403 elsewhere), a deactivated user's token refused (401), the owner keeping a gone user's
 * withdrawals readable and cancellable, another customer's key (404) and no credential (401).
 * Every response is validated against the contract by the test app.
 */
import type request from "supertest";
import { describe, expect, it } from "vitest";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import {
  anonymous, Api, apiKey, bearer, BTC, codeIn, type Cred, item, type Mail, TO, useWithdrawalsApp,
  type WithdrawalRecord, ZERO,
} from "../support/withdrawals-scene.js";

/** The default configuration (code TTL 600 s, 5 attempts, default caps). */
const { api: A } = useWithdrawalsApp("default");

describe("who may act (reference: Authentication; a user token acts only on its own account)", () => {
  /** Every withdrawal operation on `userId`'s withdrawal `id`. */
  const operations = (api: Api, userId: string, id: string): [string, (cred: Cred) => request.Test][] => [
    ["initiate", (c) => api.initiate(c, userId, { currency: "btc", amount: 0.1, address: TO.btc })],
    ["confirm", (c) => api.confirm(c, userId, id, "123456")],
    ["resend", (c) => api.resend(c, userId, id)],
    ["cancel", (c) => api.cancel(c, userId, id)],
    ["get", (c) => api.get(c, userId, id)],
    ["list", (c) => api.list(c, userId)],
  ];

  it("answers 403 FORBIDDEN to a user token on another user's path and changes nothing", async () => {
    const api = A();
    const s = await api.scene("who-403");
    const other = await api.user(s.key);
    const wallet = await api.wallet(apiKey(s.key), other.userId, [BTC]);
    await api.deposit(s.key, wallet, BTC, 1);
    const theirs = await api.started({ ...s, ...other, walletId: wallet }, { currency: "btc", amount: 0.1, address: TO.btc });
    for (const [name, call] of operations(api, other.userId, theirs.id)) {
      const res = await call(bearer(s.token));
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(403);
      expectPlatformError(res, 403, "FORBIDDEN");
    }
    // nor with the other user's withdrawal id under its own path
    expectPlatformError(await api.confirm(bearer(s.token), s.userId, theirs.id, theirs.code), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.cancel(bearer(s.token), s.userId, theirs.id), 404, "WITHDRAWAL_NOT_FOUND");
    expect((await api.get(apiKey(s.key), other.userId, theirs.id)).body.data.status).toBe("PENDING");
    expect((await api.btc(s, wallet))?.held).toBe("0.10000000");
    // the sandbox outbox is the owner's
    expectPlatformError(await api.http().get(`${BASE}/sandbox/mail`).set("Authorization", `Bearer ${s.token}`), 403, "FORBIDDEN");
  });

  it("answers 401 to a deactivated user's token: it can no longer initiate or confirm", async () => {
    const api = A();
    const s = await api.scene("who-401");
    const res = await api.initiate(bearer(s.token), s.userId, { currency: "btc", amount: 0.1, address: TO.btc });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.data.id as string;
    const code = codeIn((await api.mailsOf(s, id))[0] as Mail, id);
    await api.deactivate(s.key, s.userId);
    expectPlatformError(await api.confirm(bearer(s.token), s.userId, id, code), 401, "UNAUTHORIZED");
    for (const [name, call] of operations(api, s.userId, id)) {
      const r = await call(bearer(s.token));
      expect(r.status, `${name}: ${JSON.stringify(r.body)}`).toBe(401);
      expectPlatformError(r, 401, "UNAUTHORIZED");
    }
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("PENDING");
    expect((await api.btc(s))?.held).toBe("0.10000000");
    // nor can the owner start, confirm or re-code one for the inactive user
    expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await api.resend(apiKey(s.key), s.userId, id), 404, "RESOURCE_NOT_FOUND");
    expect(await api.mailsOf(s, id)).toHaveLength(1);
    expect((await api.btc(s))?.held).toBe("0.10000000");
  });

  it("keeps a deactivated or deleted user's withdrawals readable by the owner, who can still cancel them (the held money returns)", async () => {
    const api = A();
    const s = await api.scene("who-gone");
    const first = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const second = await api.started(s, { currency: "btc", amount: 0.2, address: TO.btc });
    await api.deactivate(s.key, s.userId);
    expect((await api.get(apiKey(s.key), s.userId, first.id)).body.data.status).toBe("PENDING");
    expect((await api.cancel(apiKey(s.key), s.userId, first.id)).status).toBe(204);
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.80000000", "0.20000000"));
    expect((await api.http().delete(`${BASE}/users/${s.userId}`).set("x-api-key", s.key)).status).toBe(204);
    const list = await api.list(apiKey(s.key), s.userId);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect((list.body.data as WithdrawalRecord[]).map((w) => [w.id, w.status])).toEqual([
      [second.id, "PENDING"],
      [first.id, "CANCELLED"],
    ]);
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, second.id, second.code), 404, "RESOURCE_NOT_FOUND");
    expect((await api.cancel(apiKey(s.key), s.userId, second.id)).status).toBe(204);
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
  });

  it("answers 404 to the owner key of another customer and 401 without a credential", async () => {
    const api = A();
    const s = await api.scene("who-404");
    const mine = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const stranger = await api.tenant("who-404-stranger");
    for (const [name, call] of operations(api, s.userId, mine.id)) {
      const res = await call(apiKey(stranger.key));
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(404);
      expectPlatformError(res, 404, "USER_NOT_FOUND");
      expectPlatformError(await call(anonymous), 401, "UNAUTHORIZED");
    }
    // the stranger's outbox does not show this customer's emails
    expect(await api.mails(stranger.key)).toHaveLength(0);
    expect(await api.mails(stranger.key, s.email)).toHaveLength(0);
    expect((await api.get(apiKey(s.key), s.userId, mine.id)).body.data.status).toBe("PENDING");
  });
});
