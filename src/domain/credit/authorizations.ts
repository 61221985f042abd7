/**
 * Card authorizations on a credit wallet: authorize, capture, void (docs/decisions/credit.md
 * "Authorizations"; spec/credit/authorizations.tsp). Each operation first runs every step due up
 * to its instant (./simulate.ts `startAt`, expiries included), like every other operation.
 *
 * - Authorize decides in real time against the available amount. A decline is a normal outcome
 *   (never a `Refusal`), with one `declineReason`, checked in this order: `WALLET_BLOCKED`,
 *   `WALLET_IN_DEFAULT`, `WALLET_DISSOLVED`, `WALLET_EXPIRED` (states.ts `chargeAllowed`, the rule of
 *   a charge), `INSUFFICIENT_CREDIT` (amount above AA). An approval places a hold (./holds.ts):
 *   `Autorizacion Aprobada`; a decline changes nothing: `Autorizacion Rechazada` (amount requested).
 * - The hold expires at the first daily close (00:00 UTC) at or after its creation plus the TTL
 *   (`holdExpiry`), released by that close (./simulate.ts step 2).
 * - Capture turns up to the held amount into principal dated at the capture and releases the rest;
 *   it is allowed in every state the hold can exist in (a dissolution releases every hold), since
 *   the merchant was promised the amount. Void releases the whole hold.
 * Amounts in integer cents, instants UTC.
 */
import type { Hold } from "./holds.js";
import { placeHold } from "./holds.js";
import { accept, refuse, type Outcome } from "./outcome.js";
import { addDays, nextDailyClose, startOfUtcDay } from "./schedule.js";
import { startAt } from "./simulate.js";
import { chargeAllowed } from "./states.js";
import type { CreditProductRules, WalletState } from "./wallet.js";
import { balancesOf, closeHold, emitForCard, finish, setBalances, type StepResult } from "./work.js";

/**
 * Why a card declined an authorization before the wallet was asked (docs/decisions/cards.md "Decline
 * order"; src/domain/cards.ts `cardDecline`), in that order.
 */
export type CardDeclineReason = "CARD_CLOSED" | "CARD_PAUSED" | "CARD_EXPIRED" | "MCC_BLOCKED" | "COUNTRY_BLOCKED" | "SPEND_LIMIT_EXCEEDED";

/** Why an authorization was declined (spec `CreditAuthorization.declineReason`): the card's reasons first, then the wallet's. */
export type DeclineReason = CardDeclineReason | "WALLET_BLOCKED" | "WALLET_IN_DEFAULT" | "WALLET_DISSOLVED" | "WALLET_EXPIRED" | "INSUFFICIENT_CREDIT";

/** The decision on an authorization: approved with the hold's expiry, or declined with its reason. */
export type AuthorizationDecision = { status: "approved"; expiresAt: Date } | { status: "declined"; reason: DeclineReason };

/**
 * When a hold created at `createdAt` expires: the first daily close (00:00 UTC) at or after
 * `createdAt` + `ttlDays` days (docs/decisions/credit.md "Authorizations").
 * Example: created 2026-01-01T10:00Z, 7 days → 2026-01-09T00:00Z; created at 00:00Z → 00:00Z 7 days later.
 */
export function holdExpiry(createdAt: Date, ttlDays: number): Date {
  const end = addDays(createdAt, ttlDays);
  return startOfUtcDay(end).getTime() === end.getTime() ? end : nextDailyClose(end);
}

/**
 * Authorize `amount` cents at `at` for authorization `authorizationId` (module note for the decision).
 * On a card (`cardId`), the card's own decline (`cardDecline`, decided by the caller before the
 * wallet's checks: docs/decisions/cards.md) declines it first; the hold and the events carry `cardId`.
 * Returns the step and the decision. Refusals: `CLOCK_BACKWARDS`, `AMOUNT_NOT_POSITIVE` (422 on `amount`).
 * @throws RangeError when `amount` is not a safe integer (the HTTP schema admits integers only) or
 *   `ttlDays` is not a whole number ≥ 1 (programming errors).
 */
