/**
 * Credit notification types, their `direction` and `affectsBalance`, and the per-wallet sequence
 * (reference "Credit notifications (credit core)" table and "Further notification names";
 * docs/decisions/credit.md "Default and cure" and "Notification types"; docs/decisions/notifications.md
 * "Credit notifications" for the per-wallet `sequence`;
 * spec/credit/notifications.tsp `CreditNotificationType`, whose table this module follows).
 */
import type { InterestSpecs, MinimumPaymentSpecs } from "./interest.js";
import { cents } from "./outcome.js";
import { amountOverdraft, totalDebt, type Balances } from "./payments.js";

/** Every event type name of the reference, spelled exactly as it is (case and accents included). */
export const CREDIT_EVENT_TYPES = [
  "Interes Nominal Calculado",
  "Interes Nominal Aplicado",
  "Interes Moroso Calculado",
  "Interes Moroso Aplicado",
  "Reporte de Pago",
  "Cambio de Limite",
  "Interes cancelado",
  "Credito Reintegrado",
  "Cambio Interest ejecutado",
  "Interes moroso ejecutado",
  "Autorizacion Aprobada",
  "Autorizacion Rechazada",
  "Autorizacion Capturada",
  "Autorizacion Liberada",
  "Reembolso",
] as const;

/** A credit notification type (one of `CREDIT_EVENT_TYPES`). */
export type CreditEventType = (typeof CREDIT_EVENT_TYPES)[number];

/** `debit`: an amount owed by the holder; `credit`: an amount credited to the holder (reference "Credit notification payload"). */
export type Direction = "debit" | "credit";

/**
 * Direction and balance effect of each type. The first six rows are the reference's table. For the
 * four further names the reference says "not shown"; the values are docs/decisions/credit.md "Notification types"
 * (`Interes Moroso Calculado` debit/false, `Interes Moroso Aplicado` debit/true, `Interes moroso ejecutado`
 * debit/false, `Interes cancelado` credit/false, `Credito Reintegrado` credit/true) and, for
 * `Cambio Interest ejecutado` (named by neither), spec/credit/notifications.tsp: credit/false, amount 0
 * — a settings change moves no money. The four `Autorizacion …` types are docs/decisions/credit.md
 * "Authorizations": approved (amount authorized) and declined (amount requested) debit/false,
 * captured debit/true (amount captured), released credit/false (amount released by a void, an
 * expiry, a dissolution or the rest of a partial capture). `Reembolso` (docs/decisions/cards.md
 * "Refunds", ./refunds.ts) is credit/true: a merchant's refund lowers the debt by the amount applied.
 */
export const EVENT_KINDS: Readonly<Record<CreditEventType, { direction: Direction; affectsBalance: boolean }>> = {
  "Interes Nominal Calculado": { direction: "debit", affectsBalance: false },
  "Interes Nominal Aplicado": { direction: "debit", affectsBalance: true },
  "Interes Moroso Calculado": { direction: "debit", affectsBalance: false },
  "Interes Moroso Aplicado": { direction: "debit", affectsBalance: true },
  "Reporte de Pago": { direction: "credit", affectsBalance: true },
  "Cambio de Limite": { direction: "credit", affectsBalance: true },
  "Interes cancelado": { direction: "credit", affectsBalance: false },
  "Credito Reintegrado": { direction: "credit", affectsBalance: true },
  "Cambio Interest ejecutado": { direction: "credit", affectsBalance: false },
  "Interes moroso ejecutado": { direction: "debit", affectsBalance: false },
  "Autorizacion Aprobada": { direction: "debit", affectsBalance: false },
  "Autorizacion Rechazada": { direction: "debit", affectsBalance: false },
  "Autorizacion Capturada": { direction: "debit", affectsBalance: true },
  "Autorizacion Liberada": { direction: "credit", affectsBalance: false },
  Reembolso: { direction: "credit", affectsBalance: true },
};

/**
 * `walletDetails_after` of a notification (reference "Credit notification payload"): the full wallet
 * state after the event, integer cents and the specs in force.
 */
