/**
 * The golden product of docs/decisions/credit.md "The golden vector" (ADB, divisor 360, 36 % a year, minimum 10 % + 1000 cents,
 * monthly cut, grace 10 days) with the penal settings of its default-and-cure example (12 %, 500
 * cents), shared by the credit tests.
 */
import type { CreditProductRules } from "../../src/domain/credit/index.js";

export const GOLDEN_PRODUCT: CreditProductRules = {
  revolving: true,
  compound: false,
  cutFrequency: "month",
  fixedInterestAmount: 0,
  baseInterestRate: 36,
  baseMinimumPaymentRate: 10,
  fixedMinimumPaymentAmount: 1000,
  capitalInterestSplit: 50,
  gracePeriod: 10,
  variableSpecs: true,
  morosidadRate: 12,
  baseInterestMorosidad: 500,
  interestAccrualMethod: "ADB",
  dailyRateDivisor: 360,
};

/** Create Credit Product body of the golden product, code `001`, for `customerId`, with `overrides`. */
export function goldenProductBody(customerId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { customerId, creditProductCode: "001", ...GOLDEN_PRODUCT, ...overrides };
}
