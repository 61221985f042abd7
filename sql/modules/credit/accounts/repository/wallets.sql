-- The named statements src/modules/credit/accounts/repository/wallets.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- TENANT_HAS_WALLETS: credit_wallet_tenant_has_any
select exists (select 1 from credit_wallet where customer_id = $1) as any;

-- WALLET_INSERT: credit_wallet_insert
insert into credit_wallet ("wallet_id", "customer_id", "user_id", "product_id", "currency", "description", "first_cut_date", "time", "expires_at", "created_at", "status", "status_before_default", "credit_limit", "available_amount", "principal_outstanding", "interest_outstanding", "amount_held", "cycle_start", "sum_of_daily_balance", "last_close_at", "next_cut_at", "interest_rate_nominal", "interest_rate_moroso", "fixed_interest_nominal", "fixed_interest_moroso", "minimum_payment_rate", "fixed_minimum_payment", "specs_overridden", "pending_specs", "sequence", "as_of", "updated_at") select "wallet_id", "customer_id", "user_id", "product_id", "currency", "description", "first_cut_date", "time", "expires_at", "created_at", "status", "status_before_default", "credit_limit", "available_amount", "principal_outstanding", "interest_outstanding", "amount_held", "cycle_start", "sum_of_daily_balance", "last_close_at", "next_cut_at", "interest_rate_nominal", "interest_rate_moroso", "fixed_interest_nominal", "fixed_interest_moroso", "minimum_payment_rate", "fixed_minimum_payment", "specs_overridden", "pending_specs", "sequence", "as_of", "updated_at" from json_populate_record(null::credit_wallet, $1::json);

-- WALLET_SET_ASIDE_REASON: credit_wallet_set_aside_reason
select set_aside_reason from credit_wallet where wallet_id = $1;

-- WALLET_SET_ASIDE: credit_wallet_set_aside
update credit_wallet set set_aside_at = $1, set_aside_reason = $2, updated_at = now()
         where wallet_id = $3 and customer_id = $4 and set_aside_at is null returning wallet_id;

-- WALLETS_SET_ASIDE_COUNT: credit_wallets_set_aside_count
select count(*)::int as count from credit_wallet where set_aside_at is not null;
