-- The named statements src/modules/allowlist/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- INSERT_ADDRESS: allowlist_insert_address
insert into allowlist_address (id, customer_id, user_id, currency, address, address_key, label, created_at, activates_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9) on conflict (user_id, currency, address_key) do nothing returning id;

-- SELECT_ACTIVATION: allowlist_select_activation
select activates_at from allowlist_address where user_id = $1 and currency = $2 and address_key = $3;
