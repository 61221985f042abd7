/**
 * Balance movements of a credit wallet: charges, payments and their split, interest booking, the
 * overdraft, revolving reinstatement of the available amount and limit raises (docs/decisions/credit.md "Payments, charges and the overdraft";
 * reference "Credit wallet (credit core)", "Credit core" day-to-day operations; spec/credit/payments.tsp,
 * charges.tsp, wallets.tsp). Pure functions over `Balances`; amounts are integer cents (JS safe integers).
 *
 * Overdraft (the reference names `amountOverdraft` without a rule; these are the engine's choices):
 * - what the debt and the open holds together exceed the limit by: `amountOverdraft` =
 *   max(0, totalDebt + amountHeld − limit) (spec `CreditWallet.amountOverdraft`); without holds, the
 *   debt above the limit. A hold (docs/decisions/credit.md "Authorizations", ./holds.ts) is a promise
 *   to a merchant: interest booked while the holds use up the available amount becomes overdraft;
 * - booked interest lowers the available amount like a charge does, and when the available amount
 *   cannot take it all, AA stays at 0 and the rest is overdraft (debt above the limit);
 * - a payment reduces the overdraft first: the part of a payment that brings the debt back down to the
 *   limit is not restored to AA, only the rest is (card issuers apply payments to the over-limit
 *   amount before any open-to-buy is reinstated, and a line must never show AA while it is over its
 *   limit). The overdraft is not a third debt bucket: the payment itself is split between interest and
 *   principal only, and `toOverdraft` reports how much of it reduced the overdraft;
 * - a limit raise absorbs the overdraft first, then adds the rest to AA.
 * Invariant kept by every function here and in ./holds.ts: AA ≥ 0, AO ≥ 0, IO ≥ 0, held ≥ 0 and
 * AA + held + AO + IO − overdraft ≤ limit (AA ≤ max(0, limit − totalDebt − held)); on revolving
 * products in good standing without holds AA = max(0, limit − totalDebt).
 */
import { Money } from "../money.js";
import { roundCents } from "./interest.js";
import { accept, cents, refuse, type Outcome } from "./outcome.js";

/**
 * The counters of a credit wallet, integer cents: `limit`, AA `availableAmount`, AO
 * `principalOutstanding`, IO `interestOutstanding`, and `amountHeld`, the sum of the open holds of
 * approved authorizations (./holds.ts; not debt, accrues no interest).
 */
export interface Balances {
  limit: number;
  availableAmount: number;
  principalOutstanding: number;
  interestOutstanding: number;
  amountHeld: number;
}

/** `totalDebt` = AO + IO, in cents (spec `CreditWallet.totalDebt`). */
export function totalDebt(b: Balances): number {
  return b.principalOutstanding + b.interestOutstanding;
}

/** `amountOverdraft` = max(0, AO + IO + held − limit), in cents: what the debt and the open holds exceed the limit by (see the module note). */
export function amountOverdraft(b: Balances): number {
  return Math.max(0, totalDebt(b) + b.amountHeld - b.limit);
}

/** The most available amount the balances allow: max(0, limit − totalDebt − held), in cents (a revolving wallet in good standing has exactly this). */
export function reinstatedAvailable(b: Balances): number {
  return Math.max(0, b.limit - totalDebt(b) - b.amountHeld);
}

/** How a payment is applied, in cents: `toInterest` + `toPrincipal` = the payment; `toOverdraft` (already inside those two) reduced the overdraft; `restored` went back to AA. */
export interface PaymentSplit {
  toInterest: number;
  toPrincipal: number;
  toOverdraft: number;
  restored: number;
}

/**
 * Splits a payment (docs/decisions/credit.md "Payments, charges and the overdraft"): `capitalInterestSplit` % of it, rounded half-even to cents, to
 * the outstanding interest, the rest to principal; what one bucket cannot take goes to the other.
 * Example (default-and-cure): 3000 at 50 % on IO 1700 → 1500 / 1500; 1800 on IO 200 → 200 / 1600.
 * Refusals: `AMOUNT_NOT_POSITIVE` (amount ≤ 0), `PAYMENT_EXCEEDS_DEBT` (amount > IO + AO: a credit
 * wallet never carries a positive balance, 422 on `amount`).
 */
export function splitPayment(amount: number, interestOutstanding: number, principalOutstanding: number, capitalInterestSplit: number): Outcome<{ toInterest: number; toPrincipal: number }> {
  cents(amount);
  if (amount <= 0) return refuse("AMOUNT_NOT_POSITIVE", "The payment amount must be a positive number of cents.", "amount");
  if (amount > interestOutstanding + principalOutstanding) {
    return refuse("PAYMENT_EXCEEDS_DEBT", `The payment (${amount}) is larger than the total debt (${interestOutstanding + principalOutstanding}).`, "amount");
  }
  const share = roundCents(new Money(capitalInterestSplit).div(100).times(amount));
  let toInterest = Math.min(share, interestOutstanding);
  let toPrincipal = amount - toInterest;
  if (toPrincipal > principalOutstanding) {
    toInterest += toPrincipal - principalOutstanding;
    toPrincipal = principalOutstanding;
  }
  return accept({ toInterest, toPrincipal });
}

