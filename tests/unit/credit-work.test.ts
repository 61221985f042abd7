/**
 * The engine's working copy (src/domain/credit/work.ts `copyState`): a copy every engine call may
 * change without changing the state it was given, equal to a structured clone of it.
 */
import { describe, expect, it } from "vitest";
import { authorize } from "../../src/domain/credit/authorizations.js";
import type { Outcome } from "../../src/domain/credit/outcome.js";
import { advance, charge } from "../../src/domain/credit/simulate.js";
import { createWallet, type WalletState } from "../../src/domain/credit/wallet.js";
import { copyState } from "../../src/domain/credit/work.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";

function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`refused: ${o.code} ${o.message}`);
  return o.value;
}

/** A wallet past its first cut (one statement), with a pending override and two open holds. */
function busyWallet(): WalletState {
  let s = ok(createWallet(GOLDEN_PRODUCT, { walletId: "w1", createdAt: new Date("2026-01-01T00:00:00Z"), limit: 100000, firstCutDate: new Date("2026-01-31T00:00:00Z") }));
  s = ok(charge(s, GOLDEN_PRODUCT, new Date("2026-01-10T00:00:00Z"), 5000)).state;
  s = ok(advance(s, GOLDEN_PRODUCT, new Date("2026-02-02T00:00:00Z"))).state;
  for (const [i, at] of ["2026-02-03T10:00:00Z", "2026-02-03T11:00:00Z"].entries()) {
    s = ok(authorize(s, GOLDEN_PRODUCT, new Date(at), { authorizationId: `a${i}`, amount: 700 + i, ttlDays: 7, cardId: `c${i}` })).state;
  }
  return { ...s, pendingSpecs: { interestSpecs: { ...s.interestSpecs, interestRateNominal: 12 }, minimumPaymentSpecs: { ...s.minimumPaymentSpecs } } };
}

describe("copyState", () => {
  it("equals a structured clone of a wallet with statements, holds and a pending override", () => {
    const s = busyWallet();
    expect(s.statements.length).toBe(1);
    expect(s.holds.length).toBe(2);
    expect(copyState(s)).toStrictEqual(structuredClone(s));
  });

  it("shares no object or array with the state it copies, so changing the copy leaves the state as it was", () => {
    const s = busyWallet();
    const before = structuredClone(s);
    const c = copyState(s);
    c.interestSpecs.interestRateNominal = 1;
    c.minimumPaymentSpecs.fixedMinimumPayment = 1;
    if (c.pendingSpecs === null) throw new Error("the busy wallet has a pending override");
    c.pendingSpecs.interestSpecs.interestRateNominal = 2;
    c.pendingSpecs.minimumPaymentSpecs.minimumPaymentRate = 2;
    (c.statements[0] as { paidInCycle: number }).paidInCycle = 99;
    c.statements.push({ ...(c.statements[0] as WalletState["statements"][number]), index: 1 });
    (c.holds[0] as { amount: number }).amount = 1;
    c.holds.pop();
    c.availableAmount = 0;
    expect(s).toStrictEqual(before);
  });
});
