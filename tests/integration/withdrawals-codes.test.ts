/**
 * New codes and the limits on guessing them, over HTTP on a real PostgreSQL (reference:
 * "Withdrawal", the Withdrawal codes; docs/decisions/withdrawals.md#the-code,
 * #how-a-code-reaches-the-user): resendWithdrawalCode (a new code email, refused on completed and
 * cancelled withdrawals), resends spaced by WITHDRAWAL_CODE_RESEND_INTERVAL_S and counted, and the
 * wrong codes counted over the withdrawal's whole life until it is cancelled. Every response is
 * validated against the contract by the test app.
 */
import { describe, expect, it } from "vitest";
import { expectPlatformError } from "../support/fixtures.js";
import {
  Api, apiKey, bearer, CLEAN, codeIn, item, type Mail, UNKNOWN_ID, useWithdrawalsApp, wrong, ZERO, TO,
} from "../support/withdrawals-scene.js";

/** The default configuration (code TTL 600 s, 5 attempts, default caps). */
const { api: A } = useWithdrawalsApp("default");
/** The default code limits, the resend spacing included (test apps otherwise run without it). */
const { app: tl, api: L } = useWithdrawalsApp("limits");

describe("POST …/{withdrawal_id}/verification/codes (resendWithdrawalCode)", () => {
  it("answers 200 {message}, emails a new code (a new outbox email) and keeps the withdrawal PENDING and held", async () => {
    const api = A();
    const s = await api.scene("resend");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const res = await api.resend(apiKey(s.key), s.userId, id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ message: expect.any(String) });
    expect(res.body.data.message.length).toBeGreaterThan(0);
    const mails = await api.mailsOf(s, id);
    expect(mails).toHaveLength(2);
    const fresh = codeIn(mails[0] as Mail, id);
    expect(codeIn(mails[1] as Mail, id)).toBe(code);
    for (const m of mails) expect(m.to).toBe(s.email);
    // through the user's token too
    expect((await api.resend(bearer(s.token), s.userId, id)).status).toBe(200);
    expect(await api.mailsOf(s, id)).toHaveLength(3);
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("PENDING");
    expect((await api.btc(s))?.held).toBe("0.10000000");
    expect(fresh).toMatch(/^\d{6}$/);
  });

  it("answers 400 for COMPLETED and CANCELLED withdrawals (no email) and 404 WITHDRAWAL_NOT_FOUND for an unknown one", async () => {
    const api = A();
    const s = await api.scene("resend-400");
    const done = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    expect((await api.confirm(apiKey(s.key), s.userId, done.id, done.code)).status).toBe(200);
    expectPlatformError(await api.resend(apiKey(s.key), s.userId, done.id), 400, "ALREADY_CONFIRMED");
    const gone = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    expect((await api.cancel(apiKey(s.key), s.userId, gone.id)).status).toBe(204);
    expectPlatformError(await api.resend(apiKey(s.key), s.userId, gone.id), 400, "BAD_REQUEST");
    expect(await api.mails(s.key)).toHaveLength(2);
    expectPlatformError(await api.resend(apiKey(s.key), s.userId, UNKNOWN_ID), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.resend(apiKey(s.key), UNKNOWN_ID, done.id), 404, "USER_NOT_FOUND");
  });
});

describe("code limits: resends spaced and counted, wrong codes counted over the withdrawal's life (docs/decisions/withdrawals.md)", () => {
  /** Moves the current code's issue time `s` seconds into the past (the service reads the real clock). */
  const age = (api: Api, id: string, s = 31) =>
    api.sql(`update withdrawal set code_issued_at = code_issued_at - make_interval(secs => ?) where id = ?`, [s, id]);

  it("answers 429 RATE_LIMIT_EXCEEDED with Retry-After within 30 s of the previous code, and 403 WITHDRAWAL_BLOCKED after the third resend", async () => {
    const api = L();
    const s = await api.scene("resend-limits");
    const { id } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const early = await api.resend(apiKey(s.key), s.userId, id);
    expectPlatformError(early, 429, "RATE_LIMIT_EXCEEDED");
    const retryAfter = Number(early.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThanOrEqual(29);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(await api.mailsOf(s, id)).toHaveLength(1);

    for (let n = 1; n <= 3; n++) {
      await age(api, id);
      await api.resent(s, id);
      // each new code restarts the spacing; once the resends are used up that is the answer
      if (n < 3) expectPlatformError(await api.resend(bearer(s.token), s.userId, id), 429, "RATE_LIMIT_EXCEEDED");
    }
    expectPlatformError(await api.resend(bearer(s.token), s.userId, id), 403, "WITHDRAWAL_BLOCKED");
    await age(api, id, 3600);
    const fourth = await api.resend(apiKey(s.key), s.userId, id);
    expectPlatformError(fourth, 403, "WITHDRAWAL_BLOCKED");
    expect(fourth.body.errors[0].message).toMatch(/cancel/i);
    expect(await api.mailsOf(s, id)).toHaveLength(4);
    // the last code still confirms
    const [latest] = await api.mailsOf(s, id);
    expect((await api.confirm(apiKey(s.key), s.userId, id, codeIn(latest as Mail, id))).status).toBe(200);
  });

  it("cancels the withdrawal and releases its hold at the 15th wrong code over its life, whatever the resends", async () => {
    const api = L();
    const s = await api.scene("life-attempts");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.25, address: TO.btc });
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.75000000", "0.25000000"));
    let current = code;
    let wrongSent = 0;
    // 5 wrong codes per code, a new code after each block: 5 + 5 + 4 wrong answers 400, the 15th cancels
    while (wrongSent < 14) {
      for (let i = 0; i < 5 && wrongSent < 14; i++) {
        expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(current, 700 + wrongSent)), 400, "CONFIRMATION_CODE_INVALID");
        wrongSent++;
      }
      if (wrongSent < 14) {
        expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, current), 403, "WITHDRAWAL_BLOCKED");
        await age(api, id);
        current = await api.resent(s, id);
      }
    }
    const last = await api.confirm(bearer(s.token), s.userId, id, wrong(current, 999));
    expectPlatformError(last, 403, "WITHDRAWAL_BLOCKED");
    expect(last.body.errors[0].message).toMatch(/cancelled/);
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("CANCELLED");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
    // the right code of the cancelled withdrawal no longer confirms, and no new code can be asked for
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, current), 400, "BAD_REQUEST");
    await age(api, id);
    expectPlatformError(await api.resend(apiKey(s.key), s.userId, id), 400, "BAD_REQUEST");
    const [row] = await api.sql<{ cancel_reason: string; code_failures_total: number }>(
      `select cancel_reason, code_failures_total from withdrawal where id = ?`,
      [id],
    );
    expect(row).toEqual({ cancel_reason: "too_many_attempts", code_failures_total: 15 });
    expect(await tl.services.ledger.verify(tl.db)).toEqual(CLEAN);
  });
});
