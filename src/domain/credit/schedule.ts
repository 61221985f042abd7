/**
 * Cut-date schedule and UTC day arithmetic of the credit cycle (docs/decisions/credit.md "The cycle": days are UTC
 * days, a cycle is the half-open span [previous cut, cut), cut dates are `firstCutDate` plus whole
 * multiples of `cutFrequency`; reference "States and transitions › Credit wallet", "Cycle").
 *
 * Every instant is a `Date` read as UTC; no function reads the clock. The SQL batches mirror these
 * formulas with `date_trunc('day', t AT TIME ZONE 'UTC')` and `interval` arithmetic on the anchor
 * (`firstCutDate + n * interval '1 month'` clamps to the month's last day in PostgreSQL exactly as
 * `cutDate` does, since it is computed from the anchor, never from the previous cut).
 */

/** Length of a credit cycle (reference "Credit product": `cutFrequency`). */
export type CutFrequency = "daily" | "weekly" | "biweekly" | "month" | "year";

/** Milliseconds of one UTC day. */
export const DAY_MS = 86_400_000;

/** Days of the fixed-length frequencies (docs/decisions/credit.md "The cycle": `biweekly` is 14 days). */
const FIXED_DAYS: Partial<Record<CutFrequency, number>> = { daily: 1, weekly: 7, biweekly: 14 };

/** Number of the UTC day containing `t`: whole days since 1970-01-01T00:00:00Z (floor, also before 1970). */
export function utcDayNumber(t: Date): number {
  return Math.floor(t.getTime() / DAY_MS);
}

/** 00:00:00.000 UTC of the day containing `t`. */
export function startOfUtcDay(t: Date): Date {
  return new Date(utcDayNumber(t) * DAY_MS);
}

/** `t` plus `days` whole UTC days (86 400 000 ms each; UTC has no daylight saving). */
export function addDays(t: Date, days: number): Date {
  return new Date(t.getTime() + days * DAY_MS);
}

/** Number of days of month `month` (0 = January) of `year`, in the proleptic Gregorian calendar. */
export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/**
 * The `n`-th cut date (n = 0, 1, 2, …; n = 0 is `firstCutDate` itself): `firstCutDate` + n × `frequency`
 * (docs/decisions/credit.md "The cycle"). `daily`/`weekly`/`biweekly` add 1/7/14 × n days; `month` and `year` add n months
 * or years keeping the day of month and the time of day of `firstCutDate`, clamped to the target month's
 * last day — always from the anchor, never from the previous (possibly clamped) cut: with an anchor of
 * Jan 31 the cuts are Jan 31, Feb 28 (29 in a leap year), Mar 31, Apr 30, …
 * @throws RangeError when `n` is not a non-negative integer.
 */
export function cutDate(firstCutDate: Date, frequency: CutFrequency, n: number): Date {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`cut index must be a non-negative integer, got ${String(n)}`);
  const fixed = FIXED_DAYS[frequency];
  if (fixed !== undefined) return addDays(firstCutDate, fixed * n);
  const months = frequency === "month" ? n : 12 * n;
  const total = firstCutDate.getUTCMonth() + months;
  const year = firstCutDate.getUTCFullYear() + Math.floor(total / 12);
  const month = total % 12;
  const day = Math.min(firstCutDate.getUTCDate(), daysInMonth(year, month));
  const timeOfDay = firstCutDate.getTime() - utcDayNumber(firstCutDate) * DAY_MS;
  return new Date(Date.UTC(year, month, day) + timeOfDay);
}

/**
 * Index and date of the first cut strictly after `instant` (a cut at exactly `instant` has already run:
 * see simulate.ts for the order of the steps at one instant). Returns index 0 when `instant` is before
 * `firstCutDate`. Cut dates strictly increase with the index, for every frequency.
 */
export function nextCutAfter(firstCutDate: Date, frequency: CutFrequency, instant: Date): { index: number; date: Date } {
  if (instant.getTime() < firstCutDate.getTime()) return { index: 0, date: firstCutDate };
  const fixed = FIXED_DAYS[frequency];
  let index: number;
  if (fixed !== undefined) {
    index = Math.floor((instant.getTime() - firstCutDate.getTime()) / (fixed * DAY_MS)) + 1;
  } else {
    const months = (instant.getUTCFullYear() - firstCutDate.getUTCFullYear()) * 12 + instant.getUTCMonth() - firstCutDate.getUTCMonth();
    index = Math.max(0, frequency === "month" ? months - 1 : Math.floor(months / 12) - 1);
  }
  while (cutDate(firstCutDate, frequency, index).getTime() <= instant.getTime()) index += 1;
  while (index > 0 && cutDate(firstCutDate, frequency, index - 1).getTime() > instant.getTime()) index -= 1;
  return { index, date: cutDate(firstCutDate, frequency, index) };
}

/**
 * End of the grace period of a cut (docs/decisions/credit.md "The cycle"): 00:00 UTC of the cut's day + `gracePeriod` days.
 * Payments reported in [cut, grace end) count toward the statement's minimum payment; at the grace end
 * the statement's interest is applied and its default is decided.
 * @throws RangeError when `gracePeriodDays` is not a positive integer (reference: `gracePeriod` > 0).
 */
export function graceEnd(cut: Date, gracePeriodDays: number): Date {
  if (!Number.isInteger(gracePeriodDays) || gracePeriodDays < 1) throw new RangeError(`gracePeriod must be a positive integer, got ${String(gracePeriodDays)}`);
  return addDays(startOfUtcDay(cut), gracePeriodDays);
}

/**
 * Days in the cycle [cycleStart, cycleEnd): the number of daily closes (00:00 UTC instants) in
 * (cycleStart, cycleEnd], i.e. `utcDayNumber(cycleEnd) − utcDayNumber(cycleStart)`. A close at the
 * cycle's start belongs to the previous cycle (or, at creation, to no cycle); a close at the cut
 * belongs to the cycle (docs/decisions/credit.md "The cycle": at one instant the daily close runs first, so a cycle's last
 * day counts).
 * The first cycle starts at wallet creation, so the creation day counts as a whole day.
 * Golden vector: created 2026-01-01, cut 2026-01-31T00:00Z → 30 days.
 */
export function daysInCycle(cycleStart: Date, cycleEnd: Date): number {
  return utcDayNumber(cycleEnd) - utcDayNumber(cycleStart);
}

/**
 * The first daily close (00:00 UTC) strictly after `instant` (docs/decisions/credit.md "The cycle": each
 * daily close, at 00:00 UTC, adds the principal the wallet held when the previous day ended).
 */
export function nextDailyClose(instant: Date): Date {
  return new Date((utcDayNumber(instant) + 1) * DAY_MS);
}

/** Parses the `cutFrequency` of a product; returns null for any other value. */
export function parseCutFrequency(value: string): CutFrequency | null {
  return value === "daily" || value === "weekly" || value === "biweekly" || value === "month" || value === "year" ? value : null;
}
