/**
 * Mapping between the credit wallet tables (./entities.ts) and the pure engine's
 * `WalletState` (src/domain/credit/wallet.ts), both ways, statements and events included
 * (docs/decisions/credit.md "Wallets"). Money is integer cents on both sides (`bigint` columns read as JS
 * numbers); rates are percent, `numeric(9,4)` decimal strings in the database and numbers in the
 * engine, converted exactly (`rateNumber`, `rateText`). Instants are UTC.
 *
 * The engine keeps every statement of a wallet; the store loads only the *open* ones (grace period
 * not yet ended, or defaulted and not cured): the only statements a step or a payment can still
 * change. Their engine `index` is their position in the loaded list, so statements the engine
 * creates get indices past the loaded ones and are inserted, the loaded ones updated by id.
 *
 * Pure mapping, no I/O: ./repository/lock.ts locks and loads a wallet into this state and persists what the
 * engine returns.
 */
import { Decimal } from "decimal.js";
import {
  nextCutDate,
  type Hold,
  startOfUtcDay,
  type CreditProductRules,
  type Statement,
  type WalletState,
} from "../../../domain/credit/index.js";
import type { CreditProduct } from "../products/entities.js";
import type { CreditAuthorization } from "../authorizations/entities.js";
import type { CreditStatement, CreditWallet } from "./entities.js";

/** A percent rate as the engine holds it: the exact value of a `numeric(9,4)` decimal string (e.g. `"36.0000"` → 36). */
export function rateNumber(text: string): number {
  return new Decimal(text).toNumber();
}

/**
 * A percent rate as stored in `numeric(9,4)`: the decimal text of the engine's number, at most 4
 * decimal places (the API refuses more), e.g. 12.5 → `"12.5000"`. The shortest round-trip text of
 * the double is used, so a rate read with `rateNumber` is written back unchanged.
 */
export function rateText(value: number): string {
  return new Decimal(value).toFixed(4);
}

/** The engine's product rules of a `credit_product` row (rates as numbers, amounts in cents). */
export function productRules(row: CreditProduct): CreditProductRules {
  return {
    revolving: row.revolving,
    compound: row.compound,
    cutFrequency: row.cutFrequency,
    fixedInterestAmount: Number(row.fixedInterestAmount),
    baseInterestRate: rateNumber(row.baseInterestRate),
    baseMinimumPaymentRate: rateNumber(row.baseMinimumPaymentRate),
    fixedMinimumPaymentAmount: Number(row.fixedMinimumPaymentAmount),
    capitalInterestSplit: rateNumber(row.capitalInterestSplit),
    gracePeriod: row.gracePeriod,
    variableSpecs: row.variableSpecs,
    morosidadRate: rateNumber(row.morosidadRate),
    baseInterestMorosidad: Number(row.baseInterestMorosidad),
    interestAccrualMethod: row.interestAccrualMethod,
    dailyRateDivisor: row.dailyRateDivisor,
  };
}

/** An engine statement of a `credit_statement` row; `index` is its position among the loaded ones. */
export function statementOf(row: CreditStatement, index: number): Statement {
  return {
    index,
    cutDate: row.cutDate,
    cycleStart: row.cycleStart,
    cycleEnd: row.cutDate,
    daysInCycle: row.daysInCycle,
    sumOfDailyBalance: row.sumOfDailyBalance,
    principalAtCut: row.principalAtCut,
    interestOutstandingAtCut: row.interestOutstandingAtCut,
    interestAccrualMethod: row.interestAccrualMethod,
    compound: row.compound,
    interestBasis: row.interestBasis,
    interestRateNominal: rateNumber(row.interestRateNominal),
    dailyRateDivisor: row.dailyRateDivisor,
    fixedInterestNominal: row.fixedInterestNominal,
    minimumPaymentRate: rateNumber(row.minimumPaymentRate),
    fixedMinimumPayment: row.fixedMinimumPayment,
    interestGenerated: row.interestGenerated,
    minimumPayment: row.minimumPayment,
    paymentDueDate: row.paymentDueDate,
    paidInCycle: row.paidInCycle,
    status: row.status,
    interestApplied: row.interestApplied,
    interestAppliedAt: row.interestAppliedAt ?? null,
    penalInterest: row.penalInterest,
    interestRateMoroso: row.interestRateMoroso === null || row.interestRateMoroso === undefined ? null : rateNumber(row.interestRateMoroso),
    fixedInterestMoroso: row.fixedInterestMoroso ?? null,
    curedAt: row.curedAt ?? null,
  };
}

/** The columns of a `credit_statement` row that an engine statement sets (all but `id`, `walletId`, `ordinal`). */
export function statementColumns(st: Statement) {
  return {
    cutDate: st.cutDate,
    cycleStart: st.cycleStart,
    daysInCycle: st.daysInCycle,
    sumOfDailyBalance: st.sumOfDailyBalance,
    principalAtCut: st.principalAtCut,
    interestOutstandingAtCut: st.interestOutstandingAtCut,
    interestAccrualMethod: st.interestAccrualMethod,
    compound: st.compound,
    interestBasis: st.interestBasis,
    interestRateNominal: rateText(st.interestRateNominal),
    dailyRateDivisor: st.dailyRateDivisor,
    fixedInterestNominal: st.fixedInterestNominal,
    minimumPaymentRate: rateText(st.minimumPaymentRate),
    fixedMinimumPayment: st.fixedMinimumPayment,
    interestGenerated: st.interestGenerated,
    minimumPayment: st.minimumPayment,
    paymentDueDate: st.paymentDueDate,
    paidInCycle: st.paidInCycle,
    status: st.status,
    interestApplied: st.interestApplied,
    interestAppliedAt: st.interestAppliedAt,
    penalInterest: st.penalInterest,
    interestRateMoroso: st.interestRateMoroso === null ? null : rateText(st.interestRateMoroso),
    fixedInterestMoroso: st.fixedInterestMoroso,
    curedAt: st.curedAt,
  };
}

