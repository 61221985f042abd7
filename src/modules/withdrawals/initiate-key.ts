/** The Idempotency-Key of Initiate Withdrawal on the shared mechanism (docs/idempotency.md). */
import { DomainError } from "../../domain/errors.js";
import { money } from "../../domain/money.js";
import { requestFingerprint, UNNAMED_CALLER, type IdempotentRequest } from "../idempotency/service.js";
import type { FiatInitiateInput, InitiateInput } from "./views.js";

/**
 * The Idempotency-Key request of an initiate (scope `withdrawal`, per customer and caller: `caller`
 * is `keyCaller` of who sends it, src/modules/idempotency/service.ts, by default the tenant's key
 * space of callers not named; docs/idempotency.md "Whose key it is"): its fingerprint covers the
 * user, currency, amount (exact decimal), address, memo and wallet id, normalised as they always
 * were, so keys stored before the shared mechanism still match; a fiat initiate's covers its path
 * and `bank_account_id` instead of the address, so a key of one path never matches a body of the other.
 * @throws nothing; the request's `reused()` builds DomainError IDEMPOTENCY_KEY_REUSED (409).
 */
export function initiateRequest(customerId: string, userId: string, input: InitiateInput | FiatInitiateInput, key: string, caller: string = UNNAMED_CALLER): IdempotentRequest {
  // a crypto body has an address, a fiat one never
  const destination = "address" in input ? [input.address] : ["fiat", input.bank_account_id?.toLowerCase() ?? null];
  const fingerprint = requestFingerprint([
    userId.toLowerCase(),
    input.currency.toLowerCase(),
    money(input.amount).toFixed(),
    ...destination,
    input.memo ?? null,
    input.wallet_id?.toLowerCase() ?? null,
  ]);
  return {
    customerId,
    scope: "withdrawal",
    caller,
    key,
    fingerprint,
    reused: () => new DomainError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was already used with a different request."),
  };
}
