-- The named statements src/providers/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- DEPOSIT_ADDRESS_PATHS: sandbox_deposit_address_paths
select lower(address) as address, derivation_path from sandbox_deposit_address where network = $1 and lower(address) = any($2::text[]);

-- INSERT_DEPOSIT_ADDRESS: sandbox_insert_deposit_address
insert into sandbox_deposit_address (network, derivation_index, derivation_path, address, vault_wallet_id, created_at) values ($1, $2, $3, $4, $5, now());

-- INSERT_VAULT_WALLET: sandbox_insert_vault_wallet
insert into sandbox_vault_wallet (vault_wallet_id, customer_id, wallet_id, created_at) values ($1, $2, $3, now());

-- LOCK_ADDRESS_ALLOCATION: sandbox_lock_address_allocation
select pg_advisory_xact_lock(hashtext('sandbox_deposit_address:' || $1)) as locked;

-- NEXT_DERIVATION_INDEX: sandbox_next_derivation_index
select coalesce(max(derivation_index) + 1, 0) as next from sandbox_deposit_address where network = $1;

-- OWN_PRICE: sandbox_own_price
select price from sandbox_price where customer_id = $1 and pair = $2;

-- UPSERT_PRICE: sandbox_upsert_price
insert into sandbox_price (customer_id, pair, price, updated_at) values ($1, $2, $3, $4)
         on conflict (customer_id, pair) do update set price = excluded.price, updated_at = excluded.updated_at;