export interface WalletDetails {
  principal_outstanding: number;
  interest_accrued: number;
  totalDebt: number;
  limit: number;
  amountOverdraft: number;
  /** Sum of the open holds (approved authorizations not captured, voided or expired), cents. */
  amountHeld: number;
  interestSpecs: InterestSpecs;
  minimumPaymentSpecs: MinimumPaymentSpecs;
}

/**
 * One credit notification as the engine emits it: the payload fields of the reference plus
 * `sequence` (1, 2, 3, … per wallet, docs/decisions/notifications.md "Credit notifications"), the instant `at` (UTC, the event's `createdAt`)
 * and, for cycle events, `statementCut` (the cut date of the statement it belongs to; not part of the
 * payload, used by the batches' unique (wallet, cut) keys and by the tests).
 */
export interface CreditEvent {
  walletId: string;
  type: CreditEventType;
  /** Cents, never negative; `direction` gives its sense. For `Cambio de Limite`: new limit − old limit. */
  amount: number;
  direction: Direction;
  affectsBalance: boolean;
  walletDetails_after: WalletDetails;
  sequence: number;
  /** The card of the authorization an `Autorizacion …` or `Reembolso` event is about (docs/decisions/cards.md); absent otherwise. */
  cardId?: string;
  at: Date;
  statementCut?: Date;
  /** Only on `Reembolso`: the cents of the refund above the debt, not booked on the wallet (./refunds.ts). */
  unappliedAmount?: number;
}

/** Builds `walletDetails_after` from the balances and specs of a wallet (field names of the reference). */
export function walletDetails(b: Balances, interestSpecs: InterestSpecs, minimumPaymentSpecs: MinimumPaymentSpecs): WalletDetails {
  return {
    principal_outstanding: b.principalOutstanding,
    interest_accrued: b.interestOutstanding,
    totalDebt: totalDebt(b),
    limit: b.limit,
    amountOverdraft: amountOverdraft(b),
    amountHeld: b.amountHeld,
    interestSpecs: { ...interestSpecs },
    minimumPaymentSpecs: { ...minimumPaymentSpecs },
  };
}

/**
 * Builds the next event of a wallet: `sequence` = `lastSequence` + 1 (the caller stores it as the
 * wallet's new last sequence; in SQL a `sequence` column bumped in the same UPDATE as the change, unique
 * per wallet), direction and affectsBalance from `EVENT_KINDS`.
 * @throws RangeError when `amount` is negative or not a safe integer (a programming error).
 */
export function makeEvent(args: { walletId: string; type: CreditEventType; amount: number; lastSequence: number; at: Date; details: WalletDetails; statementCut?: Date; unappliedAmount?: number }): CreditEvent {
  if (!Number.isSafeInteger(args.amount) || args.amount < 0) throw new RangeError(`event amount must be a non-negative safe integer, got ${String(args.amount)}`);
  const kind = EVENT_KINDS[args.type];
  const event: CreditEvent = {
    walletId: args.walletId,
    type: args.type,
    amount: args.amount,
    direction: kind.direction,
    affectsBalance: kind.affectsBalance,
    walletDetails_after: args.details,
    sequence: args.lastSequence + 1,
    at: args.at,
  };
  if (args.statementCut !== undefined) event.statementCut = args.statementCut;
  if (args.unappliedAmount !== undefined) event.unappliedAmount = cents(args.unappliedAmount, "unappliedAmount");
  return event;
}

/** The payload the service POSTs (spec `CreditNotification`): the event without the engine-only `at` and `statementCut`; `unappliedAmount` only when the event has it (`Reembolso`). */
export function notificationPayload(e: CreditEvent): Omit<CreditEvent, "at" | "statementCut"> {
  const payload: Omit<CreditEvent, "at" | "statementCut"> = { walletId: e.walletId, ...(e.cardId === undefined ? {} : { cardId: e.cardId }), type: e.type, amount: e.amount, direction: e.direction, affectsBalance: e.affectsBalance, walletDetails_after: e.walletDetails_after, sequence: e.sequence };
  if (e.unappliedAmount !== undefined) payload.unappliedAmount = e.unappliedAmount;
  return payload;
}
