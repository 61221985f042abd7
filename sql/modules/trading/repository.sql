-- The named statements src/modules/trading/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- INSERT_QUOTE: trading_insert_quote
insert into trade_quote (quote_id, customer_id, user_id, wallet_id, symbol, base, quote, side, quantity, price, fees, total, expires_at, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14);

-- LOCK_QUOTE: trade_lock_quote
select quote_id, customer_id, user_id, wallet_id, symbol, base, quote, side, quantity, price, fees, total, expires_at, created_at
  from trade_quote where quote_id = $1 and customer_id = $2 for update;

-- ORDER_CALLER: trading_order_caller
select u.user_id, u.deleted_at is not null as deleted, coalesce(u.deleted_at is null and u.status = 'VERIFIED' and u.is_active, false) as good_standing
           from app_user u
          where u.user_id = $1 and u.customer_id = $2;

-- ORDERS_AND_ADDRESSES: trade_orders_addresses
select (select count(*) from trade_order where quote_id = $1) as orders,
  coalesce((select json_agg(json_build_object('currency', a.currency, 'network', a.network, 'address', a.address) order by a.network)
              from wallet_address a where a.wallet_id = $2 and a.currency in ($3, $4)), '[]'::json) as addresses;

-- QUOTE_CALLER: trading_quote_caller
select u.user_id, u.deleted_at is not null as deleted, coalesce(u.deleted_at is null and u.status = 'VERIFIED' and u.is_active, false) as good_standing, w.wallet_id, w.networks, w.status, w.status_reason
           from app_user u
           left join wallet w on w.wallet_id = $3 and w.customer_id = u.customer_id and w.user_id = u.user_id
          where u.user_id = $1 and u.customer_id = $2;

-- WRITE_ORDER: trade_write_order_2
with transactions as (
    insert into wallet_transaction (wallet_id, customer_id, network, address, action, status, currency, amount, fees, net_proceeds, price, balance_after, hash, memo,
  description, order_id, symbol, trade_id, idempotency_id, journal_entry_id, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21), ($22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, $39, $40, $41, $42)
  )
  insert into trade_order (order_id, quote_id, trade_id, customer_id, user_id, wallet_id, symbol, base, quote, side, quantity, price, fees, total, status, idempotency_key, created_at) values ($43, $44, $45, $46, $47, $48, $49, $50, $51, $52, $53, $54, $55, $56, $57, $58, $59);
