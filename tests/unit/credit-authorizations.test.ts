/**
 * Card authorizations of the pure credit engine (src/domain/credit/authorizations.ts, holds.ts,
 * work.ts `closeHold`, simulate.ts daily close and dissolution) against the rules of
 * docs/decisions/credit.md "Authorizations": a hold takes AA and adds to `amountHeld` without
 * touching the debt or the interest; capture turns up to the hold into principal dated at the
 * capture and releases the rest; void releases it all; the hold expires at the first 00:00 UTC at
 * or after creation + TTL; declines (never refusals) in the order blocked, in default, dissolved,
 * expired `time`, insufficient credit. The interest figures are the golden vector of
 * docs/decisions/credit.md "The golden vector" (ADB, divisor 360, 36 %: 1125 and minimum 5500).
 */
import { describe, expect, it } from "vitest";
import { authorize, capture, holdExpiry, voidAuthorization, type DeclineReason } from "../../src/domain/credit/authorizations.js";
import type { CreditEvent } from "../../src/domain/credit/events.js";
import type { Outcome } from "../../src/domain/credit/outcome.js";
import { amountOverdraft } from "../../src/domain/credit/payments.js";
import { advance, blockWallet, charge, dissolveWallet, pay, type StepResult } from "../../src/domain/credit/simulate.js";
import { createWallet, type CreditProductRules, type WalletState } from "../../src/domain/credit/wallet.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";

const golden: CreditProductRules = GOLDEN_PRODUCT;

const d = (iso: string): Date => new Date(iso);

function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`refused: ${o.code} ${o.message}`);
  return o.value;
}

function newWallet(extra: { time?: number } = {}): WalletState {
  return ok(createWallet(golden, { walletId: "w1", createdAt: d("2026-01-01T00:00:00Z"), limit: 100000, firstCutDate: d("2026-01-31T00:00:00Z"), ...extra }));
}

/** Runs a list of steps, threading the state and collecting every event. */
function run(start: WalletState, steps: ((s: WalletState) => Outcome<StepResult>)[]): { state: WalletState; events: CreditEvent[] } {
  let state = start;
  const events: CreditEvent[] = [];
  for (const step of steps) {
    const r = ok(step(state));
    state = r.state;
    events.push(...r.events);
  }
  return { state, events };
}

const brief = (events: CreditEvent[]): string[] => events.map((e) => `${e.sequence} ${e.type} ${e.amount} ${e.direction}/${String(e.affectsBalance)}`);

/** The counters of a state, for one `toEqual`. */
const counters = (s: WalletState): Record<string, number> => ({
  AA: s.availableAmount,
  held: s.amountHeld,
  AO: s.principalOutstanding,
  IO: s.interestOutstanding,
  overdraft: amountOverdraft(s),
});

const hold20000 = (s: WalletState): ReturnType<typeof authorize> => authorize(s, golden, d("2026-01-05T10:00:00Z"), { authorizationId: "a1", amount: 20000, ttlDays: 7 });

describe("holdExpiry: the first 00:00 UTC at or after createdAt + ttlDays (docs/decisions/credit.md \"Authorizations\")", () => {
  it.each([
    { createdAt: "2026-01-01T10:00:00.000Z", ttl: 7, expires: "2026-01-09T00:00:00.000Z" },
    { createdAt: "2026-01-02T00:00:00.000Z", ttl: 7, expires: "2026-01-09T00:00:00.000Z" },
    { createdAt: "2026-01-01T23:59:59.999Z", ttl: 1, expires: "2026-01-03T00:00:00.000Z" },
    { createdAt: "2026-01-01T00:00:00.001Z", ttl: 1, expires: "2026-01-03T00:00:00.000Z" },
    { createdAt: "2026-01-31T12:00:00.000Z", ttl: 1, expires: "2026-02-02T00:00:00.000Z" },
    { createdAt: "2028-02-28T05:00:00.000Z", ttl: 1, expires: "2028-03-01T00:00:00.000Z" },
    { createdAt: "2026-12-31T00:00:00.000Z", ttl: 1, expires: "2027-01-01T00:00:00.000Z" },
    { createdAt: "2026-01-05T10:00:00.000Z", ttl: 40, expires: "2026-02-15T00:00:00.000Z" },
  ])("created $createdAt, $ttl days → $expires", ({ createdAt, ttl, expires }) => {
    expect(holdExpiry(d(createdAt), ttl).toISOString()).toBe(expires);
  });
});

