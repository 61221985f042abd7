/**
 * The credit rows as the change path's SQL reads and writes them (./lock.ts, ./write.ts; docs/performance.md
 * "Authorizations and credit changes"): rows read as JSON (`row_to_json`: snake_case columns,
 * `bigint` and `numeric` as JSON numbers, `timestamptz` as ISO 8601 text with its offset) into the
 * shapes of the entities (../entities.ts, ../../authorizations/entities.ts), and entity-shaped values
 * back into snake_case JSON objects for `json_populate_record(set)`.
 *
 * Money: integer cents (`bigint`, read as JS numbers as the entities map them, `p.bigint("number")`).
 * Rates: `numeric(9,4)`, read as a JSON number and kept as the entities keep them, a decimal string
 * with 4 places (../mapping.ts `rateText`: the shortest round trip of the double, so exact). Instants: UTC.
 */
import type { CreditProductRules } from "../../../../domain/credit/index.js";
import type { CreditAuthorization } from "../../authorizations/entities.js";
import type { CreditStatement, CreditWallet } from "../entities.js";
import { rateText } from "../mapping.js";

/** A row as `row_to_json` gives it. */
export type JsonRow = Record<string, unknown>;

const date = (v: unknown): Date => new Date(v as string);
const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string));
const rate = (v: unknown): string => rateText(Number(v));
const num = (v: unknown): number => v as number;
const str = (v: unknown): string => v as string;
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : (v as string));

/** A `credit_wallet` row read as JSON, in the entity's shape. */
export function walletOfJson(j: JsonRow): CreditWallet {
  return {
    walletId: str(j.wallet_id),
    customerId: str(j.customer_id),
    userId: str(j.user_id),
    productId: str(j.product_id),
    currency: str(j.currency),
    description: strOrNull(j.description),
    status: j.status as CreditWallet["status"],
    statusBeforeDefault: (j.status_before_default ?? null) as CreditWallet["statusBeforeDefault"],
    limit: num(j.credit_limit),
    availableAmount: num(j.available_amount),
    principalOutstanding: num(j.principal_outstanding),
    interestOutstanding: num(j.interest_outstanding),
    amountHeld: num(j.amount_held),
    firstCutDate: date(j.first_cut_date),
    time: (j.time ?? null) as number | null,
    expiresAt: dateOrNull(j.expires_at),
    cycleStart: date(j.cycle_start),
    sumOfDailyBalance: num(j.sum_of_daily_balance),
    lastCloseAt: dateOrNull(j.last_close_at),
    nextCutAt: dateOrNull(j.next_cut_at),
    interestRateNominal: rate(j.interest_rate_nominal),
    interestRateMoroso: rate(j.interest_rate_moroso),
    fixedInterestNominal: num(j.fixed_interest_nominal),
    fixedInterestMoroso: num(j.fixed_interest_moroso),
    minimumPaymentRate: rate(j.minimum_payment_rate),
    fixedMinimumPayment: num(j.fixed_minimum_payment),
    specsOverridden: j.specs_overridden as boolean,
    pendingSpecs: (j.pending_specs ?? null) as CreditWallet["pendingSpecs"],
    sequence: num(j.sequence),
    asOf: date(j.as_of),
    setAsideAt: dateOrNull(j.set_aside_at),
    setAsideReason: strOrNull(j.set_aside_reason),
    createdAt: date(j.created_at),
    updatedAt: date(j.updated_at),
  } as CreditWallet;
}

