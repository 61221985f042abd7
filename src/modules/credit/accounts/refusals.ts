/**
 * Refusals of the wallet changes and their HTTP errors (the credit error table; outcome.ts
 * `RefusalCode`): 422 `VALIDATION_ERROR` with the camelCase field (`AMOUNT_NOT_POSITIVE`,
 * `PAYMENT_EXCEEDS_DEBT`, `CHARGE_EXCEEDS_AVAILABLE` on `amount`, `LIMIT_NOT_RAISED` on `limit`,
 * `FIRST_CUT_NOT_AFTER_CREATION` on `firstCutDate`), 409 `CONFLICT` for the state conflicts
 * (`AUTHORIZATION_NOT_OPEN`, `CAPTURE_EXCEEDS_AUTHORIZED`, and a refund's `AUTHORIZATION_NOT_CAPTURED`
 * and `REFUND_EXCEEDS_CAPTURED` among them).
 */
import type { Refusal } from "../../../domain/credit/index.js";
import { DomainError, ValidationFailed } from "../../../domain/errors.js";

/** The HTTP error of an engine refusal (outcome.ts `RefusalCode` mapping). */
export function refusalError(refusal: Refusal): Error {
  switch (refusal.code) {
    case "AMOUNT_NOT_POSITIVE":
    case "PAYMENT_EXCEEDS_DEBT":
    case "CHARGE_EXCEEDS_AVAILABLE":
    case "LIMIT_NOT_RAISED":
    case "FIRST_CUT_NOT_AFTER_CREATION":
      return new ValidationFailed([{ field: refusal.field ?? "amount", message: refusal.message }]);
    default:
      return new DomainError("RESOURCE_CONFLICT", refusal.message);
  }
}

/** The refusal of every change on a set-aside wallet (409 `CONFLICT`), naming the reason (docs/security.md "Money stays exact"). */
export function setAsideRefusal(reason: string): Refusal {
  return { ok: false, code: "WALLET_SET_ASIDE", message: `The wallet is set aside and accepts no change: ${reason}` };
}