describe("hold, capture, void", () => {
  it("an approval holds the amount: AA − 20000, held + 20000, debt unchanged, Autorizacion Aprobada", () => {
    const r = ok(hold20000(newWallet()));
    expect(r.decision).toEqual({ status: "approved", expiresAt: d("2026-01-13T00:00:00Z") });
    expect(brief(r.events)).toEqual(["1 Autorizacion Aprobada 20000 debit/false"]);
    expect(r.events[0]?.at).toEqual(d("2026-01-05T10:00:00Z"));
    expect(r.events[0]?.walletDetails_after).toMatchObject({ principal_outstanding: 0, interest_accrued: 0, totalDebt: 0, limit: 100000, amountOverdraft: 0, amountHeld: 20000 });
    expect(counters(r.state)).toEqual({ AA: 80000, held: 20000, AO: 0, IO: 0, overdraft: 0 });
    expect(r.state.holds).toEqual([{ authorizationId: "a1", amount: 20000, createdAt: d("2026-01-05T10:00:00Z"), expiresAt: d("2026-01-13T00:00:00Z") }]);
    expect(r.state.sequence).toBe(1);
    expect(r.closedHolds).toEqual([]);
  });

  it.each([
    {
      name: "capture all (no amount)",
      amount: undefined,
      events: ["2 Autorizacion Capturada 20000 debit/true"],
      details: [{ principal_outstanding: 20000, totalDebt: 20000, amountHeld: 0, amountOverdraft: 0 }],
      after: { AA: 80000, held: 0, AO: 20000, IO: 0, overdraft: 0 },
      closure: { capturedAmount: 20000, releasedAmount: 0 },
    },
    {
      name: "capture all (amount = hold)",
      amount: 20000,
      events: ["2 Autorizacion Capturada 20000 debit/true"],
      details: [{ principal_outstanding: 20000, totalDebt: 20000, amountHeld: 0, amountOverdraft: 0 }],
      after: { AA: 80000, held: 0, AO: 20000, IO: 0, overdraft: 0 },
      closure: { capturedAmount: 20000, releasedAmount: 0 },
    },
    {
      name: "capture part: the captured amount, then the rest released",
      amount: 12000,
      events: ["2 Autorizacion Capturada 12000 debit/true", "3 Autorizacion Liberada 8000 credit/false"],
      details: [
        { principal_outstanding: 12000, totalDebt: 12000, amountHeld: 8000, amountOverdraft: 0 },
        { principal_outstanding: 12000, totalDebt: 12000, amountHeld: 0, amountOverdraft: 0 },
      ],
      after: { AA: 88000, held: 0, AO: 12000, IO: 0, overdraft: 0 },
      closure: { capturedAmount: 12000, releasedAmount: 8000 },
    },
    {
      name: "capture of 1 cent",
      amount: 1,
      events: ["2 Autorizacion Capturada 1 debit/true", "3 Autorizacion Liberada 19999 credit/false"],
      details: [
        { principal_outstanding: 1, totalDebt: 1, amountHeld: 19999, amountOverdraft: 0 },
        { principal_outstanding: 1, totalDebt: 1, amountHeld: 0, amountOverdraft: 0 },
      ],
      after: { AA: 99999, held: 0, AO: 1, IO: 0, overdraft: 0 },
      closure: { capturedAmount: 1, releasedAmount: 19999 },
    },
  ])("$name", ({ amount, events, details, after, closure }) => {
    const held = ok(hold20000(newWallet())).state;
    const r = ok(capture(held, golden, d("2026-01-06T08:00:00Z"), "a1", amount));
    expect(brief(r.events)).toEqual(events);
    r.events.forEach((e, i) => {
      expect(e.at).toEqual(d("2026-01-06T08:00:00Z"));
      expect(e.walletDetails_after).toMatchObject(details[i] ?? {});
    });
    expect(counters(r.state)).toEqual(after);
    expect(r.state.holds).toEqual([]);
    expect(r.captured).toBe(amount ?? 20000);
    expect(r.hold).toMatchObject({ authorizationId: "a1", amount: 20000 });
    expect(r.closedHolds).toEqual([{ authorizationId: "a1", kind: "captured", at: d("2026-01-06T08:00:00Z"), ...closure }]);
  });

  it("void releases the whole hold: Autorizacion Liberada, AA back to the limit", () => {
    const held = ok(hold20000(newWallet())).state;
    const r = ok(voidAuthorization(held, golden, d("2026-01-06T08:00:00Z"), "a1"));
    expect(brief(r.events)).toEqual(["2 Autorizacion Liberada 20000 credit/false"]);
    expect(r.events[0]?.walletDetails_after).toMatchObject({ totalDebt: 0, amountHeld: 0, amountOverdraft: 0 });
    expect(counters(r.state)).toEqual({ AA: 100000, held: 0, AO: 0, IO: 0, overdraft: 0 });
    expect(r.state.holds).toEqual([]);
    expect(r.closedHolds).toEqual([{ authorizationId: "a1", kind: "voided", capturedAmount: 0, releasedAmount: 20000, at: d("2026-01-06T08:00:00Z") }]);
  });

  it("two holds are independent: capturing one leaves the other open", () => {
    const { state } = run(newWallet(), [
      hold20000,
      (s) => authorize(s, golden, d("2026-01-05T11:00:00Z"), { authorizationId: "a2", amount: 5000, ttlDays: 7 }),
      (s) => capture(s, golden, d("2026-01-06T00:00:00Z"), "a2"),
    ]);
    expect(counters(state)).toEqual({ AA: 75000, held: 20000, AO: 5000, IO: 0, overdraft: 0 });
    expect(state.holds.map((h) => h.authorizationId)).toEqual(["a1"]);
  });
});

