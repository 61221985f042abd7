-- The named statements src/modules/identity/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CREDENTIAL_BY_HASH: identity_credential_by_hash
select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active
           from credential c left join customer cu on cu.customer_id = c.customer_id
          where c.secret_hash = $1;

-- CREDENTIAL_BY_ID: identity_credential_by_id
select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active
           from credential c left join customer cu on cu.customer_id = c.customer_id
          where c.credential_id = $1;

-- CUSTOMER_IS_ACTIVE: identity_customer_is_active
select is_active from customer where customer_id = $1;

-- DELETE_SETTING: identity_setting_delete
delete from service_setting where key = $1 returning key;

-- INSERT_OWNER_CREDENTIAL: identity_credential_insert_owner
insert into credential (credential_id, customer_id, secret_hash, secret_prefix, is_owner, user_email, user_name, is_active, revoked_at, created_at, updated_at)
       values ($1, $2, $3, $4, true, $5, $6, true, null, now(), now());

-- INSERT_SETTING_IF_ABSENT: identity_setting_insert_if_absent
insert into service_setting (key, value, created_at) values ($1, $2, now()) on conflict (key) do nothing returning key;

-- NOTIFY: identity_notify
select pg_notify($1, $2);

-- REVOKE_CREDENTIAL: identity_credential_revoke
update credential set is_active = false, revoked_at = now(), updated_at = now()
          where credential_id = $1::uuid and customer_id = $2 and is_active;

-- REVOKE_CUSTOMER_CREDENTIALS: identity_credential_revoke_all
update credential set is_active = false, revoked_at = now(), updated_at = now() where customer_id = $1 and is_active;

-- SETTING_VALUE: identity_setting_value
select value from service_setting where key = $1;

-- SOFT_DELETE_CUSTOMER: identity_customer_soft_delete
update customer set is_active = false, status = 'INACTIVE', deleted_at = now(), updated_at = now()
          where customer_id = $1 and is_active
      returning customer_id;

-- UPSERT_SETTING: identity_setting_upsert
insert into service_setting (key, value, created_at) values ($1, $2, now()) on conflict (key) do update set value = excluded.value;

-- USER_TOKEN: identity_user_token
select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active,
                u.user_id is not null as user_exists, u.deleted_at is not null as user_deleted, u.is_active as user_active,
                u.status as user_status,
                u.token_version <> $4::integer as token_revoked
           from credential c
           left join customer cu on cu.customer_id = c.customer_id
           left join app_user u on u.user_id = $2::uuid and u.customer_id = $3
          where c.credential_id = $1::uuid;
