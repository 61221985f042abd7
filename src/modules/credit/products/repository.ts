/**
 * The statements of the credit products, on their table `credit_product` (./service.ts): the List
 * Credit Products hot path (docs/performance.md "What keeps the request path cheap") and the
 * locked read and write of Update Credit Product Settings, whose transaction also moves the
 * wallets' next cuts (../cycles/repository/schedule.ts `rescheduleWallets`). Cents are integers,
 * rates percent decimal strings (`numeric(9,4)`), instants UTC.
 */
import type { PreparedStatement, Sql } from "../../../db/sql.js";
import type { CreditProduct } from "./entities.js";

/** ISO 8601 UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/**
 * One page of a tenant's products in code order (`$1` customer id, `$2` limit, `$3` offset), each
 * row a `CreditProduct` as the API shows it (the columns named as ./service.ts `creditProductView` names
 * them) plus the tenant's product count `total`: the List Credit Products read in one statement
 * (docs/performance.md "What keeps the request path cheap"). Cents and rates come as numbers (`float8`: cents ≤ 1e9 and 4-decimal rates
 * are exact in a double).
 */
export const LIST_PRODUCTS: PreparedStatement = {
  name: "credit_products_page",
  text: `select code as "creditProductCode", customer_id as "customerId", revolving, compound, cut_frequency as "cutFrequency",
                fixed_interest_amount::float8 as "fixedInterestAmount", base_interest_rate::float8 as "baseInterestRate",
                base_minimum_payment_rate::float8 as "baseMinimumPaymentRate",
                fixed_minimum_payment_amount::float8 as "fixedMinimumPaymentAmount",
                capital_interest_split::float8 as "capitalInterestSplit", grace_period as "gracePeriod", variable_specs as "variableSpecs",
                morosidad_rate::float8 as "morosidadRate", base_interest_morosidad::float8 as "baseInterestMorosidad",
                interest_accrual_method as "interestAccrualMethod", daily_rate_divisor as "dailyRateDivisor",
                to_char(created_at at time zone 'UTC', ${ISO}) as "createdAt", to_char(updated_at at time zone 'UTC', ${ISO}) as "updatedAt",
                (count(*) over ())::int as total
           from credit_product where customer_id = $1 order by code limit $2 offset $3`,
};

/** The tenant's product count (`$1` customer id), for a page past the end. */
export const COUNT_PRODUCTS: PreparedStatement = {
  name: "credit_products_count",
  text: `select count(*)::int as total from credit_product where customer_id = $1`,
};

/** A page of products as {@link LIST_PRODUCTS} returns it: the `CreditProduct` view's fields and the tenant's `total`. */
export type ProductPageRow<View> = View & { total: number };

/** One page of tenant `customerId`'s products ({@link LIST_PRODUCTS}), each row with the tenant's `total`. @throws the driver's error. */
export function productPage<View extends object>(on: Sql, customerId: string, limit: number, skip: number): Promise<ProductPageRow<View>[]> {
  return on.rows<ProductPageRow<View>>(LIST_PRODUCTS, [customerId, limit, skip]);
}

/** Tenant `customerId`'s product count ({@link COUNT_PRODUCTS}). @throws the driver's error. */
export async function productCount(on: Sql, customerId: string): Promise<number> {
  return (await on.rows<{ total: number }>(COUNT_PRODUCTS, [customerId]))[0]?.total ?? 0;
}

/** The settings of a product that Update Credit Product Settings may change, in their column order of {@link UPDATE_PRODUCT} (`$2`…`$15`). */
export const PRODUCT_SETTINGS = [
  "revolving", "compound", "cutFrequency", "fixedInterestAmount", "baseInterestRate", "baseMinimumPaymentRate", "fixedMinimumPaymentAmount",
  "capitalInterestSplit", "gracePeriod", "variableSpecs", "morosidadRate", "baseInterestMorosidad", "interestAccrualMethod", "dailyRateDivisor",
] as const;

/**
 * Locks product `$2` of tenant `$1` (`for update`) and reads it in the entity's shape (./entities.ts:
 * cents as numbers, rates as decimal strings, instants as timestamps).
 */
export const LOCK_PRODUCT: PreparedStatement = {
  name: "credit_products_lock",
  text: `select id, customer_id as "customerId", code, revolving, compound, cut_frequency as "cutFrequency",
                fixed_interest_amount::float8 as "fixedInterestAmount", base_interest_rate::text as "baseInterestRate",
                base_minimum_payment_rate::text as "baseMinimumPaymentRate", fixed_minimum_payment_amount::float8 as "fixedMinimumPaymentAmount",
                capital_interest_split::text as "capitalInterestSplit", grace_period as "gracePeriod", variable_specs as "variableSpecs",
                morosidad_rate::text as "morosidadRate", base_interest_morosidad::float8 as "baseInterestMorosidad",
                interest_accrual_method as "interestAccrualMethod", daily_rate_divisor as "dailyRateDivisor",
                created_at as "createdAt", updated_at as "updatedAt"
           from credit_product where customer_id = $1 and code = $2 for update`,
};

/** Tenant `customerId`'s product `code` locked for the transaction `tx` ({@link LOCK_PRODUCT}), or null. @throws the driver's error. */
export async function lockProduct(tx: Sql, customerId: string, code: string): Promise<CreditProduct | null> {
  const [row] = await tx.rows<Omit<CreditProduct, "createdAt" | "updatedAt"> & { createdAt: Date | string; updatedAt: Date | string }>(LOCK_PRODUCT, [customerId, code]);
  // instants as the pool's parsers give them (text on the ORM's pool): Dates, as the entity holds them
  return row ? ({ ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) } as CreditProduct) : null;
}

/** Writes the settings `$2`…`$15` ({@link PRODUCT_SETTINGS} order) and `updated_at` = `$16` of product `$1`. */
export const UPDATE_PRODUCT: PreparedStatement = {
  name: "credit_products_update",
  text: `update credit_product set revolving = $2, compound = $3, cut_frequency = $4, fixed_interest_amount = $5, base_interest_rate = $6,
                base_minimum_payment_rate = $7, fixed_minimum_payment_amount = $8, capital_interest_split = $9, grace_period = $10,
                variable_specs = $11, morosidad_rate = $12, base_interest_morosidad = $13, interest_accrual_method = $14,
                daily_rate_divisor = $15, updated_at = $16
          where id = $1`,
};

/** Writes product `row`'s settings and `updatedAt` ({@link UPDATE_PRODUCT}) in transaction `tx`. @throws the driver's error. */
export async function updateProduct(tx: Sql, row: CreditProduct): Promise<void> {
  await tx.run(UPDATE_PRODUCT, [row.id, ...PRODUCT_SETTINGS.map((key) => row[key]), row.updatedAt]);
}
