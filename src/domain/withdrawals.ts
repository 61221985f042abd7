/**
 * Pure rules of two-step crypto withdrawals (reference: "States and transitions › Withdrawal";
 * decisions.md §4). No I/O: the withdrawals service asks these functions.
 */
import { randomInt } from "node:crypto";
import { DomainError } from "./errors.js";
import { money, type Money } from "./money.js";

/** Withdrawal status (reference: statuses are uppercase). */
export type WithdrawalStatus = "PENDING" | "COMPLETED" | "CANCELLED";

/** Digits of a confirmation code (decisions.md §4). */
export const CODE_DIGITS = 6;

/** A new confirmation code: 6 digits from the CSPRNG, leading zeros kept (e.g. `"042917"`). */
export function newConfirmationCode(): string {
  return String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, "0");
}

/**
 * @throws DomainError ALREADY_CONFIRMED (400) for a COMPLETED withdrawal, BAD_REQUEST (400) for a
 * CANCELLED one: only PENDING withdrawals can be confirmed.
 */
export function assertConfirmable(status: WithdrawalStatus): void {
  if (status === "COMPLETED") throw new DomainError("ALREADY_CONFIRMED", "This withdrawal has already been confirmed.");
  if (status === "CANCELLED") throw new DomainError("BAD_REQUEST", "This withdrawal has been cancelled and cannot be confirmed.");
}

/**
 * Resend Code: only a PENDING withdrawal gets a new code.
 * @throws DomainError ALREADY_CONFIRMED (400) for COMPLETED, BAD_REQUEST (400) for CANCELLED.
 */
export function assertResendable(status: WithdrawalStatus): void {
  if (status === "COMPLETED") throw new DomainError("ALREADY_CONFIRMED", "This withdrawal has already been confirmed; no code is needed.");
  if (status === "CANCELLED") throw new DomainError("BAD_REQUEST", "This withdrawal has been cancelled; no code is needed.");
}

/**
 * Cancel: PENDING → CANCELLED. A COMPLETED withdrawal's transfer cannot be reversed.
 * @throws DomainError ALREADY_CONFIRMED (400) for COMPLETED, BAD_REQUEST (400) for CANCELLED.
 */
export function assertCancellable(status: WithdrawalStatus): void {
  if (status === "COMPLETED") throw new DomainError("ALREADY_CONFIRMED", "This withdrawal has been completed; its transfer cannot be reversed.");
  if (status === "CANCELLED") throw new DomainError("BAD_REQUEST", "This withdrawal has already been cancelled.");
}

/** The stored state of a withdrawal's current code. */
export interface CodeState {
  /** Wrong codes sent since the code was issued. */
  attempts: number;
  expiresAt: Date;
}

/** What a confirm attempt amounts to, before and regardless of the code's value where it matters. */
export type CodeVerdict = "blocked" | "expired" | "wrong" | "right";

/**
 * Judges a confirm attempt (decisions.md §4): after `maxAttempts` wrong codes every confirm is
 * `blocked` (403) until Resend Code; otherwise an expired code is `expired`, else `right` or
 * `wrong` by `matches` (a constant-time comparison done by the caller).
 */
export function judgeCode(state: CodeState, now: Date, maxAttempts: number, matches: boolean): CodeVerdict {
  if (state.attempts >= maxAttempts) return "blocked";
  if (now.getTime() >= state.expiresAt.getTime()) return "expired";
  return matches ? "right" : "wrong";
}

/** The error a non-`right` verdict answers. */
export function codeError(verdict: Exclude<CodeVerdict, "right">, maxAttempts: number): DomainError {
  switch (verdict) {
    case "blocked":
      return new DomainError("WITHDRAWAL_BLOCKED", `Too many wrong codes (${maxAttempts}): request a new code with Resend Code.`);
    case "expired":
      return new DomainError("CONFIRMATION_CODE_EXPIRED", "The confirmation code has expired: request a new one with Resend Code.", "code");
    case "wrong":
      return new DomainError("CONFIRMATION_CODE_INVALID", "The confirmation code is not valid.", "code");
  }
}

/** Caps of one currency, decimal strings (src/config.ts `WithdrawalCap`). */
export interface Caps {
  perWithdrawal: string;
  daily: string;
  monthly: string;
}

/**
 * Checks a new withdrawal of `amount` against the caps, given what the user already withdrew
 * (PENDING and COMPLETED) this UTC day and this UTC month.
 * @throws DomainError WITHDRAWAL_LIMIT_EXCEEDED, DAILY_LIMIT_EXCEEDED, MONTHLY_LIMIT_EXCEEDED (400).
 */
export function assertWithinCaps(amount: Money, caps: Caps | undefined, usedToday: Money, usedThisMonth: Money): void {
  if (!caps) return;
  if (amount.gt(money(caps.perWithdrawal))) {
    throw new DomainError("WITHDRAWAL_LIMIT_EXCEEDED", `A single withdrawal may be at most ${caps.perWithdrawal}.`, "amount");
  }
  if (usedToday.plus(amount).gt(money(caps.daily))) {
    throw new DomainError("DAILY_LIMIT_EXCEEDED", `Withdrawals may total at most ${caps.daily} per UTC day.`, "amount");
  }
  if (usedThisMonth.plus(amount).gt(money(caps.monthly))) {
    throw new DomainError("MONTHLY_LIMIT_EXCEEDED", `Withdrawals may total at most ${caps.monthly} per UTC month.`, "amount");
  }
}

/** Start of the UTC day and of the UTC month of `now`. */
export function capPeriods(now: Date): { dayStart: Date; monthStart: Date } {
  return {
    dayStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())),
    monthStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
  };
}
