/**
 * Money arithmetic of the custody ledger: one decimal.js configuration for the whole project, so no
 * amount is ever rounded by accident. Amounts are stored in `numeric(38,18)` columns and leave the
 * service as strings with exactly 8 decimals (reference: "Wallet balance").
 */
import { Decimal } from "decimal.js";

/**
 * The project's Decimal: 60 significant digits (numeric(38,18) holds at most 38), half-even
 * rounding where rounding is asked for explicitly, and no exponent notation in `toString()`.
 */
export const Money = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -40, toExpPos: 60 });
export type Money = Decimal;

/** Decimals of every amount the API prints (reference: "Balance amounts: strings with 8 decimals"). */
export const API_DECIMALS = 8;

/** Parses a stored or received amount (string, number or Decimal) exactly. */
export function money(value: Decimal.Value): Money {
  return new Money(value);
}

/** `amount` as the API prints it: exactly 8 decimals (e.g. `"1.50000000"`). */
export function format8(amount: Decimal.Value): string {
  return new Money(amount).toFixed(API_DECIMALS);
}

/** `amount` as a JSON number, for the fields the reference types as numbers (transactions, currencies). */
export function toNumber(amount: Decimal.Value): number {
  return new Money(amount).toNumber();
}

/** Number of decimal places `amount` needs (0 for integers). */
export function decimalsOf(amount: Decimal.Value): number {
  return new Money(amount).decimalPlaces();
}
