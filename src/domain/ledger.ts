/**
 * Pure rules of the custody ledger (double entry; docs/architecture.md "Patterns worth knowing",
 * docs/decisions/customers-users-and-wallets.md "The custody ledger").
 *
 * Every balance change is a journal entry of postings whose amounts sum to zero per currency. A
 * wallet owns two accounts per currency: `available` (spendable) and `held` (locked by a pending
 * withdrawal), so available + held = balance always. Money entering or leaving custody passes
 * through `external` accounts (one per network and currency), which may go negative: they mirror
 * the chain. Wallet accounts never go below zero. A transfer between two wallets of the platform
 * moves money from one wallet's available account to the other's, without leaving custody
 * (docs/decisions/limits-and-allowlist.md "Transfers"). A trade (docs/decisions/trading.md "The
 * ledger") exchanges one currency for another with the provider's `liquidity` account of each
 * currency (the counterparty, which may go negative like an external account), and its fees go to
 * the `fees` account of the quote currency.
 *
 * Balances: a wallet account keeps a cached balance, updated under a row lock with its postings
 * (that lock is what stops available money being held twice). An external account keeps none: it
 * is append-only, its balance the sum of its postings, derived when asked (docs/decisions/customers-users-and-wallets.md "The custody ledger":
 * every deposit and every confirmed withdrawal of a network posts to its external account, so a
 * cache there was one row all of them locked and rewrote, serialising the network's withdrawals).
 */
import { DomainError } from "./errors.js";
import { money, type Money } from "./money.js";

/** The buckets of a wallet's money, the outside world, the trading counterparty and the fees earned. */
export type Bucket = "available" | "held" | "external" | "liquidity" | "fees";

/** Kinds of journal entries on one wallet ({@link postingsFor}). */
export type EntryKind = "deposit" | "hold" | "release" | "debit" | "withdrawal_reversal";

/**
 * Kinds of every journal entry: the one-wallet {@link EntryKind}s, `transfer`, which moves an
 * amount between two wallets' available accounts ({@link transferPostings}), and `trade`, one leg
 * (one currency) of an order ({@link tradePostings}).
 */
export type JournalKind = EntryKind | "transfer" | "trade";

/** Largest amount the `numeric(38,18)` columns hold (20 integer digits), exclusive. */
export const LEDGER_MAX_AMOUNT = money("1e20");
/** Decimals the `numeric(38,18)` columns hold. */
export const LEDGER_MAX_DECIMALS = 18;

/** Identifies a ledger account: a wallet bucket, the external account of a network, or the trading counterparty or fee account of a currency. */
export type AccountRef =
  | { bucket: "available" | "held"; walletId: string; currency: string }
  | { bucket: "external"; network: string; currency: string }
  | { bucket: "liquidity" | "fees"; currency: string };

/** One line of a journal entry: signed amount (positive adds to the account). */
export interface Posting {
  account: AccountRef;
  amount: Money;
}

/** The stable, unique code of an account (`wallet:<id>:available:btc`, `external:networks/bitcoin:btc`, `liquidity:btc`, `fees:usdt`). */
export function accountCode(ref: AccountRef): string {
  switch (ref.bucket) {
    case "external":
      return `external:${ref.network}:${ref.currency}`;
    case "liquidity":
    case "fees":
      return `${ref.bucket}:${ref.currency}`;
    default:
      return `wallet:${ref.walletId}:${ref.bucket}:${ref.currency}`;
  }
}

/**
 * The postings of one ledger operation on `walletId` for a positive `amount` of `currency`:
 * - deposit: external(network) → available
 * - hold:    available → held          (a withdrawal is initiated)
 * - release: held → available          (a withdrawal is cancelled)
 * - debit:   held → external(network)  (a withdrawal is confirmed and leaves custody)
 * - withdrawal_reversal: external(network) → available (a confirmed fiat payout the bank returned
 *   comes back, like a deposit: docs/decisions/fiat.md "Fiat withdrawals")
 * @throws DomainError AMOUNT_MUST_BE_POSITIVE for an amount ≤ 0; INVALID_AMOUNT for one the ledger
 *   cannot store exactly (more than 18 decimals, or 1e20 and above): it is refused, never rounded.
 */
export function postingsFor(kind: EntryKind, walletId: string, network: string, currency: string, amount: Money): Posting[] {
  assertPostable(amount);
  const available: AccountRef = { bucket: "available", walletId, currency };
  const held: AccountRef = { bucket: "held", walletId, currency };
  const external: AccountRef = { bucket: "external", network, currency };
  const move = (from: AccountRef, to: AccountRef): Posting[] => [
    { account: from, amount: amount.neg() },
    { account: to, amount },
  ];
  switch (kind) {
    case "deposit":
      return move(external, available);
    case "hold":
      return move(available, held);
    case "release":
      return move(held, available);
    case "debit":
      return move(held, external);
    case "withdrawal_reversal":
      return move(external, available);
  }
}

