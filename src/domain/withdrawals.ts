/**
 * Pure rules of two-step crypto withdrawals (reference: "States and transitions › Withdrawal";
 * docs/decisions/withdrawals.md). No I/O: the withdrawals service asks these functions.
 */
import { randomInt } from "node:crypto";
import { DomainError } from "./errors.js";

/**
 * Withdrawal status (reference: statuses are uppercase). `FAILED`: confirmed, then failed
 * afterwards (a fiat payout returned by the bank), its amount back in available
 * (docs/decisions/fiat.md "Fiat withdrawals").
 */
export type WithdrawalStatus = "PENDING" | "COMPLETED" | "CANCELLED" | "FAILED";

/** The path a withdrawal was made on: an address on a network, or a bank account on its currency's rail. */
export type WithdrawalType = "crypto" | "fiat";

/** A fiat payout's state on its rail: `submitted` at confirm, then `settled`, or `returned` (docs/decisions/fiat.md "Fiat withdrawals"). */
export type PayoutState = "submitted" | "settled" | "returned";

/** Decimals a fiat withdrawal's amount may have (cents). */
export const FIAT_DECIMALS = 2;

/** Digits of a confirmation code (docs/decisions/withdrawals.md "The code"). */
export const CODE_DIGITS = 6;

/** A new confirmation code: 6 digits from the CSPRNG, leading zeros kept (e.g. `"042917"`). */
export function newConfirmationCode(): string {
  return String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, "0");
}

/**
 * @throws DomainError ALREADY_CONFIRMED (400) for a COMPLETED or FAILED withdrawal, BAD_REQUEST (400) for a
 * CANCELLED one: only PENDING withdrawals can be confirmed.
 */
export function assertConfirmable(status: WithdrawalStatus): void {
  if (status === "COMPLETED" || status === "FAILED") throw new DomainError("ALREADY_CONFIRMED", "This withdrawal has already been confirmed.");
  if (status === "CANCELLED") throw new DomainError("BAD_REQUEST", "This withdrawal has been cancelled and cannot be confirmed.");
}

/**
 * Resend Code: only a PENDING withdrawal gets a new code.
 * @throws DomainError ALREADY_CONFIRMED (400) for COMPLETED or FAILED, BAD_REQUEST (400) for CANCELLED.
 */
export function assertResendable(status: WithdrawalStatus): void {
  if (status === "COMPLETED" || status === "FAILED") throw new DomainError("ALREADY_CONFIRMED", "This withdrawal has already been confirmed; no code is needed.");
  if (status === "CANCELLED") throw new DomainError("BAD_REQUEST", "This withdrawal has been cancelled; no code is needed.");
}

/**
 * Cancel: PENDING → CANCELLED. A COMPLETED withdrawal's transfer cannot be reversed.
 * A FAILED one's amount is already back in available.
 * @throws DomainError ALREADY_CONFIRMED (400) for COMPLETED, BAD_REQUEST (400) for CANCELLED or FAILED.
 */
export function assertCancellable(status: WithdrawalStatus): void {
  if (status === "COMPLETED") throw new DomainError("ALREADY_CONFIRMED", "This withdrawal has been completed; its transfer cannot be reversed.");
  if (status === "FAILED") throw new DomainError("BAD_REQUEST", "This withdrawal has failed; its amount is already back in available.");
  if (status === "CANCELLED") throw new DomainError("BAD_REQUEST", "This withdrawal has already been cancelled.");
}

/** The stored state of a withdrawal's current code and of its code history. */
export interface CodeState {
  /** Wrong codes sent since the current code was issued. */
  attempts: number;
  /** Wrong codes sent over the withdrawal's life, every code counted. */
  failuresTotal: number;
  expiresAt: Date;
}

/** Limits of a withdrawal's codes (src/config.ts; docs/decisions/withdrawals.md "The code"). */
export interface CodeLimits {
  /** `WITHDRAWAL_CODE_MAX_ATTEMPTS`: wrong codes of one code before confirm answers 403 until Resend Code. */
  maxAttempts: number;
  /** `WITHDRAWAL_CODE_MAX_TOTAL_ATTEMPTS`: wrong codes over the withdrawal's life; reaching it cancels the withdrawal. */
  maxTotalAttempts: number;
  /** `WITHDRAWAL_CODE_MAX_RESENDS`: Resend Code calls a withdrawal allows. */
  maxResends: number;
  /** `WITHDRAWAL_CODE_RESEND_INTERVAL_S`: seconds a new code must wait after the previous one. */
  resendIntervalS: number;
}

