-- The named statements src/modules/chains/repository/sweeps.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CLAIM_DEPOSITS: chains_claim_deposits
update chain_deposit set swept_by = $1 where id = any($2::bigint[]) and status = 'done' and swept_by is null;

-- DUE_SWEEPS: chains_due_sweeps
select d.address, d.currency, sum(d.amount)::text as amount, array_agg(d.id::text order by d.id) as ids
           from chain_deposit d
           join unnest($3::text[], $4::numeric[]) as m(currency, minimum) on m.currency = d.currency
          where d.network = $1 and d.status = 'done' and d.swept_by is null
            and not exists (select 1 from chain_send s
                             where s.network = d.network and s.state in ('queued', 'broadcast') and s.kind = 'sweep' and s.from_address = d.address)
          group by d.address, d.currency, m.minimum
         having sum(d.amount) >= m.minimum
          order by min(d.id)
          limit $2;

-- INSERT_SWEEP: chains_insert_sweep
insert into chain_send (network, kind, from_address, key_path, to_address, currency, contract, amount_units, depends_on, state, tx_hashes, created_at, updated_at)
         values ($1, 'sweep', $2, $3, $7, $4, $5, $6::numeric, $8::bigint, 'queued', '{}', $9, $9)
         returning id::int;

-- INSERT_TOPUP: chains_insert_topup
insert into chain_send (network, kind, from_address, to_address, currency, contract, amount_units, state, tx_hashes, created_at, updated_at)
         values ($1, 'topup', $2, $3, $5, null, $4::numeric, 'queued', '{}', $6, $6)
         returning id::int;

-- RELEASE_DEPOSITS: chains_release_deposits
update chain_deposit set swept_by = null where swept_by = $1;

-- UNSWEPT_NATIVE: chains_unswept_native
select coalesce(sum(amount), 0)::text as amount from chain_deposit
          where network = $1 and address = $2 and currency = $3 and status in ('pending', 'done') and swept_by is null;
