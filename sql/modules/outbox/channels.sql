-- The outbox's statements over each channel's table (written by scripts/sql-snapshots.ts; do not edit).

-- mail: outbox_mail_claim_due
update outbox_email set next_attempt_at = now() + interval '1 millisecond' * $1::float8
    where id = (
      select m.id from outbox_email m
       where m.status = 'pending'
         and m.next_attempt_at <= now()
       order by m.next_attempt_at asc
       limit 1
       for update of m skip locked)
    returning id, attempts as attempts, "to", subject, text;

-- mail: outbox_mail_settle_succeeded
update outbox_email set status = $2, sent_at = $3, text = $4 where id = $1 and (not $5::boolean or status = 'pending');

-- mail: outbox_mail_settle_failed
update outbox_email set status = $2, attempts = $3, last_error = $4, text = $5 where id = $1 and (not $6::boolean or status = 'pending' and attempts = $7);

-- mail: outbox_mail_settle_disabled
update outbox_email set status = case when status = 'pending' then $2 else status end, attempts = attempts + $3::int, last_error = $4 where id = $1 and (not $5::boolean or status = 'pending');

-- mail: outbox_mail_settle_parked
update outbox_email set next_attempt_at = $2, attempts = attempts + $3::int, last_error = $4 where id = $1 and (not $5::boolean or status = 'pending');

-- mail: outbox_mail_settle_retry
update outbox_email set attempts = $2, next_attempt_at = $3, last_error = $4 where id = $1 and (not $5::boolean or status = 'pending' and attempts = $6);

-- mail: outbox_mail_settle_manual
update outbox_email set attempts = attempts + $2::int, last_error = $3 where id = $1 and (not $4::boolean or status = 'pending');

-- mail: outbox_mail_restarted
select attempts as attempts from outbox_email where id = $1 and status = 'pending' and attempts <> $2 for update;

-- mail: outbox_mail_release_lease
update outbox_email set next_attempt_at = case when status <> 'pending' then null when attempts = $1 then $2::timestamptz else now() end
          where id = $3 and next_attempt_at = $4;

-- mail: outbox_mail_requeue
update outbox_email set status = 'pending', attempts = 0,
        next_attempt_at = case when next_attempt_at in ($1, $2) or (next_attempt_at is not null and next_attempt_at > clock_timestamp()
      and (status <> 'pending' or next_attempt_at <= clock_timestamp() + interval '1 millisecond' * $3::float8)) then next_attempt_at else now() end
      where customer_id = $4 and created_at >= $5
        and (status in ($6, $7) and not (next_attempt_at is not null and next_attempt_at > clock_timestamp()
      and (status <> 'pending' or next_attempt_at <= clock_timestamp() + interval '1 millisecond' * $3::float8)) or status = 'pending' and attempts > 0)
      returning id;

-- mail: outbox_attempt_insert
insert into delivery_attempt (id, channel, message_id, attempted_at, http_status, duration_ms, error)
         values ($1, $2, $3, $4, $5, $6, $7);

-- webhook: outbox_webhook_claim_due
update webhook_delivery set next_attempt_at = now() + interval '1 millisecond' * $1::float8, updated_at = now()
    where id = (
      select m.id from webhook_delivery m
       where m.status = 'pending'
         and m.next_attempt_at <= now()
       order by m.next_attempt_at asc
       limit 1
       for update of m skip locked)
    returning id, attempt_count as attempts, customer_id;

-- webhook: outbox_webhook_manual_lock
select attempt_count as attempts, next_attempt_at, (next_attempt_at is not null and next_attempt_at > clock_timestamp()
      and (status <> 'pending' or next_attempt_at <= clock_timestamp() + interval '1 millisecond' * $3::float8)) as busy, customer_id
           from webhook_delivery where id = $1 and customer_id = $2 for update;

-- webhook: outbox_webhook_manual_lease
update webhook_delivery set next_attempt_at = date_trunc('milliseconds', clock_timestamp()) + interval '1 millisecond' * $1::float8, updated_at = now()
          where id = $2 returning next_attempt_at;

-- webhook: outbox_webhook_settle_succeeded
update webhook_delivery set status = $2, attempt_count = attempt_count + $3::int, next_attempt_at = null where id = $1 and (not $4::boolean or status = 'pending');

-- webhook: outbox_webhook_settle_failed
update webhook_delivery set next_attempt_at = case when status = 'pending' then null else next_attempt_at end, status = $2, attempt_count = $3 where id = $1 and (not $4::boolean or status = 'pending' and attempt_count = $5);

-- webhook: outbox_webhook_settle_disabled
update webhook_delivery set next_attempt_at = case when status = 'pending' then null else next_attempt_at end, status = case when status = 'pending' then $2 else status end, attempt_count = attempt_count + $3::int where id = $1 and (not $4::boolean or status = 'pending');

-- webhook: outbox_webhook_settle_parked
update webhook_delivery set next_attempt_at = $2, attempt_count = attempt_count + $3::int where id = $1 and (not $4::boolean or status = 'pending');

-- webhook: outbox_webhook_settle_retry
update webhook_delivery set attempt_count = $2, next_attempt_at = $3 where id = $1 and (not $4::boolean or status = 'pending' and attempt_count = $5);

-- webhook: outbox_webhook_settle_manual
update webhook_delivery set attempt_count = attempt_count + $2::int where id = $1 and (not $3::boolean or status = 'pending');

-- webhook: outbox_webhook_restarted
select attempt_count as attempts from webhook_delivery where id = $1 and status = 'pending' and attempt_count <> $2 for update;

-- webhook: outbox_webhook_release_lease
update webhook_delivery set next_attempt_at = case when status <> 'pending' then null when attempt_count = $1 then $2::timestamptz else now() end
          where id = $3 and next_attempt_at = $4;

