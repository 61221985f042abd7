/**
 * Withdrawals under concurrency on the real PostgreSQL (reference: "Withdrawal", the Withdrawal
 * codes; docs/decisions/withdrawals.md#initiate, #funds, #repeated-requests, #the-code): parallel
 * confirms with the right and with wrong codes, confirms racing cancels, parallel initiates over
 * the balance and over a daily cap, and parallel initiates with one Idempotency-Key; the ledger
 * stays consistent. Every response is validated against the contract by the test app.
 */
import { describe, expect, it } from "vitest";
import { expectPlatformError } from "../support/fixtures.js";
import {
  apiKey, bearer, BTC, CLEAN, item, TO, useWithdrawalsApp, wrong, ZERO,
} from "../support/withdrawals-scene.js";

/** The default configuration (code TTL 600 s, 5 attempts, default caps). */
const { app: t, api: A } = useWithdrawalsApp("default");
/** Short code lifetime, 3 attempts and small caps (btc: 1 / 1.5 / 2; eth: monthly below daily). */
const { app: tc, api: C } = useWithdrawalsApp("smallCaps");

describe("concurrency on the real database (docs/decisions/withdrawals.md)", () => {
  it("50 parallel confirms with the right code: exactly one 200 COMPLETED, one debit, the others ALREADY_CONFIRMED", async () => {
    const api = A();
    const s = await api.scene("race-confirm");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.4, address: TO.btc });
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => api.confirm(i % 2 ? apiKey(s.key) : bearer(s.token), s.userId, id, code)));
    const ok = responses.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]?.body.data).toEqual({ id, status: "COMPLETED" });
    const refused = responses.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(49);
    for (const r of refused) expectPlatformError(r, 400, "ALREADY_CONFIRMED");

    expect(await api.btc(s)).toEqual(item("btc", "0.60000000", "0.60000000", ZERO));
    const txs = await api.transactions(apiKey(s.key), s.walletId, { "filter[where][type]": "withdrawal" });
    expect(txs).toHaveLength(1);
    const entries = await api.sql<{ kind: string; n: string }>(`select kind, count(*)::text as n from journal_entry where reference = ? group by kind order by kind`, [`withdrawal:${id}`]);
    expect(entries).toEqual([
      { kind: "debit", n: "1" },
      { kind: "hold", n: "1" },
    ]);
    expect(await t.services.ledger.verify(t.db)).toEqual(CLEAN);
  });

  it("50 parallel wrong codes: exactly 5 answer CONFIRMATION_CODE_INVALID, the rest WITHDRAWAL_BLOCKED (the counter loses no attempt)", async () => {
    const api = A();
    const s = await api.scene("race-wrong");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.1, address: TO.btc });
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => api.confirm(apiKey(s.key), s.userId, id, wrong(code, i + 1))));
    const invalid = responses.filter((r) => r.status === 400);
    const blocked = responses.filter((r) => r.status === 403);
    expect(invalid).toHaveLength(5);
    expect(blocked).toHaveLength(45);
    for (const r of invalid) expectPlatformError(r, 400, "CONFIRMATION_CODE_INVALID");
    for (const r of blocked) expectPlatformError(r, 403, "WITHDRAWAL_BLOCKED");
    expectPlatformError(await api.confirm(apiKey(s.key), s.userId, id, code), 403, "WITHDRAWAL_BLOCKED");
  });

  it("25 confirms racing 25 cancels: exactly one wins and the money moves once", async () => {
    const api = A();
    const s = await api.scene("race-confirm-cancel");
    const { id, code } = await api.started(s, { currency: "btc", amount: 0.4, address: TO.btc });
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? api.confirm(apiKey(s.key), s.userId, id, code) : api.cancel(apiKey(s.key), s.userId, id))),
    );
    const wins = responses.filter((r) => r.status === 200 || r.status === 204);
    expect(wins).toHaveLength(1);
    for (const r of responses.filter((x) => x.status !== 200 && x.status !== 204)) expect(r.status).toBe(400);
    const status = (await api.get(apiKey(s.key), s.userId, id)).body.data.status;
    if (wins[0]?.status === 200) {
      expect(status).toBe("COMPLETED");
      expect(await api.btc(s)).toEqual(item("btc", "0.60000000", "0.60000000", ZERO));
    } else {
      expect(status).toBe("CANCELLED");
      expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
    }
    expect(await t.services.ledger.verify(t.db)).toEqual(CLEAN);
  });

  it("20 parallel initiates of 0.1 btc against a balance of 1: exactly 10 accepted, available never below zero, held 1", async () => {
    const api = A();
    const s = await api.scene("race-initiate");
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }, `race-${i}`)),
    );
    const accepted = responses.filter((r) => r.status === 201);
    expect(accepted).toHaveLength(10);
    for (const r of responses.filter((x) => x.status !== 201)) expectPlatformError(r, 400, "INSUFFICIENT_BALANCE");
    expect(new Set(accepted.map((r) => r.body.data.id)).size).toBe(10);
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", ZERO, "1.00000000"));
    const list = await api.list(apiKey(s.key), s.userId, { "filter[where][status]": "PENDING" });
    expect(list.body.meta.pagination.records.total).toBe(10);
    expect(await api.mails(s.key, s.email)).toHaveLength(10);
    expect(await t.services.ledger.verify(t.db)).toEqual(CLEAN);
  });

  it("50 parallel initiates with one Idempotency-Key: one withdrawal, one hold, one email; every answer is that withdrawal", async () => {
    const api = A();
    const s = await api.scene("race-idem");
    // the whole balance: a repeat must not be refused for the money its own first request holds
    const body = { currency: "btc", amount: 1, address: TO.btc };
    const responses = await Promise.all(Array.from({ length: 50 }, () => api.initiate(apiKey(s.key), s.userId, body, "one-key")));
    const answers: Record<string, number> = {};
    for (const r of responses) {
      const answer = `${r.status} ${r.body.errors?.[0]?.code ?? ""}`.trim();
      answers[answer] = (answers[answer] ?? 0) + 1;
    }
    expect(answers).toEqual({ "201": 50 });
    const ids = new Set(responses.map((r) => r.body.data?.id));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.body.data?.withdraw.is_duplicate === false)).toHaveLength(1);
    expect(responses.filter((r) => r.body.data?.withdraw.is_duplicate === true)).toHaveLength(49);
    for (const r of responses) expect(r.body.data?.withdraw.idempotency_key).toBe("one-key");
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", ZERO, "1.00000000"));
    expect((await api.list(apiKey(s.key), s.userId)).body.meta.pagination.records.total).toBe(1);
    expect(await api.mails(s.key, s.email)).toHaveLength(1);
  });

  it("50 parallel initiates with one Idempotency-Key and a small amount: one withdrawal, no 409", async () => {
    const api = A();
    const s = await api.scene("race-idem-small");
    const body = { currency: "btc", amount: 0.1, address: TO.btc };
    const responses = await Promise.all(Array.from({ length: 50 }, () => api.initiate(bearer(s.token), s.userId, body, "small-key")));
    expect(responses.map((r) => r.status).filter((x) => x !== 201)).toEqual([]);
    expect(new Set(responses.map((r) => r.body.data.id)).size).toBe(1);
    expect(responses.filter((r) => r.body.data.withdraw.is_duplicate === false)).toHaveLength(1);
    expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.90000000", "0.10000000"));
    expect(await api.mails(s.key, s.email)).toHaveLength(1);
  });

  it("20 parallel initiates of 0.1 btc against a daily cap of 1.5: exactly 15 accepted (caps hold under concurrency)", async () => {
    const api = C();
    const s = await api.scene("race-caps", [BTC], [[BTC, 5]]);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }, `cap-race-${i}`)),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(15);
    for (const r of responses.filter((x) => x.status !== 201)) expectPlatformError(r, 400, "DAILY_LIMIT_EXCEEDED");
    expect(await api.btc(s)).toEqual(item("btc", "5.00000000", "3.50000000", "1.50000000"));
  });

  it("20 parallel initiates with one Idempotency-Key for the whole daily cap: every answer is the one withdrawal", async () => {
    const api = C();
    const s = await api.scene("race-idem-cap", [BTC], [[BTC, 5]]);
    // 1 btc (the per-withdrawal cap) twice would pass the daily 1.5: a repeat must not count itself
    const body = { currency: "btc", amount: 1, address: TO.btc };
    const responses = await Promise.all(Array.from({ length: 20 }, () => api.initiate(apiKey(s.key), s.userId, body, "cap-key")));
    const answers: Record<string, number> = {};
    for (const r of responses) {
      const answer = `${r.status} ${r.body.errors?.[0]?.code ?? ""}`.trim();
      answers[answer] = (answers[answer] ?? 0) + 1;
    }
    expect(answers).toEqual({ "201": 20 });
    expect(new Set(responses.map((r) => r.body.data?.id)).size).toBe(1);
    expect(await api.btc(s)).toEqual(item("btc", "5.00000000", "4.00000000", "1.00000000"));
  });

  it("leaves the whole ledger consistent after every test of this file", async () => {
    expect(await t.services.ledger.verify(t.db)).toEqual(CLEAN);
    expect(await tc.services.ledger.verify(tc.db)).toEqual(CLEAN);
  });
});
