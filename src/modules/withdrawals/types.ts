/**
 * The types the withdrawals service shares with its wiring (src/app.ts) and its neighbours: its
 * settings, the push channel of new codes (implemented by the webhooks module), the mailbox PIN
 * outcome (the email poller) and the list filters (the HTTP handlers).
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Caps, CodeLimits } from "../../domain/withdrawals.js";

/** Settings of the withdrawals service (src/config.ts). */
export interface WithdrawalSettings extends CodeLimits {
  /** Lifetime of a confirmation code, seconds. */
  codeTtlS: number;
  /** Caps per currency code (lower case). */
  caps: Readonly<Record<string, Caps>>;
}

/** A new confirmation code of a withdrawal, as pushed to the customer's webhook (`withdrawal.pin`). */
export interface PinEvent {
  customerId: string;
  withdrawalId: string;
  userId: string;
  /** 6 digits when issued by the service, 4–8 when read from the mailbox. */
  code: string;
  /** UTC expiry of the code. */
  expiresAt: Date;
}

/**
 * The push channel of new codes (the customer's webhook, docs/decisions/withdrawals.md "How a code reaches the
 * user", docs/decisions/notifications.md "The PIN webhook"): `enqueuePin` writes
 * the notification to its outbox in the caller's transaction and says whether it did (not when no
 * enabled webhook is configured); `kick` starts its delivery after commit.
 */
export interface PinPush {
  enqueuePin(tx: EntityManager, pin: PinEvent): Promise<boolean>;
  kick(): void;
}

/** Outcome of {@link WithdrawalService.applyMailboxPin}. */
export type MailboxPinOutcome = "applied" | "not-found" | "not-pending";

/** Filters of List Withdrawals. */
export interface WithdrawalFilter {
  status?: "PENDING" | "COMPLETED" | "CANCELLED";
  currency?: string;
  sort: "ASC" | "DESC";
}
