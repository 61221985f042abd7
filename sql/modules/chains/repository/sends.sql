-- The named statements src/modules/chains/repository/sends.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- FEE_WAIT: chains_fee_wait
update chain_send set fee_wait_since = coalesce(fee_wait_since, $2), last_error = $3, updated_at = now() where id = $1;

-- FINISH_SEND: chains_finish_send
update chain_send set state = $2, last_error = $3, updated_at = now() where id = $1 and state in ('queued', 'broadcast')
         returning withdrawal_id, customer_id;

-- INIT_NONCE: chains_init_nonce
insert into chain_nonce (network, address, next_nonce) values ($1, $2, $3) on conflict (network, address) do nothing;

-- INSERT_REFILL: chains_insert_refill
insert into chain_send (network, kind, withdrawal_id, customer_id, from_address, to_address, currency, contract, amount_units, state, tx_hashes, created_at, updated_at)
         values ($1, 'refill', null, null, $2, $3, $6, null, $4::numeric, 'queued', '{}', $5, $5);

-- INSERT_SEND: chains_insert_send
insert into chain_send (network, withdrawal_id, customer_id, from_address, to_address, currency, contract, amount_units, state, tx_hashes, created_at, updated_at)
         values ($3, $1, $2, $4, $5, $6, $7, $8::numeric, 'queued', '{}', $9, $9);

-- LOCK_NONCE: chains_lock_nonce
select next_nonce::int as next from chain_nonce where network = $1 and address = $2 for update;

-- LOCK_SEND: chains_lock_send
select id::int, network, kind, withdrawal_id, customer_id, from_address, key_path, to_address, currency, contract, amount_units::text, state, nonce::int,
                      raw_tx, tx_hash, tx_hashes, max_fee_per_gas::text, max_priority_fee_per_gas::text, broadcast_height::int, mined_height::int,
                      fee::text, fee_wait_since, depends_on::int,
                      (select d.state from chain_send d where d.id = chain_send.depends_on) as depends_state from chain_send where id = $1 for update;

-- MARK_BROADCAST: chains_mark_broadcast
update chain_send set state = 'broadcast', broadcast_height = coalesce(broadcast_height, $2), last_error = null, updated_at = now()
          where id = $1 and state in ('queued', 'broadcast');

-- MARK_MINED: chains_mark_mined
update chain_send set mined_height = $2, fee = $3::numeric, updated_at = now() where id = $1;

-- OPEN_SENDS: chains_open_sends
select id::int, network, kind, withdrawal_id, customer_id, from_address, key_path, to_address, currency, contract, amount_units::text, state, nonce::int,
                      raw_tx, tx_hash, tx_hashes, max_fee_per_gas::text, max_priority_fee_per_gas::text, broadcast_height::int, mined_height::int,
                      fee::text, fee_wait_since, depends_on::int,
                      (select d.state from chain_send d where d.id = chain_send.depends_on) as depends_state from chain_send where network = $1 and state in ('queued', 'broadcast') order by id limit $2;

-- REPLACE_SEND: chains_replace_send
update chain_send set raw_tx = $2, tx_hash = $3::text, tx_hashes = array_append(tx_hashes, $3::text), max_fee_per_gas = $4::numeric,
                max_priority_fee_per_gas = $5::numeric, broadcast_height = null, last_error = null, updated_at = $6
          where id = $1 and state = 'broadcast';

-- SEND_ERROR: chains_send_error
update chain_send set last_error = $2, updated_at = now() where id = $1;

-- SEND_VIEWS: chains_send_views
select s.withdrawal_id, s.tx_hash, s.state, s.nonce::int, s.fee::text, s.mined_height::int, c.head::int as head
           from chain_send s left join chain_cursor c on c.network = s.network
          where s.withdrawal_id = any($1::uuid[]);

-- SIGN_SEND: chains_sign_send
with signed as (
           update chain_send set nonce = $2, raw_tx = $3, tx_hash = $4::text, tx_hashes = array_append(tx_hashes, $4::text), max_fee_per_gas = $5::numeric,
                  max_priority_fee_per_gas = $6::numeric, gas_limit = $7::numeric, broadcast_height = null, fee_wait_since = null, last_error = null, updated_at = $8
            where id = $1 returning network, from_address
         )
         update chain_nonce n set next_nonce = $2::bigint + 1 from signed s where n.network = s.network and n.address = s.from_address;
