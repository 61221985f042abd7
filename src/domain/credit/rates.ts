/**
 * Percentages as the credit API takes them (spec/credit/products.tsp "Bounds", spec/credit/wallets.tsp
 * ChangeInterestCreditCapital): at most {@link RATE_DECIMALS} decimal places, stored `numeric(9,4)`,
 * judged on the number exactly as the client wrote it (docs/security.md "Money stays exact"): a
 * double drops digits (`1.00000000000000001` parses as `1`), so the HTTP layer hands over the source
 * text of such a number ({@link ExactRate}) and the rule counts every digit the client sent.
 */
import { Decimal } from "decimal.js";
import type { FieldProblem } from "../errors.js";

/** Decimal places a percentage may carry (spec/credit/products.tsp, "Bounds"). */
export const RATE_DECIMALS = 4;

/**
 * A percentage as the client wrote it: the parsed number, or its exact decimal text (e.g.
 * `"2.00000000000000001"`) when a double could not hold every digit.
 */
export type ExactRate = number | string;

/** Type `T` with its number fields `K` taken as {@link ExactRate} (optional fields stay optional, other fields as they are). */
export type WithExactRates<T, K extends keyof T> = { [P in keyof T]: P extends K ? ExactRate | Exclude<T[P], number> : T[P] };

/** Decimal places of `value`, or Infinity when it is not a decimal number. */
export function decimalPlaces(value: ExactRate): number {
  try {
    return new Decimal(value).decimalPlaces();
  } catch {
    return Infinity;
  }
}

/**
 * Field problems of the percentages `fields` of `values` beyond the schema: more than
 * {@link RATE_DECIMALS} decimal places. Fields absent from `values` are skipped.
 * @returns one problem per offending field, named as in `fields` (camelCase); empty when all are fine.
 */
export function rateProblems(values: object, fields: readonly string[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const field of fields) {
    if (!(field in values)) continue;
    if (decimalPlaces((values as Record<string, ExactRate>)[field] as ExactRate) > RATE_DECIMALS) {
      problems.push({ field, message: `${field} must have at most ${RATE_DECIMALS} decimal places.` });
    }
  }
  return problems;
}

/** A percentage as stored in `numeric`: its exact decimal text (`new Decimal(value).toFixed()`). */
export function exactRateText(value: ExactRate): string {
  return new Decimal(value).toFixed();
}
