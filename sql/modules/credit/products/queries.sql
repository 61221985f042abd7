-- The named statements src/modules/credit/products/queries.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- COUNT_PRODUCTS: credit_products_count
select count(*)::int as total from credit_product where customer_id = $1;

-- LIST_PRODUCTS: credit_products_page
select code as "creditProductCode", customer_id as "customerId", revolving, compound, cut_frequency as "cutFrequency",
                fixed_interest_amount::float8 as "fixedInterestAmount", base_interest_rate::float8 as "baseInterestRate",
                base_minimum_payment_rate::float8 as "baseMinimumPaymentRate",
                fixed_minimum_payment_amount::float8 as "fixedMinimumPaymentAmount",
                capital_interest_split::float8 as "capitalInterestSplit", grace_period as "gracePeriod", variable_specs as "variableSpecs",
                morosidad_rate::float8 as "morosidadRate", base_interest_morosidad::float8 as "baseInterestMorosidad",
                interest_accrual_method as "interestAccrualMethod", daily_rate_divisor as "dailyRateDivisor",
                to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt", to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "updatedAt",
                (count(*) over ())::int as total
           from credit_product where customer_id = $1 order by code limit $2 offset $3;
