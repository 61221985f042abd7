-- The named statements src/modules/limits/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- LOCK_MOVEMENT: limits_lock_movement
select pg_advisory_xact_lock(hashtext($1)) as locked;

-- SELECT_LIMITS: limits_select
select allowlist_required, withdrawal_caps, transfer_caps from customer_limits where customer_id = $1;

-- UPSERT_LIMITS: limits_upsert
insert into customer_limits (customer_id, allowlist_required, withdrawal_caps, transfer_caps, updated_at)
         values ($1, coalesce($2::boolean, false), $3::jsonb, $4::jsonb, $5)
       on conflict (customer_id) do update set allowlist_required = coalesce($2::boolean, customer_limits.allowlist_required),
         withdrawal_caps = excluded.withdrawal_caps, transfer_caps = excluded.transfer_caps, updated_at = excluded.updated_at;
