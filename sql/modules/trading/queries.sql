-- The named statements src/modules/trading/queries.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- INSERT_QUOTE: trading_insert_quote
insert into trade_quote (quote_id, customer_id, user_id, wallet_id, symbol, base, quote, side, quantity, price, fees, total, expires_at, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14);

-- LOCK_QUOTE_SQL
select quote_id, customer_id, user_id, wallet_id, symbol, base, quote, side, quantity, price, fees, total, expires_at, created_at
  from trade_quote where quote_id = ? and customer_id = ? for update;

-- ORDER_CALLER: trading_order_caller
select u.user_id, u.deleted_at is not null as deleted, coalesce(u.deleted_at is null and u.status = 'VERIFIED' and u.is_active, false) as good_standing
           from app_user u
          where u.user_id = $1 and u.customer_id = $2;

-- ORDERS_AND_ADDRESSES_SQL
select (select count(*) from trade_order where quote_id = ?) as orders,
  coalesce((select json_agg(json_build_object('currency', a.currency, 'network', a.network, 'address', a.address) order by a.network)
              from wallet_address a where a.wallet_id = ? and a.currency in (?, ?)), '[]'::json) as addresses;

-- QUOTE_CALLER: trading_quote_caller
select u.user_id, u.deleted_at is not null as deleted, coalesce(u.deleted_at is null and u.status = 'VERIFIED' and u.is_active, false) as good_standing, w.wallet_id, w.networks
           from app_user u
           left join wallet w on w.wallet_id = $3 and w.customer_id = u.customer_id and w.user_id = u.user_id
          where u.user_id = $1 and u.customer_id = $2;
