-- The named statements src/modules/credit/notifications/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CREDIT_MESSAGE: credit_notifications_message
select coalesce(c.is_active, false) as tenant_active, t.url, t.secret_sealed, t.disabled_at, t.customer_id is not null as has_target,
                e.wallet_id, e.card_id, e.type, e.amount, e.direction, e.affects_balance, e.wallet_details_after, e.sequence, e.unapplied_amount
           from credit_event e
           left join customer c on c.customer_id = e.customer_id
           left join credit_notification_target t on t.customer_id = e.customer_id
          where e.id = $1;

-- DISABLE_TARGET: credit_notifications_disable_target
update credit_notification_target set disabled_at = now(), disabled_reason = $2, updated_at = now()
          where customer_id = $1 and disabled_at is null and secret_sealed = $3;

-- PARK_DUE: credit_notifications_park_due
update credit_event set next_attempt_at = $1
          where id in (select e.id from credit_event e where e.delivery_status = 'pending' and (e.next_attempt_at is null or e.next_attempt_at <= now())
                         and not exists (select 1 from credit_notification_target t where t.customer_id = e.customer_id and t.disabled_at is null) for update of e skip locked);

-- RELEASE_PARKED: credit_notifications_release_parked
update credit_event set next_attempt_at = null
          where id in (select e.id from credit_event e where e.delivery_status = 'pending' and e.next_attempt_at = $1
                         and exists (select 1 from credit_notification_target t where t.customer_id = e.customer_id and t.disabled_at is null) for update of e skip locked);

-- RELEASE_TENANT: credit_notifications_release_tenant
update credit_event set next_attempt_at = null where delivery_status = 'pending' and next_attempt_at = $1 and customer_id = $2;

-- UPSERT_TARGET: credit_notifications_upsert_target
insert into credit_notification_target (customer_id, url, secret_sealed, disabled_at, disabled_reason, created_at, updated_at)
           values ($1, $2, $3, null, null, $4, $4)
         on conflict (customer_id) do update set url = excluded.url, secret_sealed = excluded.secret_sealed,
           disabled_at = null, disabled_reason = null, updated_at = excluded.updated_at
         returning created_at, updated_at;