-- webhook: outbox_webhook_requeue
update webhook_delivery set status = 'pending', attempt_count = 0,
        next_attempt_at = case when next_attempt_at in ($1, $2) or (next_attempt_at is not null and next_attempt_at > clock_timestamp()
      and (status <> 'pending' or next_attempt_at <= clock_timestamp() + interval '1 millisecond' * $3::float8)) then next_attempt_at else now() end, updated_at = now()
      where customer_id = $4 and created_at >= $5
        and (status in ($6, $7) and not (next_attempt_at is not null and next_attempt_at > clock_timestamp()
      and (status <> 'pending' or next_attempt_at <= clock_timestamp() + interval '1 millisecond' * $3::float8)) or status = 'pending' and attempt_count > 0)
      returning id;

-- webhook: outbox_attempt_insert
insert into delivery_attempt (id, channel, message_id, attempted_at, http_status, duration_ms, error)
         values ($1, $2, $3, $4, $5, $6, $7);

-- credit: outbox_credit_claim_due
update credit_event set next_attempt_at = now() + interval '1 millisecond' * $1::float8
    where id = (
      select m.id from credit_event m
       where m.delivery_status = 'pending'
         and m.next_attempt_at <= now()
         and m.sequence = (select min(h.sequence) from credit_event h where h.wallet_id = m.wallet_id and h.delivery_status = 'pending')
         and exists (select 1 from credit_notification_target t where t.customer_id = m.customer_id and t.disabled_at is null)
       order by m.next_attempt_at asc nulls first
       limit 1
       for update of m skip locked)
    returning id, attempt_count as attempts, wallet_id, customer_id, sequence;

-- credit: outbox_credit_claim_new
update credit_event set next_attempt_at = now() + interval '1 millisecond' * $1::float8
    where id = (
      select m.id from credit_event m
       where m.delivery_status = 'pending'
         and m.next_attempt_at is null
         and m.sequence = (select min(h.sequence) from credit_event h where h.wallet_id = m.wallet_id and h.delivery_status = 'pending')
         and exists (select 1 from credit_notification_target t where t.customer_id = m.customer_id and t.disabled_at is null)
       order by m.next_attempt_at asc nulls first
       limit 1
       for update of m skip locked)
    returning id, attempt_count as attempts, wallet_id, customer_id, sequence;

-- credit: outbox_credit_settle_succeeded
update credit_event set delivery_status = $2, attempt_count = attempt_count + $3::int, next_attempt_at = null where id = $1 and (not $4::boolean or delivery_status = 'pending');

-- credit: outbox_credit_settle_failed
update credit_event set next_attempt_at = case when delivery_status = 'pending' then null else next_attempt_at end, delivery_status = $2, attempt_count = $3 where id = $1 and (not $4::boolean or delivery_status = 'pending' and attempt_count = $5);

-- credit: outbox_credit_settle_disabled
update credit_event set next_attempt_at = case when delivery_status = 'pending' then null else next_attempt_at end, delivery_status = case when delivery_status = 'pending' then $2 else delivery_status end, attempt_count = attempt_count + $3::int where id = $1 and (not $4::boolean or delivery_status = 'pending');

-- credit: outbox_credit_settle_parked
update credit_event set next_attempt_at = $2, attempt_count = attempt_count + $3::int where id = $1 and (not $4::boolean or delivery_status = 'pending');

-- credit: outbox_credit_settle_retry
update credit_event set attempt_count = $2, next_attempt_at = $3 where id = $1 and (not $4::boolean or delivery_status = 'pending' and attempt_count = $5);

-- credit: outbox_credit_settle_manual
update credit_event set attempt_count = attempt_count + $2::int where id = $1 and (not $3::boolean or delivery_status = 'pending');

-- credit: outbox_credit_restarted
select attempt_count as attempts from credit_event where id = $1 and delivery_status = 'pending' and attempt_count <> $2 for update;

-- credit: outbox_credit_release_lease
update credit_event set next_attempt_at = case when delivery_status <> 'pending' then null when attempt_count = $1 then $2::timestamptz else null end
          where id = $3 and next_attempt_at = $4;

-- credit: outbox_credit_promote
update credit_event set next_attempt_at = null
        where id = (select h.id from credit_event h where h.wallet_id = $1 and h.delivery_status = 'pending' order by h.sequence limit 1)
          and next_attempt_at = $2;

-- credit: outbox_credit_requeue
update credit_event set delivery_status = 'pending', attempt_count = 0,
        next_attempt_at = case when next_attempt_at in ($1, $2) or (next_attempt_at is not null and next_attempt_at > clock_timestamp()
      and (delivery_status <> 'pending' or next_attempt_at <= clock_timestamp() + interval '1 millisecond' * $3::float8)) then next_attempt_at else null end
      where customer_id = $4 and created_at >= $5
        and (delivery_status in ($6, $7) and not (next_attempt_at is not null and next_attempt_at > clock_timestamp()
      and (delivery_status <> 'pending' or next_attempt_at <= clock_timestamp() + interval '1 millisecond' * $3::float8)) or delivery_status = 'pending' and attempt_count > 0)
      returning id, wallet_id as stream_key;

-- credit: outbox_credit_mark_waiting
update credit_event e set next_attempt_at = $1
        where e.wallet_id = any($2)
          and e.delivery_status = 'pending'
          and e.next_attempt_at is distinct from $1
          and exists (select 1 from credit_event p
                       where p.wallet_id = e.wallet_id and p.delivery_status = 'pending' and p.sequence < e.sequence);

-- credit: outbox_attempt_insert
insert into delivery_attempt (id, channel, message_id, attempted_at, http_status, duration_ms, error)
         values ($1, $2, $3, $4, $5, $6, $7);
