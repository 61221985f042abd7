/**
 * SQL of the credit products (./service.ts): the prepared statements of the List Credit Products
 * hot path (docs/performance.md "What keeps the request path cheap").
 */
import type { PreparedStatement } from "../../../db/sql.js";

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
