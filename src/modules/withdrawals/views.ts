/**
 * The API shapes of withdrawals (spec/platform/withdrawals.tsp; reference: "Withdrawal"): the
 * Initiate body and answer, and the record of Get and List, rendered from the stored withdrawal.
 */
import type { components } from "../../../generated/types/platform.js";
import { toNumber } from "../../domain/money.js";
import type { WithdrawalRecord } from "./repository.js";

type Schemas = components["schemas"];

/**
 * Body of Initiate Withdrawal (schema `InitiateWithdrawalRequest`), with `amount` as the client
 * wrote it: a number, or the decimal text of a JSON number a double cannot hold (src/http/json-numbers.ts).
 */
export type InitiateInput = Omit<Schemas["InitiateWithdrawalRequest"], "amount"> & { amount: number | string };
/** Body of Initiate Fiat Withdrawal (schema `InitiateFiatWithdrawalRequest`), `amount` as in {@link InitiateInput}. */
export type FiatInitiateInput = Omit<Schemas["InitiateFiatWithdrawalRequest"], "amount"> & { amount: number | string };
/** Initiate response data (schema `InitiatedWithdrawal`). */
export type InitiatedView = Schemas["InitiatedWithdrawal"];
/** Withdrawal record of Get and List (schema `Withdrawal`). */
export type WithdrawalView = Schemas["Withdrawal"];

/** The payout of a fiat withdrawal once confirmed (null before, and for crypto). */
function payoutView(w: WithdrawalRecord): WithdrawalView["payout"] {
  if (w.payoutRail == null || w.payoutReference == null || w.payoutState == null) return null;
  return { rail: w.payoutRail, reference: w.payoutReference, state: w.payoutState };
}

/**
 * Renders a withdrawal record (`amount` as a JSON number of the stored decimal; `created_at` ISO
 * 8601 UTC; for a fiat one, `address` is the bank account's mask and `payout` its payout; `chain`
 * its send on a live network, src/modules/chains/send-repository.ts `sendViews`).
 */
export function withdrawalView(w: WithdrawalRecord, chain: WithdrawalView["chain"] = null): WithdrawalView {
  return {
    id: w.id,
    withdrawal_type: w.withdrawalType,
    bank_account_id: w.bankAccountId ?? null,
    payout: payoutView(w),
    chain,
    currency: w.currency,
    amount: toNumber(w.amount),
    address: w.address,
    status: w.status,
    created_at: w.createdAt.toISOString(),
  };
}

/**
 * Renders the answer of Initiate Withdrawal: `withdraw` carries the withdrawal's current status,
 * its `Idempotency-Key` and whether this answer is a repeat's (`is_duplicate`; docs/idempotency.md).
 */
export function initiatedView(w: WithdrawalRecord, duplicate: boolean): InitiatedView {
  return {
    id: w.id,
    withdraw: { id: w.id, status: w.status, idempotency_key: w.idempotencyKey, is_duplicate: duplicate },
    withdrawal_type: w.withdrawalType,
    bank_account_id: w.bankAccountId ?? null,
    payout: payoutView(w),
    currency: w.currency,
    amount: toNumber(w.amount),
    address: w.address,
  };
}