describe("expiry at the right daily close", () => {
  it.each([
    { createdAt: "2026-01-01T10:00:00Z", before: "2026-01-08T23:59:59Z" },
    { createdAt: "2026-01-02T00:00:00Z", before: "2026-01-08T23:59:59.999Z" },
  ])("created $createdAt with TTL 7: open at $before, released by the close of 2026-01-09T00:00Z", ({ createdAt, before }) => {
    const held = ok(authorize(newWallet(), golden, d(createdAt), { authorizationId: "a1", amount: 20000, ttlDays: 7 }));
    expect(held.decision).toEqual({ status: "approved", expiresAt: d("2026-01-09T00:00:00Z") });

    const open = ok(advance(held.state, golden, d(before)));
    expect(open.events).toEqual([]);
    expect(open.closedHolds).toEqual([]);
    expect(counters(open.state)).toEqual({ AA: 80000, held: 20000, AO: 0, IO: 0, overdraft: 0 });
    expect(open.state.holds).toHaveLength(1);

    const expired = ok(advance(open.state, golden, d("2026-01-09T00:00:00Z")));
    expect(brief(expired.events)).toEqual(["2 Autorizacion Liberada 20000 credit/false"]);
    expect(expired.events[0]?.at).toEqual(d("2026-01-09T00:00:00Z"));
    expect(expired.events[0]?.walletDetails_after).toMatchObject({ amountHeld: 0 });
    expect(expired.closedHolds).toEqual([{ authorizationId: "a1", kind: "expired", capturedAmount: 0, releasedAmount: 20000, at: d("2026-01-09T00:00:00Z") }]);
    expect(counters(expired.state)).toEqual({ AA: 100000, held: 0, AO: 0, IO: 0, overdraft: 0 });
    expect(expired.state.holds).toEqual([]);
  });

  it("advancing in one go past the expiry gives the same release as advancing to it", () => {
    const held = ok(authorize(newWallet(), golden, d("2026-01-01T10:00:00Z"), { authorizationId: "a1", amount: 20000, ttlDays: 7 })).state;
    const r = ok(advance(held, golden, d("2026-01-20T15:00:00Z")));
    expect(r.closedHolds).toEqual([{ authorizationId: "a1", kind: "expired", capturedAmount: 0, releasedAmount: 20000, at: d("2026-01-09T00:00:00Z") }]);
    expect(r.state.holds).toEqual([]);
  });

  it("a capture or void at the expiry instant comes after the close: refused AUTHORIZATION_NOT_OPEN; one instant before, accepted", () => {
    const held = ok(authorize(newWallet(), golden, d("2026-01-01T10:00:00Z"), { authorizationId: "a1", amount: 20000, ttlDays: 7 })).state;
    expect(capture(held, golden, d("2026-01-09T00:00:00Z"), "a1")).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
    expect(voidAuthorization(held, golden, d("2026-01-09T00:00:00Z"), "a1")).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
    expect(capture(held, golden, d("2026-01-20T00:00:00Z"), "a1")).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
    const last = ok(capture(held, golden, d("2026-01-08T23:59:59.999Z"), "a1"));
    expect(counters(last.state)).toEqual({ AA: 80000, held: 0, AO: 20000, IO: 0, overdraft: 0 });
  });
});

