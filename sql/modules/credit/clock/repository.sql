-- The named statements src/modules/credit/clock/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CLOCK_CREATE: credit_clock_create
insert into credit_clock (customer_id, "now", updated_at) values ($1, $2, $2) on conflict (customer_id) do nothing;

-- CLOCK_EXISTS: credit_clock_exists
select 1 as one from credit_clock where customer_id = $1;

-- CLOCK_LOCK: credit_clock_lock
select "now" from credit_clock where customer_id = $1 for update;

-- CLOCK_NOW: credit_clock_now
select "now" from credit_clock where customer_id = $1;

-- CLOCK_SET: credit_clock_set
update credit_clock set "now" = $1, updated_at = $2 where customer_id = $3;

-- CLOCK_STATEMENT_TIMEOUT: credit_clock_statement_timeout
select set_config('statement_timeout', $1, true);
