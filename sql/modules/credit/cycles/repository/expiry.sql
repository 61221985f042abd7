-- The named statements src/modules/credit/cycles/repository/expiry.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CYCLES_EXPIRY_REAL_TIME_EVENTS: credit_cycles_expiry_real_time_events
with lk as materialized (
        select w.wallet_id from credit_wallet w
        where w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null
          and exists (select 1 from credit_authorization a where a.wallet_id = w.wallet_id and a.status = 'approved' and greatest(date_trunc('day', a.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', a.created_at, 'UTC') + interval '86400 seconds') <= $1::timestamptz)
        order by w.wallet_id
        for update of w
      ),
      exp as (
        update credit_authorization a set status = 'expired', released_amount = a.amount, closed_at = $1::timestamptz
        from lk
        where lk.wallet_id = a.wallet_id and a.status = 'approved' and greatest(date_trunc('day', a.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', a.created_at, 'UTC') + interval '86400 seconds') <= $1::timestamptz
        returning a.wallet_id, a.authorization_id, a.card_id, a.amount, a.created_at
      ),
      run as (
        select x.wallet_id, x.card_id, x.amount, sum(x.amount) over win as released, row_number() over win as k
        from exp x
        window win as (partition by x.wallet_id order by x.created_at, x.authorization_id rows between unbounded preceding and current row)
      ),
      agg as (
        select wallet_id, sum(amount) as total, count(*) as n from exp group by wallet_id
      ),
      wal as (
        update credit_wallet w set
          amount_held = w.amount_held - a.total,
          available_amount = greatest(w.available_amount, least(w.available_amount + a.total,
            greatest(0, w.credit_limit - w.principal_outstanding - w.interest_outstanding - (w.amount_held - a.total)))),
          sequence = w.sequence + a.n,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from agg a
        where a.wallet_id = w.wallet_id
      ),
      ev as (
        select r.amount, r.released, r.k, r.card_id, w.wallet_id, w.customer_id, w.principal_outstanding as p0, w.interest_outstanding as i0,
          w.credit_limit as lim, w.amount_held as held0, w.sequence as seq0, w.interest_rate_nominal, w.interest_rate_moroso,
          w.fixed_interest_nominal, w.fixed_interest_moroso, w.minimum_payment_rate, w.fixed_minimum_payment
        from run r join credit_wallet w on w.wallet_id = r.wallet_id
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, card_id, created_at)
      select gen_random_uuid(), e.wallet_id, e.customer_id, e.seq0 + e.k, 'Autorizacion Liberada', e.amount, 'credit', false,
        jsonb_build_object(
    'principal_outstanding', (e.p0)::bigint,
    'interest_accrued', (e.i0)::bigint,
    'totalDebt', (e.p0 + e.i0)::bigint,
    'limit', (e.lim)::bigint,
    'amountOverdraft', greatest(0, e.p0 + e.i0 + (e.held0 - e.released) - e.lim)::bigint,
    'amountHeld', ((e.held0 - e.released))::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (e.interest_rate_nominal)::float8, 'interestRateMoroso', (e.interest_rate_moroso)::float8,
      'fixedInterestNominal', (e.fixed_interest_nominal)::bigint, 'fixedInterestMoroso', (e.fixed_interest_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (e.minimum_payment_rate)::float8, 'fixedMinimumPayment', (e.fixed_minimum_payment)::bigint)),
        e.card_id,
        $1::timestamptz
      from ev e
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select *, 1 as n from ins;

-- CYCLES_EXPIRY_REAL_TIME: credit_cycles_expiry_real_time
with lk as materialized (
        select w.wallet_id from credit_wallet w
        where w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null
          and exists (select 1 from credit_authorization a where a.wallet_id = w.wallet_id and a.status = 'approved' and greatest(date_trunc('day', a.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', a.created_at, 'UTC') + interval '86400 seconds') <= $1::timestamptz)
        order by w.wallet_id
        for update of w
      ),
      exp as (
        update credit_authorization a set status = 'expired', released_amount = a.amount, closed_at = $1::timestamptz
        from lk
        where lk.wallet_id = a.wallet_id and a.status = 'approved' and greatest(date_trunc('day', a.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', a.created_at, 'UTC') + interval '86400 seconds') <= $1::timestamptz
        returning a.wallet_id, a.authorization_id, a.card_id, a.amount, a.created_at
      ),
      run as (
        select x.wallet_id, x.card_id, x.amount, sum(x.amount) over win as released, row_number() over win as k
        from exp x
        window win as (partition by x.wallet_id order by x.created_at, x.authorization_id rows between unbounded preceding and current row)
      ),
      agg as (
        select wallet_id, sum(amount) as total, count(*) as n from exp group by wallet_id
      ),
      wal as (
        update credit_wallet w set
          amount_held = w.amount_held - a.total,
          available_amount = greatest(w.available_amount, least(w.available_amount + a.total,
            greatest(0, w.credit_limit - w.principal_outstanding - w.interest_outstanding - (w.amount_held - a.total)))),
          sequence = w.sequence + a.n,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from agg a
        where a.wallet_id = w.wallet_id
      ),
      ev as (
        select r.amount, r.released, r.k, r.card_id, w.wallet_id, w.customer_id, w.principal_outstanding as p0, w.interest_outstanding as i0,
          w.credit_limit as lim, w.amount_held as held0, w.sequence as seq0, w.interest_rate_nominal, w.interest_rate_moroso,
          w.fixed_interest_nominal, w.fixed_interest_moroso, w.minimum_payment_rate, w.fixed_minimum_payment
        from run r join credit_wallet w on w.wallet_id = r.wallet_id
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, card_id, created_at)
      select gen_random_uuid(), e.wallet_id, e.customer_id, e.seq0 + e.k, 'Autorizacion Liberada', e.amount, 'credit', false,
        jsonb_build_object(
    'principal_outstanding', (e.p0)::bigint,
    'interest_accrued', (e.i0)::bigint,
    'totalDebt', (e.p0 + e.i0)::bigint,
    'limit', (e.lim)::bigint,
    'amountOverdraft', greatest(0, e.p0 + e.i0 + (e.held0 - e.released) - e.lim)::bigint,
    'amountHeld', ((e.held0 - e.released))::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (e.interest_rate_nominal)::float8, 'interestRateMoroso', (e.interest_rate_moroso)::float8,
      'fixedInterestNominal', (e.fixed_interest_nominal)::bigint, 'fixedInterestMoroso', (e.fixed_interest_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (e.minimum_payment_rate)::float8, 'fixedMinimumPayment', (e.fixed_minimum_payment)::bigint)),
        e.card_id,
        $1::timestamptz
      from ev e
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select type, count(*) as n from ins group by type;

-- CYCLES_EXPIRY_TENANT_EVENTS: credit_cycles_expiry_tenant_events
with lk as materialized (
        select w.wallet_id from credit_wallet w
        where w.status <> 'dissolved' and w.customer_id = $2 and w.set_aside_at is null
          and exists (select 1 from credit_authorization a where a.wallet_id = w.wallet_id and a.status = 'approved' and greatest(date_trunc('day', a.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', a.created_at, 'UTC') + interval '86400 seconds') <= $1::timestamptz)
        order by w.wallet_id
        for update of w
      ),
      exp as (
        update credit_authorization a set status = 'expired', released_amount = a.amount, closed_at = $1::timestamptz
        from lk
        where lk.wallet_id = a.wallet_id and a.status = 'approved' and greatest(date_trunc('day', a.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', a.created_at, 'UTC') + interval '86400 seconds') <= $1::timestamptz
        returning a.wallet_id, a.authorization_id, a.card_id, a.amount, a.created_at
      ),
      run as (
        select x.wallet_id, x.card_id, x.amount, sum(x.amount) over win as released, row_number() over win as k
        from exp x
        window win as (partition by x.wallet_id order by x.created_at, x.authorization_id rows between unbounded preceding and current row)
      ),
      agg as (
        select wallet_id, sum(amount) as total, count(*) as n from exp group by wallet_id
      ),
      wal as (
        update credit_wallet w set
          amount_held = w.amount_held - a.total,
          available_amount = greatest(w.available_amount, least(w.available_amount + a.total,
            greatest(0, w.credit_limit - w.principal_outstanding - w.interest_outstanding - (w.amount_held - a.total)))),
          sequence = w.sequence + a.n,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from agg a
        where a.wallet_id = w.wallet_id
      ),
      ev as (
        select r.amount, r.released, r.k, r.card_id, w.wallet_id, w.customer_id, w.principal_outstanding as p0, w.interest_outstanding as i0,
          w.credit_limit as lim, w.amount_held as held0, w.sequence as seq0, w.interest_rate_nominal, w.interest_rate_moroso,
          w.fixed_interest_nominal, w.fixed_interest_moroso, w.minimum_payment_rate, w.fixed_minimum_payment
        from run r join credit_wallet w on w.wallet_id = r.wallet_id
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, card_id, created_at)
      select gen_random_uuid(), e.wallet_id, e.customer_id, e.seq0 + e.k, 'Autorizacion Liberada', e.amount, 'credit', false,
        jsonb_build_object(
    'principal_outstanding', (e.p0)::bigint,
    'interest_accrued', (e.i0)::bigint,
    'totalDebt', (e.p0 + e.i0)::bigint,
    'limit', (e.lim)::bigint,
    'amountOverdraft', greatest(0, e.p0 + e.i0 + (e.held0 - e.released) - e.lim)::bigint,
    'amountHeld', ((e.held0 - e.released))::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (e.interest_rate_nominal)::float8, 'interestRateMoroso', (e.interest_rate_moroso)::float8,
      'fixedInterestNominal', (e.fixed_interest_nominal)::bigint, 'fixedInterestMoroso', (e.fixed_interest_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (e.minimum_payment_rate)::float8, 'fixedMinimumPayment', (e.fixed_minimum_payment)::bigint)),
        e.card_id,
        $1::timestamptz
      from ev e
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select *, 1 as n from ins;

-- CYCLES_EXPIRY_TENANT: credit_cycles_expiry_tenant
with lk as materialized (
        select w.wallet_id from credit_wallet w
        where w.status <> 'dissolved' and w.customer_id = $2 and w.set_aside_at is null
          and exists (select 1 from credit_authorization a where a.wallet_id = w.wallet_id and a.status = 'approved' and greatest(date_trunc('day', a.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', a.created_at, 'UTC') + interval '86400 seconds') <= $1::timestamptz)
        order by w.wallet_id
        for update of w
      ),
      exp as (
        update credit_authorization a set status = 'expired', released_amount = a.amount, closed_at = $1::timestamptz
        from lk
        where lk.wallet_id = a.wallet_id and a.status = 'approved' and greatest(date_trunc('day', a.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', a.created_at, 'UTC') + interval '86400 seconds') <= $1::timestamptz
        returning a.wallet_id, a.authorization_id, a.card_id, a.amount, a.created_at
      ),
      run as (
        select x.wallet_id, x.card_id, x.amount, sum(x.amount) over win as released, row_number() over win as k
        from exp x
        window win as (partition by x.wallet_id order by x.created_at, x.authorization_id rows between unbounded preceding and current row)
      ),
      agg as (
        select wallet_id, sum(amount) as total, count(*) as n from exp group by wallet_id
      ),
      wal as (
        update credit_wallet w set
          amount_held = w.amount_held - a.total,
          available_amount = greatest(w.available_amount, least(w.available_amount + a.total,
            greatest(0, w.credit_limit - w.principal_outstanding - w.interest_outstanding - (w.amount_held - a.total)))),
          sequence = w.sequence + a.n,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from agg a
        where a.wallet_id = w.wallet_id
      ),
      ev as (
        select r.amount, r.released, r.k, r.card_id, w.wallet_id, w.customer_id, w.principal_outstanding as p0, w.interest_outstanding as i0,
          w.credit_limit as lim, w.amount_held as held0, w.sequence as seq0, w.interest_rate_nominal, w.interest_rate_moroso,
          w.fixed_interest_nominal, w.fixed_interest_moroso, w.minimum_payment_rate, w.fixed_minimum_payment
        from run r join credit_wallet w on w.wallet_id = r.wallet_id
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, card_id, created_at)
      select gen_random_uuid(), e.wallet_id, e.customer_id, e.seq0 + e.k, 'Autorizacion Liberada', e.amount, 'credit', false,
        jsonb_build_object(
    'principal_outstanding', (e.p0)::bigint,
    'interest_accrued', (e.i0)::bigint,
    'totalDebt', (e.p0 + e.i0)::bigint,
    'limit', (e.lim)::bigint,
    'amountOverdraft', greatest(0, e.p0 + e.i0 + (e.held0 - e.released) - e.lim)::bigint,
    'amountHeld', ((e.held0 - e.released))::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (e.interest_rate_nominal)::float8, 'interestRateMoroso', (e.interest_rate_moroso)::float8,
      'fixedInterestNominal', (e.fixed_interest_nominal)::bigint, 'fixedInterestMoroso', (e.fixed_interest_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (e.minimum_payment_rate)::float8, 'fixedMinimumPayment', (e.fixed_minimum_payment)::bigint)),
        e.card_id,
        $1::timestamptz
      from ev e
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select type, count(*) as n from ins group by type;
