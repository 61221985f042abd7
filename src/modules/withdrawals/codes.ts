/**
 * The life of a withdrawal's confirmation codes (spec/platform/withdrawals.tsp; the rules themselves are
 * src/domain/withdrawals.ts): generation, storage as a keyed hash bound to the withdrawal,
 * expiry after `WITHDRAWAL_CODE_TTL_S`, verification with its attempt counters, and Resend Code's
 * limits. Only the record's fields change here; the caller holds the withdrawal's row lock and
 * writes the change in its transaction (store.ts `saveWithdrawal`).
 */
import type { DomainError } from "../../domain/errors.js";
import { assertResendAllowed, codeError, judgeCode, newConfirmationCode, type CodeLimits, type CodeVerdict } from "../../domain/withdrawals.js";
import type { SecretBox } from "../identity/secrets.js";
import type { WithdrawalRecord } from "./repository.js";

/** The code settings: the limits and `codeTtlS`, the lifetime of a code in seconds. */
export interface CodeSettings extends CodeLimits {
  codeTtlS: number;
}

/** The code lifecycle of withdrawals, under the service's keyed hash (`SecretBox`). */
export class WithdrawalCodes {
  constructor(
    private readonly box: SecretBox,
    private readonly settings: CodeSettings,
  ) {}

  /** Lifetime of a code, seconds. */
  get ttlS(): number {
    return this.settings.codeTtlS;
  }

  /** Generates a new 6-digit code and makes it `w`'s current one ({@link set}). @returns the code, to deliver. */
  issue(w: WithdrawalRecord): string {
    const code = newConfirmationCode();
    this.set(w, code);
    return code;
  }

  /**
   * Makes `code` (issued here, or a 4–8 digit PIN read from the customer's mailbox) `w`'s current
   * code: its keyed hash, issued now, expiring `codeTtlS` later, attempts since issue reset (the
   * life-time count of wrong codes is kept). The previous code no longer matches.
   */
  set(w: WithdrawalRecord, code: string): void {
    w.codeHash = this.box.hash(material(w.id, code));
    w.codeIssuedAt = new Date();
    w.codeExpiresAt = new Date(w.codeIssuedAt.getTime() + this.settings.codeTtlS * 1000);
    w.codeAttempts = 0;
  }

  /**
   * Judges `code` against `w`'s current code now (`judgeCode`: blocked, expired, right, wrong or
   * exhausted) and counts a wrong or exhausting one in both counters. `exhausted` means the
   * caller cancels the withdrawal in the same transaction.
   */
  verify(w: WithdrawalRecord, code: string): CodeVerdict {
    const matches = typeof w.codeHash === "string" && this.box.matches(material(w.id, code), w.codeHash);
    const verdict = judgeCode({ attempts: w.codeAttempts, failuresTotal: w.codeFailuresTotal, expiresAt: w.codeExpiresAt }, new Date(), this.settings, matches);
    if (verdict === "wrong" || verdict === "exhausted") {
      w.codeAttempts += 1;
      w.codeFailuresTotal += 1;
    }
    return verdict;
  }

  /**
   * The error a verdict other than `right` answers: WITHDRAWAL_BLOCKED (403), CONFIRMATION_CODE_EXPIRED,
   * CONFIRMATION_CODE_INVALID (400).
   */
  refusal(verdict: Exclude<CodeVerdict, "right">): DomainError {
    return codeError(verdict, this.settings);
  }

  /**
   * Resend Code: checks its limits, issues a new code ({@link issue}) and counts the resend.
   * @returns the new code.
   * @throws DomainError WITHDRAWAL_BLOCKED (403, resends used up), RATE_LIMIT_EXCEEDED (429, too soon; `retryAfterS`).
   */
  reissue(w: WithdrawalRecord): string {
    assertResendAllowed({ resends: w.codeResends, issuedAt: w.codeIssuedAt }, new Date(), this.settings);
    const code = this.issue(w);
    w.codeResends += 1;
    return code;
  }
}

/** What the keyed hash covers: the code bound to its withdrawal. */
function material(withdrawalId: string, code: string): string {
  return `withdrawal-code:${withdrawalId}:${code}`;
}
