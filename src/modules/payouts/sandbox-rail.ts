/**
 * The sandbox's bank rail (docs/decisions/fiat.md "Fiat withdrawals", docs/decisions/provider-and-sandbox.md):
 * deterministic, with magic amounts. A payout of `13.13` is refused at once; every other payout
 * settles {@link SETTLE_AFTER_MS} after its submission; a payout of `66.66` settles, then is
 * returned {@link RETURN_AFTER_MS} after settling. Its state is computed from the submission time,
 * so it keeps no state of its own and survives restarts.
 */
import { randomBytes } from "node:crypto";
import { money } from "../../domain/money.js";
import type { PayoutQuery, PayoutRail, PayoutRequest, PayoutStatus, PayoutSubmission } from "./rail.js";

/** The amount the sandbox rail refuses at once. */
export const REFUSED_AMOUNT = "13.13";
/** The amount the sandbox rail settles, then returns. */
export const RETURNED_AMOUNT = "66.66";
/** Milliseconds from submission to settlement. */
export const SETTLE_AFTER_MS = 1000;
/** Milliseconds from settlement to the return of a {@link RETURNED_AMOUNT} payout. */
export const RETURN_AFTER_MS = 2000;

const is = (amount: string, magic: string): boolean => money(amount).eq(money(magic));

/** The sandbox rail, for every fiat rail of the sandbox catalogue. */
export class SandboxRail implements PayoutRail {
  /** Refuses {@link REFUSED_AMOUNT}; accepts anything else with a reference `<RAIL>-<10 hex>` (e.g. `SEPA-7F3A9C2E1B`). */
  submit(payout: PayoutRequest, now: Date): Promise<PayoutSubmission> {
    if (is(payout.amount, REFUSED_AMOUNT)) {
      return Promise.resolve({ accepted: false, reason: `the sandbox ${payout.rail} rail refuses payouts of ${REFUSED_AMOUNT}` });
    }
    const prefix = (payout.rail.split("/").pop() ?? "rail").toUpperCase();
    const reference = `${prefix}-${randomBytes(5).toString("hex").toUpperCase()}`;
    return Promise.resolve({ accepted: true, reference, checkAt: new Date(now.getTime() + SETTLE_AFTER_MS) });
  }

  /** `submitted` until {@link SETTLE_AFTER_MS} after submission, then `settled`; a {@link RETURNED_AMOUNT} payout `returned` {@link RETURN_AFTER_MS} later. */
  status(payout: PayoutQuery, now: Date): Promise<PayoutStatus> {
    const settledAt = payout.submittedAt.getTime() + SETTLE_AFTER_MS;
    if (now.getTime() < settledAt) return Promise.resolve({ state: "submitted", checkAt: new Date(settledAt) });
    if (!is(payout.amount, RETURNED_AMOUNT)) return Promise.resolve({ state: "settled", checkAt: null });
    const returnedAt = settledAt + RETURN_AFTER_MS;
    if (now.getTime() < returnedAt) return Promise.resolve({ state: "settled", checkAt: new Date(returnedAt) });
    return Promise.resolve({ state: "returned", checkAt: null });
  }
}
