/**
 * Types of the set-based cycle batches (./service.ts `runDueSteps`): which wallets a run covers
 * (its scope), what it writes (notifications, wallets set aside) and what it did. Instants are UTC;
 * amounts integer cents.
 */
import type { CreditEventType, WalletDetails } from "../../../domain/credit/events.js";
import type { SetAsideLogger, SetAsideWallet } from "../set-aside.js";

/** Which wallets a run covers: the real-time tenants (no `credit_clock` row), or one tenant's wallets on its sandbox clock. */
export type CycleScope = { kind: "real-time" } | { kind: "tenant"; customerId: string };

/** The real-time scope (tenants without a sandbox clock). */
export const REAL_TIME: CycleScope = { kind: "real-time" };

/** A notification written by a batch (spec `CreditNotification`, plus the instant `at`, UTC). */
export interface EmittedNotification {
  walletId: string;
  type: CreditEventType;
  amount: number;
  direction: "debit" | "credit";
  affectsBalance: boolean;
  walletDetails_after: WalletDetails;
  sequence: number;
  at: Date;
}

/**
 * What a run did: instants walked, wallets closed, holds expired (docs/decisions/credit.md
 * "Authorizations"), statements whose grace ended, statements cut, events written; `notifications` only when asked for; the wallets set aside by this run.
 * `complete`: every step due at or before `until` has run; otherwise the run stopped early (an
 * option's limit) and `reached` is the last instant whose steps all ran (null when none ran):
 * every step due at or before `reached` has run, none after it.
 */
export interface DueStepsResult {
  instants: number;
  closes: number;
  /** Holds released by their expiry (`Autorizacion Liberada` written by the expiry step). */
  expiries: number;
  graceEnds: number;
  cuts: number;
  events: number;
  notifications: EmittedNotification[];
  setAside: SetAsideWallet[];
  complete: boolean;
  reached: Date | null;
}

/** Options of {@link runDueSteps}. */
export interface DueStepsOptions {
  /** Return the notifications written, in emission order (instant, step, wallet, sequence). Default false (the real-time job does not need them). */
  collect?: boolean;
  /**
   * Set `as_of` = `until` on every wallet of the scope whose clock is behind it, as the engine's
   * `advance` does. Default: true for a tenant scope, false for real time (there `as_of` stays at the
   * last step run: nothing is due between it and `until`, and rewriting every wallet each minute would
   * only add writes).
   */
  settle?: boolean;
  /** Stop after this many instants (tests of an interrupted batch). */
  maxInstants?: number;
  /**
   * Stop before the next instant once `Date.now()` has reached this epoch-milliseconds deadline; at
   * least one instant runs per call (the sandbox clock's chunks, docs/security.md "The sandbox clock").
   */
  deadline?: number;
  /** Stop before the next instant once this many events have been written (at least one instant runs). */
  maxEvents?: number;
  /**
   * Logs one error per wallet set aside, as soon as the step that sets it aside has run. Leave it out
   * when the run is inside a transaction that may still roll back, and log `setAside` after commit.
   */
  logger?: SetAsideLogger;
}
