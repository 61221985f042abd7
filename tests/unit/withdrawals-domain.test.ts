/**
 * Pure rules of two-step crypto withdrawals (src/domain/withdrawals.ts; reference: "States and
 * transitions › Withdrawal", the Withdrawal codes; docs/decisions/withdrawals.md "The code"), no database: the code's
 * format, how a confirm attempt is judged and which error each verdict answers, which transitions
 * each status allows, the caps and the UTC periods they count over.
 */
import { describe, expect, it, vi } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { money } from "../../src/domain/money.js";
import {
  assertResendAllowed,
  CODE_DIGITS,
  assertCancellable,
  assertConfirmable,
  assertResendable,
  codeError,
  judgeCode,
  newConfirmationCode,
  type CodeVerdict,
  type WithdrawalStatus,
} from "../../src/domain/withdrawals.js";
import { assertWithinCaps as assertMovementWithinCaps, windowsAt } from "../../src/domain/limits.js";
import type { Money } from "../../src/domain/money.js";
import { STATUS_OF } from "../../src/http/errors.js";
import { expectDomainError } from "../support/assertions.js";

/** Withdrawal caps as these tests write them; the rule is src/domain/limits.ts `assertWithinCaps` with kind `withdrawal`. */
interface Caps {
  perWithdrawal: string;
  daily: string;
  monthly: string;
}

function assertWithinCaps(amount: Money, caps: Caps | undefined, usedToday: Money, usedThisMonth: Money, currency = "this currency", now = new Date()): void {
  if (!caps) return;
  const set = { perTransaction: caps.perWithdrawal, daily: caps.daily, monthly: caps.monthly };
  assertMovementWithinCaps({ kind: "withdrawal", currency, amount }, set, { today: usedToday.toFixed(), month: usedThisMonth.toFixed() }, windowsAt(now));
}

/** Start of the UTC day and of the UTC month of `now`. */
function capPeriods(now: Date): { dayStart: Date; monthStart: Date } {
  const { dayStart, monthStart } = windowsAt(now);
  return { dayStart, monthStart };
}

/** Lets one test force the CSPRNG's answer; every other call goes to the real `randomInt`. */
const rng = vi.hoisted(() => ({ forced: undefined as number | undefined, calls: [] as unknown[][] }));
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  const randomInt = (...args: unknown[]): number => {
    rng.calls.push(args);
    if (rng.forced !== undefined) return rng.forced;
    return (actual.randomInt as (min: number, max: number) => number)(args[0] as number, args[1] as number);
  };
  return { ...actual, default: { ...actual, randomInt }, randomInt };
});


describe("newConfirmationCode", () => {
  it("has 6 digits (CODE_DIGITS)", () => {
    expect(CODE_DIGITS).toBe(6);
    expect(newConfirmationCode()).toMatch(/^\d{6}$/);
  });

  it("is always exactly 6 decimal digits, keeps leading zeros, and spreads over the whole range (5000 samples)", () => {
    const samples = Array.from({ length: 5000 }, () => newConfirmationCode());
    for (const code of samples) expect(code).toMatch(/^[0-9]{6}$/);
    // about 10 % start with 0; with 5000 samples, none doing so would be a broken generator
    expect(samples.filter((c) => c.startsWith("0")).length).toBeGreaterThan(250);
    expect(samples.filter((c) => c.startsWith("00")).length).toBeGreaterThan(0);
    // every leading digit occurs
    expect(new Set(samples.map((c) => c[0])).size).toBe(10);
    // 5000 draws from 10^6 values: collisions are rare (expected ≈ 12)
    expect(new Set(samples).size).toBeGreaterThan(4900);
  });

  it("pads small draws of the CSPRNG with zeros and draws from [0, 10^6)", () => {
    rng.calls.length = 0;
    try {
      rng.forced = 0;
      expect(newConfirmationCode()).toBe("000000");
      rng.forced = 42;
      expect(newConfirmationCode()).toBe("000042");
      rng.forced = 42917;
      expect(newConfirmationCode()).toBe("042917");
      rng.forced = 999_999;
      expect(newConfirmationCode()).toBe("999999");
    } finally {
      rng.forced = undefined;
    }
    // node:crypto randomInt(min, max) draws min ≤ n < max: every 6-digit code is possible
    for (const args of rng.calls) expect(args.slice(0, 2)).toEqual([0, 1_000_000]);
  });
});

