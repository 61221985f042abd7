/**
 * Dates and instants read from requests are real ones (docs/security.md, "Paths, queries and
 * validation answers"): RFC 3339 allows a leap second (`23:59:60`) and year `0000`, and JavaScript
 * cannot represent every year RFC 3339 can write, but none of these is an instant the service can
 * store or compute with. Pure; no I/O.
 */

/** RFC 3339 `full-date`: `YYYY-MM-DD`. */
const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** RFC 3339 `date-time` with seconds below 60: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt]([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):?([0-5]\d))$/;

/** Days of `month` (1–12) in `year` (proleptic Gregorian). */
function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Whether year, month and day name a calendar day of years 0001–9999. */
function isCalendarDay(year: number, month: number, day: number): boolean {
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month);
}

/**
 * Whether `text` is an RFC 3339 `full-date` (OpenAPI `format: date`) of a real day: years 0001 to
 * 9999, months 01–12, a day the month has. `0000-01-01` and `2026-02-30` are not.
 */
export function isRealDate(text: string): boolean {
  const m = FULL_DATE.exec(text);
  return m !== null && isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

/**
 * Whether `text` is an RFC 3339 `date-time` (OpenAPI `format: date-time`) of an instant the service
 * can represent: a real day of years 0001–9999, seconds 00–59 (a leap second `…:60` is refused:
 * JavaScript and PostgreSQL have none), an offset, and a value `Date` can hold.
 */
export function isRealInstant(text: string): boolean {
  const m = DATE_TIME.exec(text);
  return m !== null && isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3])) && Number.isFinite(Date.parse(text));
}
