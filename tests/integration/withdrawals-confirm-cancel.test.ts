/**
 * Confirming and cancelling withdrawals over HTTP on a real PostgreSQL (reference: "Withdrawal",
 * "States and transitions › Withdrawal", the Withdrawal codes; docs/decisions/withdrawals.md
 * #funds, #the-code): confirmWithdrawal (the debit and its withdrawal transaction, the code used
 * once, wrong, blocked after WITHDRAWAL_CODE_MAX_ATTEMPTS, expired after WITHDRAWAL_CODE_TTL_S,
 * on a cancelled or foreign withdrawal) and cancelWithdrawal (the hold returned, a completed
 * withdrawal not reversed). Resend Code and the limits over a withdrawal's life:
 * withdrawals-codes.test.ts. Every response is validated against the contract by the test app.
 */
import { describe, expect, it } from "vitest";
import { expectPlatformError } from "../support/fixtures.js";
import {
  apiKey, bearer, BTC, expiryIn, item, type Mail, TO, type TransactionRecord, UNKNOWN_ID,
  useWithdrawalsApp, wrong, ZERO,
} from "../support/withdrawals-scene.js";

/** The default configuration (code TTL 600 s, 5 attempts, default caps). */
const { api: A } = useWithdrawalsApp("default");
/** Short code lifetime, 3 attempts and small caps (btc: 1 / 1.5 / 2; eth: monthly below daily). */
const { api: C } = useWithdrawalsApp("smallCaps");

