-- The named statements src/modules/chains/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- ADVANCE_CURSOR: chains_advance_cursor
update chain_cursor set head = greatest($2::bigint, $3::bigint), scanned = $3, scanned_hash = $4, last_error = null, last_error_at = null, updated_at = now()
          where network = $1;

-- CURSOR: chains_cursor
select network, chain_id::text, head::text, scanned::text, scanned_hash, last_error from chain_cursor where network = $1;

-- DEPOSITS_BY_KEYS: chains_deposits_by_keys
select d.id::text, d.tx_hash, d.log_index, d.status, d.wallet_transaction_id::text
           from chain_deposit d join unnest($2::text[], $3::int[]) as k(tx_hash, log_index) on d.tx_hash = k.tx_hash and d.log_index = k.log_index
          where d.network = $1;

-- DROP_BLOCKS: chains_drop_blocks
delete from chain_block where network = $1 and height > $2;

-- DUE_DEPOSITS: chains_due_deposits
select id::text, wallet_id, wallet_transaction_id::text, currency, amount::text, tx_hash, log_index, address
           from chain_deposit where network = $1 and status = 'pending' and block_height <= $2 order by block_height, id limit $3;

-- INSERT_BLOCKS: chains_insert_blocks
insert into chain_block (network, height, hash, parent_hash)
         select $1, b.height, b.hash, b.parent_hash from unnest($2::bigint[], $3::text[], $4::text[]) as b(height, hash, parent_hash)
         on conflict (network, height) do update set hash = excluded.hash, parent_hash = excluded.parent_hash;

-- INSERT_CURSOR: chains_insert_cursor
insert into chain_cursor (network, chain_id, head, scanned, scanned_hash, last_error, last_error_at, updated_at)
         values ($1, $2, $3, $4, $5, null, null, now()) on conflict (network) do nothing;

-- LOCK_CURSOR: chains_lock_cursor
select network, chain_id::text, head::text, scanned::text, scanned_hash, last_error from chain_cursor where network = $1 for update;

-- MARK_DONE_MANY: chains_mark_done_many
update chain_deposit set status = 'done', credited_at = now() where id = any($1::bigint[]) and status = 'pending' and block_height <= $2 returning id::text;

-- ORPHAN_DEPOSITS: chains_orphan_deposits
update chain_deposit set status = 'orphaned' where network = $1 and block_height > $2 and status = 'pending' returning wallet_transaction_id::text;

-- RECORD_FAILURE: chains_record_failure
update chain_cursor set last_error = $2, last_error_at = now(), updated_at = now() where network = $1;

-- REVERSE_DEPOSITS: chains_reverse_deposits
with reversed as (
           update chain_deposit set status = 'reversed' where network = $1 and block_height > $2 and status = 'done'
           returning id, wallet_id, wallet_transaction_id, currency, amount, tx_hash, log_index)
         select id::text, wallet_id, wallet_transaction_id::text, currency, amount::text, tx_hash, log_index from reversed order by wallet_id, id;

-- REVIVE_DEPOSIT: chains_revive_deposit
update chain_deposit set status = 'pending', block_height = $2, block_hash = $3 where id = $1 and status in ('orphaned', 'reversed') returning wallet_transaction_id::text;

-- SAVE_HEAD: chains_save_head
update chain_cursor set head = $2, last_error = null, last_error_at = null, updated_at = now() where network = $1;

-- SCAN_LAGS: chains_scan_lags
select network, greatest(head - scanned, 0)::text as lag from chain_cursor order by network;

-- WINDOW: chains_window
select height::text, hash from chain_block where network = $1 and height <= $2 order by height desc limit $3;

-- WRITE_BATCH: chains_write_batch
with blocks as (
           insert into chain_block (network, height, hash, parent_hash)
           select $1, b.height, b.hash, b.parent_hash from unnest($4::bigint[], $5::text[], $6::text[]) as b(height, hash, parent_hash)
           on conflict (network, height) do update set hash = excluded.hash, parent_hash = excluded.parent_hash
           returning height),
         deposits as (
           insert into chain_deposit (network, tx_hash, log_index, block_height, block_hash, address, currency, amount, wallet_id, wallet_transaction_id, status, created_at)
           select $1, d.tx_hash, d.log_index, d.block_height, d.block_hash, d.address, d.currency, d.amount, d.wallet_id, d.wallet_transaction_id, 'pending', now()
             from unnest($7::text[], $8::int[], $9::bigint[], $10::text[], $11::text[], $12::text[], $13::numeric[], $14::uuid[], $15::bigint[])
                  as d(tx_hash, log_index, block_height, block_hash, address, currency, amount, wallet_id, wallet_transaction_id)
           returning id),
         pruned as (delete from chain_block where network = $1 and height < $16 returning height)
         update chain_cursor set head = greatest($2::bigint, $3::bigint), scanned = $3, scanned_hash = $17, last_error = null, last_error_at = null, updated_at = now()
          where network = $1;
