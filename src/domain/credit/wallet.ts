/**
 * The state of one credit wallet as the engine sees it, its product's rules and its statements
 * (spec/credit/wallets.tsp `CreditWallet`, statements.tsp `CreditStatement`, products.tsp
 * `CreditProductSettings`; reference "Credit wallet (credit core)", "Credit product (credit core)").
 * Plain data, no I/O: a database row (plus its open statements) maps onto `WalletState` one to one.
 */
import type { DailyRateDivisor, InterestAccrualMethod, InterestSpecs, MinimumPaymentSpecs } from "./interest.js";
import { accept, cents, refuse, type Outcome } from "./outcome.js";
import type { Hold } from "./holds.js";
import type { Balances } from "./payments.js";
import { addDays, cutDate, graceEnd, nextCutAfter, startOfUtcDay, type CutFrequency } from "./schedule.js";

/** Wallet states (reference "States and transitions › Credit wallet"; spec `CreditWalletStatus`). */
export type WalletStatus = "active" | "blocked" | "in_default" | "dissolved";

/**
 * The product settings the engine reads (spec `CreditProductSettings`): rates in percent, fixed
 * amounts in cents, `gracePeriod` in days. Every setting is read from the product as it is at each
 * step, so Update Credit Product Settings applies from the wallet's next step; the interest and minimum
 * payment settings are refreshed into the wallet at each cut (before computing it) until a
 * ChangeInterestCreditCapital override has activated (spec wallets.tsp `CreditInterestSpecs`: "A change
 * of the product applies to the wallets that follow it from their next cut").
 */
export interface CreditProductRules {
  revolving: boolean;
  compound: boolean;
  cutFrequency: CutFrequency;
  fixedInterestAmount: number;
  baseInterestRate: number;
  baseMinimumPaymentRate: number;
  fixedMinimumPaymentAmount: number;
  capitalInterestSplit: number;
  gracePeriod: number;
  variableSpecs: boolean;
  morosidadRate: number;
  baseInterestMorosidad: number;
  interestAccrualMethod: InterestAccrualMethod;
  dailyRateDivisor: DailyRateDivisor;
}

/** Standing of a statement's minimum payment (spec `CreditStatementStatus`). */
export type StatementStatus = "pending" | "paid" | "defaulted";

/**
 * A statement: the outcome of one cut, with every figure that shows how its amounts were reached
 * (spec/credit/statements.tsp `CreditStatement`, same field names, plus the engine-only `index`).
 * Amounts in cents, rates in percent, instants UTC; the statement's key is (wallet, `cutDate`).
 */
export interface Statement {
  /** Ordinal of the statement in the wallet: 0 for the first cut, 1 for the next, … (engine only). */
  index: number;
  cutDate: Date;
  /** Start of the cycle (previous cut, or the wallet's creation), inclusive. */
  cycleStart: Date;
  /** End of the cycle, exclusive; equals `cutDate`. */
  cycleEnd: Date;
  /** Number of daily closes in the cycle (schedule.ts `daysInCycle`). */
  daysInCycle: number;
  /** Sum of the daily closes of the cycle. */
  sumOfDailyBalance: number;
  /** AO at the cut, before the cut's interest (basis of the minimum payment). */
  principalAtCut: number;
  /** IO at the cut, before the cut's interest. */
  interestOutstandingAtCut: number;
  /** The product's accrual method at the cut. */
  interestAccrualMethod: InterestAccrualMethod;
  /** Whether the product was `compound` at the cut: the basis included IO, and the interest is capitalised when applied. */
  compound: boolean;
  /** ADB: `sumOfDailyBalance`; BAC: `daysInCycle` × (`principalAtCut` [+ `interestOutstandingAtCut` if compound]), in cent-days. Basis of nominal and penal interest. */
  interestBasis: number;
  /** Nominal rate (percent a year), divisor and fixed interest used at the cut. */
  interestRateNominal: number;
  dailyRateDivisor: DailyRateDivisor;
  fixedInterestNominal: number;
  /** Minimum payment rate (percent) and fixed part used at the cut. */
  minimumPaymentRate: number;
  fixedMinimumPayment: number;
  /** Nominal interest calculated at the cut (`Interes Nominal Calculado`). */
  interestGenerated: number;
  /** Minimum payment. */
  minimumPayment: number;
  /** Grace end: 00:00 UTC of the cut day + gracePeriod days (the product's at the cut). */
  paymentDueDate: Date;
  /** Payments counted toward the statement so far: from the cut through the grace period, and on after a default until the cure. */
  paidInCycle: number;
  status: StatementStatus;
  /** Nominal interest applied at the grace end (`Interes Nominal Aplicado`); 0 until then. */
  interestApplied: number;
  /** When the nominal interest was applied (the grace end); null before. The grace end has run iff this is set. */
  interestAppliedAt: Date | null;
  /** Penal interest booked at the statement's default; 0 when it did not default. */
  penalInterest: number;
  /** Penal rate (percent a year) and fixed penal amount used at the default; null when the statement did not default. */
  interestRateMoroso: number | null;
  fixedInterestMoroso: number | null;
  /** When the default was cured (`Interes cancelado`); null otherwise. */
  curedAt: Date | null;
}

/**
 * The whole engine state of a wallet: balances (cents), status, cycle position, specs in force and
 * pending override, the per-wallet notification sequence and the wallet's clock `asOf` (UTC instant
 * up to which every scheduled step has run).
 */
