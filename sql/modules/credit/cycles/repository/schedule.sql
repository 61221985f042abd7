-- The named statements src/modules/credit/cycles/repository/schedule.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CYCLES_NEXT_INSTANT_REAL_TIME: credit_cycles_next_instant_real_time
select least(
        (select min(date_trunc('day', w.as_of, 'UTC') + interval '86400 seconds') from credit_wallet w where w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null),
        (select min(w.next_cut_at) from credit_wallet w where w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null),
        (select min(x.payment_due_date) from credit_statement x join credit_wallet w on w.wallet_id = x.wallet_id
          where x.interest_applied_at is null and w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null),
        (select min(greatest(date_trunc('day', a.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', a.created_at, 'UTC') + interval '86400 seconds')) from credit_authorization a join credit_wallet w on w.wallet_id = a.wallet_id
          where a.status = 'approved' and w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null)
      ) as t;

-- CYCLES_NEXT_INSTANT_TENANT: credit_cycles_next_instant_tenant
select least(
        (select min(date_trunc('day', w.as_of, 'UTC') + interval '86400 seconds') from credit_wallet w where w.status <> 'dissolved' and w.customer_id = $1 and w.set_aside_at is null),
        (select min(w.next_cut_at) from credit_wallet w where w.status <> 'dissolved' and w.customer_id = $1 and w.set_aside_at is null),
        (select min(x.payment_due_date) from credit_statement x join credit_wallet w on w.wallet_id = x.wallet_id
          where x.interest_applied_at is null and w.status <> 'dissolved' and w.customer_id = $1 and w.set_aside_at is null),
        (select min(greatest(date_trunc('day', a.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', a.created_at, 'UTC') + interval '86400 seconds')) from credit_authorization a join credit_wallet w on w.wallet_id = a.wallet_id
          where a.status = 'approved' and w.status <> 'dissolved' and w.customer_id = $1 and w.set_aside_at is null)
      ) as t;

-- CYCLES_RESCHEDULE: credit_cycles_reschedule
update credit_wallet w set next_cut_at = (case
    when w.as_of < w.first_cut_date then w.first_cut_date
    when p.cut_frequency = 'daily' then w.first_cut_date + ((floor(extract(epoch from (w.as_of - w.first_cut_date)) / 86400) + 1) * 86400) * interval '1 second'
    when p.cut_frequency = 'weekly' then w.first_cut_date + ((floor(extract(epoch from (w.as_of - w.first_cut_date)) / 604800) + 1) * 604800) * interval '1 second'
    when p.cut_frequency = 'biweekly' then w.first_cut_date + ((floor(extract(epoch from (w.as_of - w.first_cut_date)) / 1209600) + 1) * 1209600) * interval '1 second'
    when p.cut_frequency = 'month' then case when ((w.first_cut_date at time zone 'UTC') + (((extract(year from w.as_of at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from w.as_of at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' > w.as_of then ((w.first_cut_date at time zone 'UTC') + (((extract(year from w.as_of at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from w.as_of at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' else ((w.first_cut_date at time zone 'UTC') + (((extract(year from w.as_of at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from w.as_of at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC')) + 1) * interval '1 month') at time zone 'UTC' end
    else case when ((w.first_cut_date at time zone 'UTC') + (12 * (extract(year from w.as_of at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' > w.as_of then ((w.first_cut_date at time zone 'UTC') + (12 * (extract(year from w.as_of at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' else ((w.first_cut_date at time zone 'UTC') + (12 * ((extract(year from w.as_of at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) + 1)) * interval '1 month') at time zone 'UTC' end
  end), updated_at = now()
     from credit_product p where p.id = w.product_id and p.id = $1 and w.status <> 'dissolved';

-- CYCLES_SETTLE_REAL_TIME: credit_cycles_settle_real_time
update credit_wallet w set as_of = $1::timestamptz, updated_at = now() where w.as_of < $1::timestamptz and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null;

-- CYCLES_SETTLE_TENANT: credit_cycles_settle_tenant
update credit_wallet w set as_of = $1::timestamptz, updated_at = now() where w.as_of < $1::timestamptz and w.customer_id = $2 and w.set_aside_at is null;