describe("declines: a normal outcome, Autorizacion Rechazada with the amount requested, nothing held", () => {
  const at = d("2026-02-11T09:00:00Z");
  const defaulted = (): WalletState =>
    run(newWallet(), [(s) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000), (s) => advance(s, golden, d("2026-02-10T00:00:00Z"))]).state;

  it.each<{ name: string; wallet: () => WalletState; amount: number; reason: DeclineReason }>([
    { name: "blocked", wallet: () => ok(blockWallet(newWallet(), golden, d("2026-01-02T00:00:00Z"))).state, amount: 500, reason: "WALLET_BLOCKED" },
    { name: "blocked, also past `time` and above AA", wallet: () => ok(blockWallet(newWallet({ time: 10 }), golden, d("2026-01-02T00:00:00Z"))).state, amount: 200000, reason: "WALLET_BLOCKED" },
    { name: "in default (the default-and-cure example)", wallet: defaulted, amount: 500, reason: "WALLET_IN_DEFAULT" },
    { name: "in default, also above AA", wallet: defaulted, amount: 200000, reason: "WALLET_IN_DEFAULT" },
    { name: "dissolved", wallet: () => ok(dissolveWallet(newWallet(), golden, d("2026-01-02T00:00:00Z"))).state, amount: 500, reason: "WALLET_DISSOLVED" },
    { name: "dissolved, also past `time`", wallet: () => ok(dissolveWallet(newWallet({ time: 10 }), golden, d("2026-01-02T00:00:00Z"))).state, amount: 500, reason: "WALLET_DISSOLVED" },
    { name: "past `time`", wallet: () => newWallet({ time: 10 }), amount: 500, reason: "WALLET_EXPIRED" },
    { name: "past `time`, also above AA", wallet: () => newWallet({ time: 10 }), amount: 200000, reason: "WALLET_EXPIRED" },
    { name: "insufficient credit", wallet: () => newWallet(), amount: 100001, reason: "INSUFFICIENT_CREDIT" },
  ])("$name → $reason", ({ wallet, amount, reason }) => {
    const before = ok(advance(wallet(), golden, at)).state;
    const r = ok(authorize(before, golden, at, { authorizationId: "a1", amount, ttlDays: 7 }));
    expect(r.decision).toEqual({ status: "declined", reason });
    expect(brief(r.events)).toEqual([`${before.sequence + 1} Autorizacion Rechazada ${amount} debit/false`]);
    expect(r.events[0]?.walletDetails_after.amountHeld).toBe(0);
    expect(counters(r.state)).toEqual(counters(before));
    expect(r.state.holds).toEqual([]);
    expect(r.closedHolds).toEqual([]);
    expect({ ...r.state, sequence: before.sequence }).toEqual(before);
    expect(capture(r.state, golden, at, "a1")).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
    expect(voidAuthorization(r.state, golden, at, "a1")).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
  });

  it("`time` ends at createdAt + time: approved one instant before, declined at it", () => {
    const w = newWallet({ time: 10 });
    expect(ok(authorize(w, golden, d("2026-01-10T23:59:59.999Z"), { authorizationId: "a1", amount: 500, ttlDays: 7 })).decision.status).toBe("approved");
    expect(ok(authorize(w, golden, d("2026-01-11T00:00:00Z"), { authorizationId: "a1", amount: 500, ttlDays: 7 })).decision).toEqual({ status: "declined", reason: "WALLET_EXPIRED" });
  });

  it("insufficient credit is amount > AA: the whole AA is approved, one cent more after another hold is declined", () => {
    const all = ok(authorize(newWallet(), golden, d("2026-01-02T00:00:00Z"), { authorizationId: "a1", amount: 100000, ttlDays: 7 }));
    expect(all.decision.status).toBe("approved");
    expect(counters(all.state)).toEqual({ AA: 0, held: 100000, AO: 0, IO: 0, overdraft: 0 });

    const part = ok(authorize(newWallet(), golden, d("2026-01-02T00:00:00Z"), { authorizationId: "a1", amount: 60000, ttlDays: 7 })).state;
    expect(ok(authorize(part, golden, d("2026-01-02T00:00:00Z"), { authorizationId: "a2", amount: 40001, ttlDays: 7 })).decision).toEqual({ status: "declined", reason: "INSUFFICIENT_CREDIT" });
    expect(ok(authorize(part, golden, d("2026-01-02T00:00:00Z"), { authorizationId: "a2", amount: 40000, ttlDays: 7 })).decision.status).toBe("approved");
  });
});

