/**
 * What becomes of a confirmed fiat withdrawal's payout (docs/decisions/fiat.md "Fiat withdrawals"):
 * the recurring job `payout-settlement` (every `PAYOUT_INTERVAL_S`) claims the payouts due for a
 * look at their rail, one per transaction (`FOR UPDATE … SKIP LOCKED`, so parallel rounds never
 * take the same one), asks the rail (src/modules/payouts/rail.ts) and records the answer:
 * `submitted` → `settled`, or → `returned`. A returned payout gives the amount back: the
 * withdrawal becomes `FAILED`, a `withdrawal_reversal` ledger entry moves the amount from the rail's
 * external account to the wallet's available, a `withdrawal_reversal` wallet transaction is written
 * and `withdrawal.failed` is queued for the customer's webhook, all in that one transaction.
 * Exactly once: the withdrawal's row lock and its state (`COMPLETED`, payout not yet `returned`)
 * are checked under that lock, and a returned payout is never due again.
 */
import type { Logger } from "pino";
import { format8, money } from "../../domain/money.js";
import type { Db, Tx } from "../../db/sql.js";
import type { JobSpec } from "../../jobs/port.js";
import type { LedgerService } from "../ledger/service.js";
import type { PayoutRail } from "../payouts/rail.js";
import { claimDuePayout, deferPayout, savePayout, type LockedWithdrawal } from "./repository.js";
import { reverseWithdrawal, type WithdrawalEvents } from "./reversal.js";

export type { WithdrawalEvents } from "./reversal.js";

/** Name of the settlement job (src/jobs/registry.ts). */
export const PAYOUT_JOB = "payout-settlement";
/** How long a payout whose look at the rail failed waits before the next, milliseconds. */
export const RETRY_AFTER_MS = 30_000;

/** The settlement of fiat payouts. */
export class PayoutSettlement {
  constructor(
    private readonly db: Db,
    private readonly ledger: LedgerService,
    private readonly rail: PayoutRail,
    private readonly events: WithdrawalEvents,
    private readonly logger: Logger,
  ) {}

  /** The job `payout-settlement`: a round of {@link settleDue} every `intervalS` seconds (`PAYOUT_INTERVAL_S`), one at a time per worker. */
  jobs(intervalS: number): JobSpec[] {
    return [{ name: PAYOUT_JOB, run: async () => {
      await this.settleDue();
    }, concurrency: 1, everyS: intervalS }];
  }

  /**
   * A round: claims due payouts one by one, each in its own transaction, until none is due or
   * `limit` were handled. A payout whose look fails (the rail unreachable) is logged and put off
   * {@link RETRY_AFTER_MS}, so it does not hold up the others; its transaction changed nothing.
   * @returns how many were handled (failed looks included).
   * @throws the database's error (the round stops; what is due stays due).
   */
  async settleDue(limit = 100): Promise<number> {
    let handled = 0;
    while (handled < limit) {
      let claimed: string | undefined;
      try {
        const found = await this.db.transaction(async (tx) => {
          const locked = await claimDuePayout(tx, new Date());
          if (!locked) return false;
          claimed = locked.withdrawal.id;
          await this.advance(tx, locked);
          return true;
        });
        if (!found) break;
      } catch (error) {
        if (claimed === undefined) throw error;
        this.logger.error({ err: error, withdrawalId: claimed }, "fiat payout: the look at the rail failed; retried later");
        await deferPayout(this.db, claimed, new Date(Date.now() + RETRY_AFTER_MS));
      }
      handled += 1;
    }
    return handled;
  }

  /** Asks the rail about the locked payout and records what it says, in `tx`. */
  private async advance(tx: Tx, locked: LockedWithdrawal): Promise<void> {
    const w = locked.withdrawal;
    const open = w.status === "COMPLETED" && (w.payoutState === "submitted" || w.payoutState === "settled");
    if (!open || w.payoutRail == null || w.payoutReference == null || w.completedAt == null) {
      w.payoutDueAt = null; // nothing more to ask
      await savePayout(tx, w);
      return;
    }
    const now = new Date();
    const status = await this.rail.status({ rail: w.payoutRail, reference: w.payoutReference, amount: money(w.amount).toFixed(), submittedAt: w.completedAt }, now);
    if (status.state === "returned") {
      await this.reverse(tx, locked, now);
      return;
    }
    w.payoutState = status.state;
    w.payoutDueAt = status.checkAt;
    await savePayout(tx, w);
  }

  /** COMPLETED → FAILED for a returned payout, in `tx` (the row locked, the state checked): ./reversal.ts. */
  private async reverse(tx: Tx, locked: LockedWithdrawal, now: Date): Promise<void> {
    const w = locked.withdrawal;
    w.payoutState = "returned";
    w.payoutDueAt = null;
    await reverseWithdrawal(tx, this.ledger, this.events, locked, {
      hash: w.payoutReference ?? "",
      description: `Returned payout of ${format8(money(w.amount))} ${w.currency.toUpperCase()} to ${w.address} on ${w.network}`,
      errorCode: "FIAT_WITHDRAWAL_FAILED",
      detail: { payout: { rail: w.payoutRail, reference: w.payoutReference, state: "returned" } },
    }, now);
    this.logger.info({ withdrawalId: w.id, rail: w.network, reference: w.payoutReference }, "fiat payout returned: withdrawal failed, amount back to available");
  }
}