describe("judgeCode: blocked before expired before wrong / right", () => {
  const now = new Date("2026-03-10T12:00:00.000Z");
  const later = new Date(now.getTime() + 60_000);
  const earlier = new Date(now.getTime() - 1);
  const max = 5;

  it.each<[string, number, Date, boolean, CodeVerdict]>([
    ["fresh, right", 0, later, true, "right"],
    ["fresh, wrong", 0, later, false, "wrong"],
    ["one attempt left, right", max - 1, later, true, "right"],
    ["one attempt left, wrong", max - 1, later, false, "wrong"],
    ["expired a millisecond ago, right", 0, earlier, true, "expired"],
    ["expired, wrong", 0, earlier, false, "expired"],
    ["expiring exactly now, right", 0, now, true, "expired"],
    ["one millisecond left, right", 0, new Date(now.getTime() + 1), true, "right"],
    ["blocked, right", max, later, true, "blocked"],
    ["blocked, wrong", max, later, false, "blocked"],
    ["blocked and expired, right", max, earlier, true, "blocked"],
    ["blocked and expired, wrong", max, earlier, false, "blocked"],
    ["beyond the limit", max + 3, later, true, "blocked"],
    ["expired with attempts left", max - 1, earlier, false, "expired"],
  ])("%s → %s", (_label, attempts, expiresAt, matches, verdict) => {
    expect(judgeCode({ attempts, failuresTotal: attempts, expiresAt }, now, { maxAttempts: max, maxTotalAttempts: 1000 }, matches)).toBe(verdict);
  });

  it("follows the configured maximum", () => {
    const expiresAt = new Date(now.getTime() + 1000);
    const limits = (maxAttempts: number) => ({ maxAttempts, maxTotalAttempts: 1000 });
    expect(judgeCode({ attempts: 1, failuresTotal: 1, expiresAt }, now, limits(1), true)).toBe("blocked");
    expect(judgeCode({ attempts: 0, failuresTotal: 0, expiresAt }, now, limits(1), true)).toBe("right");
    expect(judgeCode({ attempts: 99, failuresTotal: 99, expiresAt }, now, limits(100), false)).toBe("wrong");
    expect(judgeCode({ attempts: 100, failuresTotal: 100, expiresAt }, now, limits(100), true)).toBe("blocked");
  });

  it.each<[string, number, number, boolean, CodeVerdict]>([
    ["the wrong code that reaches the life-time limit", 2, 14, false, "exhausted"],
    ["a wrong code one below it", 2, 13, false, "wrong"],
    ["the right code at the last chance", 2, 14, true, "right"],
    ["a blocked code never counts toward it", 5, 14, false, "blocked"],
    ["an expired code never counts toward it", 0, 14, false, "expired"],
  ])("over the withdrawal's life: %s → %s", (label, attempts, failuresTotal, matches, verdict) => {
    const expiresAt = label.includes("expired") ? new Date(now.getTime() - 1) : new Date(now.getTime() + 1000);
    expect(judgeCode({ attempts, failuresTotal, expiresAt }, now, { maxAttempts: 5, maxTotalAttempts: 15 }, matches)).toBe(verdict);
  });
});

describe("assertResendAllowed (WITHDRAWAL_CODE_MAX_RESENDS, WITHDRAWAL_CODE_RESEND_INTERVAL_S)", () => {
  const now = new Date("2026-11-22T12:00:00.000Z");
  const limits = { maxResends: 3, resendIntervalS: 30 };
  const ago = (s: number) => new Date(now.getTime() - s * 1000);

  it("allows a resend 30 s after the previous code, up to the third", () => {
    expect(() => assertResendAllowed({ resends: 0, issuedAt: ago(30) }, now, limits)).not.toThrow();
    expect(() => assertResendAllowed({ resends: 2, issuedAt: ago(3600) }, now, limits)).not.toThrow();
  });

  it("answers 429 RATE_LIMIT_EXCEEDED with the seconds left within the interval", () => {
    const error = catchError(() => assertResendAllowed({ resends: 0, issuedAt: ago(10.5) }, now, limits));
    expect(error.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(STATUS_OF[error.code]).toBe(429);
    expect(error.retryAfterS).toBe(20);
  });

  it("answers 403 WITHDRAWAL_BLOCKED once the resends are used up, however long ago", () => {
    const error = catchError(() => assertResendAllowed({ resends: 3, issuedAt: ago(86_400) }, now, limits));
    expect(error.code).toBe("WITHDRAWAL_BLOCKED");
    expect(STATUS_OF[error.code]).toBe(403);
    expect(error.message).toMatch(/cancel/i);
  });
});

function catchError(fn: () => void): DomainError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("expected a DomainError");
}

