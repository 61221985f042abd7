/**
 * A confirmed withdrawal that fails afterwards (docs/decisions/withdrawals.md; docs/decisions/fiat.md
 * "Fiat withdrawals" for a returned payout, docs/decisions/live-chains.md "Sends" for an on-chain
 * send the chain rejected): COMPLETED → FAILED in the caller's transaction, the withdrawal's row
 * locked and its state checked under that lock: a `withdrawal_reversal` ledger entry moves the
 * amount from the network's or rail's external account back to the wallet's available, a
 * `withdrawal_reversal` wallet transaction is written, and `withdrawal.failed` is queued for the
 * customer's webhook, all in that one transaction. Exactly once: a FAILED withdrawal is never
 * reversed again.
 */
import { format8, money } from "../../domain/money.js";
import type { Sql, Tx } from "../../db/sql.js";
import type { LedgerService } from "../ledger/service.js";
import type { SendOutcomes } from "../chains/sender.js";
import type { SendView } from "../chains/repository/sends.js";
import { completeWithdrawal, lockWithdrawal, withdrawalTransaction, type LockedWithdrawal } from "./repository.js";

/** The customer's webhook as a reversal needs it (src/modules/webhooks/service.ts `WebhookService`). */
export interface WithdrawalEvents {
  /** Queues notification `event` in `tx` when the customer has an enabled webhook. @returns whether it did. */
  enqueueEvent(tx: Sql, event: { customerId: string; type: string; data: Record<string, unknown>; reference: string }): Promise<boolean>;
  /** Starts a delivery round, after commit. */
  kick(): void;
}

/** Why a withdrawal failed, as its reversal records it. */
export interface FailureRecord {
  /** The wallet transaction's hash: the payout's reference, or the send's transaction hash. */
  hash: string;
  /** The wallet transaction's description. */
  description: string;
  /** `withdrawal.failed`'s `error_code`. */
  errorCode: "FIAT_WITHDRAWAL_FAILED" | "CRYPTO_WITHDRAWAL_FAILED";
  /** What `withdrawal.failed` carries besides the withdrawal: `payout` (fiat) or `chain` (crypto). */
  detail: Record<string, unknown>;
}

/**
 * Reverses locked withdrawal `locked` (status COMPLETED: the caller checked it under the lock) in
 * `tx` at `now`: FAILED, the amount back to available, the `withdrawal_reversal` transaction and
 * `withdrawal.failed` (delivery started after commit). Sets `status` on the record; the caller
 * saves whatever else it changed (the payout's state) with {@link completeWithdrawal}'s write here.
 */
export async function reverseWithdrawal(tx: Tx, ledger: LedgerService, events: WithdrawalEvents, locked: LockedWithdrawal, failure: FailureRecord, now: Date): Promise<void> {
  const w = locked.withdrawal;
  const amount = money(w.amount);
  const { entryId, after } = await ledger.post(tx, { kind: "withdrawal_reversal", walletId: w.walletId, network: w.network, currency: w.currency, amount, reference: `withdrawal:${w.id}` });
  w.status = "FAILED";
  const transaction = withdrawalTransaction(locked, { entryId, balanceAfter: after.balance.toFixed() }, { hash: failure.hash, description: failure.description }, now);
  await completeWithdrawal(tx, w, transaction, "withdrawal_reversal");
  const data = {
    withdrawal_id: w.id,
    user_id: w.userId,
    customer_id: w.customerId,
    wallet_id: w.walletId,
    withdrawal_type: w.withdrawalType,
    currency: w.currency,
    amount: format8(amount),
    error_code: failure.errorCode,
    payout: null,
    ...failure.detail,
    failed_at: now.toISOString(),
  };
  const queued = await events.enqueueEvent(tx, { customerId: w.customerId, type: "withdrawal.failed", data, reference: `withdrawal:${w.id}` });
  if (queued) tx.afterCommit(() => events.kick());
}

/**
 * The reversal of a crypto withdrawal whose on-chain send failed for good
 * (docs/decisions/live-chains.md "Sends"), run by the sender in the transaction that ends the send.
 */
export class ChainSendFailures implements SendOutcomes {
  constructor(
    private readonly ledger: LedgerService,
    private readonly events: WithdrawalEvents,
  ) {}

  /** Reverses the withdrawal when it is still COMPLETED (locked in `tx`); nothing otherwise. */
  async failed(tx: Tx, failure: { withdrawalId: string; customerId: string; chain: SendView; reason: string }): Promise<void> {
    const locked = await lockWithdrawal(tx, failure.customerId, failure.withdrawalId);
    if (!locked || locked.withdrawal.status !== "COMPLETED") return;
    const w = locked.withdrawal;
    await reverseWithdrawal(tx, this.ledger, this.events, locked, {
      hash: failure.chain.tx_hash ?? "",
      description: `Failed on-chain send of ${format8(money(w.amount))} ${w.currency.toUpperCase()} to ${w.address} on ${w.network}: ${failure.reason}`.slice(0, 500),
      errorCode: "CRYPTO_WITHDRAWAL_FAILED",
      detail: { chain: failure.chain },
    }, new Date());
  }
}
