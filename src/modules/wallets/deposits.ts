/**
 * Deposits found on a live network (docs/decisions/live-chains.md "Deposits"): the wallets
 * module's side of their life. A deposit shows in the wallet's transactions from the moment it is
 * seen (`deposit`, status `pending`, no ledger entry: in neither balance nor available), may turn
 * `orphaned` and back to `pending` while its block leaves the chain and comes back, and is
 * credited once at the network's confirmations: the ledger entry posted as {@link WalletService}'s
 * confirmed deposits are, and the transaction `done` with its balance after, in the caller's
 * transaction. Deposits credited by the chain arrive in every wallet state
 * (docs/decisions/customers-users-and-wallets.md "Wallet states").
 *
 * A credited deposit whose block a deeper reorg removed is taken back in full
 * (docs/decisions/live-chains.md "Reorgs"): its transaction turns `reversed`, a `deposit_reversal`
 * transaction shows the amount taken back, available pays what it can and the rest is the
 * wallet's deficit (src/modules/ledger/deficits.ts), which locks an `ACTIVE` wallet
 * (./states.ts `lockForDeficit`). A later credit covers the deficit first, in its own
 * transaction, and the wallet returns to `ACTIVE` once it owes nothing ({@link coverAfterCredit}).
 * Locks: the wallet's row (`FOR UPDATE`) before its ledger accounts, as a state call.
 */
import { randomUUID } from "node:crypto";
import type { Sql, Tx } from "../../db/sql.js";
import { format8, money } from "../../domain/money.js";
import { LedgerService } from "../ledger/service.js";
import { coverDeficit, reverseCredit, walletDeficits } from "../ledger/deficits.js";
import { completeDeposit, insertTransaction, lockWalletState, reverseDepositTransaction, setDepositStatus, type WalletStateRow } from "./repository.js";
import { lockForDeficit, releaseDeficitLock, type StatusNotifier } from "./states.js";

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

/** A credited deposit a reorg removed, to take back. */
export interface ReversedDeposit {
  walletId: string;
  /** Its `deposit` wallet transaction (turns `reversed`). */
  walletTransactionId: number;
  network: string;
  currency: string;
  /** The credited amount: decimal text, positive, at most 8 decimals. */
  amount: string;
  txHash: string;
  logIndex: number;
}

/** What the ledger's side of deposits needs: its posts and balances, and its reversals. */
type DepositLedger = Pick<LedgerService, "post" | "walletBalances" | "reverse" | "lockAvailable">;

/**
 * After a credit of `currency` to `walletId` in `tx` (posted just before, the wallet's row locked
 * first when it owes: {@link owingWallet}), covers the wallet's deficit of that currency from its
 * available (src/modules/ledger/deficits.ts `coverDeficit`, reference `deficit_cover:<credit's
 * reference>`); once the wallet owes nothing in any currency its deficit lock is lifted, with
 * `wallet.status_changed` (./states.ts `releaseDeficitLock`). Nothing when `wallet` is null (it owed nothing).
 * @returns the wallet's balance of the currency after it (decimal text), or undefined when nothing was covered.
 */
export async function coverAfterCredit(
  deps: { ledger: DepositLedger; notifier: StatusNotifier },
  tx: Tx,
  wallet: WalletStateRow | null,
  credit: { currency: string; reference: string },
): Promise<string | undefined> {
  if (!wallet) return undefined;
  const cover = await coverDeficit(deps.ledger, tx, wallet.walletId, credit.currency, `deficit_cover:${credit.reference}`);
  if (cover.covered.gt(0) && (await walletDeficits(tx, wallet.walletId)).size === 0) await releaseDeficitLock(tx, deps.notifier, wallet);
  return cover.covered.gt(0) ? cover.after?.balance.toFixed() : undefined;
}

/**
 * Before a credit to `walletId` in `tx`: when the wallet owes a deficit in any currency, its row is
 * locked (`FOR UPDATE`, before the credit's ledger locks, as a state call) and returned for
 * {@link coverAfterCredit}; null (one read, no lock) when it owes nothing.
 */
export async function owingWallet(tx: Tx, walletId: string): Promise<WalletStateRow | null> {
  if ((await walletDeficits(tx, walletId)).size === 0) return null;
  return lockWalletState(tx, walletId);
}

