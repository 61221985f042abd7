-- The named statements src/modules/inbound/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CLAIM_MESSAGE: inbound_claim_message
insert into inbound_webhook_message (customer_id, webhook_id, received_at) values ($1, $2, $3)
       on conflict (customer_id, webhook_id) do nothing returning webhook_id;

-- DELETE_SECRETS: inbound_delete_secrets
delete from inbound_webhook where customer_id = $1;

-- LOCK_SECRET: inbound_lock_secret
select secret_sealed from inbound_webhook where customer_id = $1 for update;

-- PURGE_MESSAGES: inbound_purge_messages
delete from inbound_webhook_message where customer_id = $1 and received_at < $2;

-- SELECT_ANSWER: inbound_select_answer
select answer_status, answer_code, answer_field, answer_message from inbound_webhook_message where customer_id = $1 and webhook_id = $2;

-- SELECT_SECRETS: inbound_select_secrets
select i.secret_sealed, i.created_at, i.previous_secret_sealed, i.previous_secret_expires_at
           from inbound_webhook i join customer c on c.customer_id = i.customer_id
          where i.customer_id = $1 and c.is_active;

-- STORE_ANSWER: inbound_store_answer
update inbound_webhook_message set answer_status = $3, answer_code = $4, answer_field = $5, answer_message = $6 where customer_id = $1 and webhook_id = $2;

-- UPSERT_SECRETS: inbound_upsert_secrets
insert into inbound_webhook (customer_id, secret_sealed, created_at, previous_secret_sealed, previous_secret_expires_at)
         values ($1, $2, $3, $4, $5)
       on conflict (customer_id) do update set secret_sealed = excluded.secret_sealed, created_at = excluded.created_at,
         previous_secret_sealed = excluded.previous_secret_sealed, previous_secret_expires_at = excluded.previous_secret_expires_at;
