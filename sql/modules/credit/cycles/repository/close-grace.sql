-- The named statements src/modules/credit/cycles/repository/close-grace.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CYCLES_CLOSE_REAL_TIME: credit_cycles_close_real_time
update credit_wallet w set
        sum_of_daily_balance = w.sum_of_daily_balance + w.principal_outstanding + case when p.compound then w.interest_outstanding else 0 end,
        last_close_at = $1::timestamptz, as_of = $1::timestamptz, updated_at = now()
      from credit_product p
      where p.id = w.product_id and w.status <> 'dissolved' and w.as_of < $1::timestamptz and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null;

-- CYCLES_CLOSE_TENANT: credit_cycles_close_tenant
update credit_wallet w set
        sum_of_daily_balance = w.sum_of_daily_balance + w.principal_outstanding + case when p.compound then w.interest_outstanding else 0 end,
        last_close_at = $1::timestamptz, as_of = $1::timestamptz, updated_at = now()
      from credit_product p
      where p.id = w.product_id and w.status <> 'dissolved' and w.as_of < $1::timestamptz and w.customer_id = $2 and w.set_aside_at is null;

-- CYCLES_GRACE_REAL_TIME_EVENTS: credit_cycles_grace_real_time_events
with lk as materialized (
        select w.wallet_id from credit_wallet w
        where w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null
          and exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.payment_due_date = $1::timestamptz and x.interest_applied_at is null)
        order by w.wallet_id
        for update of w
      ),
      due as (
        update credit_statement s set
          interest_applied = s.interest_generated,
          interest_applied_at = $1::timestamptz,
          status = case when s.paid_in_cycle < s.minimum_payment then 'defaulted' else s.status end,
          penal_interest = case when s.paid_in_cycle < s.minimum_payment then (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((w.interest_rate_moroso * s.interest_basis)::numeric * 10000) as n, ((100 * s.daily_rate_divisor)::numeric * 10000) as d) y) x) + w.fixed_interest_moroso else 0 end,
          interest_rate_moroso = case when s.paid_in_cycle < s.minimum_payment then w.interest_rate_moroso else null end,
          fixed_interest_moroso = case when s.paid_in_cycle < s.minimum_payment then w.fixed_interest_moroso else null end
        from credit_wallet w join lk on lk.wallet_id = w.wallet_id
        where w.wallet_id = s.wallet_id and s.payment_due_date = $1::timestamptz and s.interest_applied_at is null
        returning s.wallet_id, s.ordinal, s.interest_generated as nominal, s.compound, s.status = 'defaulted' as defaulted, s.penal_interest as penal
      ),
      steps as (
        select d.wallet_id, d.ordinal, k.n, k.type, k.amount, k.direction, k.affects, k.dp, k.di, k.booked, d.defaulted
        from due d cross join lateral (values
          (1, 'Interes Nominal Aplicado', d.nominal, 'debit', true, case when d.compound then d.nominal else 0 end, case when d.compound then 0 else d.nominal end, d.nominal),
          (2, 'Interes Moroso Calculado', d.penal, 'debit', false, 0, 0, 0),
          (3, 'Interes Moroso Aplicado', d.penal, 'debit', true, 0, d.penal, d.penal),
          (4, 'Interes moroso ejecutado', d.penal, 'debit', false, 0, 0, 0)
        ) as k(n, type, amount, direction, affects, dp, di, booked)
        where k.n = 1 or d.defaulted
      ),
      agg as (
        select wallet_id, sum(dp) as dp, sum(di) as di, sum(booked) as booked, count(*) as n, bool_or(defaulted) as defaulted
        from steps group by wallet_id
      ),
      wal as (
        update credit_wallet w set
          principal_outstanding = w.principal_outstanding + a.dp,
          interest_outstanding = w.interest_outstanding + a.di,
          available_amount = greatest(0, w.available_amount - a.booked),
          status = case when a.defaulted and w.status in ('active', 'blocked') then 'in_default' else w.status end,
          status_before_default = case when a.defaulted and w.status in ('active', 'blocked') then w.status else w.status_before_default end,
          sequence = w.sequence + a.n,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from agg a
        where a.wallet_id = w.wallet_id
      ),
      ev as (
        select st.*, w.customer_id, w.principal_outstanding as p0, w.interest_outstanding as i0, w.available_amount as aa0, w.credit_limit as lim,
          w.amount_held as held, w.sequence as seq0, w.interest_rate_nominal, w.interest_rate_moroso, w.fixed_interest_nominal,
          w.fixed_interest_moroso, w.minimum_payment_rate, w.fixed_minimum_payment
        from steps st join credit_wallet w on w.wallet_id = st.wallet_id
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), e.wallet_id, e.customer_id, e.seq0 + row_number() over win, e.type, e.amount, e.direction, e.affects,
        jsonb_build_object(
    'principal_outstanding', ((e.p0 + sum(e.dp) over win))::bigint,
    'interest_accrued', ((e.i0 + sum(e.di) over win))::bigint,
    'totalDebt', ((e.p0 + sum(e.dp) over win) + (e.i0 + sum(e.di) over win))::bigint,
    'limit', (e.lim)::bigint,
    'amountOverdraft', greatest(0, (e.p0 + sum(e.dp) over win) + (e.i0 + sum(e.di) over win) + e.held - e.lim)::bigint,
    'amountHeld', (e.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (e.interest_rate_nominal)::float8, 'interestRateMoroso', (e.interest_rate_moroso)::float8,
      'fixedInterestNominal', (e.fixed_interest_nominal)::bigint, 'fixedInterestMoroso', (e.fixed_interest_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (e.minimum_payment_rate)::float8, 'fixedMinimumPayment', (e.fixed_minimum_payment)::bigint)),
        $1::timestamptz
      from ev e
      window win as (partition by e.wallet_id order by e.ordinal, e.n rows between unbounded preceding and current row)
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select *, 1 as n from ins;

-- CYCLES_GRACE_REAL_TIME: credit_cycles_grace_real_time
with lk as materialized (
        select w.wallet_id from credit_wallet w
        where w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null
          and exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.payment_due_date = $1::timestamptz and x.interest_applied_at is null)
        order by w.wallet_id
        for update of w
      ),
      due as (
        update credit_statement s set
          interest_applied = s.interest_generated,
          interest_applied_at = $1::timestamptz,
          status = case when s.paid_in_cycle < s.minimum_payment then 'defaulted' else s.status end,
          penal_interest = case when s.paid_in_cycle < s.minimum_payment then (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((w.interest_rate_moroso * s.interest_basis)::numeric * 10000) as n, ((100 * s.daily_rate_divisor)::numeric * 10000) as d) y) x) + w.fixed_interest_moroso else 0 end,
          interest_rate_moroso = case when s.paid_in_cycle < s.minimum_payment then w.interest_rate_moroso else null end,
          fixed_interest_moroso = case when s.paid_in_cycle < s.minimum_payment then w.fixed_interest_moroso else null end
        from credit_wallet w join lk on lk.wallet_id = w.wallet_id
        where w.wallet_id = s.wallet_id and s.payment_due_date = $1::timestamptz and s.interest_applied_at is null
        returning s.wallet_id, s.ordinal, s.interest_generated as nominal, s.compound, s.status = 'defaulted' as defaulted, s.penal_interest as penal
      ),
      steps as (
        select d.wallet_id, d.ordinal, k.n, k.type, k.amount, k.direction, k.affects, k.dp, k.di, k.booked, d.defaulted
        from due d cross join lateral (values
          (1, 'Interes Nominal Aplicado', d.nominal, 'debit', true, case when d.compound then d.nominal else 0 end, case when d.compound then 0 else d.nominal end, d.nominal),
          (2, 'Interes Moroso Calculado', d.penal, 'debit', false, 0, 0, 0),
          (3, 'Interes Moroso Aplicado', d.penal, 'debit', true, 0, d.penal, d.penal),
          (4, 'Interes moroso ejecutado', d.penal, 'debit', false, 0, 0, 0)
        ) as k(n, type, amount, direction, affects, dp, di, booked)
        where k.n = 1 or d.defaulted
      ),
      agg as (
        select wallet_id, sum(dp) as dp, sum(di) as di, sum(booked) as booked, count(*) as n, bool_or(defaulted) as defaulted
        from steps group by wallet_id
      ),
      wal as (
        update credit_wallet w set
          principal_outstanding = w.principal_outstanding + a.dp,
          interest_outstanding = w.interest_outstanding + a.di,
          available_amount = greatest(0, w.available_amount - a.booked),
          status = case when a.defaulted and w.status in ('active', 'blocked') then 'in_default' else w.status end,
          status_before_default = case when a.defaulted and w.status in ('active', 'blocked') then w.status else w.status_before_default end,
          sequence = w.sequence + a.n,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from agg a
        where a.wallet_id = w.wallet_id
      ),
      ev as (
        select st.*, w.customer_id, w.principal_outstanding as p0, w.interest_outstanding as i0, w.available_amount as aa0, w.credit_limit as lim,
          w.amount_held as held, w.sequence as seq0, w.interest_rate_nominal, w.interest_rate_moroso, w.fixed_interest_nominal,
          w.fixed_interest_moroso, w.minimum_payment_rate, w.fixed_minimum_payment
        from steps st join credit_wallet w on w.wallet_id = st.wallet_id
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), e.wallet_id, e.customer_id, e.seq0 + row_number() over win, e.type, e.amount, e.direction, e.affects,
        jsonb_build_object(
    'principal_outstanding', ((e.p0 + sum(e.dp) over win))::bigint,
    'interest_accrued', ((e.i0 + sum(e.di) over win))::bigint,
    'totalDebt', ((e.p0 + sum(e.dp) over win) + (e.i0 + sum(e.di) over win))::bigint,
    'limit', (e.lim)::bigint,
    'amountOverdraft', greatest(0, (e.p0 + sum(e.dp) over win) + (e.i0 + sum(e.di) over win) + e.held - e.lim)::bigint,
    'amountHeld', (e.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (e.interest_rate_nominal)::float8, 'interestRateMoroso', (e.interest_rate_moroso)::float8,
      'fixedInterestNominal', (e.fixed_interest_nominal)::bigint, 'fixedInterestMoroso', (e.fixed_interest_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (e.minimum_payment_rate)::float8, 'fixedMinimumPayment', (e.fixed_minimum_payment)::bigint)),
        $1::timestamptz
      from ev e
      window win as (partition by e.wallet_id order by e.ordinal, e.n rows between unbounded preceding and current row)
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select type, count(*) as n from ins group by type;

-- CYCLES_GRACE_TENANT_EVENTS: credit_cycles_grace_tenant_events
with lk as materialized (
        select w.wallet_id from credit_wallet w
        where w.status <> 'dissolved' and w.customer_id = $2 and w.set_aside_at is null
          and exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.payment_due_date = $1::timestamptz and x.interest_applied_at is null)
        order by w.wallet_id
        for update of w
      ),
      due as (
        update credit_statement s set
          interest_applied = s.interest_generated,
          interest_applied_at = $1::timestamptz,
          status = case when s.paid_in_cycle < s.minimum_payment then 'defaulted' else s.status end,
          penal_interest = case when s.paid_in_cycle < s.minimum_payment then (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((w.interest_rate_moroso * s.interest_basis)::numeric * 10000) as n, ((100 * s.daily_rate_divisor)::numeric * 10000) as d) y) x) + w.fixed_interest_moroso else 0 end,
          interest_rate_moroso = case when s.paid_in_cycle < s.minimum_payment then w.interest_rate_moroso else null end,
          fixed_interest_moroso = case when s.paid_in_cycle < s.minimum_payment then w.fixed_interest_moroso else null end
        from credit_wallet w join lk on lk.wallet_id = w.wallet_id
        where w.wallet_id = s.wallet_id and s.payment_due_date = $1::timestamptz and s.interest_applied_at is null
        returning s.wallet_id, s.ordinal, s.interest_generated as nominal, s.compound, s.status = 'defaulted' as defaulted, s.penal_interest as penal
      ),
      steps as (
        select d.wallet_id, d.ordinal, k.n, k.type, k.amount, k.direction, k.affects, k.dp, k.di, k.booked, d.defaulted
        from due d cross join lateral (values
          (1, 'Interes Nominal Aplicado', d.nominal, 'debit', true, case when d.compound then d.nominal else 0 end, case when d.compound then 0 else d.nominal end, d.nominal),
          (2, 'Interes Moroso Calculado', d.penal, 'debit', false, 0, 0, 0),
          (3, 'Interes Moroso Aplicado', d.penal, 'debit', true, 0, d.penal, d.penal),
          (4, 'Interes moroso ejecutado', d.penal, 'debit', false, 0, 0, 0)
        ) as k(n, type, amount, direction, affects, dp, di, booked)
        where k.n = 1 or d.defaulted
      ),
      agg as (
        select wallet_id, sum(dp) as dp, sum(di) as di, sum(booked) as booked, count(*) as n, bool_or(defaulted) as defaulted
        from steps group by wallet_id
      ),
      wal as (
        update credit_wallet w set
          principal_outstanding = w.principal_outstanding + a.dp,
          interest_outstanding = w.interest_outstanding + a.di,
          available_amount = greatest(0, w.available_amount - a.booked),
          status = case when a.defaulted and w.status in ('active', 'blocked') then 'in_default' else w.status end,
          status_before_default = case when a.defaulted and w.status in ('active', 'blocked') then w.status else w.status_before_default end,
          sequence = w.sequence + a.n,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from agg a
        where a.wallet_id = w.wallet_id
      ),
      ev as (
        select st.*, w.customer_id, w.principal_outstanding as p0, w.interest_outstanding as i0, w.available_amount as aa0, w.credit_limit as lim,
          w.amount_held as held, w.sequence as seq0, w.interest_rate_nominal, w.interest_rate_moroso, w.fixed_interest_nominal,
          w.fixed_interest_moroso, w.minimum_payment_rate, w.fixed_minimum_payment
        from steps st join credit_wallet w on w.wallet_id = st.wallet_id
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), e.wallet_id, e.customer_id, e.seq0 + row_number() over win, e.type, e.amount, e.direction, e.affects,
        jsonb_build_object(
    'principal_outstanding', ((e.p0 + sum(e.dp) over win))::bigint,
    'interest_accrued', ((e.i0 + sum(e.di) over win))::bigint,
    'totalDebt', ((e.p0 + sum(e.dp) over win) + (e.i0 + sum(e.di) over win))::bigint,
    'limit', (e.lim)::bigint,
    'amountOverdraft', greatest(0, (e.p0 + sum(e.dp) over win) + (e.i0 + sum(e.di) over win) + e.held - e.lim)::bigint,
    'amountHeld', (e.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (e.interest_rate_nominal)::float8, 'interestRateMoroso', (e.interest_rate_moroso)::float8,
      'fixedInterestNominal', (e.fixed_interest_nominal)::bigint, 'fixedInterestMoroso', (e.fixed_interest_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (e.minimum_payment_rate)::float8, 'fixedMinimumPayment', (e.fixed_minimum_payment)::bigint)),
        $1::timestamptz
      from ev e
      window win as (partition by e.wallet_id order by e.ordinal, e.n rows between unbounded preceding and current row)
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select *, 1 as n from ins;

-- CYCLES_GRACE_TENANT: credit_cycles_grace_tenant
with lk as materialized (
        select w.wallet_id from credit_wallet w
        where w.status <> 'dissolved' and w.customer_id = $2 and w.set_aside_at is null
          and exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.payment_due_date = $1::timestamptz and x.interest_applied_at is null)
        order by w.wallet_id
        for update of w
      ),
      due as (
        update credit_statement s set
          interest_applied = s.interest_generated,
          interest_applied_at = $1::timestamptz,
          status = case when s.paid_in_cycle < s.minimum_payment then 'defaulted' else s.status end,
          penal_interest = case when s.paid_in_cycle < s.minimum_payment then (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((w.interest_rate_moroso * s.interest_basis)::numeric * 10000) as n, ((100 * s.daily_rate_divisor)::numeric * 10000) as d) y) x) + w.fixed_interest_moroso else 0 end,
          interest_rate_moroso = case when s.paid_in_cycle < s.minimum_payment then w.interest_rate_moroso else null end,
          fixed_interest_moroso = case when s.paid_in_cycle < s.minimum_payment then w.fixed_interest_moroso else null end
        from credit_wallet w join lk on lk.wallet_id = w.wallet_id
        where w.wallet_id = s.wallet_id and s.payment_due_date = $1::timestamptz and s.interest_applied_at is null
        returning s.wallet_id, s.ordinal, s.interest_generated as nominal, s.compound, s.status = 'defaulted' as defaulted, s.penal_interest as penal
      ),
      steps as (
        select d.wallet_id, d.ordinal, k.n, k.type, k.amount, k.direction, k.affects, k.dp, k.di, k.booked, d.defaulted
        from due d cross join lateral (values
          (1, 'Interes Nominal Aplicado', d.nominal, 'debit', true, case when d.compound then d.nominal else 0 end, case when d.compound then 0 else d.nominal end, d.nominal),
          (2, 'Interes Moroso Calculado', d.penal, 'debit', false, 0, 0, 0),
          (3, 'Interes Moroso Aplicado', d.penal, 'debit', true, 0, d.penal, d.penal),
          (4, 'Interes moroso ejecutado', d.penal, 'debit', false, 0, 0, 0)
        ) as k(n, type, amount, direction, affects, dp, di, booked)
        where k.n = 1 or d.defaulted
      ),
      agg as (
        select wallet_id, sum(dp) as dp, sum(di) as di, sum(booked) as booked, count(*) as n, bool_or(defaulted) as defaulted
        from steps group by wallet_id
      ),
      wal as (
        update credit_wallet w set
          principal_outstanding = w.principal_outstanding + a.dp,
          interest_outstanding = w.interest_outstanding + a.di,
          available_amount = greatest(0, w.available_amount - a.booked),
          status = case when a.defaulted and w.status in ('active', 'blocked') then 'in_default' else w.status end,
          status_before_default = case when a.defaulted and w.status in ('active', 'blocked') then w.status else w.status_before_default end,
          sequence = w.sequence + a.n,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from agg a
        where a.wallet_id = w.wallet_id
      ),
      ev as (
        select st.*, w.customer_id, w.principal_outstanding as p0, w.interest_outstanding as i0, w.available_amount as aa0, w.credit_limit as lim,
          w.amount_held as held, w.sequence as seq0, w.interest_rate_nominal, w.interest_rate_moroso, w.fixed_interest_nominal,
          w.fixed_interest_moroso, w.minimum_payment_rate, w.fixed_minimum_payment
        from steps st join credit_wallet w on w.wallet_id = st.wallet_id
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), e.wallet_id, e.customer_id, e.seq0 + row_number() over win, e.type, e.amount, e.direction, e.affects,
        jsonb_build_object(
    'principal_outstanding', ((e.p0 + sum(e.dp) over win))::bigint,
    'interest_accrued', ((e.i0 + sum(e.di) over win))::bigint,
    'totalDebt', ((e.p0 + sum(e.dp) over win) + (e.i0 + sum(e.di) over win))::bigint,
    'limit', (e.lim)::bigint,
    'amountOverdraft', greatest(0, (e.p0 + sum(e.dp) over win) + (e.i0 + sum(e.di) over win) + e.held - e.lim)::bigint,
    'amountHeld', (e.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (e.interest_rate_nominal)::float8, 'interestRateMoroso', (e.interest_rate_moroso)::float8,
      'fixedInterestNominal', (e.fixed_interest_nominal)::bigint, 'fixedInterestMoroso', (e.fixed_interest_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (e.minimum_payment_rate)::float8, 'fixedMinimumPayment', (e.fixed_minimum_payment)::bigint)),
        $1::timestamptz
      from ev e
      window win as (partition by e.wallet_id order by e.ordinal, e.n rows between unbounded preceding and current row)
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select type, count(*) as n from ins group by type;
