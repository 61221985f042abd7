/**
 * The credit wallet resources as the API returns them (spec/credit/wallets.tsp, charges.tsp,
 * payments.tsp, statements.tsp, events.tsp): wallets, statements and events from their rows. Money
 * in integer cents, rates in percent, instants ISO 8601 UTC.
 */
import type { components } from "../../../../generated/types/credit.js";
import { amountOverdraft, totalDebt } from "../../../domain/credit/index.js";
import type { CreditEvent, CreditStatement, CreditWallet } from "./entities.js";
import { specsOf, statementOf } from "./mapping.js";

type Schemas = components["schemas"];
/** Schema `CreditWallet`. */
export type CreditWalletView = Schemas["CreditWallet"];
/** Schema `CreditCharge`. */
export type CreditChargeView = Schemas["CreditCharge"];
/** Schema `CreditPayment`. */
export type CreditPaymentView = Schemas["CreditPayment"];
/** Schema `CreditInterestOverride`. */
export type CreditInterestOverrideView = Schemas["CreditInterestOverride"];
/** Schema `CreditStatement`. */
export type CreditStatementView = Schemas["CreditStatement"];
/** Schema `CreditWalletEvent`. */
export type CreditWalletEventView = Schemas["CreditWalletEvent"];

/** Longest `set_aside_reason` the API returns (spec `CreditWalletSetAside.reason`). */
const REASON_MAX = 500;

/**
 * The wallet as the API returns it (spec `CreditWallet`): counters in cents, rates in percent,
 * instants ISO 8601 UTC; `setAside` only when the wallet is set aside.
 */
export function creditWalletView(row: CreditWallet, creditProductCode: string): CreditWalletView {
  const balances = { limit: row.limit, availableAmount: row.availableAmount, principalOutstanding: row.principalOutstanding, interestOutstanding: row.interestOutstanding, amountHeld: row.amountHeld };
  const aside = row.setAsideAt ? { setAside: { at: row.setAsideAt.toISOString(), reason: (row.setAsideReason ?? "").slice(0, REASON_MAX) } } : {};
  return {
    walletId: row.walletId,
    userId: row.userId,
    currency: row.currency,
    description: row.description ?? null,
    creditProductCode,
    status: row.status,
    limit: row.limit,
    availableAmount: row.availableAmount,
    amountHeld: row.amountHeld,
    principalOutstanding: row.principalOutstanding,
    interestOutstanding: row.interestOutstanding,
    totalDebt: totalDebt(balances),
    amountOverdraft: amountOverdraft(balances),
    sumOfDailyBalance: row.sumOfDailyBalance,
    firstCutDate: row.firstCutDate.toISOString(),
    nextCutDate: row.status === "dissolved" || !row.nextCutAt ? null : row.nextCutAt.toISOString(),
    time: row.time ?? null,
    expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
    ...specsOf(row),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...aside,
  };
}

/** A statement as the API returns it (spec `CreditStatement`): the engine's statement of the row, instants as ISO 8601 UTC. */
export function creditStatementView(row: CreditStatement): CreditStatementView {
  const { index: _index, ...st } = statementOf(row, 0);
  return {
    walletId: row.walletId,
    ...st,
    cutDate: st.cutDate.toISOString(),
    cycleStart: st.cycleStart.toISOString(),
    cycleEnd: st.cycleEnd.toISOString(),
    paymentDueDate: st.paymentDueDate.toISOString(),
    interestAppliedAt: st.interestAppliedAt ? st.interestAppliedAt.toISOString() : null,
    curedAt: st.curedAt ? st.curedAt.toISOString() : null,
  };
}

/** An event as the API returns it (spec `CreditWalletEvent`: the notification payload plus `id` and `createdAt`). */
export function creditEventView(row: CreditEvent): CreditWalletEventView {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    walletId: row.walletId,
    ...(row.cardId ? { cardId: row.cardId } : {}),
    type: row.type as CreditWalletEventView["type"],
    amount: row.amount,
    direction: row.direction,
    affectsBalance: row.affectsBalance,
    walletDetails_after: row.walletDetailsAfter as unknown as CreditWalletEventView["walletDetails_after"],
    sequence: row.sequence,
    ...(row.unappliedAmount === null || row.unappliedAmount === undefined ? {} : { unappliedAmount: row.unappliedAmount }),
  };
}