/** The wallets' bookkeeping of live deposits. */
export class LiveDeposits {
  constructor(
    /** The ledger (src/wiring.ts's). */
    private readonly ledger: DepositLedger,
    /** Where `wallet.status_changed` goes (src/modules/webhooks/service.ts): the deficit lock and its lifting. */
    private readonly notifier: StatusNotifier,
  ) {}

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
   * Locks, in `tx`, the available accounts the credits of `deposits` will post to, all at once in
   * id order (the ledger's `lockAvailable`), before a group of them is credited one after another
   * in `tx` (docs/decisions/live-chains.md "Deposits").
   */
  async lockForCredits(tx: Tx, deposits: readonly { walletId: string; currency: string }[]): Promise<void> {
    await this.ledger.lockAvailable(tx, deposits);
  }

  /**
   * Credits `deposit` in `tx`: the ledger's `deposit` entry (external account → the wallet's
   * available) and its wallet transaction `done` with the balance after. The caller guards the
   * once-only (its deposit row `pending` → `done` in the same transaction).
   * @throws Error when the wallet transaction is no longer pending (the transaction must roll back);
   *   DomainError from the ledger (INVALID_AMOUNT for an amount it cannot hold).
   */
  async credit(tx: Tx, deposit: CreditedDeposit): Promise<void> {
    const owing = await owingWallet(tx, deposit.walletId);
    const { entryId, after } = await this.ledger.post(tx, {
      kind: "deposit",
      walletId: deposit.walletId,
      network: deposit.network,
      currency: deposit.currency,
      amount: money(deposit.amount),
      reference: deposit.reference,
    });
    const covered = await coverAfterCredit({ ledger: this.ledger, notifier: this.notifier }, tx, owing, deposit);
    if (!(await completeDeposit(tx, deposit.walletTransactionId, covered ?? after.balance.toFixed(), entryId))) {
      throw new Error(`wallet transaction ${deposit.walletTransactionId} of ${deposit.reference} is not a pending deposit`);
    }
  }

  /**
   * Takes back `deposits`, credited deposits one reorg removed, in `tx` (the reorg's one
   * transaction; docs/decisions/live-chains.md "Reorgs"): their wallets' rows locked first (in id
   * order), then per deposit its transaction `reversed`, the ledger's reversal (available pays what
   * it can, the rest is the wallet's deficit), a `deposit_reversal` transaction (status `done`, the
   * full amount, the balance after, the deposit's hash and address), and the deficit lock of a
   * wallet left owing (./states.ts `lockForDeficit`, with `wallet.status_changed`).
   * @returns how many wallets were left owing.
   * @throws Error when a deposit's transaction is not `done` or its wallet is gone (the reorg's
   *   transaction must roll back); DomainError from the ledger.
   */
  async reverse(tx: Tx, deposits: readonly ReversedDeposit[]): Promise<number> {
    const wallets = new Map<string, WalletStateRow>();
    for (const id of [...new Set(deposits.map((d) => d.walletId))].sort()) {
      const state = await lockWalletState(tx, id);
      if (!state) throw new Error(`wallet ${id} of a reversed deposit is gone`);
      wallets.set(id, state);
    }
    const owing = new Set<string>();
    for (const d of deposits) {
      const shown = await reverseDepositTransaction(tx, d.walletTransactionId);
      if (!shown) throw new Error(`wallet transaction ${d.walletTransactionId} of a reversed deposit is not a credited deposit`);
      const reference = `deposit_reversal:${d.network}:${d.txHash}:${d.logIndex}`;
      const result = await reverseCredit(this.ledger, tx, { walletId: d.walletId, network: d.network, currency: d.currency, amount: money(d.amount), reference });
      await insertTransaction(tx, {
        walletId: d.walletId,
        customerId: shown.customerId,
        network: d.network,
        address: shown.address,
        action: "deposit_reversal",
        status: "done",
        currency: d.currency,
        amount: d.amount,
        fees: "0",
        netProceeds: d.amount,
        price: "0",
        balanceAfter: result.after.balance.toFixed(),
        hash: shown.hash,
        memo: "",
        description: `Reversal of the deposit of ${format8(d.amount)} ${d.currency.toUpperCase()} on ${d.network}: its block left the chain${result.owed.gt(0) ? `; ${format8(result.owed)} owed` : ""}`,
        orderId: randomUUID(),
        tradeId: "",
        idempotencyId: null,
        journalEntryId: result.entryId,
        createdAt: new Date(),
      });
      if (result.owed.gt(0)) {
        wallets.set(d.walletId, await lockForDeficit(tx, this.notifier, wallets.get(d.walletId) as WalletStateRow));
        owing.add(d.walletId);
      }
    }
    return owing.size;
  }
}
