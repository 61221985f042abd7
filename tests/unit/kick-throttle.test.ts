/**
 * Kicks of a job coalesced per name (src/jobs/kick-throttle.ts; docs/outbox.md "Jobs"): the first
 * kick of a window starts the job at once, the later ones become one trailing start at the window's
 * end, names are independent, and `stop` drops a pending trailing start.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { KickThrottle } from "../../src/jobs/kick-throttle.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("KickThrottle", () => {
  it("starts at once, folds the window's later kicks into one start at its end, then starts at once again", () => {
    const started: [string, number][] = [];
    const throttle = new KickThrottle((name) => started.push([name, Date.now()]), 100);
    const t0 = Date.now();
    throttle.kick("deliver");
    for (let i = 0; i < 50; i++) throttle.kick("deliver");
    expect(started).toEqual([["deliver", t0]]);
    vi.advanceTimersByTime(99);
    expect(started).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(started).toEqual([["deliver", t0], ["deliver", t0 + 100]]);
    vi.advanceTimersByTime(500);
    expect(started).toHaveLength(2);
    throttle.kick("deliver");
    expect(started).toHaveLength(3);
  });

  it("keeps names apart, and stop drops the pending trailing start", () => {
    const started: string[] = [];
    const throttle = new KickThrottle((name) => started.push(name), 100);
    throttle.kick("a");
    throttle.kick("b");
    throttle.kick("a");
    expect(started).toEqual(["a", "b"]);
    throttle.stop();
    vi.advanceTimersByTime(1000);
    expect(started).toEqual(["a", "b"]);
  });
});
