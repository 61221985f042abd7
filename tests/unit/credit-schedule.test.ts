/**
 * Cut-date schedule and UTC days of the credit cycle (src/domain/credit/schedule.ts; docs/decisions/credit.md "The cycle":
 * cut dates are firstCutDate plus whole multiples of cutFrequency, month/year clamped to the month's
 * last day, biweekly = 14 days; grace end at 00:00 UTC of the cut day + gracePeriod; cycles [prev, cut)).
 */
import { describe, expect, it } from "vitest";
import { addDays, cutDate, daysInCycle, graceEnd, nextCutAfter, nextDailyClose, parseCutFrequency, startOfUtcDay, utcDayNumber, type CutFrequency } from "../../src/domain/credit/schedule.js";

const d = (iso: string): Date => new Date(iso);
const iso = (t: Date): string => t.toISOString();

describe("cutDate", () => {
  const cases: { name: string; first: string; freq: CutFrequency; expected: string[] }[] = [
    { name: "daily", first: "2026-01-31T00:00:00Z", freq: "daily", expected: ["2026-01-31", "2026-02-01", "2026-02-02", "2026-02-03"] },
    { name: "weekly", first: "2026-01-05T00:00:00Z", freq: "weekly", expected: ["2026-01-05", "2026-01-12", "2026-01-19", "2026-01-26"] },
    { name: "biweekly is 14 days", first: "2026-01-01T00:00:00Z", freq: "biweekly", expected: ["2026-01-01", "2026-01-15", "2026-01-29", "2026-02-12"] },
    { name: "month clamps Jan 31 → Feb 28 → Mar 31 (never from the clamped date)", first: "2026-01-31T00:00:00Z", freq: "month", expected: ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31"] },
    { name: "month in a leap year: Jan 31 → Feb 29 → Mar 31", first: "2028-01-31T00:00:00Z", freq: "month", expected: ["2028-01-31", "2028-02-29", "2028-03-31"] },
    { name: "month across the year end", first: "2026-11-30T00:00:00Z", freq: "month", expected: ["2026-11-30", "2026-12-30", "2027-01-30", "2027-02-28", "2027-03-30"] },
    { name: "year keeps the day, Feb 29 clamps to Feb 28", first: "2028-02-29T00:00:00Z", freq: "year", expected: ["2028-02-29", "2029-02-28", "2030-02-28", "2031-02-28", "2032-02-29"] },
    { name: "year", first: "2026-01-31T00:00:00Z", freq: "year", expected: ["2026-01-31", "2027-01-31", "2028-01-31"] },
  ];
  it.each(cases)("$name", ({ first, freq, expected }) => {
    const got = expected.map((_, n) => iso(cutDate(d(first), freq, n)).slice(0, 10));
    expect(got).toEqual(expected);
  });

  it("keeps the time of day of firstCutDate", () => {
    expect(iso(cutDate(d("2026-01-31T15:30:00Z"), "month", 1))).toBe("2026-02-28T15:30:00.000Z");
    expect(iso(cutDate(d("2026-01-31T15:30:00Z"), "weekly", 2))).toBe("2026-02-14T15:30:00.000Z");
  });

  it("refuses a negative or fractional index", () => {
    expect(() => cutDate(d("2026-01-31T00:00:00Z"), "month", -1)).toThrow(RangeError);
    expect(() => cutDate(d("2026-01-31T00:00:00Z"), "month", 1.5)).toThrow(RangeError);
  });
});

describe("nextCutAfter", () => {
  const first = d("2026-01-31T00:00:00Z");
  it.each([
    { at: "2026-01-01T00:00:00Z", freq: "month" as const, index: 0, date: "2026-01-31" },
    { at: "2026-01-30T23:59:59Z", freq: "month" as const, index: 0, date: "2026-01-31" },
    { at: "2026-01-31T00:00:00Z", freq: "month" as const, index: 1, date: "2026-02-28" },
    { at: "2026-03-15T00:00:00Z", freq: "month" as const, index: 2, date: "2026-03-31" },
    { at: "2026-03-31T00:00:00Z", freq: "month" as const, index: 3, date: "2026-04-30" },
    { at: "2027-06-01T00:00:00Z", freq: "year" as const, index: 2, date: "2028-01-31" },
    { at: "2026-02-14T00:00:00Z", freq: "biweekly" as const, index: 2, date: "2026-02-28" },
    { at: "2026-02-13T12:00:00Z", freq: "biweekly" as const, index: 1, date: "2026-02-14" },
  ])("after $at ($freq) → #$index $date", ({ at, freq, index, date }) => {
    const next = nextCutAfter(first, freq, d(at));
    expect(next.index).toBe(index);
    expect(iso(next.date).slice(0, 10)).toBe(date);
  });

  it("agrees with a scan of cutDate for every frequency", () => {
    const freqs: CutFrequency[] = ["daily", "weekly", "biweekly", "month", "year"];
    for (const freq of freqs) {
      for (let k = 0; k < 400; k += 7) {
        const at = addDays(d("2026-01-20T06:00:00Z"), k * (freq === "year" ? 11 : 1));
        let n = 0;
        while (cutDate(first, freq, n).getTime() <= at.getTime()) n += 1;
        expect(nextCutAfter(first, freq, at).index).toBe(n);
      }
    }
  });
});

describe("UTC days, grace end and days in a cycle", () => {
  it("graceEnd is 00:00 UTC of the cut day + gracePeriod days", () => {
    expect(iso(graceEnd(d("2026-01-31T00:00:00Z"), 10))).toBe("2026-02-10T00:00:00.000Z");
    expect(iso(graceEnd(d("2026-01-31T15:30:00Z"), 1))).toBe("2026-02-01T00:00:00.000Z");
    expect(() => graceEnd(d("2026-01-31T00:00:00Z"), 0)).toThrow(RangeError);
  });

  it.each([
    { start: "2026-01-01T00:00:00Z", end: "2026-01-31T00:00:00Z", days: 30 },
    { start: "2026-01-01T10:00:00Z", end: "2026-01-31T00:00:00Z", days: 30 },
    { start: "2026-01-31T00:00:00Z", end: "2026-02-28T00:00:00Z", days: 28 },
    { start: "2026-01-31T15:00:00Z", end: "2026-02-28T15:00:00Z", days: 28 },
    { start: "2026-03-01T00:00:00Z", end: "2026-03-02T00:00:00Z", days: 1 },
  ])("daysInCycle [$start, $end) = $days", ({ start, end, days }) => {
    expect(daysInCycle(d(start), d(end))).toBe(days);
  });

  it("day boundaries are UTC", () => {
    expect(iso(startOfUtcDay(d("2026-03-29T23:59:59.999Z")))).toBe("2026-03-29T00:00:00.000Z");
    expect(iso(nextDailyClose(d("2026-03-29T00:00:00Z")))).toBe("2026-03-30T00:00:00.000Z");
    expect(iso(nextDailyClose(d("2026-03-29T13:00:00Z")))).toBe("2026-03-30T00:00:00.000Z");
    expect(utcDayNumber(d("1969-12-31T23:00:00Z"))).toBe(-1);
  });

  it("parses only the five frequencies", () => {
    expect(parseCutFrequency("biweekly")).toBe("biweekly");
    expect(parseCutFrequency("monthly")).toBeNull();
  });
});