describe("POST …/{withdrawal_id}/confirm (confirmWithdrawal)", () => {
  it("completes with the right code: 200 {id, status}, the debit in the balance, a done withdrawal transaction with a hash; the code works once", async () => {
    const api = A();
    const s = await api.scene("confirm");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.25, address: TO.btc, memo: "invoice 42" }, "confirm-key");
    const res = await api.confirm(apiKey(s.key), s.userId, id, code);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ id, status: "COMPLETED" });

    expect(await api.btc(s)).toEqual(item("btc", "0.75000000", "0.75000000", ZERO));
    const txs = await api.transactions(apiKey(s.key), s.walletId, { "filter[where][type]": "withdrawal" });
    expect(txs).toHaveLength(1);
    const tx = txs[0] as TransactionRecord;
    expect(tx.balance).toBe(0.75);
    expect(tx.transaction).toMatchObject({
      action: "withdrawal",
      status: "done",
      currency: "btc",
      amount: 0.25,
      order_id: id,
      idempotency_id: "confirm-key",
      memo: "invoice 42",
    });
    expect(tx.transaction.hash).toMatch(/^[0-9a-f]{64}$/);
    // the deposit is still there, the withdrawal is the newest
    expect((await api.transactions(apiKey(s.key), s.walletId)).map((x) => x.transaction.action)).toEqual(["withdrawal", "deposit"]);

    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("COMPLETED");
    // one use: the same code again
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 400, "ALREADY_CONFIRMED");
    expect(await api.btc(s)).toEqual(item("btc", "0.75000000", "0.75000000", ZERO));
    const [row] = await api.sql<{ code_hash: string | null; tx_hash: string | null }>(`select code_hash, tx_hash from withdrawal where id = ?`, [id]);
    expect(row?.code_hash).toBeNull();
    expect(row?.tx_hash).toBe(tx.transaction.hash);
  });

  it("completes through the user's own token, and accepts an upper-case withdrawal id", async () => {
    const api = A();
    const s = await api.scene("confirm-token");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const res = await api.confirm(bearer(s.token), s.userId, id.toUpperCase(), code);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ id, status: "COMPLETED" });
  });

  it("answers 400 CONFIRMATION_CODE_INVALID to a wrong code and leaves the withdrawal PENDING and held", async () => {
    const api = A();
    const s = await api.scene("confirm-wrong");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const other = await api.started(s, { currency: "btc", amount: 0.2, address: TO.btc });
    // a near miss, a shorter code (5 digits: still of the 4–8 digit form), another near miss: three wrong attempts
    for (const attempt of [wrong(code), code.slice(1), wrong(code, 3)]) {
      expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, attempt), 400, "CONFIRMATION_CODE_INVALID");
    }
    // another withdrawal's code does not work here (codes are bound to their withdrawal): the fourth
    const foreign = other.code === code ? wrong(code, 2) : other.code;
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, foreign), 400, "CONFIRMATION_CODE_INVALID");
    // not a code at all (empty, not digits, too short or long: the schema's 4–8 digits): 422, and no attempt is used
    for (const notACode of ["", "abcdef", "123", "123456789"]) {
      expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, notACode), 422, "UNPROCESSABLE_ENTITY");
    }
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("PENDING");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.70000000", "0.30000000"));
    // the right code still works (4 of 5 attempts used), and the other withdrawal's code on its own
    expect((await api.confirm(apiKey(s.key), s.userId, other.id, other.code)).status).toBe(200);
    expect((await api.confirm(apiKey(s.key), s.userId, id, code)).status).toBe(200);
  });

  it("blocks after 5 wrong codes (403 WITHDRAWAL_BLOCKED even for the right code); Resend Code resets the counter and voids the old code", async () => {
    const api = A();
    const s = await api.scene("confirm-block");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    for (let i = 1; i <= 5; i++) expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(code, i)), 400, "CONFIRMATION_CODE_INVALID");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 403, "WITHDRAWAL_BLOCKED");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(code)), 403, "WITHDRAWAL_BLOCKED");
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("PENDING");
    expect((await api.btc(s))?.held).toBe("0.10000000");

    let fresh = await api.resent(s, id);
    while (fresh === code) fresh = await api.resent(s, id); // one chance in a million
    // the old code no longer works, but no longer blocks either: the counter was reset
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 400, "CONFIRMATION_CODE_INVALID");
    for (let i = 0; i < 3; i++) expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(fresh, 500 + i)), 400, "CONFIRMATION_CODE_INVALID");
    const ok = await api.confirm(apiKey(s.key), s.userId, id, fresh);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(await api.btc(s)).toEqual(item("btc", "0.90000000", "0.90000000", ZERO));
  });

  it("honours WITHDRAWAL_CODE_MAX_ATTEMPTS (3 here), and a blocked code answers 403 even once expired", async () => {
    const api = C();
    const s = await api.scene("confirm-block-3");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    for (let i = 1; i <= 3; i++) expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(code, i)), 400, "CONFIRMATION_CODE_INVALID");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 403, "WITHDRAWAL_BLOCKED");
    // the service reads the real clock: expire the code through SQL instead of waiting 30 s
    await api.sql(`update withdrawal set code_expires_at = now() - interval '1 second' where id = ?`, [id]);
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 403, "WITHDRAWAL_BLOCKED");
  });

  it("answers 400 CONFIRMATION_CODE_EXPIRED after WITHDRAWAL_CODE_TTL_S (30 s here); a resent code works", async () => {
    const api = C();
    const s = await api.scene("confirm-expired");
    const before = Date.now();
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    // the email and the record name an expiry 30 s after initiation
    const mail = (await api.mailsOf(s, id))[0] as Mail;
    expect(expiryIn(mail).getTime()).toBeGreaterThanOrEqual(before + 30_000 - 2_000);
    expect(expiryIn(mail).getTime()).toBeLessThanOrEqual(Date.now() + 30_000 + 2_000);
    const [row] = await api.sql<{ ttl: string }>(`select extract(epoch from code_expires_at - created_at)::text as ttl from withdrawal where id = ?`, [id]);
    expect(Number(row?.ttl)).toBeCloseTo(30, 0);

    // The service reads the real clock, so instead of waiting 30 s this test moves the code's
    // expiry into the past through SQL.
    await api.sql(`update withdrawal set code_expires_at = now() - interval '1 second' where id = ?`, [id]);
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 400, "CONFIRMATION_CODE_EXPIRED");
    // expired is judged before wrong, and an expired attempt is not a wrong one
    for (let i = 1; i <= 4; i++) expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, wrong(code, i)), 400, "CONFIRMATION_CODE_EXPIRED");
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("PENDING");
    expect((await api.btc(s))?.held).toBe("0.10000000");

    const fresh = await api.resent(s, id);
    const ok = await api.confirm(apiKey(s.key), s.userId, id, fresh);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(await api.btc(s)).toEqual(item("btc", "0.90000000", "0.90000000", ZERO));
  });

  it("answers 400 to a CANCELLED withdrawal with its right code, and 404 WITHDRAWAL_NOT_FOUND to unknown ids and other users' withdrawals", async () => {
    const api = A();
    const s = await api.scene("confirm-cancelled");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    expect((await api.cancel(apiKey(s.key), s.userId, id)).status).toBe(204);
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 400, "BAD_REQUEST");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));

    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, UNKNOWN_ID, "123456"), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, "not-a-uuid", "123456"), 404, "WITHDRAWAL_NOT_FOUND");
    // another user's withdrawal, under this user's path, with its right code
    const other = await api.user(s.key);
    const wallet = await api.wallet(apiKey(s.key), other.userId, [BTC]);
    await api.deposit(s.key, wallet, BTC, 1);
    const theirs = await api.started({ ...s, ...other, walletId: wallet }, { currency: "btc", amount: 0.1, address: TO.btc });
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, theirs.id, theirs.code), 404, "WITHDRAWAL_NOT_FOUND");
    expect((await api.get(apiKey(s.key), other.userId, theirs.id)).body.data.status).toBe("PENDING");
    expectPlatformError(await api.confirm(apiKey(s.key), UNKNOWN_ID, theirs.id, theirs.code), 404, "USER_NOT_FOUND");
  });
});

