/**
 * The single map from typed errors to HTTP responses, for both surfaces. Nothing else decides a
 * status: services throw {@link DomainError} with a code, and the code's status is looked up here.
 */
import { DomainError, ValidationFailed, type ErrorCode, type FieldProblem } from "../domain/errors.js";
import { DATABASE_RETRY_AFTER_S, isDatabaseUnavailable } from "../db/unavailable.js";
import type { CreditErrorItem, PlatformErrorItem, Surface } from "./envelope.js";
import type { components } from "../../generated/types/platform.js";

/** `true` when `A` and `B` are the same union, else `false`. */
type SameUnion<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/**
 * Compile-time check: the domain's {@link ErrorCode} (src/domain/errors.ts, which may not import
 * the contract) is exactly the contract's `ErrorCode`; a code added to or dropped from either side
 * fails `npm run typecheck` here.
 */
type _ErrorCodesMatchTheContract = Assert<SameUnion<ErrorCode, components["schemas"]["ErrorCode"]>>;
type Assert<T extends true> = T;

/** HTTP status of every platform error code (reference: "Codes of the platform API"). */
export const STATUS_OF: Record<ErrorCode, number> = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  UNPROCESSABLE_ENTITY: 422,
  BAD_REQUEST: 400,
  USER_NOT_FOUND: 404,
  RESOURCE_NOT_FOUND: 404,
  EMAIL_ALREADY_EXISTS: 409,
  PHONE_ALREADY_EXISTS: 409,
  RESOURCE_CONFLICT: 409,
  INVALID_USER_TYPE: 400,
  INVALID_ACCOUNT_TYPE: 400,
  INVALID_ACCOUNT_ROLE: 400,
  INVALID_ACCOUNT_PURPOSE: 400,
  INVALID_AGE: 400,
  CANNOT_DELETE_ACTIVE_USER: 400,
  CANNOT_UPDATE_DELETED_USER: 400,
  CLIENT_NO_SUPPLIER_ID: 400,
  TOKEN_GENERATION_FAILED: 500,
  CUSTOMER_NOT_FOUND: 404,
  CUSTOMER_ALREADY_EXISTS: 409,
  CREDENTIAL_NOT_FOUND: 404,
  WALLET_NOT_FOUND: 404,
  ADDRESS_NOT_FOUND: 404,
  WALLET_INACTIVE: 400,
  WALLET_LOCKED: 400,
  WALLET_SUSPENDED: 400,
  INVALID_WALLET_ID: 400,
  WALLET_NAME_REQUIRED: 400,
  WALLET_NAME_MAX_LENGTH: 400,
  INVALID_CURRENCY: 400,
  UNSUPPORTED_CURRENCY: 400,
  CURRENCY_NOT_ACTIVE: 400,
  ADDRESS_ALREADY_EXISTS: 409,
  ADDRESS_GENERATION_FAILED: 500,
  INSUFFICIENT_BALANCE: 400,
  SAME_WALLET_TRANSFER: 400,
  AMOUNT_MUST_BE_POSITIVE: 400,
  AMOUNT_TOO_SMALL: 400,
  TRANSFER_LIMIT_EXCEEDED: 400,
  DAILY_LIMIT_EXCEEDED: 400,
  MONTHLY_LIMIT_EXCEEDED: 400,
  QUOTE_NOT_FOUND: 404,
  QUOTE_EXPIRED: 400,
  QUOTE_INVALID: 400,
  INVALID_CURRENCY_PAIR: 400,
  PAIR_NOT_AVAILABLE: 400,
  INVALID_SIDE: 400,
  QUANTITY_REQUIRED: 400,
  QUANTITY_MUST_BE_POSITIVE: 400,
  MINIMUM_ORDER_NOT_MET: 400,
  MAXIMUM_ORDER_EXCEEDED: 400,
  MARKET_CLOSED: 400,
  LIQUIDITY_INSUFFICIENT: 400,
  PRICE_CHANGED: 400,
  ORDER_FAILED: 400,
  WITHDRAWAL_NOT_FOUND: 404,
  INVALID_CRYPTO_ADDRESS: 400,
  INVALID_ADDRESS: 400,
  INVALID_AMOUNT: 400,
  WITHDRAWAL_LIMIT_EXCEEDED: 400,
  MINIMUM_AMOUNT_NOT_MET: 400,
  CONFIRMATION_CODE_INVALID: 400,
  CONFIRMATION_CODE_EXPIRED: 400,
  ALREADY_CONFIRMED: 400,
  INVALID_WEBHOOK_SIGNATURE: 401,
  PIN_NOTIFICATION_FAILED: 400,
  BANK_ACCOUNT_REQUIRED: 400,
  INVALID_BANK_ACCOUNT: 400,
  CRYPTO_WITHDRAWAL_FAILED: 400,
  FIAT_WITHDRAWAL_FAILED: 400,
  WITHDRAWAL_BLOCKED: 403,
  IDEMPOTENCY_KEY_REUSED: 409,
  POLLER_NOT_FOUND: 404,
  POLLER_ALREADY_EXISTS: 409,
  WEBHOOK_NOT_FOUND: 404,
  NOT_FOUND: 404,
  INTERNAL_SERVER_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
  RATE_LIMIT_EXCEEDED: 429,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  METHOD_NOT_ALLOWED: 405,
};