describe("refusals", () => {
  const held = (): WalletState => ok(hold20000(newWallet())).state;

  it("capture above the hold: CAPTURE_EXCEEDS_AUTHORIZED, the hold stays open", () => {
    const s = held();
    expect(capture(s, golden, d("2026-01-06T00:00:00Z"), "a1", 20001)).toMatchObject({ ok: false, code: "CAPTURE_EXCEEDS_AUTHORIZED" });
    expect(ok(capture(s, golden, d("2026-01-06T00:00:00Z"), "a1", 20000)).captured).toBe(20000);
  });

  it("after a partial capture the authorization is closed: a second capture and a void are refused AUTHORIZATION_NOT_OPEN", () => {
    const captured = ok(capture(held(), golden, d("2026-01-06T00:00:00Z"), "a1", 5000)).state;
    expect(capture(captured, golden, d("2026-01-06T00:00:00Z"), "a1", 5000)).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
    expect(capture(captured, golden, d("2026-01-07T00:00:00Z"), "a1")).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
    expect(voidAuthorization(captured, golden, d("2026-01-07T00:00:00Z"), "a1")).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
  });

  it("after a void: capture and void refused AUTHORIZATION_NOT_OPEN; an unknown id too", () => {
    const voided = ok(voidAuthorization(held(), golden, d("2026-01-06T00:00:00Z"), "a1")).state;
    expect(capture(voided, golden, d("2026-01-06T00:00:00Z"), "a1")).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
    expect(voidAuthorization(voided, golden, d("2026-01-06T00:00:00Z"), "a1")).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
    expect(capture(held(), golden, d("2026-01-06T00:00:00Z"), "nope")).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
  });

  it("amounts ≤ 0 are refused AMOUNT_NOT_POSITIVE (authorize and capture), instants before the clock CLOCK_BACKWARDS", () => {
    const s = held();
    expect(authorize(s, golden, d("2026-01-06T00:00:00Z"), { authorizationId: "a2", amount: 0, ttlDays: 7 })).toMatchObject({ ok: false, code: "AMOUNT_NOT_POSITIVE", field: "amount" });
    expect(capture(s, golden, d("2026-01-06T00:00:00Z"), "a1", 0)).toMatchObject({ ok: false, code: "AMOUNT_NOT_POSITIVE", field: "amount" });
    expect(capture(s, golden, d("2026-01-06T00:00:00Z"), "a1", -5)).toMatchObject({ ok: false, code: "AMOUNT_NOT_POSITIVE" });
    expect(authorize(s, golden, d("2026-01-05T09:00:00Z"), { authorizationId: "a2", amount: 10, ttlDays: 7 })).toMatchObject({ ok: false, code: "CLOCK_BACKWARDS" });
    expect(capture(s, golden, d("2026-01-05T09:00:00Z"), "a1")).toMatchObject({ ok: false, code: "CLOCK_BACKWARDS" });
    expect(voidAuthorization(s, golden, d("2026-01-05T09:00:00Z"), "a1")).toMatchObject({ ok: false, code: "CLOCK_BACKWARDS" });
  });
});

