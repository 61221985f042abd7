-- The named statements src/modules/credit/products/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

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

-- LOCK_PRODUCT: credit_products_lock
select id, customer_id as "customerId", code, revolving, compound, cut_frequency as "cutFrequency",
                fixed_interest_amount::float8 as "fixedInterestAmount", base_interest_rate::text as "baseInterestRate",
                base_minimum_payment_rate::text as "baseMinimumPaymentRate", fixed_minimum_payment_amount::float8 as "fixedMinimumPaymentAmount",
                capital_interest_split::text as "capitalInterestSplit", grace_period as "gracePeriod", variable_specs as "variableSpecs",
                morosidad_rate::text as "morosidadRate", base_interest_morosidad::float8 as "baseInterestMorosidad",
                interest_accrual_method as "interestAccrualMethod", daily_rate_divisor as "dailyRateDivisor",
                created_at as "createdAt", updated_at as "updatedAt"
           from credit_product where customer_id = $1 and code = $2 for update;

-- UPDATE_PRODUCT: credit_products_update
update credit_product set revolving = $2, compound = $3, cut_frequency = $4, fixed_interest_amount = $5, base_interest_rate = $6,
                base_minimum_payment_rate = $7, fixed_minimum_payment_amount = $8, capital_interest_split = $9, grace_period = $10,
                variable_specs = $11, morosidad_rate = $12, base_interest_morosidad = $13, interest_accrual_method = $14,
                daily_rate_divisor = $15, updated_at = $16
          where id = $1;
