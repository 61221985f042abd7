-- The named statements src/modules/transfers/queries.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- TRANSFER_PARTIES: transfer_parties
select w.wallet_id, w.user_id, w.networks,
                u.user_id is not null as user_exists, u.deleted_at is not null as user_deleted,
                coalesce(u.deleted_at is null and u.status = 'VERIFIED' and u.is_active, false) as user_good_standing, a.network, a.address
           from wallet w
           left join app_user u on u.user_id = w.user_id and u.customer_id = w.customer_id
           left join wallet_address a on a.wallet_id = w.wallet_id and a.currency = $3
          where w.customer_id = $1 and w.wallet_id = any($2::uuid[]);