describe("wallet states", () => {
  it("dissolution releases every hold (Autorizacion Liberada each, oldest first), the only events of the dissolution", () => {
    const { state } = run(newWallet(), [
      hold20000,
      (s) => authorize(s, golden, d("2026-01-06T10:00:00Z"), { authorizationId: "a2", amount: 5000, ttlDays: 30 }),
      (s) => charge(s, golden, d("2026-01-07T10:00:00Z"), 1000),
    ]);
    const r = ok(dissolveWallet(state, golden, d("2026-01-10T00:00:00Z")));
    expect(brief(r.events)).toEqual(["3 Autorizacion Liberada 20000 credit/false", "4 Autorizacion Liberada 5000 credit/false"]);
    expect(r.events.map((e) => e.walletDetails_after.amountHeld)).toEqual([5000, 0]);
    expect(r.closedHolds.map((c) => [c.authorizationId, c.capturedAmount, c.releasedAmount, c.at.toISOString()])).toEqual([
      ["a1", 0, 20000, "2026-01-10T00:00:00.000Z"],
      ["a2", 0, 5000, "2026-01-10T00:00:00.000Z"],
    ]);
    expect(r.state).toMatchObject({ status: "dissolved", holds: [] });
    expect(counters(r.state)).toEqual({ AA: 99000, held: 0, AO: 1000, IO: 0, overdraft: 0 });
    expect(capture(r.state, golden, d("2026-01-11T00:00:00Z"), "a2")).toMatchObject({ ok: false, code: "AUTHORIZATION_NOT_OPEN" });
  });

  it("a hold placed before a block or a default can still be captured (the merchant was promised the amount)", () => {
    const blocked = run(newWallet(), [hold20000, (s) => blockWallet(s, golden, d("2026-01-06T00:00:00Z"))]).state;
    expect(counters(ok(capture(blocked, golden, d("2026-01-07T00:00:00Z"), "a1")).state)).toEqual({ AA: 80000, held: 0, AO: 20000, IO: 0, overdraft: 0 });

    // the default-and-cure example with a hold open from Jan 20 to Mar 1: holds accrue nothing, so the
    // statement is still 900 interest, 4000 minimum, 800 penal
    const { state, events } = run(newWallet(), [
      (s) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000),
      (s) => authorize(s, golden, d("2026-01-20T00:00:00Z"), { authorizationId: "a1", amount: 20000, ttlDays: 40 }),
      (s) => advance(s, golden, d("2026-02-10T00:00:00Z")),
    ]);
    expect(brief(events).slice(1)).toEqual([
      "2 Interes Nominal Calculado 900 debit/false",
      "3 Interes Nominal Aplicado 900 debit/true",
      "4 Interes Moroso Calculado 800 debit/false",
      "5 Interes Moroso Aplicado 800 debit/true",
      "6 Interes moroso ejecutado 800 debit/false",
    ]);
    expect(state).toMatchObject({ status: "in_default", principalOutstanding: 30000, interestOutstanding: 1700, availableAmount: 48300, amountHeld: 20000 });
    const r = ok(capture(state, golden, d("2026-02-11T00:00:00Z"), "a1", 15000));
    expect(brief(r.events)).toEqual(["7 Autorizacion Capturada 15000 debit/true", "8 Autorizacion Liberada 5000 credit/false"]);
    expect(r.state).toMatchObject({ status: "in_default", principalOutstanding: 45000, interestOutstanding: 1700, availableAmount: 53300, amountHeld: 0 });
  });
});

