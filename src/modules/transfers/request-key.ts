/** The Idempotency-Key of Create Transfer on the shared mechanism (docs/idempotency.md). */
import { DomainError } from "../../domain/errors.js";
import { money } from "../../domain/money.js";
import { requestFingerprint, UNNAMED_CALLER, type IdempotentRequest } from "../idempotency/service.js";
import type { CreateTransferInput } from "./views.js";

/**
 * The Idempotency-Key request of a Create Transfer (scope `transfer`, per customer and caller:
 * `caller` is `keyCaller` of who sends it, src/modules/idempotency/service.ts, by default the
 * tenant's key space of callers not named): its fingerprint
 * covers the two wallet ids (lower-cased), the currency (lower-cased), the amount as an exact
 * decimal (`0.1` and `0.10` are one amount) and the memo (absent: null), as it always did, so keys
 * stored before still match. Two callers' keys never meet (docs/idempotency.md "Whose key it is").
 * @throws nothing; the request's `reused()` builds DomainError IDEMPOTENCY_KEY_REUSED (409).
 */
export function transferRequest(customerId: string, input: CreateTransferInput, key: string, caller: string = UNNAMED_CALLER): IdempotentRequest {
  const fingerprint = requestFingerprint([
    input.from_wallet_id.toLowerCase(),
    input.to_wallet_id.toLowerCase(),
    input.currency.toLowerCase(),
    money(input.amount).toFixed(),
    input.memo ?? null,
  ]);
  return {
    customerId,
    scope: "transfer",
    caller,
    key,
    fingerprint,
    reused: () => new DomainError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was already used with a different request."),
  };
}
