/**
 * Reorg reversals and the deficits they leave (docs/decisions/live-chains.md "Reorgs"): a credited
 * deposit whose block a reorg removed is taken back in full. The wallet's available pays what it
 * can at once (a `deposit_reversal` entry: available → the network's external account); the rest
 * is the wallet's deficit in that currency (`wallet_deficit`, per network), never a negative
 * balance. Later credits of the currency cover the deficit first: right after the credit, in the
 * credit's own transaction, available pays the deficit (more `deposit_reversal` entries) until
 * nothing is owed. Held money (pending withdrawals) is never taken.
 *
 * Locks: the wallet's accounts of the currency (`FOR UPDATE`, as every post) before its deficit
 * rows (`FOR UPDATE`), so a reversal and a covering credit of one wallet run one after the other.
 * The wallet's state (LOCKED while it owes) is the wallets module's (src/modules/wallets/states.ts).
 */
import type { Sql, Tx } from "../../db/sql.js";
import { money, type Money } from "../../domain/money.js";
import { addDeficit, lockDeficitRows, setDeficit, walletDeficitRows } from "./repository.js";
import type { LedgerService, WalletCurrencyBalance } from "./service.js";

/** A credited deposit to take back: amounts in the currency's units (decimal.js). */
export interface Reversal {
  walletId: string;
  network: string;
  currency: string;
  /** The credited amount, positive. */
  amount: Money;
  /** The entry's reference, e.g. `deposit_reversal:<network>:<tx hash>:<log index>`. */
  reference: string;
}

/** What a reversal did. */
export interface ReversalResult {
  /** Taken from available now (0 when available was empty: no entry then). */
  taken: Money;
  /** Left owed: added to the wallet's deficit of the currency on the network (0 when none). */
  owed: Money;
  /** The `deposit_reversal` entry, or null when nothing was taken. */
  entryId: number | null;
  /** The wallet's balance of the currency after it. */
  after: WalletCurrencyBalance;
}

/**
 * Takes `reversal` back in `tx`: available pays up to the amount (one `deposit_reversal` entry),
 * the rest is added to the wallet's deficit. Never fails for want of money.
 * @throws DomainError AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT (an amount the ledger cannot hold).
 */
export async function reverseCredit(ledger: Pick<LedgerService, "reverse" | "walletBalances">, tx: Tx, reversal: Reversal): Promise<ReversalResult> {
  const now = await lockedBalance(ledger, tx, reversal.walletId, reversal.currency);
  const taken = reversal.amount.lt(now.available) ? reversal.amount : now.available;
  const owed = reversal.amount.minus(taken);
  let after = now;
  let entryId: number | null = null;
  if (taken.gt(0)) ({ entryId, after } = await ledger.reverse(tx, { walletId: reversal.walletId, network: reversal.network, currency: reversal.currency, amount: taken, reference: reversal.reference }));
  if (owed.gt(0)) await addDeficit(tx, reversal.walletId, reversal.currency, reversal.network, owed.toFixed());
  return { taken, owed, entryId, after };
}

/** What covering did. */
export interface CoverResult {
  /** Paid towards the deficit of the currency (0 when the wallet owed none, or available was empty). */
  covered: Money;
  /** Still owed in the currency after it. */
  left: Money;
  /** The wallet's balance of the currency after it; undefined when nothing was owed. */
  after?: WalletCurrencyBalance;
}

/**
 * Covers `walletId`'s deficit of `currency` from its available, in the transaction `tx` of the
 * credit that just paid the wallet: network by network (in name order), each paid up to what
 * available holds with a `deposit_reversal` entry of reference `reference`; a row paid in full goes.
 * One statement when the wallet owes nothing in the currency.
 */
export async function coverDeficit(ledger: Pick<LedgerService, "reverse" | "walletBalances">, tx: Tx, walletId: string, currency: string, reference: string): Promise<CoverResult> {
  const rows = await lockDeficitRows(tx, walletId, currency);
  if (rows.length === 0) return { covered: money(0), left: money(0) };
  let after = await lockedBalance(ledger, tx, walletId, currency);
  let covered = money(0);
  let left = money(0);
  for (const row of rows) {
    const owed = money(row.amount);
    const pay = owed.lt(after.available) ? owed : after.available;
    if (pay.gt(0)) {
      ({ after } = await ledger.reverse(tx, { walletId, network: row.network, currency, amount: pay, reference }));
      await setDeficit(tx, walletId, currency, row.network, owed.minus(pay).toFixed(), owed.eq(pay));
      covered = covered.plus(pay);
    }
    left = left.plus(owed.minus(pay));
  }
  return { covered, left, after };
}

/** What `walletId` owes, per currency (currency → amount), in currency order; empty when nothing. */
export async function walletDeficits(sql: Sql, walletId: string): Promise<Map<string, Money>> {
  return new Map((await walletDeficitRows(sql, walletId)).map((r) => [r.currency, money(r.amount)]));
}

/** `walletId`'s balance of `currency`, its accounts locked for `tx` (zeros when it has none). */
async function lockedBalance(ledger: Pick<LedgerService, "walletBalances">, tx: Tx, walletId: string, currency: string): Promise<WalletCurrencyBalance> {
  const [found] = await ledger.walletBalances(tx, walletId, [currency], true);
  return found ?? { currency, available: money(0), held: money(0), balance: money(0) };
}
