/** The Idempotency-Key of Initiate Withdrawal on the shared mechanism (docs/idempotency.md). */
import { DomainError } from "../../domain/errors.js";
import { money } from "../../domain/money.js";
import { requestFingerprint, type IdempotentRequest } from "../idempotency/service.js";
import type { InitiateInput } from "./views.js";

/**
 * The Idempotency-Key request of an initiate (scope `withdrawal`, per customer): its fingerprint
 * covers the user, currency, amount (exact decimal), address, memo and wallet id, normalised as
 * they always were, so keys stored before the shared mechanism still match.
 */
export function initiateRequest(customerId: string, userId: string, input: InitiateInput, key: string): IdempotentRequest {
  const fingerprint = requestFingerprint([
    userId.toLowerCase(),
    input.currency.toLowerCase(),
    money(input.amount).toFixed(),
    input.address,
    input.memo ?? null,
    input.wallet_id?.toLowerCase() ?? null,
  ]);
  return {
    customerId,
    scope: "withdrawal",
    key,
    fingerprint,
    reused: () => new DomainError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was already used with a different request."),
  };
}