describe("codeError", () => {
  it.each<[Exclude<CodeVerdict, "right">, string, number, string | undefined]>([
    ["blocked", "WITHDRAWAL_BLOCKED", 403, undefined],
    ["exhausted", "WITHDRAWAL_BLOCKED", 403, undefined],
    ["expired", "CONFIRMATION_CODE_EXPIRED", 400, "code"],
    ["wrong", "CONFIRMATION_CODE_INVALID", 400, "code"],
  ])("%s → %s (%i)", (verdict, code, status, field) => {
    const error = codeError(verdict, { maxAttempts: 5, maxTotalAttempts: 15 });
    expect(error).toBeInstanceOf(DomainError);
    expect(error.code).toBe(code);
    expect(STATUS_OF[error.code]).toBe(status);
    expect(error.field).toBe(field);
    expect(error.message.length).toBeGreaterThan(0);
  });

  it("names the attempt limit and Resend Code when blocked", () => {
    const error = codeError("blocked", { maxAttempts: 7, maxTotalAttempts: 15 });
    expect(error.message).toContain("7");
    expect(error.message).toMatch(/resend/i);
  });

  it("says the withdrawal was cancelled when the life-time limit is reached", () => {
    const error = codeError("exhausted", { maxAttempts: 5, maxTotalAttempts: 15 });
    expect(error.message).toContain("15");
    expect(error.message).toMatch(/cancelled/);
  });
});

describe("state functions: only PENDING moves (reference: States and transitions › Withdrawal)", () => {
  const functions = { assertConfirmable, assertResendable, assertCancellable } as const;
  type Fn = keyof typeof functions;

  it.each<[Fn, WithdrawalStatus, string | null]>([
    ["assertConfirmable", "PENDING", null],
    ["assertConfirmable", "COMPLETED", "ALREADY_CONFIRMED"],
    ["assertConfirmable", "CANCELLED", "BAD_REQUEST"],
    ["assertResendable", "PENDING", null],
    ["assertResendable", "COMPLETED", "ALREADY_CONFIRMED"],
    ["assertResendable", "CANCELLED", "BAD_REQUEST"],
    ["assertCancellable", "PENDING", null],
    ["assertCancellable", "COMPLETED", "ALREADY_CONFIRMED"],
    ["assertCancellable", "CANCELLED", "BAD_REQUEST"],
  ])("%s(%s) → %s", (fn, status, code) => {
    if (code === null) {
      expect(() => functions[fn](status)).not.toThrow();
    } else {
      const error = expectDomainError(() => functions[fn](status), code);
      // every refused transition is a 400 (only blocked codes are 403)
      expect(STATUS_OF[error.code]).toBe(400);
    }
  });

  it("says a completed withdrawal cannot be reversed", () => {
    expect(expectDomainError(() => assertCancellable("COMPLETED"), "ALREADY_CONFIRMED").message).toMatch(/revers/i);
  });
});

