-- The named statements src/modules/credit/accounts/repository/lock.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- LOCK_WALLET: credit_wallet_lock
with locked as (
           select w.*, w.xmin::text as row_version from credit_wallet w where w.wallet_id = $1 and w.customer_id = $2 for update of w
         )
         select row_to_json(l) as wallet,
                (select s.xmin::text from credit_wallet s where s.wallet_id = $1) as seen_version,
                row_to_json(p) as product,
                (select to_json(c."now") from credit_clock c where c.customer_id = $2) as clock,
                coalesce((select json_agg(st order by st.cut_date) from credit_statement st
                           where st.wallet_id = $1 and (st.interest_applied_at is null or (st.status = 'defaulted' and st.cured_at is null))), '[]'::json) as statements,
                case when l.amount_held > 0
                     then coalesce((select json_agg(a order by a.created_at, a.authorization_id) from credit_authorization a
                                     where a.wallet_id = $1 and a.status = 'approved'), '[]'::json)
                     else '[]'::json end as holds
           from locked l join credit_product p on p.id = l.product_id;
