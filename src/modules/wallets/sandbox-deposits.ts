/**
 * The `Idempotency-Key` of Create Sandbox Deposit (docs/idempotency.md; spec/platform/sandbox.tsp):
 * the one mechanism of src/modules/idempotency/, scope `sandbox_deposit`. The key's result is the
 * deposit's `order_id` (a UUID chosen before the booking), and a repeat is answered from the
 * wallet transaction booked under it, as it was first answered, with `is_duplicate: true`.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError } from "../../domain/errors.js";
import { money } from "../../domain/money.js";
import { requestFingerprint, UNNAMED_CALLER, type IdempotentRequest } from "../idempotency/service.js";
import { WalletTransaction } from "./entities.js";
import { transactionView, type WalletTransactionView } from "./views.js";
import type { components } from "../../../generated/types/platform.js";

/** Schema `SandboxDeposit`: the booked wallet transaction with `idempotency_key` and `is_duplicate`. */
export type SandboxDepositView = components["schemas"]["SandboxDeposit"];

/** The body of Create Sandbox Deposit as the service takes it (`amount`: a number, or the exact decimal text of a JSON number). */
export interface SandboxDepositInput {
  wallet_id: string;
  network: string;
  currency: string;
  amount: number | string;
}

/**
 * The idempotent request of a sandbox deposit: tenant `customerId`, scope `sandbox_deposit`, the
 * caller `caller` (src/modules/idempotency/service.ts `keyCaller`), and the fingerprint of the wallet
 * id (lower-cased), the network, the currency (lower-cased) and the amount as an exact decimal.
 * A reuse with another body is DomainError IDEMPOTENCY_KEY_REUSED (409).
 */
export function sandboxDepositRequest(customerId: string, input: SandboxDepositInput, key: string, caller: string = UNNAMED_CALLER): IdempotentRequest {
  let amount: string;
  try {
    amount = money(input.amount).toFixed();
  } catch {
    amount = String(input.amount); // not a number: refused by the checks, never booked
  }
  return {
    customerId,
    scope: "sandbox_deposit",
    caller,
    key,
    fingerprint: requestFingerprint([input.wallet_id.toLowerCase(), input.network, input.currency.toLowerCase(), amount]),
    reused: () => new DomainError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was already used with a different request."),
  };
}

/** The answer of a new deposit `view` booked under key `key`. */
export function firstDeposit(view: WalletTransactionView, key: string): SandboxDepositView {
  return { ...view, idempotency_key: key, is_duplicate: false };
}

/**
 * The answer of a repeat: the `deposit` transaction of `customerId`'s wallet `walletId` booked
 * under `orderId` (the key's result), as first answered, marked `is_duplicate: true`.
 * @throws Error when that transaction is missing (the key row and the booking commit together).
 */
export async function repeatedDeposit(em: EntityManager, customerId: string, walletId: string, key: string, orderId: string): Promise<SandboxDepositView> {
  const row = await em.fork().findOne(WalletTransaction, { walletId: walletId.toLowerCase(), customerId, orderId, action: "deposit" });
  if (!row) throw new Error(`the sandbox deposit of Idempotency-Key result ${orderId} is missing`);
  return { ...transactionView(row), idempotency_key: key, is_duplicate: true };
}
