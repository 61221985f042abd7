-- The named statements src/modules/identity/queries.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CREDENTIAL_BY_HASH: auth_credential_by_hash
select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active
           from credential c left join customer cu on cu.customer_id = c.customer_id
          where c.secret_hash = $1;

-- CREDENTIAL_BY_ID: auth_credential_by_id
select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active
           from credential c left join customer cu on cu.customer_id = c.customer_id
          where c.credential_id = $1;

-- USER_TOKEN: auth_user_token
select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active,
                u.user_id is not null as user_exists, u.deleted_at is not null as user_deleted, u.is_active as user_active,
                u.status as user_status,
                u.token_version <> $4::integer as token_revoked
           from credential c
           left join customer cu on cu.customer_id = c.customer_id
           left join app_user u on u.user_id = $2::uuid and u.customer_id = $3
          where c.credential_id = $1::uuid;
