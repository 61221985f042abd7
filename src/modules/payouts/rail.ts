/**
 * A bank rail that pays out fiat withdrawals (docs/decisions/fiat.md "Fiat withdrawals"): the
 * withdrawals service submits a payout when a fiat withdrawal is confirmed, and the settlement job
 * (src/modules/withdrawals/payouts.ts) asks the rail what became of it until it is `settled` or
 * `returned`. The rail of a currency is its network in the catalogue (`networks/sepa` for eur,
 * `networks/ach` for usd); the sandbox rail is ./sandbox-rail.ts.
 */
import type { PayoutState } from "../../domain/withdrawals.js";

/** A payout to submit: one confirmed fiat withdrawal. */
export interface PayoutRequest {
  /** The withdrawal (the payout's end-to-end id). */
  withdrawalId: string;
  /** The rail (`networks/sepa`, `networks/ach`). */
  rail: string;
  /** Lower-case currency code (`eur`, `usd`). */
  currency: string;
  /** Amount in units of the currency, decimal text with at most 2 decimals (e.g. `"250.50"`). */
  amount: string;
  /** The user's bank account it pays out to (its id; the bank-accounts module holds its numbers). */
  bankAccountId: string;
  /** Remittance information, or null. */
  memo: string | null;
}

/** The rail's answer to a submission: accepted with its reference, or refused at once. */
export type PayoutSubmission =
  | {
      accepted: true;
      /** The rail's reference of the payout (at most 64 characters). */
      reference: string;
      /** When to ask the rail about it first (UTC). */
      checkAt: Date;
    }
  | {
      accepted: false;
      /** Why the rail refused it, for the error message. */
      reason: string;
    };

/** A submitted payout, as the rail is asked about it. */
export interface PayoutQuery {
  rail: string;
  reference: string;
  /** As submitted, decimal text. */
  amount: string;
  /** When it was submitted (UTC). */
  submittedAt: Date;
}

/** What became of a payout, and when to ask again (null: nothing more is expected). */
export interface PayoutStatus {
  state: PayoutState;
  checkAt: Date | null;
}

/** A bank rail. */
export interface PayoutRail {
  /**
   * Submits `payout` at `now`. Never throws for a payout the rail will not take: it answers
   * `accepted: false` (the confirm then answers 400 FIAT_WITHDRAWAL_FAILED with nothing debited).
   * @throws Error when the rail cannot be reached (the confirm fails and rolls back).
   */
  submit(payout: PayoutRequest, now: Date): Promise<PayoutSubmission>;
  /**
   * The state of a submitted payout at `now`: `submitted`, `settled` or `returned` (a payout may be
   * returned after it settled), and when to ask again.
   */
  status(payout: PayoutQuery, now: Date): Promise<PayoutStatus>;
}
