/**
 * Refunds of captured card authorizations on a credit wallet (docs/decisions/cards.md "Refunds";
 * spec/credit/refunds.tsp). A merchant gives back part or all of what it captured; the refund
 * reverses the purchase:
 *
 * - it lowers principal first, then interest, by `appliedAmount` = min(amount, totalDebt);
 * - it gives `appliedAmount` back to the available amount on every product (revolving or not) and
 *   in every wallet state, never above limit − totalDebt − amountHeld (payments.ts
 *   `reinstatedAvailable`): what reduced the overdraft is not given back, as for a payment;
 * - it is not a payment: no statement's `paidInCycle` moves and no default is cured;
 * - a credit wallet never carries a positive balance: what exceeds the debt is `unappliedAmount`,
 *   owed to the cardholder by other means and booked nowhere on the wallet.
 * Emits `Reembolso` (credit, affectsBalance true, amount = appliedAmount, with `unappliedAmount`;
 * with `cardId` when the refunded authorization was a card's).
 *
 * Which authorization is refunded and how much of its capture is left is the store's to check
 * (src/modules/credit/authorizations/): the engine's state keeps only the open holds.
 * Invariant (payments.ts module note): AA + held + AO + IO − overdraft ≤ limit. Amounts in integer
 * cents, instants UTC.
 */
import { makeEvent, walletDetails } from "./events.js";
import { accept, cents, refuse, type Outcome } from "./outcome.js";
import { reinstatedAvailable, totalDebt, type Balances } from "./payments.js";
import { startAt } from "./simulate.js";
import type { CreditProductRules, WalletState } from "./wallet.js";
import { balancesOf, finish, setBalances, type StepResult } from "./work.js";

/** How a refund is applied, in cents: `toPrincipal` + `toInterest` = `applied`; `applied` + `unapplied` = the refund; `restored` went back to AA. */
export interface RefundSplit {
  toPrincipal: number;
  toInterest: number;
  applied: number;
  unapplied: number;
  restored: number;
}

/**
 * Applies a refund of `amount` cents (> 0) to the balances (module note): principal first, then
 * interest, up to the total debt; AA grows by the applied amount, capped by `reinstatedAvailable`.
 * Example: AO 8000, IO 500, AA 1500, limit 10000, refund 9000 → AO 0, IO 0, AA 10000; applied
 * 8500, unapplied 500.
 * @throws RangeError when `amount` is not a positive safe integer (a programming error: `refund` refuses it first).
 */
export function applyRefund(b: Balances, amount: number): { balances: Balances; split: RefundSplit } {
  cents(amount);
  if (amount <= 0) throw new RangeError(`a refund must be positive, got ${amount}`);
  const applied = Math.min(amount, totalDebt(b));
  const toPrincipal = Math.min(applied, b.principalOutstanding);
  const toInterest = applied - toPrincipal;
  const after: Balances = { ...b, principalOutstanding: b.principalOutstanding - toPrincipal, interestOutstanding: b.interestOutstanding - toInterest };
  const restored = Math.min(applied, Math.max(0, reinstatedAvailable(after) - b.availableAmount));
  after.availableAmount = b.availableAmount + restored;
  return { balances: after, split: { toPrincipal, toInterest, applied, unapplied: amount - applied, restored } };
}

/**
 * Refund `amount` cents of a captured authorization at `at` (module note): first runs the steps due
 * up to `at` (./simulate.ts `startAt`), then applies the refund and emits `Reembolso`. Returns the
 * step, `appliedAmount` and `unappliedAmount` (cents; their sum is `amount`).
 * Refusals: `CLOCK_BACKWARDS`, `AMOUNT_NOT_POSITIVE` (422 on `amount`).
 * @throws RangeError when `amount` is not a safe integer (the HTTP schema admits integers only).
 */
export function refund(state: WalletState, product: CreditProductRules, at: Date, input: { amount: number; cardId?: string }): Outcome<StepResult & { appliedAmount: number; unappliedAmount: number }> {
  const started = startAt(state, product, at);
  if (!started.ok) return started;
  const w = started.value;
  if (!Number.isSafeInteger(input.amount)) throw new RangeError(`amount must be a safe integer number of cents, got ${String(input.amount)}`);
  if (!(input.amount > 0)) return refuse("AMOUNT_NOT_POSITIVE", "The refund amount must be a positive number of cents.", "amount");
  const { balances, split } = applyRefund(balancesOf(w.s), input.amount);
  setBalances(w.s, balances);
  const event = makeEvent({
    walletId: w.s.walletId,
    type: "Reembolso",
    amount: split.applied,
    lastSequence: w.s.sequence,
    at,
    details: walletDetails(balances, w.s.interestSpecs, w.s.minimumPaymentSpecs),
    unappliedAmount: split.unapplied,
  });
  if (input.cardId !== undefined) event.cardId = input.cardId;
  w.s.sequence = event.sequence;
  w.events.push(event);
  return accept({ ...finish(w), appliedAmount: split.applied, unappliedAmount: split.unapplied });
}
