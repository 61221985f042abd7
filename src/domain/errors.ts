/**
 * Typed domain errors. Services throw these; the HTTP layer maps each `code` to a status in one
 * place (src/http/errors.ts). Codes are the reference's ("Codes of the platform API"); the union
 * below is the contract's `ErrorCode`, and src/http/errors.ts fails to compile when the two differ,
 * so a code the spec does not list cannot be thrown.
 */

/** Every platform error code: the `ErrorCode` union of spec/common/platform-envelope.tsp, in its order. */
export type ErrorCode =
  | "UNAUTHORIZED" | "FORBIDDEN" | "UNPROCESSABLE_ENTITY" | "BAD_REQUEST" | "USER_NOT_FOUND"
  | "RESOURCE_NOT_FOUND" | "EMAIL_ALREADY_EXISTS" | "PHONE_ALREADY_EXISTS" | "RESOURCE_CONFLICT"
  | "INVALID_USER_TYPE" | "INVALID_ACCOUNT_TYPE" | "INVALID_ACCOUNT_ROLE" | "INVALID_ACCOUNT_PURPOSE"
  | "INVALID_AGE" | "CANNOT_DELETE_ACTIVE_USER" | "CANNOT_UPDATE_DELETED_USER"
  | "CLIENT_NO_SUPPLIER_ID" | "TOKEN_GENERATION_FAILED" | "CUSTOMER_NOT_FOUND"
  | "CUSTOMER_ALREADY_EXISTS" | "CREDENTIAL_NOT_FOUND" | "WALLET_NOT_FOUND" | "ADDRESS_NOT_FOUND"
  | "WALLET_INACTIVE" | "WALLET_LOCKED" | "WALLET_SUSPENDED" | "INVALID_WALLET_ID"
  | "WALLET_NAME_REQUIRED" | "WALLET_NAME_MAX_LENGTH" | "INVALID_CURRENCY" | "UNSUPPORTED_CURRENCY"
  | "CURRENCY_NOT_ACTIVE" | "ADDRESS_ALREADY_EXISTS" | "ADDRESS_GENERATION_FAILED"
  | "INSUFFICIENT_BALANCE" | "SAME_WALLET_TRANSFER" | "AMOUNT_MUST_BE_POSITIVE" | "AMOUNT_TOO_SMALL"
  | "TRANSFER_LIMIT_EXCEEDED" | "DAILY_LIMIT_EXCEEDED" | "MONTHLY_LIMIT_EXCEEDED" | "QUOTE_NOT_FOUND"
  | "QUOTE_EXPIRED" | "QUOTE_INVALID" | "INVALID_CURRENCY_PAIR" | "PAIR_NOT_AVAILABLE" | "INVALID_SIDE"
  | "QUANTITY_REQUIRED" | "QUANTITY_MUST_BE_POSITIVE" | "MINIMUM_ORDER_NOT_MET"
  | "MAXIMUM_ORDER_EXCEEDED" | "MARKET_CLOSED" | "LIQUIDITY_INSUFFICIENT" | "PRICE_CHANGED"
  | "ORDER_FAILED" | "WITHDRAWAL_NOT_FOUND" | "INVALID_CRYPTO_ADDRESS" | "INVALID_ADDRESS"
  | "INVALID_AMOUNT" | "WITHDRAWAL_LIMIT_EXCEEDED" | "MINIMUM_AMOUNT_NOT_MET"
  | "CONFIRMATION_CODE_INVALID" | "CONFIRMATION_CODE_EXPIRED" | "ALREADY_CONFIRMED"
  | "INVALID_WEBHOOK_SIGNATURE" | "PIN_NOTIFICATION_FAILED" | "BANK_ACCOUNT_REQUIRED"
  | "INVALID_BANK_ACCOUNT" | "CRYPTO_WITHDRAWAL_FAILED" | "FIAT_WITHDRAWAL_FAILED"
  | "WITHDRAWAL_BLOCKED" | "IDEMPOTENCY_KEY_REUSED" | "POLLER_NOT_FOUND" | "POLLER_ALREADY_EXISTS"
  | "WEBHOOK_NOT_FOUND" | "NOT_FOUND" | "INTERNAL_SERVER_ERROR" | "NOT_IMPLEMENTED" | "BAD_GATEWAY"
  | "SERVICE_UNAVAILABLE" | "GATEWAY_TIMEOUT" | "RATE_LIMIT_EXCEEDED" | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE" | "METHOD_NOT_ALLOWED";

/** One invalid field of a validation failure: dotted path in the request's naming, and why. */
export interface FieldProblem {
  field: string;
  message: string;
}

/** A rule of the product was broken; `code` decides the HTTP status (src/http/errors.ts). */
export class DomainError extends Error {
  constructor(
    public readonly code: ErrorCode,
    message: string,
    public readonly field?: string,
    /** Seconds after which a retry may succeed (429 and 503); sent as `Retry-After`. */
    public readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = "DomainError";
  }
}

/**
 * 401 `UNAUTHORIZED` for a presented secret that matches no credential (Create Session's
 * `customer_secret`): counts toward the client address's `auth-failures` bucket as a failed
 * header credential does (docs/security.md "Failed authentications").
 */
export class FailedGuess extends DomainError {
  constructor(message: string) {
    super("UNAUTHORIZED", message);
    this.name = "FailedGuess";
  }
}

/**
 * Field validation failed beyond what the schema checks (phone numbers, sanitisation…): answers
 * 422 `UNPROCESSABLE_ENTITY` (credit core: `VALIDATION_ERROR`) with one entry per field.
 */
export class ValidationFailed extends Error {
  constructor(public readonly problems: FieldProblem[]) {
    super(problems.map((p) => `${p.field}: ${p.message}`).join("; "));
    this.name = "ValidationFailed";
  }
}

/** Throws `ValidationFailed` when `problems` is not empty. */
export function assertNoProblems(problems: FieldProblem[]): void {
  if (problems.length > 0) throw new ValidationFailed(problems);
}

/** Longest prefix of a caller's value, in characters, that an error message repeats ({@link quote}). */
export const QUOTE_MAX = 32;

/** Characters JSON leaves as they are but a reader would not see: zero-width and bidirectional controls. */
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\u061c]/g;

/**
 * A caller's value as an error message repeats it: its first {@link QUOTE_MAX} characters (code
 * points, so an astral character is never split), followed by `…` when the value is longer,
 * JSON-quoted (quotes, backslashes and control characters escaped), with zero-width and
 * bidirectional-control characters escaped as `\uXXXX` too. The result is always a JSON string
 * literal of at most 34 characters plus escapes, however large the value: a 160 000-character
 * address is repeated as `"tb1qqqqq…"`, never whole. Reads at most 33 characters of `value`.
 */
export function quote(value: string): string {
  return JSON.stringify(clip(value)).replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * The first {@link QUOTE_MAX} characters (code points) of `value`, followed by `…` when it is
 * longer; not quoted. For places that name a caller's key rather than quote it in a sentence (the
 * `field` of a validation problem for a stray body key). Reads at most 33 characters of `value`.
 */
export function clip(value: string): string {
  let prefix = "";
  let count = 0;
  for (const ch of value) {
    if (count === QUOTE_MAX) return `${prefix}…`;
    prefix += ch;
    count++;
  }
  return prefix;
}