export function authorize(
  state: WalletState,
  product: CreditProductRules,
  at: Date,
  input: { authorizationId: string; amount: number; ttlDays: number; cardId?: string; cardDecline?: CardDeclineReason | null },
): Outcome<StepResult & { decision: AuthorizationDecision }> {
  const started = startAt(state, product, at);
  if (!started.ok) return started;
  const w = started.value;
  if (!Number.isSafeInteger(input.amount)) throw new RangeError(`amount must be a safe integer number of cents, got ${String(input.amount)}`);
  // a hold must outlive its creation (AUTHORIZATION_TTL_DAYS is 1 to 30, src/config.ts)
  if (!Number.isSafeInteger(input.ttlDays) || input.ttlDays < 1) throw new RangeError(`ttlDays must be a whole number of days ≥ 1, got ${String(input.ttlDays)}`);
  if (!(input.amount > 0)) return refuse("AMOUNT_NOT_POSITIVE", "The authorization amount must be a positive number of cents.", "amount");
  const allowed = chargeAllowed(w.s.status, w.s.expiresAt, at);
  let reason: DeclineReason | null = input.cardDecline ?? (allowed.ok ? null : (allowed.code as DeclineReason));
  if (reason === null && input.amount > w.s.availableAmount) reason = "INSUFFICIENT_CREDIT";
  if (reason !== null) {
    emitForCard(w, "Autorizacion Rechazada", input.amount, at, input.cardId);
    return accept({ ...finish(w), decision: { status: "declined", reason } });
  }
  const expiresAt = holdExpiry(at, input.ttlDays);
  setBalances(w.s, placeHold(balancesOf(w.s), input.amount));
  w.s.holds.push({ authorizationId: input.authorizationId, amount: input.amount, createdAt: at, expiresAt, ...(input.cardId === undefined ? {} : { cardId: input.cardId }) });
  emitForCard(w, "Autorizacion Aprobada", input.amount, at, input.cardId);
  return accept({ ...finish(w), decision: { status: "approved", expiresAt } });
}

/** The open hold `authorizationId` of the working state, or the refusal `AUTHORIZATION_NOT_OPEN`. */
function openHold(s: WalletState, authorizationId: string): Outcome<Hold> {
  const hold = s.holds.find((h) => h.authorizationId === authorizationId);
  return hold ? accept(hold) : refuse("AUTHORIZATION_NOT_OPEN", "The authorization is not open: it was declined, or already captured, voided or expired.");
}

/**
 * Capture `amount` cents (default: the whole hold) of authorization `authorizationId` at `at`:
 * `Autorizacion Capturada`, then `Autorizacion Liberada` for the rest. Refusals: `CLOCK_BACKWARDS`,
 * `AMOUNT_NOT_POSITIVE` (422 on `amount`), `AUTHORIZATION_NOT_OPEN` (409; also when it expired at a
 * close before `at`), `CAPTURE_EXCEEDS_AUTHORIZED` (409).
 */
export function capture(state: WalletState, product: CreditProductRules, at: Date, authorizationId: string, amount?: number): Outcome<StepResult & { hold: Hold; captured: number }> {
  const started = startAt(state, product, at);
  if (!started.ok) return started;
  const w = started.value;
  const found = openHold(w.s, authorizationId);
  if (!found.ok) return found;
  const captured = amount ?? found.value.amount;
  if (!Number.isSafeInteger(captured)) throw new RangeError(`amount must be a safe integer number of cents, got ${String(captured)}`);
  if (!(captured > 0)) return refuse("AMOUNT_NOT_POSITIVE", "The capture amount must be a positive number of cents.", "amount");
  if (captured > found.value.amount) {
    return refuse("CAPTURE_EXCEEDS_AUTHORIZED", `The capture (${captured}) is larger than the authorized amount (${found.value.amount}).`);
  }
  closeHold(w, found.value, "captured", captured, at);
  return accept({ ...finish(w), hold: found.value, captured });
}

/** Void authorization `authorizationId` at `at`: the whole hold is released (`Autorizacion Liberada`). Refusals: `CLOCK_BACKWARDS`, `AUTHORIZATION_NOT_OPEN` (409). */
export function voidAuthorization(state: WalletState, product: CreditProductRules, at: Date, authorizationId: string): Outcome<StepResult & { hold: Hold }> {
  const started = startAt(state, product, at);
  if (!started.ok) return started;
  const w = started.value;
  const found = openHold(w.s, authorizationId);
  if (!found.ok) return found;
  closeHold(w, found.value, "voided", 0, at);
  return accept({ ...finish(w), hold: found.value });
}