/**
 * Applies a payment to the balances (reference "ReportPayCredit": "lowers AO and, if interest has been
 * executed, IO, and restores the same amount to AA"; spec/credit/payments.tsp). The split is
 * `splitPayment`'s; the overdraft is reduced first; when `restore` is true (revolving product, wallet
 * not in default — docs/decisions/credit.md "Default and cure": an `in_default` wallet's payments give back no available amount) AA
 * grows by the payment less what reduced the overdraft, never above limit − totalDebt.
 * Refusals: those of `splitPayment`.
 */
export function applyPayment(b: Balances, amount: number, capitalInterestSplit: number, restore: boolean): Outcome<{ balances: Balances; split: PaymentSplit }> {
  const split = splitPayment(amount, b.interestOutstanding, b.principalOutstanding, capitalInterestSplit);
  if (!split.ok) return split;
  const after: Balances = {
    ...b,
    interestOutstanding: b.interestOutstanding - split.value.toInterest,
    principalOutstanding: b.principalOutstanding - split.value.toPrincipal,
  };
  const toOverdraft = amountOverdraft(b) - amountOverdraft(after);
  const restored = restore ? Math.min(amount - toOverdraft, Math.max(0, reinstatedAvailable(after) - b.availableAmount)) : 0;
  after.availableAmount = b.availableAmount + restored;
  return accept({ balances: after, split: { ...split.value, toOverdraft, restored } });
}

/**
 * Books a charge: AA − amount, AO + amount (reference "PayOutCredit reports a charge and lowers AA").
 * Only the amount is checked here; the wallet's state and `time` are checked by `chargeAllowed` (states.ts).
 * Refusals: `AMOUNT_NOT_POSITIVE`, `CHARGE_EXCEEDS_AVAILABLE` (amount > AA; 422 on `amount`).
 */
export function applyCharge(b: Balances, amount: number): Outcome<Balances> {
  cents(amount);
  if (amount <= 0) return refuse("AMOUNT_NOT_POSITIVE", "The charge amount must be a positive number of cents.", "amount");
  if (amount > b.availableAmount) return refuse("CHARGE_EXCEEDS_AVAILABLE", `The charge (${amount}) is larger than the available amount (${b.availableAmount}).`, "amount");
  return accept({ ...b, availableAmount: b.availableAmount - amount, principalOutstanding: b.principalOutstanding + amount });
}

/**
 * Books applied interest (nominal or penal), in cents, into `bucket` (`principal` when capitalised,
 * `interest` otherwise: see `nominalInterestBucket`). AA is lowered by as much as it can take; the
 * rest becomes overdraft (module note). Returns the new balances and `overdraftAdded`, in cents.
 */
export function bookInterest(b: Balances, amount: number, bucket: "principal" | "interest"): { balances: Balances; overdraftAdded: number } {
  cents(amount);
  const after: Balances = {
    ...b,
    availableAmount: Math.max(0, b.availableAmount - amount),
    principalOutstanding: b.principalOutstanding + (bucket === "principal" ? amount : 0),
    interestOutstanding: b.interestOutstanding + (bucket === "interest" ? amount : 0),
  };
  return { balances: after, overdraftAdded: amountOverdraft(after) - amountOverdraft(b) };
}

/**
 * Revolving reinstatement at the cure of a default (docs/decisions/credit.md "Default and cure": `Credito Reintegrado`
 * is for the available amount given back): AA becomes max(0, limit − totalDebt) if that is more. Returns the
 * new balances and `restored` (≥ 0), in cents. Non-revolving products never call it.
 */
export function reinstate(b: Balances): { balances: Balances; restored: number } {
  const restored = Math.max(0, reinstatedAvailable(b) - b.availableAmount);
  return { balances: { ...b, availableAmount: b.availableAmount + restored }, restored };
}

/**
 * Raises the limit (reference "ChangeWalletLimit raises the limit; limits can only be raised, never
 * lowered"). The raise first absorbs the overdraft, the rest is added to AA (spec: "`availableAmount`
 * grows by the difference" — less the overdraft it absorbs). Returns the balances and `delta` =
 * new − old limit (the `Cambio de Limite` amount).
 * Refusals: `LIMIT_NOT_RAISED` when `newLimit` ≤ the current limit (422 on `limit`).
 */
export function raiseLimit(b: Balances, newLimit: number): Outcome<{ balances: Balances; delta: number }> {
  cents(newLimit, "limit");
  if (newLimit <= b.limit) return refuse("LIMIT_NOT_RAISED", `The new limit (${newLimit}) must be greater than the current limit (${b.limit}).`, "limit");
  const delta = newLimit - b.limit;
  const absorbed = amountOverdraft(b) - amountOverdraft({ ...b, limit: newLimit });
  return accept({ balances: { ...b, limit: newLimit, availableAmount: b.availableAmount + delta - absorbed }, delta });
}
