-- The named statements src/modules/wallets/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- ADDRESS_HOLDER: wallet_address_holder
select w.wallet_id, w.customer_id from wallet_address a join wallet w on w.wallet_id = a.wallet_id
          where a.network = $1 and a.address = $2 and a.currency = $3 limit 1;

-- ADDRESS_HOLDERS: wallet_address_holders
select distinct on (a.address) a.address, w.wallet_id, w.customer_id from wallet_address a join wallet w on w.wallet_id = a.wallet_id
          where a.network = $1 and a.address = any($2::text[]) order by a.address, a.created_at, a.address_id;

-- COMPLETE_DEPOSIT: wallet_complete_deposit
update wallet_transaction set status = 'done', balance_after = $2, journal_entry_id = $3 where id = $1 and action = 'deposit' and status = 'pending';

-- INSERT_TRANSACTION: wallet_insert_transaction
insert into wallet_transaction ("wallet_id", "customer_id", "network", "address", "action", "status", "currency", "amount", "fees", "net_proceeds", "price", "balance_after", "hash", "memo", "description", "order_id", "trade_id", "idempotency_id", "journal_entry_id", "created_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) returning id;

-- INSERT_WALLET_ADDRESS: wallet_insert_address
insert into wallet_address (address_id, wallet_id, network, currency, address, created_at) values ($1, $2, $3, $4, $5, $6);

-- INSERT_WALLET: wallet_insert
insert into wallet (wallet_id, customer_id, user_id, vault_wallet_id, name, name_key, description, wallet_type, networks, status, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $11);

-- LOCK_WALLET_STATE: wallet_lock_state
select wallet_id, customer_id, user_id, status, status_reason, suspended_status, suspended_reason from wallet where wallet_id = $1::uuid for update;

-- REVERSE_DEPOSIT_TRANSACTION: wallet_reverse_deposit_transaction
update wallet_transaction set status = 'reversed' where id = $1 and action = 'deposit' and status = 'done' returning customer_id, address, hash;

-- SET_DEPOSIT_STATUS: wallet_set_deposit_status
update wallet_transaction set status = $2 where id = any($1::bigint[]) and action = 'deposit' and status <> 'done';

-- SHARE_WALLET_STATES: wallet_share_states
select wallet_id, status, status_reason from wallet where wallet_id = any($1::uuid[]) order by wallet_id for share;

-- TRANSACTION_CONFIRMATIONS: wallet_transaction_confirmations
select d.wallet_transaction_id::text as id,
                case when d.status in ('orphaned', 'reversed') then 0 else greatest(c.head - d.block_height + 1, 0) end::text as confirmations
           from chain_deposit d left join chain_cursor c on c.network = d.network
          where d.wallet_transaction_id = any($1::bigint[]);

-- UPDATE_WALLET_STATE: wallet_update_state
update wallet set status = $2::varchar, status_reason = $3, suspended_status = $4, suspended_reason = $5,
                name_key = case when $2::varchar = 'INACTIVE' then null else name_key end, updated_at = $6
          where wallet_id = $1::uuid;

-- WALLET_BALANCE: wallet_balance
select w.wallet_id, w.user_id, w.status, w.status_reason, a.currency, a.bucket, a.balance
           from wallet w left join (
             select l.wallet_id, l.currency, l.bucket, l.balance::text as balance from ledger_account l where l.wallet_id = $1::uuid and l.bucket in ('available', 'held')
             union all
             select d.wallet_id, d.currency, 'deficit', d.amount::text from wallet_deficit d where d.wallet_id = $1::uuid
           ) a on a.wallet_id = w.wallet_id
          where w.wallet_id = $1::uuid and w.customer_id = $2
          order by a.currency, a.bucket;
