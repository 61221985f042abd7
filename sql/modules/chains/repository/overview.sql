-- The named statements src/modules/chains/repository/overview.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- DEPOSIT_ADDRESSES: chains_deposit_addresses
select distinct lower(address) as address from wallet_address where network = $1 order by 1;

-- GAS_BALANCES: chains_gas_balances
select network, balance::text from chain_gas_balance order by network;

-- OVERVIEW_ROWS: chains_overview_rows
select n.network, c.scanned::text, c.last_error,
                (select count(*) from chain_send s where s.network = n.network and s.state in ('queued', 'broadcast'))::text as pending_sends
           from unnest($1::text[]) with ordinality as n(network, position)
           left join chain_cursor c on c.network = n.network
          order by n.position;

-- PENDING_SENDS: chains_pending_sends
select network, sum(open)::text as count from (
           select network, 0 as open from chain_cursor
           union all select network, 0 from chain_gas_balance
           union all select network, count(*) from chain_send where state in ('queued', 'broadcast') group by network
         ) t group by network order by network;

-- SAVE_GAS_BALANCE: chains_save_gas_balance
insert into chain_gas_balance (network, address, balance, height, asked_at) values ($1, $2, $3, $4, now())
         on conflict (network) do update set address = excluded.address, balance = excluded.balance, height = excluded.height, asked_at = excluded.asked_at;
