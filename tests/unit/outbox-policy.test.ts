/**
 * The outbox's pure rules (src/domain/outbox.ts; docs/outbox.md "Retry and disable"): one retry
 * policy type with two named policies (the notifications': ×3 from `WEBHOOK_RETRY_BASE_S`, at most
 * 8 h, ±20 % jitter, 17 attempts; the email outbox's: 15 s doubling, at most 30 min, 10 attempts),
 * the lease of a claim, and the verdict of an answer (2xx, 410, anything else).
 */
import { describe, expect, it } from "vitest";
import {
  MAIL_RETRY_POLICY,
  NOTIFICATION_MAX_ATTEMPTS,
  NOTIFICATION_MAX_DELAY_MS,
  deliveryLeaseMs,
  givesUp,
  judgeAttempt,
  notificationRetryPolicy,
  retryDelayMs,
} from "../../src/domain/outbox.js";

describe("the notification retry policy", () => {
  const at = (failed: number, baseMs: number, random: number) => retryDelayMs(notificationRetryPolicy(baseMs), failed, random);

  it("triples from the base, is capped at 8 h, and jitters by ±20 %", () => {
    const base = 5_000;
    expect([1, 2, 3, 4].map((n) => at(n, base, 0.5))).toEqual([5_000, 15_000, 45_000, 135_000]);
    expect(at(20, base, 0.5)).toBe(NOTIFICATION_MAX_DELAY_MS);
    expect(at(1, base, 0)).toBe(4_000);
    expect(at(1, base, 0.999)).toBe(5_998);
    for (let i = 0; i < 200; i++) {
      const delay = at(3, base, Math.random());
      expect(delay).toBeGreaterThanOrEqual(36_000);
      expect(delay).toBeLessThanOrEqual(54_000);
    }
  });

  it("spreads the attempts of a delivery over about three days with the default base", () => {
    const total = Array.from({ length: NOTIFICATION_MAX_ATTEMPTS - 1 }, (_, i) => at(i + 1, 5_000, 0.5)).reduce((a, b) => a + b, 0);
    const days = total / 86_400_000;
    expect(days).toBeGreaterThan(2.5);
    expect(days).toBeLessThan(3.5);
    // with the extreme jitters too
    const low = Array.from({ length: NOTIFICATION_MAX_ATTEMPTS - 1 }, (_, i) => at(i + 1, 5_000, 0)).reduce((a, b) => a + b, 0);
    const high = Array.from({ length: NOTIFICATION_MAX_ATTEMPTS - 1 }, (_, i) => at(i + 1, 5_000, 0.999)).reduce((a, b) => a + b, 0);
    expect(low / 86_400_000).toBeGreaterThan(2);
    expect(high / 86_400_000).toBeLessThan(4);
  });

  it("gives up after the 17th failed attempt", () => {
    const policy = notificationRetryPolicy(5_000);
    expect(policy.maxAttempts).toBe(17);
    expect(givesUp(policy, 16)).toBe(false);
    expect(givesUp(policy, 17)).toBe(true);
  });
});

describe("the email retry policy", () => {
  it.each([
    [1, 15_000],
    [2, 30_000],
    [3, 60_000],
    [7, 960_000],
    [8, 1_800_000],
    [9, 1_800_000],
  ])("after %i failed attempt(s) waits %i ms, whatever the random draw", (attempts, ms) => {
    expect(retryDelayMs(MAIL_RETRY_POLICY, attempts, 0)).toBe(ms);
    expect(retryDelayMs(MAIL_RETRY_POLICY, attempts, 0.999)).toBe(ms);
  });

  it("spreads the attempts over about an hour and a half before giving up", () => {
    let total = 0;
    for (let a = 1; a < MAIL_RETRY_POLICY.maxAttempts; a++) total += retryDelayMs(MAIL_RETRY_POLICY, a, 0.5);
    expect(total).toBe(5_505_000);
    expect(givesUp(MAIL_RETRY_POLICY, 9)).toBe(false);
    expect(givesUp(MAIL_RETRY_POLICY, 10)).toBe(true);
  });
});

describe("the lease of a claimed notification", () => {
  it("is three attempt timeouts plus 5 s", () => {
    expect(deliveryLeaseMs(10_000)).toBe(35_000);
    expect(deliveryLeaseMs(1_000)).toBe(8_000);
  });
});

describe("judgeAttempt", () => {
  it.each([
    [200, "succeeded"], [204, "succeeded"], [299, "succeeded"],
    [410, "disable"],
    [301, "retry"], [302, "retry"], [400, "retry"], [404, "retry"], [429, "retry"], [500, "retry"], [503, "retry"], [null, "retry"],
  ] as const)("HTTP %s → %s", (status, verdict) => {
    expect(judgeAttempt(status)).toBe(verdict);
  });
});