describe("DELETE …/{withdrawal_id} (cancelWithdrawal)", () => {
  it("answers 204, returns the held amount to available and makes the withdrawal CANCELLED; again → 400", async () => {
    const api = A();
    const s = await api.scene("cancel");
    const { id } = await api.started(s, { currency: "btc", amount: 0.4, address: TO.btc });
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.60000000", "0.40000000"));
    const res = await api.cancel(apiKey(s.key), s.userId, id);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(res.text).toBe("");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("CANCELLED");
    expectPlatformError(await api.cancel(apiKey(s.key), s.userId, id), 400, "BAD_REQUEST");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
    // no withdrawal transaction
    expect(await api.transactions(apiKey(s.key), s.walletId, { "filter[where][type]": "withdrawal" })).toEqual([]);
  });

  it("answers 400 for a COMPLETED withdrawal (cannot be reversed) and leaves the debit alone", async () => {
    const api = A();
    const s = await api.scene("cancel-done");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.4, address: TO.btc });
    expect((await api.confirm(bearer(s.token), s.userId, id, code)).status).toBe(200);
    const res = await api.cancel(apiKey(s.key), s.userId, id);
    expectPlatformError(res, 400, "ALREADY_CONFIRMED");
    expect(res.body.errors[0].message).toMatch(/revers/i);
    expect(await api.btc(s)).toEqual(item("btc", "0.60000000", "0.60000000", ZERO));
    expect((await api.get(apiKey(s.key), s.userId, id)).body.data.status).toBe("COMPLETED");
  });

  it("answers 404 WITHDRAWAL_NOT_FOUND for an unknown id; cancels through the user's token", async () => {
    const api = A();
    const s = await api.scene("cancel-404");
    expectPlatformError(await api.cancel(apiKey(s.key), s.userId, UNKNOWN_ID), 404, "WITHDRAWAL_NOT_FOUND");
    expectPlatformError(await api.cancel(apiKey(s.key), s.userId, "not-a-uuid"), 404, "WITHDRAWAL_NOT_FOUND");
    const { id } = await api.started(s, { currency: "btc", amount: 0.4, address: TO.btc });
    expect((await api.cancel(bearer(s.token), s.userId, id)).status).toBe(204);
    expect((await api.btc(s))?.available).toBe("1.00000000");
  });
});
