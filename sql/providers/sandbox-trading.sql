-- The named statements src/providers/sandbox-trading.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- OWN_PRICE_SQL
select price from sandbox_price where customer_id = ? and pair = ?;
