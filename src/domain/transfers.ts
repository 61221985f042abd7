/**
 * Pure rules of internal transfers (docs/decisions/limits-and-allowlist.md "Transfers"): the checks
 * of Create Transfer made once both wallets and their users are found, in the contract's order.
 *
 *   1. same wallet                     SAME_WALLET_TRANSFER
 *   2. currency known                  INVALID_CURRENCY
 *   3. both wallets hold it            UNSUPPORTED_CURRENCY
 *   4. amount positive                 AMOUNT_MUST_BE_POSITIVE
 *   5. amount at least 0.000001        AMOUNT_TOO_SMALL
 *   6. decimals within the precision   INVALID_AMOUNT (also above 10^12)
 *   7. caps (the limits module)        TRANSFER_LIMIT_EXCEEDED, DAILY_LIMIT_EXCEEDED, MONTHLY_LIMIT_EXCEEDED
 *   8. available balance               INSUFFICIENT_BALANCE
 *
 * Steps 1–6 are {@link checkTransfer}. Steps 7 and 8 read stored state and run, in that order, in
 * the transaction that books the transfer: the caps under the sender's movement lock, the balance
 * under the two wallets' account locks (src/modules/ledger/service.ts `transfer`, which refuses an
 * amount the source's available account does not cover). All answer 400.
 */
import { DomainError, quote } from "./errors.js";
import { decimalsOf, money, type Money } from "./money.js";

/** Smallest amount a transfer moves, in units of the currency (`AMOUNT_TOO_SMALL` below it). */
export const MIN_TRANSFER_AMOUNT: Money = money("0.000001");

/** Largest amount a transfer moves (spec `CreateTransferRequest.amount`, `@maxValue`). */
export const MAX_TRANSFER_AMOUNT: Money = money("1e12");

/** What {@link checkTransfer} looks at: the request and the two wallets it names, both found. */
export interface TransferFacts {
  /** Lower-case wallet ids. */
  fromWalletId: string;
  toWalletId: string;
  /** The currency code as sent (any case). */
  currency: string;
  /** The catalogue's entry of the currency (lower-case code, decimals allowed), or null when unknown. */
  known: { code: string; precision: number } | null;
  /** Lower-case codes of the currencies each wallet holds (its `networks[]`). */
  fromHolds: readonly string[];
  toHolds: readonly string[];
  /** The amount exactly as the client wrote it. */
  amount: Money;
}

/**
 * Steps 1–6 of the check order (see the module comment), first failure thrown.
 * @returns the lower-case currency code.
 * @throws DomainError (400) SAME_WALLET_TRANSFER (field `to_wallet_id`); INVALID_CURRENCY,
 *   UNSUPPORTED_CURRENCY (field `currency`); AMOUNT_MUST_BE_POSITIVE, AMOUNT_TOO_SMALL,
 *   INVALID_AMOUNT (field `amount`).
 */
export function checkTransfer(f: TransferFacts): string {
  if (f.fromWalletId === f.toWalletId) {
    throw new DomainError("SAME_WALLET_TRANSFER", "A transfer needs two different wallets: from_wallet_id and to_wallet_id are the same.", "to_wallet_id");
  }
  if (!f.known) throw new DomainError("INVALID_CURRENCY", `Unknown currency ${quote(f.currency)}.`, "currency");
  const code = f.known.code;
  for (const [side, holds] of [["source", f.fromHolds], ["destination", f.toHolds]] as const) {
    if (!holds.includes(code)) throw new DomainError("UNSUPPORTED_CURRENCY", `The ${side} wallet does not hold ${code}.`, "currency");
  }
  if (!f.amount.isFinite() || f.amount.lte(0)) throw new DomainError("AMOUNT_MUST_BE_POSITIVE", "The amount must be greater than zero.", "amount");
  if (f.amount.lt(MIN_TRANSFER_AMOUNT)) {
    throw new DomainError("AMOUNT_TOO_SMALL", `The smallest transfer is ${MIN_TRANSFER_AMOUNT.toFixed()} ${code}.`, "amount");
  }
  if (decimalsOf(f.amount) > f.known.precision) {
    throw new DomainError("INVALID_AMOUNT", `${code} amounts have at most ${f.known.precision} decimals.`, "amount");
  }
  if (f.amount.gt(MAX_TRANSFER_AMOUNT)) throw new DomainError("INVALID_AMOUNT", `A transfer moves at most ${MAX_TRANSFER_AMOUNT.toFixed()} ${code}.`, "amount");
  return code;
}