/** The credit core's code for a status (reference: "Credit core error envelope"). */
export function creditCodeFor(status: number): CreditErrorItem["code"] {
  switch (status) {
    case 400: return "BAD_REQUEST";
    case 401: return "UNAUTHORIZED";
    case 403: return "FORBIDDEN";
    case 404: return "NOT_FOUND";
    case 405: return "METHOD_NOT_ALLOWED";
    case 409: return "CONFLICT";
    case 413: return "PAYLOAD_TOO_LARGE";
    case 415: return "UNSUPPORTED_MEDIA_TYPE";
    case 422: return "VALIDATION_ERROR";
    case 429: return "TOO_MANY_REQUESTS";
    case 501: return "NOT_IMPLEMENTED";
    case 502: return "BAD_GATEWAY";
    case 503: return "SERVICE_UNAVAILABLE";
    case 504: return "GATEWAY_TIMEOUT";
    default: return "INTERNAL_SERVER_ERROR";
  }
}

/** An error rendered for a surface: status and the `errors[]` items of its envelope. */
export interface RenderedError {
  status: number;
  errors: (PlatformErrorItem | CreditErrorItem)[];
  /** Set when the error was not a typed one (logged with its stack, never sent). */
  unexpected?: unknown;
  /** Set when the database could not be reached (logged as a warning without its details, never sent). */
  unavailable?: unknown;
  /** Response headers the error carries (`Retry-After` of 429 and 503). */
  headers?: Record<string, string>;
}

/**
 * Most field errors one validation answer lists (docs/security.md, "Paths, queries and validation
 * answers"): an answer is never much larger than the request that caused it, whatever the number
 * of unknown keys or parameters sent.
 */
export const MAX_FIELD_ERRORS = 20;

/** Renders field problems as 422 items of the surface: the first {@link MAX_FIELD_ERRORS} of them. */
export function renderValidation(surface: Surface, problems: FieldProblem[]): RenderedError {
  const code = surface === "platform" ? "UNPROCESSABLE_ENTITY" : "VALIDATION_ERROR";
  return {
    status: 422,
    errors: problems.slice(0, MAX_FIELD_ERRORS).map((p) => ({ code, message: p.message, field: p.field }) as PlatformErrorItem | CreditErrorItem),
  };
}

/**
 * Turns anything thrown by a handler into a status and error items of `surface`.
 * Typed errors keep their code (the credit core uses its status-derived codes); an error that says
 * the database cannot be reached (src/db/unavailable.ts) is a 503 `SERVICE_UNAVAILABLE` with
 * `Retry-After: 2` whose message names no host, port or driver error (docs/decisions/requests-and-validation.md "When the database cannot be reached");
 * anything else is a 500 whose details stay in the log.
 */
export function renderError(surface: Surface, error: unknown): RenderedError {
  if (!(error instanceof DomainError) && isDatabaseUnavailable(error)) {
    return {
      ...renderError(surface, new DomainError("SERVICE_UNAVAILABLE", "The service cannot reach its database for now; retry shortly.", undefined, DATABASE_RETRY_AFTER_S)),
      unavailable: error,
    };
  }
  if (error instanceof ValidationFailed) return renderValidation(surface, error.problems);
  if (error instanceof DomainError) return renderCode(surface, error.code, error.message, error.field, error.retryAfterS);
  return {
    status: 500,
    errors: [{ code: "INTERNAL_SERVER_ERROR", message: "An unexpected error occurred; quote the trace id to support." }],
    unexpected: error,
  };
}

/**
 * What {@link renderError} answers for `new DomainError(code, message, field, retryAfterS)`, without
 * building the error: no stack trace is captured, which is most of what a refusal on the request
 * path (401, 403 before the body is read) would cost (docs/performance.md "What keeps the request path cheap").
 */
export function renderCode(surface: Surface, errorCode: ErrorCode, message: string, field?: string, retryAfterS?: number): RenderedError {
  const status = STATUS_OF[errorCode];
  const code = surface === "platform" ? errorCode : creditCodeFor(status);
  const item = field ? { code, message, field } : { code, message };
  const rendered: RenderedError = { status, errors: [item as PlatformErrorItem | CreditErrorItem] };
  if (retryAfterS !== undefined) rendered.headers = { "Retry-After": String(retryAfterS) };
  return rendered;
}