/**
 * What a confirm attempt amounts to: `blocked` (403 until Resend Code), `expired`, `wrong`,
 * `exhausted` (a wrong code that reaches the withdrawal's life-time limit: the withdrawal is
 * cancelled and its hold released), or `right`.
 */
export type CodeVerdict = "blocked" | "expired" | "wrong" | "exhausted" | "right";

/**
 * Judges a confirm attempt (docs/decisions/withdrawals.md "The code"): after `maxAttempts` wrong codes every confirm is
 * `blocked` (403) until Resend Code; otherwise an expired code is `expired`, else `right` or
 * `wrong` by `matches` (a constant-time comparison done by the caller); a wrong code that makes
 * `maxTotalAttempts` wrong codes over the withdrawal's life is `exhausted`. Guessing a 6-digit code
 * therefore succeeds with probability at most `maxTotalAttempts` / 10⁶ per withdrawal.
 */
export function judgeCode(state: CodeState, now: Date, limits: Pick<CodeLimits, "maxAttempts" | "maxTotalAttempts">, matches: boolean): CodeVerdict {
  if (state.attempts >= limits.maxAttempts) return "blocked";
  if (now.getTime() >= state.expiresAt.getTime()) return "expired";
  if (matches) return "right";
  return state.failuresTotal + 1 >= limits.maxTotalAttempts ? "exhausted" : "wrong";
}

/** The error a non-`right` verdict answers. */
export function codeError(verdict: Exclude<CodeVerdict, "right">, limits: Pick<CodeLimits, "maxAttempts" | "maxTotalAttempts">): DomainError {
  switch (verdict) {
    case "blocked":
      return new DomainError("WITHDRAWAL_BLOCKED", `Too many wrong codes (${limits.maxAttempts}): request a new code with Resend Code.`);
    case "exhausted":
      return new DomainError(
        "WITHDRAWAL_BLOCKED",
        `Too many wrong codes over this withdrawal's life (${limits.maxTotalAttempts}): it has been cancelled and its amount released; start a new withdrawal.`,
      );
    case "expired":
      return new DomainError("CONFIRMATION_CODE_EXPIRED", "The confirmation code has expired: request a new one with Resend Code.", "code");
    case "wrong":
      return new DomainError("CONFIRMATION_CODE_INVALID", "The confirmation code is not valid.", "code");
  }
}

/** What Resend Code needs to know of a withdrawal's codes. */
export interface ResendState {
  /** Resend Code calls that issued a code so far. */
  resends: number;
  /** When the current code was issued (UTC). */
  issuedAt: Date;
}

/**
 * Resend Code's limits (docs/decisions/withdrawals.md "The code"): at most `maxResends` new codes per withdrawal, each at
 * least `resendIntervalS` after the previous code.
 * @throws DomainError WITHDRAWAL_BLOCKED (403) when the resends are used up (cancel and start a new
 *   withdrawal), RATE_LIMIT_EXCEEDED (429, with `retryAfterS`) within the interval.
 */
export function assertResendAllowed(state: ResendState, now: Date, limits: Pick<CodeLimits, "maxResends" | "resendIntervalS">): void {
  if (state.resends >= limits.maxResends) {
    throw new DomainError("WITHDRAWAL_BLOCKED", `This withdrawal has had its ${limits.maxResends} new codes: cancel it and start a new one.`);
  }
  const waitMs = state.issuedAt.getTime() + limits.resendIntervalS * 1000 - now.getTime();
  if (waitMs > 0) {
    const retryAfterS = Math.ceil(waitMs / 1000);
    throw new DomainError("RATE_LIMIT_EXCEEDED", `A new code can be requested ${limits.resendIntervalS} s after the previous one; retry in ${retryAfterS} s.`, undefined, retryAfterS);
  }
}
