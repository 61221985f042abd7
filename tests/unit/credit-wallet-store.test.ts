/**
 * The credit wallet store's mapping (src/modules/credit/accounts/mapping.ts): percent rates between
 * `numeric(9,4)` text and engine numbers exactly, and a wallet row plus its open statements back to
 * the same engine state after a round trip through the columns it writes.
 */
import { describe, expect, it } from "vitest";
import { charge, createWallet, advance, type CreditProductRules } from "../../src/domain/credit/index.js";
import type { CreditStatement, CreditWallet } from "../../src/modules/credit/accounts/entities.js";
import { lastCloseOf, rateNumber, rateText, stateOf, walletColumns } from "../../src/modules/credit/accounts/mapping.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";

const golden: CreditProductRules = { ...GOLDEN_PRODUCT, morosidadRate: 12.3456 };

describe("rates", () => {
  it("read numeric(9,4) text exactly and write it back unchanged", () => {
    for (const text of ["36.0000", "0.0001", "12.3456", "99999.9999", "0.1000", "0.0000"]) {
      expect(rateText(rateNumber(text))).toBe(text);
    }
    expect(rateNumber("12.5000")).toBe(12.5);
    expect(rateText(0.3)).toBe("0.3000");
  });
});

describe("row ↔ state", () => {
  it("a wallet with an open statement survives the round trip through its columns", () => {
    const made = createWallet(golden, { walletId: "c7e2a9d4-1f3b-4c5d-9e8f-0a1b2c3d4e5f", createdAt: new Date("2026-01-01T00:00:00Z"), limit: 100000, firstCutDate: new Date("2026-01-31T00:00:00Z") });
    if (!made.ok) throw new Error(made.message);
    const charged = charge(made.value, golden, new Date("2026-01-01T00:00:00Z"), 30000);
    if (!charged.ok) throw new Error(charged.message);
    const moved = advance(charged.value.state, golden, new Date("2026-02-02T12:00:00Z"));
    if (!moved.ok) throw new Error(moved.message);
    const s = moved.value.state;
    const cols = walletColumns({ status: "active", pendingSpecs: null } as unknown as CreditWallet, s, golden, new Date("2026-02-02T12:00:00Z"));
    expect(cols).toMatchObject({ nextCutAt: new Date("2026-02-28T00:00:00Z"), lastCloseAt: new Date("2026-02-02T00:00:00Z"), interestRateMoroso: "12.3456", sequence: 1 });
    const row = { ...cols, walletId: s.walletId, createdAt: s.createdAt, firstCutDate: s.firstCutDate, expiresAt: s.expiresAt } as unknown as CreditWallet;
    const st = s.statements[0]!;
    const stRow = {
      ...st,
      interestRateNominal: rateText(st.interestRateNominal),
      minimumPaymentRate: rateText(st.minimumPaymentRate),
      interestRateMoroso: null,
    } as unknown as CreditStatement;
    expect(stateOf(row, [stRow])).toEqual(s);
  });

  it("places the last close at the last midnight after creation", () => {
    const created = new Date("2026-01-01T10:00:00Z");
    expect(lastCloseOf(created, new Date("2026-01-01T23:59:59Z"))).toBeNull();
    expect(lastCloseOf(created, new Date("2026-01-02T00:00:00Z"))).toEqual(new Date("2026-01-02T00:00:00Z"));
    expect(lastCloseOf(new Date("2026-01-01T00:00:00Z"), new Date("2026-01-01T00:00:00Z"))).toBeNull();
  });
});