/** A `credit_statement` row read as JSON, in the entity's shape. */
export function statementOfJson(j: JsonRow): CreditStatement {
  return {
    id: str(j.id),
    walletId: str(j.wallet_id),
    ordinal: num(j.ordinal),
    cutDate: date(j.cut_date),
    cycleStart: date(j.cycle_start),
    daysInCycle: num(j.days_in_cycle),
    sumOfDailyBalance: num(j.sum_of_daily_balance),
    principalAtCut: num(j.principal_at_cut),
    interestOutstandingAtCut: num(j.interest_outstanding_at_cut),
    interestAccrualMethod: j.interest_accrual_method as CreditStatement["interestAccrualMethod"],
    compound: j.compound as boolean,
    interestBasis: num(j.interest_basis),
    interestRateNominal: rate(j.interest_rate_nominal),
    dailyRateDivisor: j.daily_rate_divisor as CreditStatement["dailyRateDivisor"],
    fixedInterestNominal: num(j.fixed_interest_nominal),
    minimumPaymentRate: rate(j.minimum_payment_rate),
    fixedMinimumPayment: num(j.fixed_minimum_payment),
    interestGenerated: num(j.interest_generated),
    minimumPayment: num(j.minimum_payment),
    paymentDueDate: date(j.payment_due_date),
    paidInCycle: num(j.paid_in_cycle),
    status: j.status as CreditStatement["status"],
    interestApplied: num(j.interest_applied),
    interestAppliedAt: dateOrNull(j.interest_applied_at),
    penalInterest: num(j.penal_interest),
    interestRateMoroso: j.interest_rate_moroso === null || j.interest_rate_moroso === undefined ? null : rate(j.interest_rate_moroso),
    fixedInterestMoroso: (j.fixed_interest_moroso ?? null) as number | null,
    curedAt: dateOrNull(j.cured_at),
  } as CreditStatement;
}

/** A `credit_authorization` row read as JSON, in the entity's shape. */
export function authorizationOfJson(j: JsonRow): CreditAuthorization {
  return {
    authorizationId: str(j.authorization_id),
    walletId: str(j.wallet_id),
    cardId: strOrNull(j.card_id),
    customerId: str(j.customer_id),
    status: j.status as CreditAuthorization["status"],
    declineReason: strOrNull(j.decline_reason),
    declineDetail: (j.decline_detail ?? null) as CreditAuthorization["declineDetail"],
    amount: num(j.amount),
    capturedAmount: num(j.captured_amount),
    releasedAmount: num(j.released_amount),
    refundedAmount: num(j.refunded_amount),
    merchantName: str(j.merchant_name),
    merchantMcc: strOrNull(j.merchant_mcc),
    merchantCountry: strOrNull(j.merchant_country),
    reference: strOrNull(j.reference),
    processorReference: strOrNull(j.processor_reference),
    idempotencyKey: str(j.idempotency_key),
    expiresAt: dateOrNull(j.expires_at),
    closedAt: dateOrNull(j.closed_at),
    createdAt: date(j.created_at),
  } as CreditAuthorization;
}

/**
 * The engine's product rules of a `credit_product` row read as JSON (../mapping.ts `productRules`
 * on the entity: the same numbers, rates as the doubles of their decimal text).
 */
export function productRulesOfJson(j: JsonRow): CreditProductRules {
  return {
    revolving: j.revolving as boolean,
    compound: j.compound as boolean,
    cutFrequency: j.cut_frequency as CreditProductRules["cutFrequency"],
    fixedInterestAmount: num(j.fixed_interest_amount),
    baseInterestRate: num(j.base_interest_rate),
    baseMinimumPaymentRate: num(j.base_minimum_payment_rate),
    fixedMinimumPaymentAmount: num(j.fixed_minimum_payment_amount),
    capitalInterestSplit: num(j.capital_interest_split),
    gracePeriod: num(j.grace_period),
    variableSpecs: j.variable_specs as boolean,
    morosidadRate: num(j.morosidad_rate),
    baseInterestMorosidad: num(j.base_interest_morosidad),
    interestAccrualMethod: j.interest_accrual_method as CreditProductRules["interestAccrualMethod"],
    dailyRateDivisor: j.daily_rate_divisor as CreditProductRules["dailyRateDivisor"],
  };
}

/** Column names that are not the snake_case of their property (`limit` is stored as `credit_limit`, a reserved word). */
const RENAMED: Readonly<Record<string, string>> = { limit: "credit_limit" };
const snakeCache = new Map<string, string>();

/** The column of property `key`: its snake_case (`availableAmount` → `available_amount`), or its {@link RENAMED} name. */
function columnOf(key: string): string {
  let column = snakeCache.get(key);
  if (column === undefined) {
    column = RENAMED[key] ?? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    snakeCache.set(key, column);
  }
  return column;
}

/** `values` (entity properties) keyed by their columns, for `json_populate_record(set)`; Dates become ISO 8601 text in JSON. */
export function columnsOf(values: object): JsonRow {
  const out: JsonRow = {};
  for (const [key, value] of Object.entries(values)) out[columnOf(key)] = value;
  return out;
}
