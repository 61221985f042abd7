/**
 * The working copy an engine call changes (./simulate.ts, ./authorizations.ts): a deep copy of the
 * wallet state, the events it emits in order, the statements it touches and the holds it closes.
 * Amounts in integer cents, instants UTC.
 */
import { makeEvent, walletDetails, type CreditEvent, type CreditEventType } from "./events.js";
import { settleHold, type Hold } from "./holds.js";
import type { Balances } from "./payments.js";
import type { Statement, WalletState } from "./wallet.js";

/**
 * A hold closed by a call: `captured` (capture; `releasedAmount` is the uncaptured rest), `voided`
 * (void, or the wallet's dissolution) or `expired` (the daily close at its `expiresAt`). Cents, UTC.
 */
export interface HoldClosure {
  authorizationId: string;
  kind: "captured" | "voided" | "expired";
  capturedAmount: number;
  releasedAmount: number;
  at: Date;
}

/** What a step returns: the new state, the events in emission order, the statements created or changed (oldest first), the holds closed (in order). */
export interface StepResult {
  state: WalletState;
  events: CreditEvent[];
  statements: Statement[];
  closedHolds: HoldClosure[];
}

/** Working copy of one call. */
export interface Work {
  s: WalletState;
  events: CreditEvent[];
  touched: Set<number>;
  closed: HoldClosure[];
}

/** A working copy of `state` ({@link copyState}). */
export function begin(state: WalletState): Work {
  return { s: copyState(state), events: [], touched: new Set(), closed: [] };
}

/**
 * A copy of `state` that the engine may change without touching `state`: every object and array
 * of it is new (the specs, the pending override, each statement, each hold). The `Date` values are
 * shared: the engine never changes a `Date`, it makes a new one. Written out rather than
 * `structuredClone`, which costs about ten times as much on a wallet with many open holds and runs
 * on every credit change (docs/performance.md "Authorizations and credit changes").
 */
export function copyState(state: WalletState): WalletState {
  return {
    ...state,
    interestSpecs: { ...state.interestSpecs },
    minimumPaymentSpecs: { ...state.minimumPaymentSpecs },
    pendingSpecs: state.pendingSpecs === null ? null : { interestSpecs: { ...state.pendingSpecs.interestSpecs }, minimumPaymentSpecs: { ...state.pendingSpecs.minimumPaymentSpecs } },
    statements: state.statements.map((st) => ({ ...st })),
    holds: state.holds.map((h) => ({ ...h })),
  };
}

/** The result of a working copy. */
export function finish(w: Work): StepResult {
  return { state: w.s, events: w.events, statements: w.s.statements.filter((st) => w.touched.has(st.index)), closedHolds: w.closed };
}

/** The balances of a state. */
export function balancesOf(s: WalletState): Balances {
  return { limit: s.limit, availableAmount: s.availableAmount, principalOutstanding: s.principalOutstanding, interestOutstanding: s.interestOutstanding, amountHeld: s.amountHeld };
}

/** Writes balances into a state. */
export function setBalances(s: WalletState, b: Balances): void {
  s.limit = b.limit;
  s.availableAmount = b.availableAmount;
  s.principalOutstanding = b.principalOutstanding;
  s.interestOutstanding = b.interestOutstanding;
  s.amountHeld = b.amountHeld;
}

/** Emits the next event of the wallet (events.ts `makeEvent`) with `walletDetails_after` of the state as it is now. */
export function emit(w: Work, type: CreditEventType, amount: number, at: Date, statementCut?: Date): void {
  const event = makeEvent({
    walletId: w.s.walletId,
    type,
    amount,
    lastSequence: w.s.sequence,
    at,
    details: walletDetails(balancesOf(w.s), w.s.interestSpecs, w.s.minimumPaymentSpecs),
    ...(statementCut === undefined ? {} : { statementCut }),
  });
  w.s.sequence = event.sequence;
  w.events.push(event);
}

/** Emits as {@link emit}, the event carrying `cardId` when it is about a card's authorization (docs/decisions/cards.md). */
export function emitForCard(w: Work, type: CreditEventType, amount: number, at: Date, cardId: string | undefined): void {
  emit(w, type, amount, at);
  const event = w.events[w.events.length - 1];
  if (cardId !== undefined && event) event.cardId = cardId;
}

/**
 * The holds oldest first: by `createdAt`, then `authorizationId` (the order the store loads them
 * in, and the order several holds closed at one instant are released and notified in).
 */
export function holdsInOrder(holds: readonly Hold[]): Hold[] {
  return [...holds].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.authorizationId < b.authorizationId ? -1 : a.authorizationId > b.authorizationId ? 1 : 0));
}

/**
 * Closes open hold `hold` at `at`, capturing `captured` cents of it (holds.ts `settleHold`, in two
 * parts with the same result as one): `Autorizacion Capturada` (amount captured) when `captured` > 0,
 * then `Autorizacion Liberada` (amount released) when the rest is > 0; each event's
 * `walletDetails_after` is the state after its part (docs/decisions/credit.md "Authorizations").
 */
export function closeHold(w: Work, hold: Hold, kind: HoldClosure["kind"], captured: number, at: Date): void {
  w.s.holds = w.s.holds.filter((h) => h.authorizationId !== hold.authorizationId);
  const released = hold.amount - captured;
  w.closed.push({ authorizationId: hold.authorizationId, kind, capturedAmount: captured, releasedAmount: released, at });
  if (captured > 0) {
    setBalances(w.s, settleHold(balancesOf(w.s), captured, captured).balances);
    emitForCard(w, "Autorizacion Capturada", captured, at, hold.cardId);
  }
  if (released > 0) {
    setBalances(w.s, settleHold(balancesOf(w.s), released, 0).balances);
    emitForCard(w, "Autorizacion Liberada", released, at, hold.cardId);
  }
}
