/**
 * Typed outcomes of the credit engine: every rule that can refuse returns a `Refusal` instead of
 * throwing, so the HTTP layer maps each `code` to its status (docs/decisions/credit.md "Wallets", reference "Credit core
 * error envelope") and the SQL batches and the test clock can compare refusals as plain data.
 * Thrown errors are kept for programming errors only (an amount that is not a safe integer).
 */

/**
 * Why the engine refused an operation. Suggested HTTP mapping (reference "Credit core error
 * envelope"; spec/credit/charges.tsp, payments.tsp, wallets.tsp):
 * - 422 `VALIDATION_ERROR`: `AMOUNT_NOT_POSITIVE`, `PAYMENT_EXCEEDS_DEBT`, `CHARGE_EXCEEDS_AVAILABLE`
 *   (field `amount`), `LIMIT_NOT_RAISED` (field `limit`), `FIRST_CUT_NOT_AFTER_CREATION` (field `firstCutDate`);
 * - 409 `CONFLICT`: `WALLET_BLOCKED`, `WALLET_IN_DEFAULT`, `WALLET_DISSOLVED`, `WALLET_EXPIRED`,
 *   `INVALID_TRANSITION` (block/unblock/dissolve from a state that does not allow it),
 *   `CLOCK_BACKWARDS` (the instant passed in is before the wallet's clock), `WALLET_SET_ASIDE` (the
 *   wallet's cycle steps stopped because an amount would leave ±(2^53 − 1) cents; docs/security.md
 *   "Money stays exact"; raised by the service, not by the engine), `AUTHORIZATION_NOT_OPEN` (capture
 *   or void of an authorization that is not an open approval), `CAPTURE_EXCEEDS_AUTHORIZED`
 *   (docs/decisions/credit.md "Authorizations"), `AUTHORIZATION_NOT_CAPTURED` and
 *   `REFUND_EXCEEDS_CAPTURED` (a refund of an authorization that is not `captured`, or above its
 *   captured amount less earlier refunds; raised by the service, which reads the authorization:
 *   docs/decisions/cards.md "Refunds").
 */
export type RefusalCode =
  | "AMOUNT_NOT_POSITIVE"
  | "PAYMENT_EXCEEDS_DEBT"
  | "CHARGE_EXCEEDS_AVAILABLE"
  | "LIMIT_NOT_RAISED"
  | "FIRST_CUT_NOT_AFTER_CREATION"
  | "WALLET_BLOCKED"
  | "WALLET_IN_DEFAULT"
  | "WALLET_DISSOLVED"
  | "WALLET_EXPIRED"
  | "INVALID_TRANSITION"
  | "CLOCK_BACKWARDS"
  | "WALLET_SET_ASIDE"
  | "AUTHORIZATION_NOT_OPEN"
  | "CAPTURE_EXCEEDS_AUTHORIZED"
  | "AUTHORIZATION_NOT_CAPTURED"
  | "REFUND_EXCEEDS_CAPTURED";

/** A refused operation: `code` (see `RefusalCode` for its HTTP mapping), a human-readable `message`, and the camelCase request `field` on 422s. */
export interface Refusal {
  ok: false;
  code: RefusalCode;
  message: string;
  field?: string;
}

/** An accepted operation with its result `value`. */
export interface Accepted<T> {
  ok: true;
  value: T;
}

/** Result of a rule that may refuse: `{ok: true, value}` or a `Refusal`. */
export type Outcome<T> = Accepted<T> | Refusal;

/** Builds an `Accepted<T>`. */
export function accept<T>(value: T): Accepted<T> {
  return { ok: true, value };
}

/** Builds a `Refusal`; `field` names the offending request field (camelCase) for 422 refusals. */
export function refuse(code: RefusalCode, message: string, field?: string): Refusal {
  return field === undefined ? { ok: false, code, message } : { ok: false, code, message, field };
}

/**
 * Checks that `value` is a whole number of cents that is a safe integer (|value| < 2⁵³) and returns it.
 * Money is integer cents held in JS numbers throughout the engine (the spec's `int64` fields; limits
 * below 10¹² cents keep every sum of daily balances of a year far below 2⁵³).
 * @throws RangeError for a non-integer or unsafe value (a programming error, never a refusal).
 */
export function cents(value: number, what = "amount"): number {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${what} must be a safe integer number of cents, got ${String(value)}`);
  return value;
}
