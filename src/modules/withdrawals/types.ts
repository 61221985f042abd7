/**
 * The types the withdrawals service shares with its wiring (src/app.ts) and its neighbours: its
 * settings, the push channel of new codes (implemented by the webhooks module), the mailbox PIN
 * outcome (the email poller) and the list filters (the HTTP handlers).
 */
import type { Sql } from "../../db/sql.js";
import type { MovementKind } from "../../domain/limits.js";
import type { CodeLimits, WithdrawalStatus } from "../../domain/withdrawals.js";

/** Settings of the withdrawals service (src/config.ts). */
export interface WithdrawalSettings extends CodeLimits {
  /** Lifetime of a confirmation code, seconds. */
  codeTtlS: number;
}

/**
 * The caps check of Initiate Withdrawal (src/modules/limits/service.ts `LimitsService`;
 * docs/decisions/limits-and-allowlist.md "Limits"): called in the initiate's transaction before
 * the withdrawal is written; it locks the user's kind and currency until that transaction ends.
 * @throws DomainError WITHDRAWAL_LIMIT_EXCEEDED, DAILY_LIMIT_EXCEEDED, MONTHLY_LIMIT_EXCEEDED (400).
 */
export interface MovementLimits {
  checkMovement(tx: Sql, m: { customerId: string; userId: string; kind: MovementKind; currency: string; amount: string; now: Date }): Promise<void>;
}

/**
 * The allowlist check of Initiate Withdrawal (src/modules/allowlist/service.ts `AllowlistService`;
 * docs/decisions/limits-and-allowlist.md "Destination allowlist"): passes unless the customer
 * requires allowlisted destinations and `address` is not `ACTIVE` on the user's list at `now`.
 * @throws DomainError INVALID_ADDRESS (400).
 */
export interface DestinationPolicy {
  assertDestinationAllowed(d: { customerId: string; userId: string; currency: string; address: string; now: Date }): Promise<void>;
}

/** The checks the withdrawals service asks other modules for: caps and the allowlist. */
export interface WithdrawalGuards {
  limits: MovementLimits;
  destinations: DestinationPolicy;
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
  enqueuePin(tx: Sql, pin: PinEvent): Promise<boolean>;
  kick(): void;
}

/** Outcome of {@link WithdrawalService.applyProviderPin}: the PIN became the code, or why it did not. */
export type ProviderPinOutcome = "applied" | "invalid-pin" | "not-found" | "not-pending";

/** Filters of List Withdrawals. */
export interface WithdrawalFilter {
  status?: WithdrawalStatus;
  currency?: string;
  sort: "ASC" | "DESC";
}
