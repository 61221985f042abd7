/**
 * Deposits found on a live network (docs/decisions/live-chains.md "Deposits"): the wallets
 * module's side of their life. A deposit shows in the wallet's transactions from the moment it is
 * seen (`deposit`, status `pending`, no ledger entry: in neither balance nor available), may turn
 * `orphaned` and back to `pending` while its block leaves the chain and comes back, and is
 * credited once at the network's confirmations: the ledger entry posted as {@link WalletService}'s
 * confirmed deposits are, and the transaction `done` with its balance after, in the caller's
 * transaction. Deposits credited by the chain arrive in every wallet state
 * (docs/decisions/customers-users-and-wallets.md "Wallet states").
 */
import { randomUUID } from "node:crypto";
import type { Sql, Tx } from "../../db/sql.js";
import { format8, money } from "../../domain/money.js";
import type { LedgerService } from "../ledger/service.js";
import { completeDeposit, insertTransaction, setDepositStatus } from "./repository.js";

/** A deposit seen on chain, to show as `pending`. */
export interface SeenDeposit {
  walletId: string;
  customerId: string;
  network: string;
  /** The wallet's address as it stores it. */
  address: string;
  currency: string;
  /** Decimal text in the currency's units, positive, at most 8 decimals. */
  amount: string;
  /** The transaction hash (`0x…`). */
  hash: string;
}

/** A pending deposit to credit. */
export interface CreditedDeposit {
  walletId: string;
  walletTransactionId: number;
  network: string;
  currency: string;
  amount: string;
  /** The ledger entry's reference, unique per deposit: `deposit:<network>:<tx hash>:<log index>`. */
  reference: string;
}

/** The ledger reference of the deposit of transaction `txHash`, log `logIndex` (−1: native) on `network`. */
export function liveDepositReference(network: string, txHash: string, logIndex: number): string {
  return `deposit:${network}:${txHash}:${logIndex}`;
}

/** The wallets' bookkeeping of live deposits. */
export class LiveDeposits {
  constructor(private readonly ledger: Pick<LedgerService, "post" | "walletBalances">) {}

  /**
   * Writes `deposit`'s wallet transaction, status `pending`, with the wallet's balance of the
   * currency as it is (nothing is posted), in `tx`. @returns the transaction's id.
   */
  async recordPending(tx: Sql, deposit: SeenDeposit): Promise<number> {
    const [balance] = await this.ledger.walletBalances(tx, deposit.walletId, [deposit.currency]);
    return insertTransaction(tx, {
      walletId: deposit.walletId,
      customerId: deposit.customerId,
      network: deposit.network,
      address: deposit.address,
      action: "deposit",
      status: "pending",
      currency: deposit.currency,
      amount: deposit.amount,
      fees: "0",
      netProceeds: deposit.amount,
      price: "0",
      balanceAfter: (balance?.balance ?? money(0)).toFixed(),
      hash: deposit.hash,
      memo: "",
      description: `Deposit of ${format8(deposit.amount)} ${deposit.currency.toUpperCase()} on ${deposit.network}`,
      orderId: randomUUID(),
      tradeId: "",
      idempotencyId: null,
      journalEntryId: null,
      createdAt: new Date(),
    });
  }

  /** The wallet transactions `ids` of deposits whose block left the chain turn `orphaned`, in `tx`. */
  async orphan(tx: Sql, ids: readonly number[]): Promise<void> {
    await setDepositStatus(tx, ids, "orphaned");
  }

  /** The wallet transaction `id` of a deposit mined again turns `pending` again, in `tx`. */
  async revive(tx: Sql, id: number): Promise<void> {
    await setDepositStatus(tx, [id], "pending");
  }

  /**
   * Credits `deposit` in `tx`: the ledger's `deposit` entry (external account → the wallet's
   * available) and its wallet transaction `done` with the balance after. The caller guards the
   * once-only (its deposit row `pending` → `done` in the same transaction).
   * @throws Error when the wallet transaction is no longer pending (the transaction must roll back);
   *   DomainError from the ledger (INVALID_AMOUNT for an amount it cannot hold).
   */
  async credit(tx: Tx, deposit: CreditedDeposit): Promise<void> {
    const { entryId, after } = await this.ledger.post(tx, {
      kind: "deposit",
      walletId: deposit.walletId,
      network: deposit.network,
      currency: deposit.currency,
      amount: money(deposit.amount),
      reference: deposit.reference,
    });
    if (!(await completeDeposit(tx, deposit.walletTransactionId, after.balance.toFixed(), entryId))) {
      throw new Error(`wallet transaction ${deposit.walletTransactionId} of ${deposit.reference} is not a pending deposit`);
    }
  }
}
