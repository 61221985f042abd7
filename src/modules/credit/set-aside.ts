/**
 * Wallets set aside (docs/security.md "Money stays exact"): shared by the wallet changes
 * (./accounts/changes.ts), the cycle batches (./cycles/) and the sandbox clock (./clock/). A wallet
 * whose next step would take an amount beyond ±(2^53 − 1) cents ({@link MAX_CENTS}) is set aside
 * (`set_aside_at`, `set_aside_reason`): its steps stop, reads still answer, changes are refused (409).
 */

/** 2^53 − 1: the largest amount of cents the credit core stores or returns (docs/security.md "Money stays exact"). */
export const MAX_CENTS = 9007199254740991;

/** A wallet a run set aside (docs/security.md "Money stays exact"): which, whose, why (the text stored in `set_aside_reason`) and the instant (UTC) whose steps it was set aside before. */
export interface SetAsideWallet {
  walletId: string;
  customerId: string;
  reason: string;
  at: Date;
}

/**
 * Logs each wallet a run set aside, one error each (the metric `credit_wallets_set_aside` counts
 * them at scrape time): runDueSteps with a `logger`, or the sandbox clock after its chunk commits.
 */
export function reportSetAside(logger: SetAsideLogger, wallets: readonly SetAsideWallet[]): void {
  for (const { at, ...wallet } of wallets) {
    logger.error({ ...wallet, at: at.toISOString() }, "credit wallet set aside: its next cycle step would leave the exact range of amounts");
  }
}

/** Where a run reports the wallets it sets aside: one `error` per wallet (pino's signature). */
export interface SetAsideLogger {
  error(obj: object, msg: string): void;
}
