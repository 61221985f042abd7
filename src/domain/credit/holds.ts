/**
 * Holds of card authorizations on a credit wallet's balances (docs/decisions/credit.md
 * "Authorizations"; spec/credit/authorizations.tsp). Pure functions over `Balances`, integer cents.
 *
 * - An approved authorization places a hold: AA falls by its amount, `amountHeld` rises by it; the
 *   debt does not change and no interest accrues on it (the daily close adds principal only).
 * - A release (void, expiry, the rest of a partial capture, a dissolution) takes the hold off and
 *   gives AA back what it took, never more than the balances allow (payments.ts
 *   `reinstatedAvailable`): when interest was booked while holds used up AA, the difference is
 *   overdraft, and a release first absorbs it.
 * - A capture turns up to the held amount into principal (a charge dated at the capture) and
 *   releases the rest, in one step, so it never fails on AA: the merchant was promised the amount.
 * Invariant (payments.ts module note): AA + held + AO + IO − overdraft ≤ limit.
 */
import { cents } from "./outcome.js";
import { reinstatedAvailable, type Balances } from "./payments.js";

/** An open hold: an approved authorization not yet captured, voided or expired. Amount in cents; instants UTC. */
export interface Hold {
  authorizationId: string;
  amount: number;
  createdAt: Date;
  /** The daily close (00:00 UTC) at which the hold expires unless captured or voided first. */
  expiresAt: Date;
  /** The card it was authorized on (docs/decisions/cards.md); absent for an authorization on the wallet. Its events carry it. */
  cardId?: string;
}

/** Places a hold of `amount` cents (the caller checked amount ≤ AA): AA − amount, held + amount. */
export function placeHold(b: Balances, amount: number): Balances {
  cents(amount);
  if (amount <= 0 || amount > b.availableAmount) throw new RangeError(`a hold must be positive and within the available amount, got ${amount} of ${b.availableAmount}`);
  return { ...b, availableAmount: b.availableAmount - amount, amountHeld: b.amountHeld + amount };
}

/**
 * Takes a hold of `held` cents off and books `captured` (0 ≤ captured ≤ held) of it as principal.
 * AA gets back the uncaptured rest, capped by payments.ts `reinstatedAvailable` of the result.
 * Returns the balances and `restored`, the cents AA got back.
 * @throws RangeError when the amounts are not safe integers or `captured` is outside [0, held] (a programming error).
 */
export function settleHold(b: Balances, held: number, captured: number): { balances: Balances; restored: number } {
  cents(held);
  cents(captured);
  if (captured < 0 || captured > held || held > b.amountHeld) throw new RangeError(`cannot settle ${captured} of a hold of ${held} (held ${b.amountHeld})`);
  const after: Balances = { ...b, amountHeld: b.amountHeld - held, principalOutstanding: b.principalOutstanding + captured };
  const restored = Math.min(held - captured, Math.max(0, reinstatedAvailable(after) - b.availableAmount));
  after.availableAmount = b.availableAmount + restored;
  return { balances: after, restored };
}