describe("interest: a hold is not debt (golden vector, docs/decisions/credit.md \"The golden vector\")", () => {
  const golden2 = [
    (s: WalletState) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000),
    (s: WalletState) => charge(s, golden, d("2026-01-16T10:00:00Z"), 15000),
  ];
  const cut = (s: WalletState): Outcome<StepResult> => advance(s, golden, d("2026-01-31T00:00:00Z"));

  it("a hold of 20000 open from Jan 5 through the cut leaves interest 1125 and minimum 5500 unchanged", () => {
    const plain = run(newWallet(), [...golden2, cut]);
    const withHold = run(newWallet(), [
      golden2[0] as (s: WalletState) => Outcome<StepResult>,
      (s) => authorize(s, golden, d("2026-01-05T12:00:00Z"), { authorizationId: "a1", amount: 20000, ttlDays: 40 }),
      golden2[1] as (s: WalletState) => Outcome<StepResult>,
      cut,
    ]);
    for (const { state } of [plain, withHold]) {
      expect(state.statements[0]).toMatchObject({ sumOfDailyBalance: 1125000, daysInCycle: 30, principalAtCut: 45000, interestGenerated: 1125, minimumPayment: 5500 });
    }
    expect(withHold.state.statements[0]).toEqual(plain.state.statements[0]);
    expect(brief(withHold.events)).toEqual(["1 Autorizacion Aprobada 20000 debit/false", "2 Interes Nominal Calculado 1125 debit/false"]);
    expect(withHold.events[1]?.walletDetails_after).toMatchObject({ principal_outstanding: 45000, amountHeld: 20000, amountOverdraft: 0 });
    expect(counters(withHold.state)).toEqual({ AA: 35000, held: 20000, AO: 45000, IO: 0, overdraft: 0 });
    expect(withHold.state.holds.map((h) => h.expiresAt.toISOString())).toEqual(["2026-02-15T00:00:00.000Z"]);
  });

  it("a capture of 10000 on Jan 20 adds 10000 × 11 closes (Jan 21..31): sum 1235000, interest 1235, minimum 6500, as a charge at the capture", () => {
    const captured = run(newWallet(), [
      golden2[0] as (s: WalletState) => Outcome<StepResult>,
      (s) => authorize(s, golden, d("2026-01-05T12:00:00Z"), { authorizationId: "a1", amount: 20000, ttlDays: 40 }),
      golden2[1] as (s: WalletState) => Outcome<StepResult>,
      (s) => capture(s, golden, d("2026-01-20T12:00:00Z"), "a1", 10000),
      cut,
    ]);
    // 36 / 100 / 360 × 1235000 = 1235; minimum 10 % × 55000 + 1000 = 6500
    expect(captured.state.statements[0]).toMatchObject({ sumOfDailyBalance: 1235000, principalAtCut: 55000, interestGenerated: 1235, minimumPayment: 6500 });
    expect(counters(captured.state)).toEqual({ AA: 45000, held: 0, AO: 55000, IO: 0, overdraft: 0 });
    const charged = run(newWallet(), [...golden2, (s) => charge(s, golden, d("2026-01-20T12:00:00Z"), 10000), cut]);
    expect(captured.state.statements[0]).toEqual(charged.state.statements[0]);
  });
});