export interface WalletState extends Balances {
  walletId: string;
  status: WalletStatus;
  /** The state a default interrupted (`active` or `blocked`), to return to at the cure; null when not in default. */
  statusBeforeDefault: "active" | "blocked" | null;
  createdAt: Date;
  firstCutDate: Date;
  /** Charges are refused from this instant (createdAt + `time` days), or null without `time`. */
  expiresAt: Date | null;
  /** Start of the running cycle: the last cut, or `createdAt`. */
  cycleStart: Date;
  /** Sum of the daily closes of the running cycle, cents. */
  sumOfDailyBalance: number;
  /** Interest settings in force: the product's (refreshed at each cut) until an override has activated, then the wallet's own. */
  interestSpecs: InterestSpecs;
  /** Minimum payment settings in force (same rule as `interestSpecs`). */
  minimumPaymentSpecs: MinimumPaymentSpecs;
  /** Whether a ChangeInterestCreditCapital override has activated: the wallet no longer follows its product's interest and minimum payment settings. */
  specsOverridden: boolean;
  /** ChangeInterestCreditCapital override waiting for the next cut, or null. */
  pendingSpecs: { interestSpecs: InterestSpecs; minimumPaymentSpecs: MinimumPaymentSpecs } | null;
  /** Last notification sequence used (0 before the first event). */
  sequence: number;
  /** Every step due at or before this instant has run. */
  asOf: Date;
  /** Statements, oldest cut first. */
  statements: Statement[];
  /** Open holds (approved authorizations not yet closed), oldest first; their amounts sum to `amountHeld`. */
  holds: Hold[];
}

/** Creation input of a wallet (spec `CreateCreditWalletRequest`): limit in cents, `time` in days, instants UTC. */
export interface NewWallet {
  walletId: string;
  createdAt: Date;
  limit: number;
  firstCutDate?: Date;
  time?: number;
}

/**
 * Default first cut date (spec `CreateCreditWalletRequest.firstCutDate`): 00:00 UTC of the creation
 * day plus one `cutFrequency` (month/year clamped like every cut).
 */
export function defaultFirstCutDate(createdAt: Date, frequency: CutFrequency): Date {
  return cutDate(startOfUtcDay(createdAt), frequency, 1);
}

/**
 * The interest and minimum payment settings a product gives its wallets (spec `CreditInterestSpecs`,
 * `CreditMinimumPaymentSpecs`: `baseInterestRate` → `interestRateNominal`, `morosidadRate` →
 * `interestRateMoroso`, `fixedInterestAmount` → `fixedInterestNominal`, `baseInterestMorosidad` →
 * `fixedInterestMoroso`, `baseMinimumPaymentRate` → `minimumPaymentRate`, `fixedMinimumPaymentAmount` →
 * `fixedMinimumPayment`).
 */
export function productSpecs(product: CreditProductRules): { interestSpecs: InterestSpecs; minimumPaymentSpecs: MinimumPaymentSpecs } {
  return {
    interestSpecs: {
      interestRateNominal: product.baseInterestRate,
      interestRateMoroso: product.morosidadRate,
      fixedInterestNominal: product.fixedInterestAmount,
      fixedInterestMoroso: product.baseInterestMorosidad,
    },
    minimumPaymentSpecs: { minimumPaymentRate: product.baseMinimumPaymentRate, fixedMinimumPayment: product.fixedMinimumPaymentAmount },
  };
}

/**
 * A new wallet: `active`, AA = limit, no debt, the product's specs (`productSpecs`; spec wallets.tsp:
 * "its `interestSpecs` and `minimumPaymentSpecs` are the product's"), first cycle starting at creation
 * (docs/decisions/credit.md "Wallets" and "The cycle"). Refusals: `FIRST_CUT_NOT_AFTER_CREATION` (422 on `firstCutDate`) when the first cut
 * is not later than the creation instant.
 */
export function createWallet(product: CreditProductRules, input: NewWallet): Outcome<WalletState> {
  cents(input.limit, "limit");
  const firstCutDate = input.firstCutDate ?? defaultFirstCutDate(input.createdAt, product.cutFrequency);
  if (firstCutDate.getTime() <= input.createdAt.getTime()) {
    return refuse("FIRST_CUT_NOT_AFTER_CREATION", "firstCutDate must be later than the wallet's creation.", "firstCutDate");
  }
  return accept({
    walletId: input.walletId,
    status: "active",
    statusBeforeDefault: null,
    limit: input.limit,
    availableAmount: input.limit,
    principalOutstanding: 0,
    interestOutstanding: 0,
    amountHeld: 0,
    createdAt: input.createdAt,
    firstCutDate,
    expiresAt: input.time === undefined ? null : addDays(input.createdAt, input.time),
    cycleStart: input.createdAt,
    sumOfDailyBalance: 0,
    ...productSpecs(product),
    specsOverridden: false,
    pendingSpecs: null,
    sequence: 0,
    asOf: input.createdAt,
    statements: [],
    holds: [],
  });
}

/**
 * The next cut date of a wallet (spec `CreditWallet.nextCutDate`): the first cut of the product's
 * current schedule (firstCutDate + n × cutFrequency) strictly after the wallet's clock `asOf`; null
 * once dissolved. Derived, never stored: a product update of `cutFrequency` moves it to the new
 * schedule from the next cut on, and it can never fall before the wallet's clock.
 */
export function nextCutDate(state: Pick<WalletState, "status" | "firstCutDate" | "asOf">, frequency: CutFrequency): Date | null {
  return state.status === "dissolved" ? null : nextCutAfter(state.firstCutDate, frequency, state.asOf).date;
}

/** Grace end of a cut for a product: re-exported convenience over schedule.ts `graceEnd`. */
export function statementDueDate(cut: Date, product: Pick<CreditProductRules, "gracePeriod">): Date {
  return graceEnd(cut, product.gracePeriod);
}