describe("assertWithinCaps", () => {
  const caps: Caps = { perWithdrawal: "1", daily: "1.5", monthly: "2" };
  const m = money;

  it("lets anything through for a currency without caps", () => {
    expect(() => assertWithinCaps(m("1000000000"), undefined, m("999999"), m("999999"))).not.toThrow();
  });

  it.each<[string, string, string, string, string | null]>([
    // amount, used today, used this month → error or null
    ["a small withdrawal", "0.1", "0", "0", null],
    ["exactly the per-withdrawal cap", "1", "0", "0", null],
    ["one satoshi over the per-withdrawal cap", "1.00000001", "0", "0", "WITHDRAWAL_LIMIT_EXCEEDED"],
    ["reaching the daily cap exactly", "0.5", "1", "1", null],
    ["one satoshi over the daily cap", "0.50000001", "1", "1", "DAILY_LIMIT_EXCEEDED"],
    ["reaching the monthly cap exactly", "0.5", "0", "1.5", null],
    ["one satoshi over the monthly cap", "0.50000001", "0", "1.5", "MONTHLY_LIMIT_EXCEEDED"],
    ["per-withdrawal before daily", "1.2", "1.5", "2", "WITHDRAWAL_LIMIT_EXCEEDED"],
    ["daily before monthly", "0.6", "1", "2", "DAILY_LIMIT_EXCEEDED"],
    ["nothing left today", "0.00000001", "1.5", "1.5", "DAILY_LIMIT_EXCEEDED"],
    ["nothing left this month", "0.00000001", "0", "2", "MONTHLY_LIMIT_EXCEEDED"],
  ])("%s", (_label, amount, today, month, code) => {
    const run = () => assertWithinCaps(m(amount), caps, m(today), m(month));
    if (code === null) expect(run).not.toThrow();
    else {
      const error = expectDomainError(run, code, "amount");
      expect(STATUS_OF[error.code]).toBe(400);
    }
  });

  it("compares decimals exactly (0.1 + 0.2 = 0.3 is within a 0.3 cap)", () => {
    const tight: Caps = { perWithdrawal: "0.3", daily: "0.3", monthly: "0.3" };
    expect(() => assertWithinCaps(m("0.2"), tight, m("0.1"), m("0.1"))).not.toThrow();
    expectDomainError(() => assertWithinCaps(m("0.2"), tight, m("0.100000000000000001"), m("0.1")), "DAILY_LIMIT_EXCEEDED");
  });

  it("names the cap in its message", () => {
    expect(expectDomainError(() => assertWithinCaps(m("3"), caps, m("0"), m("0")), "WITHDRAWAL_LIMIT_EXCEEDED").message).toContain("1");
    expect(expectDomainError(() => assertWithinCaps(m("1"), caps, m("1"), m("1")), "DAILY_LIMIT_EXCEEDED").message).toContain("1.5");
    expect(expectDomainError(() => assertWithinCaps(m("1"), { ...caps, daily: "9" }, m("0"), m("1.5")), "MONTHLY_LIMIT_EXCEEDED").message).toContain("2");
  });
});

describe("capPeriods: UTC day and UTC month", () => {
  it.each<[string, string, string]>([
    ["2026-03-10T12:34:56.789Z", "2026-03-10T00:00:00.000Z", "2026-03-01T00:00:00.000Z"],
    ["2026-03-10T00:00:00.000Z", "2026-03-10T00:00:00.000Z", "2026-03-01T00:00:00.000Z"],
    ["2026-03-09T23:59:59.999Z", "2026-03-09T00:00:00.000Z", "2026-03-01T00:00:00.000Z"],
    ["2026-03-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"],
    ["2026-02-28T23:59:59.999Z", "2026-02-28T00:00:00.000Z", "2026-02-01T00:00:00.000Z"],
    ["2028-02-29T18:00:00.000Z", "2028-02-29T00:00:00.000Z", "2028-02-01T00:00:00.000Z"],
    ["2026-12-31T23:59:59.999Z", "2026-12-31T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
    ["2027-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
  ])("%s → day %s, month %s", (now, day, month) => {
    const { dayStart, monthStart } = capPeriods(new Date(now));
    expect(dayStart.toISOString()).toBe(day);
    expect(monthStart.toISOString()).toBe(month);
  });

  it("uses UTC, not the instant's local date in another zone's offset (a +14:00 morning is the previous UTC day)", () => {
    // 2026-03-01T05:00+14:00 is 2026-02-28T15:00Z: still February in UTC
    const { dayStart, monthStart } = capPeriods(new Date("2026-03-01T05:00:00+14:00"));
    expect(dayStart.toISOString()).toBe("2026-02-28T00:00:00.000Z");
    expect(monthStart.toISOString()).toBe("2026-02-01T00:00:00.000Z");
  });

  it("never starts after now, and the day never starts before the month", () => {
    for (let i = 0; i < 500; i++) {
      const now = new Date(Date.UTC(2020, 0, 1) + Math.floor(Math.random() * 10 * 365 * 86_400_000));
      const { dayStart, monthStart } = capPeriods(now);
      expect(dayStart.getTime()).toBeLessThanOrEqual(now.getTime());
      expect(now.getTime() - dayStart.getTime()).toBeLessThan(86_400_000);
      expect(monthStart.getTime()).toBeLessThanOrEqual(dayStart.getTime());
      expect(monthStart.getUTCDate()).toBe(1);
      expect(dayStart.getUTCHours() + dayStart.getUTCMinutes() + dayStart.getUTCSeconds() + dayStart.getUTCMilliseconds()).toBe(0);
    }
  });
});
