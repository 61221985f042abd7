/**
 * The state of one credit wallet as the engine sees it, its product's rules and its statements
 * (spec/credit/wallets.tsp `CreditWallet`, statements.tsp `CreditStatement`, products.tsp
 * `CreditProductSettings`; reference "Credit wallet (credit core)", "Credit product (credit core)").
 * Plain data, no I/O: a database row (plus its open statements) maps onto `WalletState` one to one.
 */
import type { DailyRateDivisor, InterestAccrualMethod, InterestSpecs, MinimumPaymentSpecs } from "./interest.js";
import { accept, cents, refuse, type Outcome } from "./outcome.js";
import type { Balances } from "./payments.js";
import { addDays, cutDate, graceEnd, nextCutAfter, startOfUtcDay, type CutFrequency } from "./schedule.js";

/** Wallet states (reference "States and transitions › Credit wallet"; spec `CreditWalletStatus`). */
export type WalletStatus = "active" | "blocked" | "in_default" | "dissolved";

/**
 * The product settings the engine reads (spec `CreditProductSettings`): rates in percent, fixed
 * amounts in cents, `gracePeriod` in days. The interest and minimum payment settings are copied into
 * the wallet at creation (`interestSpecs`, `minimumPaymentSpecs`); the others are read from the product
 * at each cycle step, so a product update applies from the wallet's next step (spec products.tsp).
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
 * A statement: the outcome of one cut (spec `CreditStatement`, plus the figures the engine needs
 * later). Amounts in cents, instants UTC.
 */
export interface Statement {
  /** Ordinal of the statement in the wallet: 0 for the first cut, 1 for the next, … (the statement's key is (wallet, cutDate)). */
  index: number;
  cutDate: Date;
  /** Start of the cycle (previous cut, or the wallet's creation), inclusive. */
  cycleStart: Date;
  /** End of the cycle, exclusive; equals `cutDate`. */
  cycleEnd: Date;
  /** Number of daily closes in the cycle (schedule.ts `daysInCycle`). */
  daysInCycle: number;
  /** Sum of the daily closes of the cycle, cents. */
  sumOfDailyBalance: number;
  /** The balance read at the cut (principal, + outstanding interest on compound products), cents. */
  balanceAtCut: number;
  /** Principal outstanding at the cut, cents (basis of the minimum payment). */
  principalAtCut: number;
  /** ADB: `sumOfDailyBalance`; BAC: `daysInCycle` × `balanceAtCut` (cent-days). Basis of nominal and penal interest. */
  interestBasis: number;
  /** Nominal interest calculated at the cut (`Interes Nominal Calculado`), cents. */
  interestGenerated: number;
  /** Minimum payment, cents. */
  minimumPayment: number;
  /** Grace end: 00:00 UTC of the cut day + gracePeriod days. */
  paymentDueDate: Date;
  /** Payments counted toward the statement so far, cents (from the cut: during the grace period, and on after a default until the cure). */
  paidInCycle: number;
  status: StatementStatus;
  /** Whether the grace end has run (nominal interest applied, default decided). */
  graceEnded: boolean;
  /** Penal interest booked at the statement's default, cents (0 if it did not default). */
  penalInterest: number;
  /** Whether a default of this statement has been cured. */
  cured: boolean;
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
  interestSpecs: InterestSpecs;
  minimumPaymentSpecs: MinimumPaymentSpecs;
  /** ChangeInterestCreditCapital override waiting for the next cut, or null. */
  pendingSpecs: { interestSpecs: InterestSpecs; minimumPaymentSpecs: MinimumPaymentSpecs } | null;
  /** Last notification sequence used (0 before the first event). */
  sequence: number;
  /** Every step due at or before this instant has run. */
  asOf: Date;
  /** Statements, oldest cut first. */
  statements: Statement[];
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
 * A new wallet: `active`, AA = limit, no debt, specs copied from the product (reference "Credit
 * product"; spec `CreditInterestSpecs`/`CreditMinimumPaymentSpecs`), first cycle starting at creation
 * (decisions.md §6). Refusals: `FIRST_CUT_NOT_AFTER_CREATION` (422 on `firstCutDate`) when the first cut
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
    createdAt: input.createdAt,
    firstCutDate,
    expiresAt: input.time === undefined ? null : addDays(input.createdAt, input.time),
    cycleStart: input.createdAt,
    sumOfDailyBalance: 0,
    interestSpecs: {
      interestRateNominal: product.baseInterestRate,
      interestRateMoroso: product.morosidadRate,
      fixedInterestNominal: product.fixedInterestAmount,
      fixedInterestMoroso: product.baseInterestMorosidad,
    },
    minimumPaymentSpecs: { minimumPaymentRate: product.baseMinimumPaymentRate, fixedMinimumPayment: product.fixedMinimumPaymentAmount },
    pendingSpecs: null,
    sequence: 0,
    asOf: input.createdAt,
    statements: [],
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