/**
 * The specs in force on a wallet row, as both the engine and the API view carry them: rates as
 * percent numbers (4 decimals), fixed amounts in cents.
 */
export function specsOf(row: CreditWallet) {
  return {
    interestSpecs: {
      interestRateNominal: rateNumber(row.interestRateNominal),
      interestRateMoroso: rateNumber(row.interestRateMoroso),
      fixedInterestNominal: row.fixedInterestNominal,
      fixedInterestMoroso: row.fixedInterestMoroso,
    },
    minimumPaymentSpecs: { minimumPaymentRate: rateNumber(row.minimumPaymentRate), fixedMinimumPayment: row.fixedMinimumPayment },
  };
}

/** The engine hold of an open (`approved`) authorization row. */
export function holdOf(row: CreditAuthorization): Hold {
  const hold: Hold = { authorizationId: row.authorizationId, amount: row.amount, createdAt: row.createdAt, expiresAt: row.expiresAt ?? row.createdAt };
  if (row.cardId) hold.cardId = row.cardId;
  return hold;
}

/** The engine state of a wallet row, its open statements (oldest cut first) and its open authorizations (oldest first). */
export function stateOf(row: CreditWallet, openStatements: readonly CreditStatement[], openAuthorizations: readonly CreditAuthorization[] = []): WalletState {
  const pending = row.pendingSpecs ?? null;
  return {
    walletId: row.walletId,
    status: row.status,
    statusBeforeDefault: row.statusBeforeDefault ?? null,
    limit: row.limit,
    availableAmount: row.availableAmount,
    principalOutstanding: row.principalOutstanding,
    interestOutstanding: row.interestOutstanding,
    amountHeld: row.amountHeld,
    createdAt: row.createdAt,
    firstCutDate: row.firstCutDate,
    expiresAt: row.expiresAt ?? null,
    cycleStart: row.cycleStart,
    sumOfDailyBalance: row.sumOfDailyBalance,
    ...specsOf(row),
    specsOverridden: row.specsOverridden,
    pendingSpecs: pending === null ? null : { interestSpecs: { ...pending.interestSpecs }, minimumPaymentSpecs: { ...pending.minimumPaymentSpecs } },
    sequence: row.sequence,
    asOf: row.asOf,
    statements: openStatements.map((st, i) => statementOf(st, i)),
    holds: openAuthorizations.map(holdOf),
  };
}

/**
 * The 00:00 UTC instant of the last daily close a wallet clock `asOf` implies (closes run at every
 * midnight strictly after creation), or null before the first one.
 */
export function lastCloseOf(createdAt: Date, asOf: Date): Date | null {
  const midnight = startOfUtcDay(asOf);
  return midnight.getTime() > createdAt.getTime() ? midnight : null;
}

/**
 * The wallet row's columns for an engine state: counters (cents), status, cycle position, specs
 * (rates as `numeric(9,4)` text), pending override, last sequence and clock; `next_cut_at` is the
 * product's current schedule's next cut (engine `nextCutDate`, null once dissolved).
 * `lastCloseAt`: the last close the clock implies, kept as it was for a wallet already dissolved
 * before this change (no step runs on a dissolved wallet).
 * @param requestedAt when a newly stored pending override was requested (kept in its JSON).
 */
export function walletColumns(row: CreditWallet, s: WalletState, product: CreditProductRules, updatedAt: Date, requestedAt?: Date) {
  const wasDissolved = row.status === "dissolved";
  const pending = s.pendingSpecs === null
    ? null
    : { ...s.pendingSpecs, requestedAt: (requestedAt ?? (row.pendingSpecs ? new Date(row.pendingSpecs.requestedAt) : updatedAt)).toISOString() };
  return {
    status: s.status,
    statusBeforeDefault: s.statusBeforeDefault,
    limit: s.limit,
    availableAmount: s.availableAmount,
    principalOutstanding: s.principalOutstanding,
    interestOutstanding: s.interestOutstanding,
    amountHeld: s.amountHeld,
    cycleStart: s.cycleStart,
    sumOfDailyBalance: s.sumOfDailyBalance,
    lastCloseAt: wasDissolved ? (row.lastCloseAt ?? null) : lastCloseOf(s.createdAt, s.asOf),
    nextCutAt: nextCutDate(s, product.cutFrequency),
    interestRateNominal: rateText(s.interestSpecs.interestRateNominal),
    interestRateMoroso: rateText(s.interestSpecs.interestRateMoroso),
    fixedInterestNominal: s.interestSpecs.fixedInterestNominal,
    fixedInterestMoroso: s.interestSpecs.fixedInterestMoroso,
    minimumPaymentRate: rateText(s.minimumPaymentSpecs.minimumPaymentRate),
    fixedMinimumPayment: s.minimumPaymentSpecs.fixedMinimumPayment,
    specsOverridden: s.specsOverridden,
    pendingSpecs: pending,
    sequence: s.sequence,
    asOf: s.asOf,
    updatedAt,
  };
}
