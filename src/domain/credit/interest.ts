/**
 * Interest and minimum payment rules of the credit cycle (docs/decisions/credit.md "The cycle"; reference "Credit product
 * (credit core)" calculation rules). Amounts are integer cents (JS safe integers); rates are percent
 * (36 means 36 % a year). Every intermediate product is exact (decimal.js, the project's `Money`
 * configuration of src/domain/money.ts) and rounded half-even to whole cents once, at the end of each
 * formula — the SQL batches get the same result with `numeric` arithmetic and one half-even rounding.
 */
import { Decimal } from "decimal.js";
import { Money } from "../money.js";
import { cents } from "./outcome.js";

/** Interest accrual method (reference "Credit product": `ADB` average daily balance, `BAC` balance at cut). */
export type InterestAccrualMethod = "ADB" | "BAC";

/** Days counted as a year (reference "Credit product": `dailyRateDivisor`, 360 or 365). */
export type DailyRateDivisor = 360 | 365;

/**
 * Interest settings of one wallet (spec/credit/wallets.tsp `CreditInterestSpecs`): copied from the
 * product at creation (`baseInterestRate`, `morosidadRate`, `fixedInterestAmount`, `baseInterestMorosidad`),
 * changed by ChangeInterestCreditCapital. Rates in percent a year, fixed amounts in cents.
 */
export interface InterestSpecs {
  interestRateNominal: number;
  interestRateMoroso: number;
  fixedInterestNominal: number;
  fixedInterestMoroso: number;
}

/** Minimum payment settings of one wallet (spec `CreditMinimumPaymentSpecs`): rate in percent (0–100), fixed part in cents. */
export interface MinimumPaymentSpecs {
  minimumPaymentRate: number;
  fixedMinimumPayment: number;
}

/**
 * Parses an accrual method, accepting both spellings of the reference ("a second description names
 * the values `average_daily_balance` and `balance_at_cut`"), case-insensitively, and returning the
 * short one; null for anything else (docs/decisions/credit.md "Products": both spellings are accepted
 * and the short one is returned).
 */
export function parseAccrualMethod(value: string): InterestAccrualMethod | null {
  const v = value.trim().toLowerCase();
  if (v === "adb" || v === "average_daily_balance") return "ADB";
  if (v === "bac" || v === "balance_at_cut") return "BAC";
  return null;
}

/** Rounds an exact amount of cents half-even to a whole number of cents (docs/decisions/credit.md "The cycle": rounded half-even to whole cents once per formula). */
export function roundCents(exact: Decimal): number {
  return cents(exact.toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber(), "rounded amount");
}

/**
 * The balance a daily close adds to `sumOfDailyBalance`, in cents (docs/decisions/credit.md "The cycle": each
 * daily close adds the principal the wallet held when the previous day ended). With `compound` the basis is principal + outstanding interest
 * (reference "Credit product", `compound`: "interest at statement closing is based on amount owed plus
 * interest owed"); without it, principal only. On a compound product applied nominal interest is already
 * capitalised into principal, so the extra term is the applied penal interest (never capitalised).
 * SQL: `sum_of_daily_balance + principal_outstanding + CASE WHEN compound THEN interest_accrued ELSE 0 END`.
 */
export function dailyBalanceBasis(principalOutstanding: number, interestOutstanding: number, compound: boolean): number {
  return cents(compound ? principalOutstanding + interestOutstanding : principalOutstanding, "daily balance");
}

/**
 * Interest basis of a statement, in cent-days (docs/decisions/credit.md "The cycle"): ADB → `sumOfDailyBalance` (the sum of
 * the daily closes of the cycle); BAC → days in the cycle × the balance at the cut (principal, plus
 * outstanding interest on compound products: see `dailyBalanceBasis`). The penal interest of a default
 * uses the same basis. Golden vector: ADB 1 125 000; BAC 30 × 45 000 = 1 350 000.
 */
export function interestBasis(method: InterestAccrualMethod, sumOfDailyBalance: number, daysInCycle: number, balanceAtCut: number): number {
  return cents(method === "ADB" ? sumOfDailyBalance : daysInCycle * balanceAtCut, "interest basis");
}

/**
 * Interest of a basis, in cents: round_half_even(`ratePercent`/100/`divisor` × `basis`) + `fixed`
 * (docs/decisions/credit.md "The cycle", ADB and BAC formulas; the same formula gives the penal interest with
 * `morosidadRate` and `baseInterestMorosidad`). `basis` in cent-days (see `interestBasis`).
 * Golden vector: 36/100/360 × 1 125 000 + 0 = 1125 (ADB), × 1 350 000 = 1350 (BAC);
 * default-and-cure example: 12/100/360 × 900 000 + 500 = 800.
 */
export function interestOn(basis: number, ratePercent: number, divisor: DailyRateDivisor, fixed: number): number {
  const exact = new Money(ratePercent).div(100).div(divisor).times(basis);
  return cents(roundCents(exact) + cents(fixed, "fixed interest"), "interest");
}

/**
 * Nominal interest of a statement at its cut (`Interes Nominal Calculado`), in cents: the basis of
 * `interestBasis` with the wallet's `interestRateNominal` and `fixedInterestNominal` (docs/decisions/credit.md "The cycle").
 * The fixed amount is added on every cut, as the formula says, even when the basis is 0.
 */
export function nominalInterest(method: InterestAccrualMethod, divisor: DailyRateDivisor, specs: InterestSpecs, sumOfDailyBalance: number, daysInCycle: number, balanceAtCut: number): number {
  return interestOn(interestBasis(method, sumOfDailyBalance, daysInCycle, balanceAtCut), specs.interestRateNominal, divisor, specs.fixedInterestNominal);
}

/**
 * Penal interest of a defaulted statement (`Interes Moroso Calculado`), in cents (docs/decisions/credit.md
 * "Default and cure"): `interestRateMoroso`/100/divisor × the statement's interest basis +
 * `fixedInterestMoroso`, rounded half-even once. The specs are those in force at the default.
 */
export function penalInterest(statementInterestBasis: number, divisor: DailyRateDivisor, specs: InterestSpecs): number {
  return interestOn(statementInterestBasis, specs.interestRateMoroso, divisor, specs.fixedInterestMoroso);
}

/**
 * Minimum payment of a statement, in cents (docs/decisions/credit.md "The cycle"): round_half_even(`minimumPaymentRate` % ×
 * principal at the cut) + `fixedMinimumPayment`, at most the total debt at the cut (principal +
 * outstanding applied interest; the interest just calculated is not debt until applied at the grace end).
 * Golden vector: 10 % × 45 000 + 1000 = 5500; default-and-cure example: 10 % × 30 000 + 1000 = 4000.
 */
export function minimumPayment(specs: MinimumPaymentSpecs, principalAtCut: number, totalDebtAtCut: number): number {
  const rated = roundCents(new Money(specs.minimumPaymentRate).div(100).times(principalAtCut));
  return Math.min(cents(rated + cents(specs.fixedMinimumPayment, "fixed minimum payment"), "minimum payment"), cents(totalDebtAtCut, "total debt"));
}

/**
 * Where applied nominal interest goes at the grace end (reference "Credit product", `compound`:
 * "whether applied interest is capitalized into `amountOwed` (true) or added to `interestOwed` (false)"):
 * `principal` on compound products, `interest` otherwise. Penal interest always goes to `interest`
 * (docs/decisions/credit.md "Default and cure": booked at once into `interest_accrued`, never capitalised).
 */
export function nominalInterestBucket(compound: boolean): "principal" | "interest" {
  return compound ? "principal" : "interest";
}
