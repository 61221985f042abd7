-- The named statements src/modules/webhooks/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- DELETE_WEBHOOK: webhooks_delete
delete from webhook where customer_id = $1;

-- DISABLE_PENDING_DELIVERIES: webhooks_disable_pending_deliveries
update webhook_delivery set status = 'disabled', next_attempt_at = null where customer_id = $1 and status = 'pending';

-- DISABLE_WEBHOOK: webhooks_disable
update webhook set disabled_at = $2, disabled_reason = $3 where customer_id = $1;

-- ENQUEUE_DELIVERY: webhooks_enqueue_delivery
insert into webhook_delivery (id, customer_id, webhook_message_id, event_type, payload_sealed, status, attempt_count, next_attempt_at, reference, created_at, updated_at)
         select $1, w.customer_id, $3, $4, $5, 'pending', 0, $7, $6, $7, $7
           from webhook w where w.customer_id = $2 and w.disabled_at is null
         returning id;

-- LOCK_SECRET: webhooks_lock_secret
select secret_sealed from webhook where customer_id = $1 for update;

-- PIN_MESSAGE: webhooks_pin_message
select d.webhook_message_id, d.payload_sealed, w.customer_id, w.url, w.headers_sealed, w.secret_sealed,
                w.previous_secret_sealed, w.previous_secret_expires_at, w.disabled_at
           from webhook_delivery d
           left join customer c on c.customer_id = d.customer_id and c.is_active
           left join webhook w on w.customer_id = c.customer_id
          where d.id = $1;

-- ROTATE_SECRET: webhooks_rotate_secret
update webhook set secret_sealed = $2, previous_secret_sealed = $3, previous_secret_expires_at = $4, updated_at = $5 where customer_id = $1;

-- UPSERT_WEBHOOK: webhooks_upsert
insert into webhook (customer_id, url, headers_sealed, secret_sealed, previous_secret_sealed, previous_secret_expires_at, disabled_at, disabled_reason, created_at, updated_at)
         values ($1, $2, $3, $4, null, null, null, null, $5, $5)
       on conflict (customer_id) do update set url = excluded.url, headers_sealed = excluded.headers_sealed, secret_sealed = excluded.secret_sealed,
         previous_secret_sealed = null, previous_secret_expires_at = null, disabled_at = null, disabled_reason = null, updated_at = excluded.updated_at;
