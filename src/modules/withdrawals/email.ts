/** The email that carries a withdrawal's confirmation code to its user (spec/platform/withdrawals.tsp, "Confirm Withdrawal"). */
import { format8 } from "../../domain/money.js";
import type { EmailMessage } from "../mail/service.js";
import type { WithdrawalRecord, WithdrawalUser } from "./repository.js";

/** A code lifetime in words: `45 seconds`, `1 minute`, `10 minutes` (whole minutes from 2 minutes up). */
export function lifetime(seconds: number): string {
  if (seconds < 120) return seconds === 60 ? "1 minute" : `${seconds} seconds`;
  return `${Math.floor(seconds / 60)} minutes`;
}

/**
 * The code email of withdrawal `w` to `user`: the amount (8 decimals), destination and network, the
 * withdrawal's id, `code`, and its expiry (`w.codeExpiresAt`, ISO 8601 UTC, and `codeTtlS` in words).
 * Its reference `withdrawal:<id>` ties it to the withdrawal in the outbox.
 */
export function codeEmail(user: Pick<WithdrawalUser, "email" | "firstName">, w: WithdrawalRecord, code: string, codeTtlS: number): EmailMessage {
  const expires = w.codeExpiresAt.toISOString();
  return {
    customerId: w.customerId,
    to: user.email,
    subject: `Confirm your withdrawal ${w.id}`,
    text: [
      `Hello ${user.firstName},`,
      "",
      `A withdrawal of ${format8(w.amount)} ${w.currency.toUpperCase()} to ${w.address} (${w.network}) is waiting for your confirmation.`,
      "",
      `Withdrawal: ${w.id}`,
      `Confirmation code: ${code}`,
      `The code expires at ${expires} (in ${lifetime(codeTtlS)}) and works once.`,
      "",
      "If you did not ask for this withdrawal, do not share the code and cancel the withdrawal.",
    ].join("\n"),
    reference: `withdrawal:${w.id}`,
  };
}
