-- The named statements src/modules/transfers/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- INSERT_TRANSFER: transfer_insert
with transfer as (insert into transfer ("id", "customer_id", "from_wallet_id", "to_wallet_id", "from_user_id", "to_user_id", "currency", "amount", "memo", "status", "idempotency_key", "journal_entry_id", "created_at")
            values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)),
          sides as (insert into wallet_transaction ("wallet_id", "customer_id", "network", "address", "action", "status", "currency", "amount", "fees", "net_proceeds", "price", "balance_after", "hash", "memo", "description", "order_id", "trade_id", "idempotency_id", "journal_entry_id", "created_at") values ($14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33), ($34, $35, $36, $37, $38, $39, $40, $41, $42, $43, $44, $45, $46, $47, $48, $49, $50, $51, $52, $53))
          select 1 as done;

-- TRANSFER_CAPS_USE: transfer_caps_use
select coalesce(sum(amount) filter (where created_at >= $1), 0)::text as today, coalesce(sum(amount), 0)::text as month
       from transfer where from_user_id = $2 and currency = $3 and created_at >= $4;

-- TRANSFER_PARTIES: transfer_parties
select w.wallet_id, w.user_id, w.status, w.status_reason, w.networks,
                u.user_id is not null as user_exists, u.deleted_at is not null as user_deleted,
                coalesce(u.deleted_at is null and u.status = 'VERIFIED' and u.is_active, false) as user_good_standing, a.network, a.address
           from wallet w
           left join app_user u on u.user_id = w.user_id and u.customer_id = w.customer_id
           left join wallet_address a on a.wallet_id = w.wallet_id and a.currency = $3
          where w.customer_id = $1 and w.wallet_id = any($2::uuid[]);
