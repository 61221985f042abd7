/**
 * Pure rules of limits and the withdrawal allowlist (src/domain/limits.ts, src/domain/allowlist.ts;
 * docs/decisions/limits-and-allowlist.md), no database: the UTC windows a movement counts in
 * (day and month boundaries, February, the year's end), the caps check and its messages, where a
 * cap set stands, Set Limits' validation, and the allowlist's cooldown, address keys and refusals.
 */
import { describe, expect, it } from "vitest";
import { STATUS_OF } from "../../src/http/errors.js";
import { activationOf, addressKey, allowlistStatus, assertAllowlisted } from "../../src/domain/allowlist.js";
import {
  assertWithinCaps, capStanding, checkCapInputs, effectiveCaps, isoSeconds, MAX_CAP_CURRENCIES, windowsAt,
  type CapSet, type MovementKind,
} from "../../src/domain/limits.js";
import { money } from "../../src/domain/money.js";
import { expectDomainError } from "../support/assertions.js";

const iso = (d: Date) => d.toISOString();

describe("windowsAt: the UTC day and calendar month of an instant", () => {
  it.each<[string, string, string, string, string]>([
    // now → day start, day end, month start, month end
    ["2026-11-25T23:59:59.999Z", "2026-11-25T00:00:00.000Z", "2026-11-26T00:00:00.000Z", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
    ["2026-11-26T00:00:00.000Z", "2026-11-26T00:00:00.000Z", "2026-11-27T00:00:00.000Z", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
    ["2026-11-30T23:59:59.999Z", "2026-11-30T00:00:00.000Z", "2026-12-01T00:00:00.000Z", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
    ["2026-12-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z", "2026-12-02T00:00:00.000Z", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
    // February of a common year and of a leap year
    ["2026-02-28T23:59:59.999Z", "2026-02-28T00:00:00.000Z", "2026-03-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"],
    ["2026-03-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z", "2026-03-02T00:00:00.000Z", "2026-03-01T00:00:00.000Z", "2026-04-01T00:00:00.000Z"],
    ["2028-02-28T23:59:59.999Z", "2028-02-28T00:00:00.000Z", "2028-02-29T00:00:00.000Z", "2028-02-01T00:00:00.000Z", "2028-03-01T00:00:00.000Z"],
    ["2028-02-29T12:00:00.000Z", "2028-02-29T00:00:00.000Z", "2028-03-01T00:00:00.000Z", "2028-02-01T00:00:00.000Z", "2028-03-01T00:00:00.000Z"],
    // the year's end
    ["2026-12-31T23:59:59.999Z", "2026-12-31T00:00:00.000Z", "2027-01-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
    ["2027-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z", "2027-01-02T00:00:00.000Z", "2027-01-01T00:00:00.000Z", "2027-02-01T00:00:00.000Z"],
    // a 31-day month, and an instant given in another zone's offset (still UTC windows)
    ["2026-01-31T08:00:00.000Z", "2026-01-31T00:00:00.000Z", "2026-02-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z"],
    ["2026-03-01T05:00:00+14:00", "2026-02-28T00:00:00.000Z", "2026-03-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"],
  ])("%s → day [%s, %s), month [%s, %s)", (now, dayStart, dayEnd, monthStart, monthEnd) => {
    const w = windowsAt(new Date(now));
    expect([iso(w.dayStart), iso(w.dayEnd), iso(w.monthStart), iso(w.monthEnd)]).toEqual([dayStart, dayEnd, monthStart, monthEnd]);
  });

  it("always holds now inside both windows, the day inside the month", () => {
    for (let i = 0; i < 500; i++) {
      const now = new Date(Date.UTC(2020, 0, 1) + Math.floor(Math.random() * 12 * 365 * 86_400_000));
      const w = windowsAt(now);
      expect(w.dayStart.getTime()).toBeLessThanOrEqual(now.getTime());
      expect(now.getTime()).toBeLessThan(w.dayEnd.getTime());
      expect(w.dayEnd.getTime() - w.dayStart.getTime()).toBe(86_400_000);
      expect(w.monthStart.getTime()).toBeLessThanOrEqual(w.dayStart.getTime());
      expect(w.dayEnd.getTime()).toBeLessThanOrEqual(w.monthEnd.getTime());
      expect(w.monthStart.getUTCDate()).toBe(1);
      expect(w.monthEnd.getUTCDate()).toBe(1);
    }
  });

  it("prints window ends to the second", () => {
    expect(isoSeconds(new Date("2026-11-26T00:00:00.000Z"))).toBe("2026-11-26T00:00:00Z");
  });
});

describe("assertWithinCaps", () => {
  const caps: CapSet = { perTransaction: "1", daily: "1.5", monthly: "2" };
  const now = new Date("2026-11-25T10:00:00Z");
  const run = (kind: MovementKind, amount: string, today: string, month: string, set: CapSet | undefined = caps) => () =>
    assertWithinCaps({ kind, currency: "btc", amount: money(amount) }, set, { today, month }, windowsAt(now));

  it("lets anything through for a currency without caps", () => {
    const none = () => assertWithinCaps({ kind: "withdrawal", currency: "btc", amount: money("1000000000") }, undefined, { today: "999999", month: "999999" }, windowsAt(now));
    expect(none).not.toThrow();
  });

  it.each<[string, MovementKind, string, string, string, string | null]>([
    ["a small withdrawal", "withdrawal", "0.1", "0", "0", null],
    ["the per-transaction cap exactly", "withdrawal", "1", "0", "0", null],
    ["one satoshi over the per-transaction cap (withdrawal)", "withdrawal", "1.00000001", "0", "0", "WITHDRAWAL_LIMIT_EXCEEDED"],
    ["one satoshi over the per-transaction cap (transfer)", "transfer", "1.00000001", "0", "0", "TRANSFER_LIMIT_EXCEEDED"],
    ["reaching the daily cap exactly", "withdrawal", "0.5", "1", "1", null],
    ["one satoshi over the daily cap", "transfer", "0.50000001", "1", "1", "DAILY_LIMIT_EXCEEDED"],
    ["reaching the monthly cap exactly", "withdrawal", "0.5", "0", "1.5", null],
    ["one satoshi over the monthly cap", "transfer", "0.50000001", "0", "1.5", "MONTHLY_LIMIT_EXCEEDED"],
    ["per-transaction before daily", "withdrawal", "1.2", "1.5", "2", "WITHDRAWAL_LIMIT_EXCEEDED"],
    ["daily before monthly", "withdrawal", "0.6", "1", "2", "DAILY_LIMIT_EXCEEDED"],
    ["exact decimals (0.1 + 0.2 within a 0.3 remainder)", "withdrawal", "0.2", "1.2", "1.2", null],
  ])("%s", (_label, kind, amount, today, month, code) => {
    if (code === null) expect(run(kind, amount, today, month)).not.toThrow();
    else expect(STATUS_OF[expectDomainError(run(kind, amount, today, month), code, "amount").code]).toBe(400);
  });

  it("names the cap, the amount used and the remainder until the window resets", () => {
    const big: CapSet = { perTransaction: "2", daily: "5", monthly: "20" };
    expect(expectDomainError(run("withdrawal", "1", "4.5", "4.5", big), "DAILY_LIMIT_EXCEEDED").message).toBe(
      "Daily withdrawal limit for btc is 5.00000000; 4.50000000 used today; 0.50000000 remains until 2026-11-26T00:00:00Z.",
    );
    expect(expectDomainError(run("transfer", "1", "0", "19.5", big), "MONTHLY_LIMIT_EXCEEDED").message).toBe(
      "Monthly transfer limit for btc is 20.00000000; 19.50000000 used this month; 0.50000000 remains until 2026-12-01T00:00:00Z.",
    );
    expect(expectDomainError(run("withdrawal", "2.5", "0", "0", big), "WITHDRAWAL_LIMIT_EXCEEDED").message).toBe(
      "Per-transaction withdrawal limit for btc is 2.00000000; this withdrawal of 2.50000000 is over it by 0.50000000.",
    );
    // used beyond a cap that was lowered since: the remainder is zero, never negative
    expect(expectDomainError(run("withdrawal", "0.1", "6", "6", big), "DAILY_LIMIT_EXCEEDED").message).toContain("6.00000000 used today; 0.00000000 remains");
  });
});

describe("capStanding", () => {
  const caps: CapSet = { perTransaction: "2", daily: "5", monthly: "20" };
  it.each<[string, string, string, string]>([
    // used today, used this month → remaining today, remaining this month
    ["0", "0", "5", "20"],
    ["4.5", "10", "0.5", "10"],
    ["1", "18", "2", "2"], // the month leaves less than the day
    ["5", "5", "0", "15"],
    ["7", "25", "0", "0"], // over lowered caps: never below zero
  ])("used %s today and %s this month → %s / %s remain", (today, month, remainingToday, remainingThisMonth) => {
    const s = capStanding(caps, { today, month });
    expect([s.usedToday.toFixed(), s.usedThisMonth.toFixed(), s.remainingToday.toFixed(), s.remainingThisMonth.toFixed()]).toEqual([
      today, month, remainingToday, remainingThisMonth,
    ]);
  });
});

describe("effectiveCaps", () => {
  it("takes the customer's set of a currency whole, the defaults elsewhere", () => {
    const defaults = { btc: { perTransaction: "2", daily: "5", monthly: "20" }, eth: { perTransaction: "50", daily: "100", monthly: "500" } };
    const own = { btc: { perTransaction: "1", daily: "1", monthly: "1" }, sol: { perTransaction: "3", daily: "3", monthly: "3" } };
    expect(effectiveCaps(defaults, own)).toEqual({ btc: own.btc, eth: defaults.eth, sol: own.sol });
    expect(effectiveCaps(defaults, {})).toEqual(defaults);
  });
});

describe("checkCapInputs: Set Limits' caps of one kind", () => {
  const known = new Set(["btc", "eth", "usd"]);
  const set = (per_transaction: string, daily: string, monthly: string) => ({ per_transaction, daily, monthly });

  it("keys by lowercase code and keeps exact decimals", () => {
    expect(checkCapInputs("withdrawal", { BTC: set("1", "2.5", "10.00000001") }, known)).toEqual({ btc: { perTransaction: "1", daily: "2.5", monthly: "10.00000001" } });
    expect(checkCapInputs("transfer", undefined, known)).toEqual({});
    expect(checkCapInputs("transfer", { btc: set("1", "1", "1") }, known)).toEqual({ btc: { perTransaction: "1", daily: "1", monthly: "1" } });
  });

  it.each<[string, Record<string, ReturnType<typeof set>>, string, string]>([
    ["an unknown currency", { xyz: set("1", "2", "3") }, "INVALID_CURRENCY", "withdrawal.xyz"],
    ["per_transaction above daily", { btc: set("3", "2", "10") }, "BAD_REQUEST", "withdrawal.btc"],
    ["daily above monthly", { btc: set("1", "20", "10") }, "BAD_REQUEST", "withdrawal.btc"],
    ["one code in two spellings", { btc: set("1", "2", "3"), BTC: set("1", "2", "3") }, "BAD_REQUEST", "withdrawal.BTC"],
  ])("refuses %s", (_label, input, code, field) => {
    expectDomainError(() => checkCapInputs("withdrawal", input, known), code, field);
  });

  it(`refuses more than ${MAX_CAP_CURRENCIES} currencies with BAD_REQUEST, accepts ${MAX_CAP_CURRENCIES}`, () => {
    const many = new Set(Array.from({ length: MAX_CAP_CURRENCIES + 1 }, (_, i) => `c${i}`));
    const input = (n: number) => Object.fromEntries([...many].slice(0, n).map((c) => [c, set("1", "1", "1")]));
    expect(Object.keys(checkCapInputs("transfer", input(MAX_CAP_CURRENCIES), many))).toHaveLength(MAX_CAP_CURRENCIES);
    expect(expectDomainError(() => checkCapInputs("transfer", input(MAX_CAP_CURRENCIES + 1), many), "BAD_REQUEST", "transfer").message).toContain("32");
  });
});

describe("the allowlist", () => {
  const created = new Date("2026-11-25T10:00:00.000Z");

  it("is PENDING until activates_at, ACTIVE from it on", () => {
    const activatesAt = activationOf(created, 86_400);
    expect(iso(activatesAt)).toBe("2026-11-26T10:00:00.000Z");
    expect(allowlistStatus(activatesAt, new Date("2026-11-26T09:59:59.999Z"))).toBe("PENDING");
    expect(allowlistStatus(activatesAt, new Date("2026-11-26T10:00:00.000Z"))).toBe("ACTIVE");
    expect(allowlistStatus(activationOf(created, 0), created)).toBe("ACTIVE");
  });

  it.each<[string, string]>([
    ["0x9858EfFD232B4033E47d90003D41EC34EcaEda94", "0x9858effd232b4033e47d90003d41ec34ecaeda94"],
    ["0x9858effd232b4033e47d90003d41ec34ecaeda94", "0x9858effd232b4033e47d90003d41ec34ecaeda94"],
    ["TB1Q6RZ28MCFAXTMD6V789L9RRLRUSDPRR9PQCPVKL", "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl"],
    ["TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"],
    ["HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk", "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"],
  ])("compares %s as %s", (address, key) => {
    expect(addressKey(address)).toBe(key);
  });

  it("refuses an absent or cooling address with INVALID_ADDRESS saying which, and until when", () => {
    const address = "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl";
    const now = new Date("2026-11-25T12:00:00.000Z");
    const absent = expectDomainError(() => assertAllowlisted(null, "btc", address, now), "INVALID_ADDRESS", "address");
    expect(absent.message).toMatch(/is not on the user's btc allowlist/);
    const cooling = expectDomainError(() => assertAllowlisted({ activatesAt: activationOf(created, 86_400) }, "btc", address, now), "INVALID_ADDRESS", "address");
    expect(cooling.message).toMatch(/still cooling down until 2026-11-26T10:00:00\.000Z/);
    expect(STATUS_OF.INVALID_ADDRESS).toBe(400);
    expect(() => assertAllowlisted({ activatesAt: created }, "btc", address, now)).not.toThrow();
  });
});
