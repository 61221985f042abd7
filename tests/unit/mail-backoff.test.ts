/** Email delivery backoff (src/modules/mail/service.ts): 15 s doubling, capped at 30 min. */
import { describe, expect, it } from "vitest";
import { MAX_DELIVERY_ATTEMPTS, retryDelayMs } from "../../src/modules/mail/service.js";

describe("retryDelayMs", () => {
  it.each([
    [1, 15_000],
    [2, 30_000],
    [3, 60_000],
    [7, 960_000],
    [8, 1_800_000],
    [9, 1_800_000],
  ])("after %i failed attempt(s) waits %i ms", (attempts, ms) => {
    expect(retryDelayMs(attempts)).toBe(ms);
  });

  it("spreads the attempts over about an hour and a half before giving up", () => {
    let total = 0;
    for (let a = 1; a < MAX_DELIVERY_ATTEMPTS; a++) total += retryDelayMs(a);
    expect(total).toBe(5_505_000);
  });
});