/**
 * The postings of a transfer (docs/decisions/limits-and-allowlist.md "Transfers") of a positive
 * `amount` of `currency`: `fromWalletId`'s available → `toWalletId`'s available. No external
 * account and no held bucket: the money stays in custody, so every currency still sums to zero.
 * @throws DomainError AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT as {@link postingsFor}; Error when
 *   both wallets are one (a programming error: the transfers module refuses it first).
 */
export function transferPostings(fromWalletId: string, toWalletId: string, currency: string, amount: Money): Posting[] {
  if (fromWalletId === toWalletId) throw new Error(`a transfer needs two wallets, got ${fromWalletId} twice`);
  assertPostable(amount);
  return [
    { account: { bucket: "available", walletId: fromWalletId, currency }, amount: amount.neg() },
    { account: { bucket: "available", walletId: toWalletId, currency }, amount },
  ];
}

/**
 * The two entries of an order on `walletId` (docs/decisions/trading.md "The ledger"), one per
 * currency, each balanced: `spent` leaves the wallet's available account, `received` arrives in it;
 * the provider's `liquidity` account of each currency takes the other side, and `fees` (in
 * `feeCurrency`, one of the two) go from that currency's leg to its `fees` account. On a buy the
 * fees are inside what is spent (liquidity gets spent − fees); on a sell they come out of what the
 * liquidity pays (it pays received + fees).
 * @throws DomainError AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT as {@link postingsFor} for `spent` and
 *   `received`; Error when the currencies are one, fees are negative or `feeCurrency` is neither.
 */
export function tradePostings(
  walletId: string,
  spent: { currency: string; amount: Money },
  received: { currency: string; amount: Money },
  fees: Money,
  feeCurrency: string,
): { spent: Posting[]; received: Posting[] } {
  if (spent.currency === received.currency) throw new Error(`a trade needs two currencies, got ${spent.currency} twice`);
  if (feeCurrency !== spent.currency && feeCurrency !== received.currency) throw new Error(`fees in ${feeCurrency} on a ${spent.currency}/${received.currency} trade`);
  if (fees.isNegative()) throw new Error("negative trade fees");
  assertPostable(spent.amount);
  assertPostable(received.amount);
  const leg = (currency: string, wallet: Money): Posting[] => {
    const fee = currency === feeCurrency ? fees : money(0);
    const postings: Posting[] = [
      { account: { bucket: "available", walletId, currency }, amount: wallet },
      { account: { bucket: "liquidity", currency }, amount: wallet.neg().minus(fee) },
    ];
    if (!fee.isZero()) postings.push({ account: { bucket: "fees", currency }, amount: fee });
    return postings;
  };
  return { spent: leg(spent.currency, spent.amount.neg()), received: leg(received.currency, received.amount) };
}

/**
 * @throws DomainError AMOUNT_MUST_BE_POSITIVE for an amount ≤ 0; INVALID_AMOUNT for one the ledger
 *   cannot store exactly (more than 18 decimals, or 1e20 and above).
 */
function assertPostable(amount: Money): void {
  if (!amount.isFinite() || amount.lte(0)) throw new DomainError("AMOUNT_MUST_BE_POSITIVE", "The amount must be greater than zero.", "amount");
  if (amount.decimalPlaces() > LEDGER_MAX_DECIMALS || amount.gte(LEDGER_MAX_AMOUNT)) {
    throw new DomainError("INVALID_AMOUNT", "The amount cannot be stored exactly by the ledger.", "amount");
  }
}

/** Sum of postings per currency; an entry is balanced when every sum is zero. */
export function sumsByCurrency(postings: readonly Posting[]): Map<string, Money> {
  const sums = new Map<string, Money>();
  for (const p of postings) sums.set(p.account.currency, (sums.get(p.account.currency) ?? money(0)).plus(p.amount));
  return sums;
}

/** @throws Error when the postings do not sum to zero per currency (a programming error, never a client's). */
export function assertBalanced(postings: readonly Posting[]): void {
  for (const [currency, sum] of sumsByCurrency(postings)) {
    if (!sum.isZero()) throw new Error(`unbalanced journal entry: ${currency} postings sum to ${sum.toString()}`);
  }
}

/**
 * Whether accounts of `bucket` keep a cached balance (locked and updated with each posting):
 * wallet buckets do; `external`, `liquidity` and `fees` accounts do not, their balance is the sum
 * of their postings and posting to them takes no lock on their row, so no shared row serialises the
 * deposits, withdrawals or orders of different wallets (docs/performance.md "What keeps the request
 * path cheap").
 */
export function balanceCached(bucket: Bucket): boolean {
  return bucket === "available" || bucket === "held";
}

/** Whether an account of `bucket` may hold `balance` (wallet buckets never go below zero). */
export function balanceAllowed(bucket: Bucket, balance: Money): boolean {
  return !balanceCached(bucket) || balance.gte(0);
}