describe("overdraft (payments.ts: amountOverdraft = max(0, debt + held − limit))", () => {
  // Jan: 30000 charged → interest 900, minimum 4000 paid on Feb 5 (all to principal: IO is 0) → AO 26000,
  // AA 74000; a hold takes all of it; the grace end books 900 with AA at 0: overdraft 900.
  const steps = [
    (s: WalletState) => charge(s, golden, d("2026-01-01T10:00:00Z"), 30000),
    (s: WalletState) => pay(s, golden, d("2026-02-05T00:00:00Z"), 4000),
    (s: WalletState) => authorize(s, golden, d("2026-02-06T00:00:00Z"), { authorizationId: "a1", amount: 74000, ttlDays: 30 }),
    (s: WalletState) => advance(s, golden, d("2026-02-10T00:00:00Z")),
  ];

  it("interest booked while a hold uses up AA becomes overdraft", () => {
    const { state, events } = run(newWallet(), steps);
    expect(state.status).toBe("active");
    expect(counters(state)).toEqual({ AA: 0, held: 74000, AO: 26000, IO: 900, overdraft: 900 });
    expect(events.at(-1)?.type).toBe("Interes Nominal Aplicado");
    expect(events.at(-1)?.walletDetails_after).toMatchObject({ totalDebt: 26900, amountHeld: 74000, amountOverdraft: 900 });
  });

  it("a void afterwards gives AA back only up to limit − debt (73100 of the 74000 held)", () => {
    const { state } = run(newWallet(), steps);
    const r = ok(voidAuthorization(state, golden, d("2026-02-11T00:00:00Z"), "a1"));
    expect(brief(r.events)).toEqual(["5 Autorizacion Liberada 74000 credit/false"]);
    expect(r.events[0]?.walletDetails_after).toMatchObject({ totalDebt: 26900, amountHeld: 0, amountOverdraft: 0 });
    expect(counters(r.state)).toEqual({ AA: 73100, held: 0, AO: 26000, IO: 900, overdraft: 0 });
    expect(r.state.availableAmount).toBe(r.state.limit - r.state.principalOutstanding - r.state.interestOutstanding);
  });

  it("a capture of the whole hold keeps the overdraft: AA 0, debt 100900", () => {
    const { state } = run(newWallet(), steps);
    const r = ok(capture(state, golden, d("2026-02-11T00:00:00Z"), "a1"));
    expect(counters(r.state)).toEqual({ AA: 0, held: 0, AO: 100000, IO: 900, overdraft: 900 });
    expect(r.events[0]?.walletDetails_after).toMatchObject({ totalDebt: 100900, amountHeld: 0, amountOverdraft: 900 });
  });

  it("a partial capture then releases the rest net of the overdraft: 50000 captured, 24000 released, AA 23100", () => {
    const { state } = run(newWallet(), steps);
    const r = ok(capture(state, golden, d("2026-02-11T00:00:00Z"), "a1", 50000));
    expect(brief(r.events)).toEqual(["5 Autorizacion Capturada 50000 debit/true", "6 Autorizacion Liberada 24000 credit/false"]);
    expect(r.events.map((e) => e.walletDetails_after.amountOverdraft)).toEqual([900, 0]);
    expect(counters(r.state)).toEqual({ AA: 23100, held: 0, AO: 76000, IO: 900, overdraft: 0 });
  });
});
