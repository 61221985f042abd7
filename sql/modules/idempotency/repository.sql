-- The named statements src/modules/idempotency/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- DELETE_KEY: idempotency_key_delete
delete from idempotency_key where customer_id = $1 and scope = $2 and caller = $3 and key = $4;

-- INSERT_KEY: idempotency_key_insert
insert into idempotency_key (customer_id, scope, caller, key, request_fingerprint, result_id, created_at)
       select $1::varchar, $2::varchar, $3::varchar, $4::varchar, $5::varchar, $6::varchar, now()
        where not exists (select 1 from idempotency_key where customer_id = $1 and scope = $2 and caller = '*' and key = $4)
       on conflict (customer_id, scope, caller, key) do nothing returning key;

-- SELECT_KEY: idempotency_key_select
select request_fingerprint, result_id from idempotency_key where customer_id = $1 and scope = $2 and caller in ($3, '*') and key = $4;
