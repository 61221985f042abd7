-- The named statements src/modules/credit/cycles/repository/cut.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CYCLES_CUT_REAL_TIME_EVENTS: credit_cycles_cut_real_time_events
with wal as (
        update credit_wallet w set
          interest_rate_nominal = case when w.pending_specs is null then case when w.specs_overridden then w.interest_rate_nominal else p.base_interest_rate end else (w.pending_specs -> 'interestSpecs' ->> 'interestRateNominal')::numeric end,
          interest_rate_moroso = case when w.pending_specs is null then case when w.specs_overridden then w.interest_rate_moroso else p.morosidad_rate end else (w.pending_specs -> 'interestSpecs' ->> 'interestRateMoroso')::numeric end,
          fixed_interest_nominal = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_interest_nominal else p.fixed_interest_amount end else (w.pending_specs -> 'interestSpecs' ->> 'fixedInterestNominal')::numeric end,
          fixed_interest_moroso = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_interest_moroso else p.base_interest_morosidad end else (w.pending_specs -> 'interestSpecs' ->> 'fixedInterestMoroso')::numeric end,
          minimum_payment_rate = case when w.pending_specs is null then case when w.specs_overridden then w.minimum_payment_rate else p.base_minimum_payment_rate end else (w.pending_specs -> 'minimumPaymentSpecs' ->> 'minimumPaymentRate')::numeric end,
          fixed_minimum_payment = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_minimum_payment else p.fixed_minimum_payment_amount end else (w.pending_specs -> 'minimumPaymentSpecs' ->> 'fixedMinimumPayment')::numeric end,
          specs_overridden = w.specs_overridden or w.pending_specs is not null,
          pending_specs = null,
          sum_of_daily_balance = 0,
          cycle_start = $1::timestamptz,
          next_cut_at = (case
    when $1::timestamptz < w.first_cut_date then w.first_cut_date
    when p.cut_frequency = 'daily' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 86400) + 1) * 86400) * interval '1 second'
    when p.cut_frequency = 'weekly' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 604800) + 1) * 604800) * interval '1 second'
    when p.cut_frequency = 'biweekly' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 1209600) + 1) * 1209600) * interval '1 second'
    when p.cut_frequency = 'month' then case when ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' > $1::timestamptz then ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' else ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC')) + 1) * interval '1 month') at time zone 'UTC' end
    else case when ((w.first_cut_date at time zone 'UTC') + (12 * (extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' > $1::timestamptz then ((w.first_cut_date at time zone 'UTC') + (12 * (extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' else ((w.first_cut_date at time zone 'UTC') + (12 * ((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) + 1)) * interval '1 month') at time zone 'UTC' end
  end),
          sequence = w.sequence + case when w.pending_specs is null then 1 else 2 end,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from credit_product p
        where p.id = w.product_id and w.next_cut_at = $1::timestamptz and w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null
          and not exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.cut_date = $1::timestamptz)
        returning w.wallet_id, w.customer_id, old.principal_outstanding as p0, old.interest_outstanding as i0, old.credit_limit as lim,
          old.sequence as seq0, old.amount_held as held, old.cycle_start as cycle_start, old.sum_of_daily_balance as sum0, old.pending_specs is not null as activated,
          p.compound, p.interest_accrual_method as method, p.daily_rate_divisor as divisor, p.grace_period,
          case when old.specs_overridden then old.interest_rate_nominal else p.base_interest_rate end as r_rate_nominal, case when old.specs_overridden then old.interest_rate_moroso else p.morosidad_rate end as r_rate_moroso,
          case when old.specs_overridden then old.fixed_interest_nominal else p.fixed_interest_amount end as r_fixed_nominal, case when old.specs_overridden then old.fixed_interest_moroso else p.base_interest_morosidad end as r_fixed_moroso,
          case when old.specs_overridden then old.minimum_payment_rate else p.base_minimum_payment_rate end as r_min_rate, case when old.specs_overridden then old.fixed_minimum_payment else p.fixed_minimum_payment_amount end as r_fixed_min,
          w.interest_rate_nominal as n_rate_nominal, w.interest_rate_moroso as n_rate_moroso, w.fixed_interest_nominal as n_fixed_nominal,
          w.fixed_interest_moroso as n_fixed_moroso, w.minimum_payment_rate as n_min_rate, w.fixed_minimum_payment as n_fixed_min,
          (select count(*) from credit_statement x where x.wallet_id = w.wallet_id) as ordinal
      ),
      b as (
        select wal.*, (($1::timestamptz at time zone 'UTC')::date - (wal.cycle_start at time zone 'UTC')::date) as days,
          wal.p0 + case when wal.compound then wal.i0 else 0 end as at_cut
        from wal
      ),
      c as (
        select b.*, case when b.method = 'ADB' then b.sum0 else b.days * b.at_cut end as basis from b
      ),
      d as (
        select c.*,
          (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((c.r_rate_nominal * c.basis)::numeric * 10000) as n, ((100 * c.divisor)::numeric * 10000) as d) y) x) + c.r_fixed_nominal as interest,
          least((select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((c.r_min_rate * c.p0)::numeric * 10000) as n, ((100)::numeric * 10000) as d) y) x) + c.r_fixed_min, c.p0 + c.i0) as minimum
        from c
      ),
      st as (
        insert into credit_statement (id, wallet_id, ordinal, cut_date, cycle_start, days_in_cycle, sum_of_daily_balance, principal_at_cut,
          interest_outstanding_at_cut, interest_accrual_method, compound, interest_basis, interest_rate_nominal, daily_rate_divisor,
          fixed_interest_nominal, minimum_payment_rate, fixed_minimum_payment, interest_generated, minimum_payment, payment_due_date,
          paid_in_cycle, status, interest_applied, interest_applied_at, penal_interest, interest_rate_moroso, fixed_interest_moroso, cured_at)
        select gen_random_uuid(), d.wallet_id, d.ordinal, $1::timestamptz, d.cycle_start, d.days, d.sum0, d.p0, d.i0, d.method, d.compound, d.basis,
          d.r_rate_nominal, d.divisor, d.r_fixed_nominal, d.r_min_rate, d.r_fixed_min, d.interest, d.minimum,
          date_trunc('day', $1::timestamptz, 'UTC') + (d.grace_period * 86400) * interval '1 second',
          0, case when d.minimum = 0 then 'paid' else 'pending' end, 0, null, 0, null, null, null
        from d
      ),
      ev as (
        select d.wallet_id, d.customer_id, d.seq0 + 1 as sequence, 'Interes Nominal Calculado' as type, d.interest as amount, 'debit' as direction,
          false as affects,
          jsonb_build_object(
    'principal_outstanding', (d.p0)::bigint,
    'interest_accrued', (d.i0)::bigint,
    'totalDebt', (d.p0 + d.i0)::bigint,
    'limit', (d.lim)::bigint,
    'amountOverdraft', greatest(0, d.p0 + d.i0 + d.held - d.lim)::bigint,
    'amountHeld', (d.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (d.r_rate_nominal)::float8, 'interestRateMoroso', (d.r_rate_moroso)::float8,
      'fixedInterestNominal', (d.r_fixed_nominal)::bigint, 'fixedInterestMoroso', (d.r_fixed_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (d.r_min_rate)::float8, 'fixedMinimumPayment', (d.r_fixed_min)::bigint)) as details
        from d
        union all
        select d.wallet_id, d.customer_id, d.seq0 + 2, 'Cambio Interest ejecutado', 0, 'credit', false,
          jsonb_build_object(
    'principal_outstanding', (d.p0)::bigint,
    'interest_accrued', (d.i0)::bigint,
    'totalDebt', (d.p0 + d.i0)::bigint,
    'limit', (d.lim)::bigint,
    'amountOverdraft', greatest(0, d.p0 + d.i0 + d.held - d.lim)::bigint,
    'amountHeld', (d.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (d.n_rate_nominal)::float8, 'interestRateMoroso', (d.n_rate_moroso)::float8,
      'fixedInterestNominal', (d.n_fixed_nominal)::bigint, 'fixedInterestMoroso', (d.n_fixed_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (d.n_min_rate)::float8, 'fixedMinimumPayment', (d.n_fixed_min)::bigint))
        from d where d.activated
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), ev.wallet_id, ev.customer_id, ev.sequence, ev.type, ev.amount, ev.direction, ev.affects, ev.details, $1::timestamptz
      from ev
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select *, 1 as n from ins;

-- CYCLES_CUT_REAL_TIME: credit_cycles_cut_real_time
with wal as (
        update credit_wallet w set
          interest_rate_nominal = case when w.pending_specs is null then case when w.specs_overridden then w.interest_rate_nominal else p.base_interest_rate end else (w.pending_specs -> 'interestSpecs' ->> 'interestRateNominal')::numeric end,
          interest_rate_moroso = case when w.pending_specs is null then case when w.specs_overridden then w.interest_rate_moroso else p.morosidad_rate end else (w.pending_specs -> 'interestSpecs' ->> 'interestRateMoroso')::numeric end,
          fixed_interest_nominal = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_interest_nominal else p.fixed_interest_amount end else (w.pending_specs -> 'interestSpecs' ->> 'fixedInterestNominal')::numeric end,
          fixed_interest_moroso = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_interest_moroso else p.base_interest_morosidad end else (w.pending_specs -> 'interestSpecs' ->> 'fixedInterestMoroso')::numeric end,
          minimum_payment_rate = case when w.pending_specs is null then case when w.specs_overridden then w.minimum_payment_rate else p.base_minimum_payment_rate end else (w.pending_specs -> 'minimumPaymentSpecs' ->> 'minimumPaymentRate')::numeric end,
          fixed_minimum_payment = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_minimum_payment else p.fixed_minimum_payment_amount end else (w.pending_specs -> 'minimumPaymentSpecs' ->> 'fixedMinimumPayment')::numeric end,
          specs_overridden = w.specs_overridden or w.pending_specs is not null,
          pending_specs = null,
          sum_of_daily_balance = 0,
          cycle_start = $1::timestamptz,
          next_cut_at = (case
    when $1::timestamptz < w.first_cut_date then w.first_cut_date
    when p.cut_frequency = 'daily' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 86400) + 1) * 86400) * interval '1 second'
    when p.cut_frequency = 'weekly' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 604800) + 1) * 604800) * interval '1 second'
    when p.cut_frequency = 'biweekly' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 1209600) + 1) * 1209600) * interval '1 second'
    when p.cut_frequency = 'month' then case when ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' > $1::timestamptz then ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' else ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC')) + 1) * interval '1 month') at time zone 'UTC' end
    else case when ((w.first_cut_date at time zone 'UTC') + (12 * (extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' > $1::timestamptz then ((w.first_cut_date at time zone 'UTC') + (12 * (extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' else ((w.first_cut_date at time zone 'UTC') + (12 * ((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) + 1)) * interval '1 month') at time zone 'UTC' end
  end),
          sequence = w.sequence + case when w.pending_specs is null then 1 else 2 end,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from credit_product p
        where p.id = w.product_id and w.next_cut_at = $1::timestamptz and w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null
          and not exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.cut_date = $1::timestamptz)
        returning w.wallet_id, w.customer_id, old.principal_outstanding as p0, old.interest_outstanding as i0, old.credit_limit as lim,
          old.sequence as seq0, old.amount_held as held, old.cycle_start as cycle_start, old.sum_of_daily_balance as sum0, old.pending_specs is not null as activated,
          p.compound, p.interest_accrual_method as method, p.daily_rate_divisor as divisor, p.grace_period,
          case when old.specs_overridden then old.interest_rate_nominal else p.base_interest_rate end as r_rate_nominal, case when old.specs_overridden then old.interest_rate_moroso else p.morosidad_rate end as r_rate_moroso,
          case when old.specs_overridden then old.fixed_interest_nominal else p.fixed_interest_amount end as r_fixed_nominal, case when old.specs_overridden then old.fixed_interest_moroso else p.base_interest_morosidad end as r_fixed_moroso,
          case when old.specs_overridden then old.minimum_payment_rate else p.base_minimum_payment_rate end as r_min_rate, case when old.specs_overridden then old.fixed_minimum_payment else p.fixed_minimum_payment_amount end as r_fixed_min,
          w.interest_rate_nominal as n_rate_nominal, w.interest_rate_moroso as n_rate_moroso, w.fixed_interest_nominal as n_fixed_nominal,
          w.fixed_interest_moroso as n_fixed_moroso, w.minimum_payment_rate as n_min_rate, w.fixed_minimum_payment as n_fixed_min,
          (select count(*) from credit_statement x where x.wallet_id = w.wallet_id) as ordinal
      ),
      b as (
        select wal.*, (($1::timestamptz at time zone 'UTC')::date - (wal.cycle_start at time zone 'UTC')::date) as days,
          wal.p0 + case when wal.compound then wal.i0 else 0 end as at_cut
        from wal
      ),
      c as (
        select b.*, case when b.method = 'ADB' then b.sum0 else b.days * b.at_cut end as basis from b
      ),
      d as (
        select c.*,
          (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((c.r_rate_nominal * c.basis)::numeric * 10000) as n, ((100 * c.divisor)::numeric * 10000) as d) y) x) + c.r_fixed_nominal as interest,
          least((select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((c.r_min_rate * c.p0)::numeric * 10000) as n, ((100)::numeric * 10000) as d) y) x) + c.r_fixed_min, c.p0 + c.i0) as minimum
        from c
      ),
      st as (
        insert into credit_statement (id, wallet_id, ordinal, cut_date, cycle_start, days_in_cycle, sum_of_daily_balance, principal_at_cut,
          interest_outstanding_at_cut, interest_accrual_method, compound, interest_basis, interest_rate_nominal, daily_rate_divisor,
          fixed_interest_nominal, minimum_payment_rate, fixed_minimum_payment, interest_generated, minimum_payment, payment_due_date,
          paid_in_cycle, status, interest_applied, interest_applied_at, penal_interest, interest_rate_moroso, fixed_interest_moroso, cured_at)
        select gen_random_uuid(), d.wallet_id, d.ordinal, $1::timestamptz, d.cycle_start, d.days, d.sum0, d.p0, d.i0, d.method, d.compound, d.basis,
          d.r_rate_nominal, d.divisor, d.r_fixed_nominal, d.r_min_rate, d.r_fixed_min, d.interest, d.minimum,
          date_trunc('day', $1::timestamptz, 'UTC') + (d.grace_period * 86400) * interval '1 second',
          0, case when d.minimum = 0 then 'paid' else 'pending' end, 0, null, 0, null, null, null
        from d
      ),
      ev as (
        select d.wallet_id, d.customer_id, d.seq0 + 1 as sequence, 'Interes Nominal Calculado' as type, d.interest as amount, 'debit' as direction,
          false as affects,
          jsonb_build_object(
    'principal_outstanding', (d.p0)::bigint,
    'interest_accrued', (d.i0)::bigint,
    'totalDebt', (d.p0 + d.i0)::bigint,
    'limit', (d.lim)::bigint,
    'amountOverdraft', greatest(0, d.p0 + d.i0 + d.held - d.lim)::bigint,
    'amountHeld', (d.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (d.r_rate_nominal)::float8, 'interestRateMoroso', (d.r_rate_moroso)::float8,
      'fixedInterestNominal', (d.r_fixed_nominal)::bigint, 'fixedInterestMoroso', (d.r_fixed_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (d.r_min_rate)::float8, 'fixedMinimumPayment', (d.r_fixed_min)::bigint)) as details
        from d
        union all
        select d.wallet_id, d.customer_id, d.seq0 + 2, 'Cambio Interest ejecutado', 0, 'credit', false,
          jsonb_build_object(
    'principal_outstanding', (d.p0)::bigint,
    'interest_accrued', (d.i0)::bigint,
    'totalDebt', (d.p0 + d.i0)::bigint,
    'limit', (d.lim)::bigint,
    'amountOverdraft', greatest(0, d.p0 + d.i0 + d.held - d.lim)::bigint,
    'amountHeld', (d.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (d.n_rate_nominal)::float8, 'interestRateMoroso', (d.n_rate_moroso)::float8,
      'fixedInterestNominal', (d.n_fixed_nominal)::bigint, 'fixedInterestMoroso', (d.n_fixed_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (d.n_min_rate)::float8, 'fixedMinimumPayment', (d.n_fixed_min)::bigint))
        from d where d.activated
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), ev.wallet_id, ev.customer_id, ev.sequence, ev.type, ev.amount, ev.direction, ev.affects, ev.details, $1::timestamptz
      from ev
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select type, count(*) as n from ins group by type;

-- CYCLES_CUT_TENANT_EVENTS: credit_cycles_cut_tenant_events
with wal as (
        update credit_wallet w set
          interest_rate_nominal = case when w.pending_specs is null then case when w.specs_overridden then w.interest_rate_nominal else p.base_interest_rate end else (w.pending_specs -> 'interestSpecs' ->> 'interestRateNominal')::numeric end,
          interest_rate_moroso = case when w.pending_specs is null then case when w.specs_overridden then w.interest_rate_moroso else p.morosidad_rate end else (w.pending_specs -> 'interestSpecs' ->> 'interestRateMoroso')::numeric end,
          fixed_interest_nominal = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_interest_nominal else p.fixed_interest_amount end else (w.pending_specs -> 'interestSpecs' ->> 'fixedInterestNominal')::numeric end,
          fixed_interest_moroso = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_interest_moroso else p.base_interest_morosidad end else (w.pending_specs -> 'interestSpecs' ->> 'fixedInterestMoroso')::numeric end,
          minimum_payment_rate = case when w.pending_specs is null then case when w.specs_overridden then w.minimum_payment_rate else p.base_minimum_payment_rate end else (w.pending_specs -> 'minimumPaymentSpecs' ->> 'minimumPaymentRate')::numeric end,
          fixed_minimum_payment = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_minimum_payment else p.fixed_minimum_payment_amount end else (w.pending_specs -> 'minimumPaymentSpecs' ->> 'fixedMinimumPayment')::numeric end,
          specs_overridden = w.specs_overridden or w.pending_specs is not null,
          pending_specs = null,
          sum_of_daily_balance = 0,
          cycle_start = $1::timestamptz,
          next_cut_at = (case
    when $1::timestamptz < w.first_cut_date then w.first_cut_date
    when p.cut_frequency = 'daily' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 86400) + 1) * 86400) * interval '1 second'
    when p.cut_frequency = 'weekly' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 604800) + 1) * 604800) * interval '1 second'
    when p.cut_frequency = 'biweekly' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 1209600) + 1) * 1209600) * interval '1 second'
    when p.cut_frequency = 'month' then case when ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' > $1::timestamptz then ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' else ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC')) + 1) * interval '1 month') at time zone 'UTC' end
    else case when ((w.first_cut_date at time zone 'UTC') + (12 * (extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' > $1::timestamptz then ((w.first_cut_date at time zone 'UTC') + (12 * (extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' else ((w.first_cut_date at time zone 'UTC') + (12 * ((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) + 1)) * interval '1 month') at time zone 'UTC' end
  end),
          sequence = w.sequence + case when w.pending_specs is null then 1 else 2 end,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from credit_product p
        where p.id = w.product_id and w.next_cut_at = $1::timestamptz and w.status <> 'dissolved' and w.customer_id = $2 and w.set_aside_at is null
          and not exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.cut_date = $1::timestamptz)
        returning w.wallet_id, w.customer_id, old.principal_outstanding as p0, old.interest_outstanding as i0, old.credit_limit as lim,
          old.sequence as seq0, old.amount_held as held, old.cycle_start as cycle_start, old.sum_of_daily_balance as sum0, old.pending_specs is not null as activated,
          p.compound, p.interest_accrual_method as method, p.daily_rate_divisor as divisor, p.grace_period,
          case when old.specs_overridden then old.interest_rate_nominal else p.base_interest_rate end as r_rate_nominal, case when old.specs_overridden then old.interest_rate_moroso else p.morosidad_rate end as r_rate_moroso,
          case when old.specs_overridden then old.fixed_interest_nominal else p.fixed_interest_amount end as r_fixed_nominal, case when old.specs_overridden then old.fixed_interest_moroso else p.base_interest_morosidad end as r_fixed_moroso,
          case when old.specs_overridden then old.minimum_payment_rate else p.base_minimum_payment_rate end as r_min_rate, case when old.specs_overridden then old.fixed_minimum_payment else p.fixed_minimum_payment_amount end as r_fixed_min,
          w.interest_rate_nominal as n_rate_nominal, w.interest_rate_moroso as n_rate_moroso, w.fixed_interest_nominal as n_fixed_nominal,
          w.fixed_interest_moroso as n_fixed_moroso, w.minimum_payment_rate as n_min_rate, w.fixed_minimum_payment as n_fixed_min,
          (select count(*) from credit_statement x where x.wallet_id = w.wallet_id) as ordinal
      ),
      b as (
        select wal.*, (($1::timestamptz at time zone 'UTC')::date - (wal.cycle_start at time zone 'UTC')::date) as days,
          wal.p0 + case when wal.compound then wal.i0 else 0 end as at_cut
        from wal
      ),
      c as (
        select b.*, case when b.method = 'ADB' then b.sum0 else b.days * b.at_cut end as basis from b
      ),
      d as (
        select c.*,
          (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((c.r_rate_nominal * c.basis)::numeric * 10000) as n, ((100 * c.divisor)::numeric * 10000) as d) y) x) + c.r_fixed_nominal as interest,
          least((select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((c.r_min_rate * c.p0)::numeric * 10000) as n, ((100)::numeric * 10000) as d) y) x) + c.r_fixed_min, c.p0 + c.i0) as minimum
        from c
      ),
      st as (
        insert into credit_statement (id, wallet_id, ordinal, cut_date, cycle_start, days_in_cycle, sum_of_daily_balance, principal_at_cut,
          interest_outstanding_at_cut, interest_accrual_method, compound, interest_basis, interest_rate_nominal, daily_rate_divisor,
          fixed_interest_nominal, minimum_payment_rate, fixed_minimum_payment, interest_generated, minimum_payment, payment_due_date,
          paid_in_cycle, status, interest_applied, interest_applied_at, penal_interest, interest_rate_moroso, fixed_interest_moroso, cured_at)
        select gen_random_uuid(), d.wallet_id, d.ordinal, $1::timestamptz, d.cycle_start, d.days, d.sum0, d.p0, d.i0, d.method, d.compound, d.basis,
          d.r_rate_nominal, d.divisor, d.r_fixed_nominal, d.r_min_rate, d.r_fixed_min, d.interest, d.minimum,
          date_trunc('day', $1::timestamptz, 'UTC') + (d.grace_period * 86400) * interval '1 second',
          0, case when d.minimum = 0 then 'paid' else 'pending' end, 0, null, 0, null, null, null
        from d
      ),
      ev as (
        select d.wallet_id, d.customer_id, d.seq0 + 1 as sequence, 'Interes Nominal Calculado' as type, d.interest as amount, 'debit' as direction,
          false as affects,
          jsonb_build_object(
    'principal_outstanding', (d.p0)::bigint,
    'interest_accrued', (d.i0)::bigint,
    'totalDebt', (d.p0 + d.i0)::bigint,
    'limit', (d.lim)::bigint,
    'amountOverdraft', greatest(0, d.p0 + d.i0 + d.held - d.lim)::bigint,
    'amountHeld', (d.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (d.r_rate_nominal)::float8, 'interestRateMoroso', (d.r_rate_moroso)::float8,
      'fixedInterestNominal', (d.r_fixed_nominal)::bigint, 'fixedInterestMoroso', (d.r_fixed_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (d.r_min_rate)::float8, 'fixedMinimumPayment', (d.r_fixed_min)::bigint)) as details
        from d
        union all
        select d.wallet_id, d.customer_id, d.seq0 + 2, 'Cambio Interest ejecutado', 0, 'credit', false,
          jsonb_build_object(
    'principal_outstanding', (d.p0)::bigint,
    'interest_accrued', (d.i0)::bigint,
    'totalDebt', (d.p0 + d.i0)::bigint,
    'limit', (d.lim)::bigint,
    'amountOverdraft', greatest(0, d.p0 + d.i0 + d.held - d.lim)::bigint,
    'amountHeld', (d.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (d.n_rate_nominal)::float8, 'interestRateMoroso', (d.n_rate_moroso)::float8,
      'fixedInterestNominal', (d.n_fixed_nominal)::bigint, 'fixedInterestMoroso', (d.n_fixed_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (d.n_min_rate)::float8, 'fixedMinimumPayment', (d.n_fixed_min)::bigint))
        from d where d.activated
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), ev.wallet_id, ev.customer_id, ev.sequence, ev.type, ev.amount, ev.direction, ev.affects, ev.details, $1::timestamptz
      from ev
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select *, 1 as n from ins;

-- CYCLES_CUT_TENANT: credit_cycles_cut_tenant
with wal as (
        update credit_wallet w set
          interest_rate_nominal = case when w.pending_specs is null then case when w.specs_overridden then w.interest_rate_nominal else p.base_interest_rate end else (w.pending_specs -> 'interestSpecs' ->> 'interestRateNominal')::numeric end,
          interest_rate_moroso = case when w.pending_specs is null then case when w.specs_overridden then w.interest_rate_moroso else p.morosidad_rate end else (w.pending_specs -> 'interestSpecs' ->> 'interestRateMoroso')::numeric end,
          fixed_interest_nominal = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_interest_nominal else p.fixed_interest_amount end else (w.pending_specs -> 'interestSpecs' ->> 'fixedInterestNominal')::numeric end,
          fixed_interest_moroso = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_interest_moroso else p.base_interest_morosidad end else (w.pending_specs -> 'interestSpecs' ->> 'fixedInterestMoroso')::numeric end,
          minimum_payment_rate = case when w.pending_specs is null then case when w.specs_overridden then w.minimum_payment_rate else p.base_minimum_payment_rate end else (w.pending_specs -> 'minimumPaymentSpecs' ->> 'minimumPaymentRate')::numeric end,
          fixed_minimum_payment = case when w.pending_specs is null then case when w.specs_overridden then w.fixed_minimum_payment else p.fixed_minimum_payment_amount end else (w.pending_specs -> 'minimumPaymentSpecs' ->> 'fixedMinimumPayment')::numeric end,
          specs_overridden = w.specs_overridden or w.pending_specs is not null,
          pending_specs = null,
          sum_of_daily_balance = 0,
          cycle_start = $1::timestamptz,
          next_cut_at = (case
    when $1::timestamptz < w.first_cut_date then w.first_cut_date
    when p.cut_frequency = 'daily' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 86400) + 1) * 86400) * interval '1 second'
    when p.cut_frequency = 'weekly' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 604800) + 1) * 604800) * interval '1 second'
    when p.cut_frequency = 'biweekly' then w.first_cut_date + ((floor(extract(epoch from ($1::timestamptz - w.first_cut_date)) / 1209600) + 1) * 1209600) * interval '1 second'
    when p.cut_frequency = 'month' then case when ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' > $1::timestamptz then ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' else ((w.first_cut_date at time zone 'UTC') + (((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) * 12 + extract(month from $1::timestamptz at time zone 'UTC') - extract(month from w.first_cut_date at time zone 'UTC')) + 1) * interval '1 month') at time zone 'UTC' end
    else case when ((w.first_cut_date at time zone 'UTC') + (12 * (extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' > $1::timestamptz then ((w.first_cut_date at time zone 'UTC') + (12 * (extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC'))) * interval '1 month') at time zone 'UTC' else ((w.first_cut_date at time zone 'UTC') + (12 * ((extract(year from $1::timestamptz at time zone 'UTC') - extract(year from w.first_cut_date at time zone 'UTC')) + 1)) * interval '1 month') at time zone 'UTC' end
  end),
          sequence = w.sequence + case when w.pending_specs is null then 1 else 2 end,
          as_of = greatest(w.as_of, $1::timestamptz),
          updated_at = now()
        from credit_product p
        where p.id = w.product_id and w.next_cut_at = $1::timestamptz and w.status <> 'dissolved' and w.customer_id = $2 and w.set_aside_at is null
          and not exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.cut_date = $1::timestamptz)
        returning w.wallet_id, w.customer_id, old.principal_outstanding as p0, old.interest_outstanding as i0, old.credit_limit as lim,
          old.sequence as seq0, old.amount_held as held, old.cycle_start as cycle_start, old.sum_of_daily_balance as sum0, old.pending_specs is not null as activated,
          p.compound, p.interest_accrual_method as method, p.daily_rate_divisor as divisor, p.grace_period,
          case when old.specs_overridden then old.interest_rate_nominal else p.base_interest_rate end as r_rate_nominal, case when old.specs_overridden then old.interest_rate_moroso else p.morosidad_rate end as r_rate_moroso,
          case when old.specs_overridden then old.fixed_interest_nominal else p.fixed_interest_amount end as r_fixed_nominal, case when old.specs_overridden then old.fixed_interest_moroso else p.base_interest_morosidad end as r_fixed_moroso,
          case when old.specs_overridden then old.minimum_payment_rate else p.base_minimum_payment_rate end as r_min_rate, case when old.specs_overridden then old.fixed_minimum_payment else p.fixed_minimum_payment_amount end as r_fixed_min,
          w.interest_rate_nominal as n_rate_nominal, w.interest_rate_moroso as n_rate_moroso, w.fixed_interest_nominal as n_fixed_nominal,
          w.fixed_interest_moroso as n_fixed_moroso, w.minimum_payment_rate as n_min_rate, w.fixed_minimum_payment as n_fixed_min,
          (select count(*) from credit_statement x where x.wallet_id = w.wallet_id) as ordinal
      ),
      b as (
        select wal.*, (($1::timestamptz at time zone 'UTC')::date - (wal.cycle_start at time zone 'UTC')::date) as days,
          wal.p0 + case when wal.compound then wal.i0 else 0 end as at_cut
        from wal
      ),
      c as (
        select b.*, case when b.method = 'ADB' then b.sum0 else b.days * b.at_cut end as basis from b
      ),
      d as (
        select c.*,
          (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((c.r_rate_nominal * c.basis)::numeric * 10000) as n, ((100 * c.divisor)::numeric * 10000) as d) y) x) + c.r_fixed_nominal as interest,
          least((select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((c.r_min_rate * c.p0)::numeric * 10000) as n, ((100)::numeric * 10000) as d) y) x) + c.r_fixed_min, c.p0 + c.i0) as minimum
        from c
      ),
      st as (
        insert into credit_statement (id, wallet_id, ordinal, cut_date, cycle_start, days_in_cycle, sum_of_daily_balance, principal_at_cut,
          interest_outstanding_at_cut, interest_accrual_method, compound, interest_basis, interest_rate_nominal, daily_rate_divisor,
          fixed_interest_nominal, minimum_payment_rate, fixed_minimum_payment, interest_generated, minimum_payment, payment_due_date,
          paid_in_cycle, status, interest_applied, interest_applied_at, penal_interest, interest_rate_moroso, fixed_interest_moroso, cured_at)
        select gen_random_uuid(), d.wallet_id, d.ordinal, $1::timestamptz, d.cycle_start, d.days, d.sum0, d.p0, d.i0, d.method, d.compound, d.basis,
          d.r_rate_nominal, d.divisor, d.r_fixed_nominal, d.r_min_rate, d.r_fixed_min, d.interest, d.minimum,
          date_trunc('day', $1::timestamptz, 'UTC') + (d.grace_period * 86400) * interval '1 second',
          0, case when d.minimum = 0 then 'paid' else 'pending' end, 0, null, 0, null, null, null
        from d
      ),
      ev as (
        select d.wallet_id, d.customer_id, d.seq0 + 1 as sequence, 'Interes Nominal Calculado' as type, d.interest as amount, 'debit' as direction,
          false as affects,
          jsonb_build_object(
    'principal_outstanding', (d.p0)::bigint,
    'interest_accrued', (d.i0)::bigint,
    'totalDebt', (d.p0 + d.i0)::bigint,
    'limit', (d.lim)::bigint,
    'amountOverdraft', greatest(0, d.p0 + d.i0 + d.held - d.lim)::bigint,
    'amountHeld', (d.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (d.r_rate_nominal)::float8, 'interestRateMoroso', (d.r_rate_moroso)::float8,
      'fixedInterestNominal', (d.r_fixed_nominal)::bigint, 'fixedInterestMoroso', (d.r_fixed_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (d.r_min_rate)::float8, 'fixedMinimumPayment', (d.r_fixed_min)::bigint)) as details
        from d
        union all
        select d.wallet_id, d.customer_id, d.seq0 + 2, 'Cambio Interest ejecutado', 0, 'credit', false,
          jsonb_build_object(
    'principal_outstanding', (d.p0)::bigint,
    'interest_accrued', (d.i0)::bigint,
    'totalDebt', (d.p0 + d.i0)::bigint,
    'limit', (d.lim)::bigint,
    'amountOverdraft', greatest(0, d.p0 + d.i0 + d.held - d.lim)::bigint,
    'amountHeld', (d.held)::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (d.n_rate_nominal)::float8, 'interestRateMoroso', (d.n_rate_moroso)::float8,
      'fixedInterestNominal', (d.n_fixed_nominal)::bigint, 'fixedInterestMoroso', (d.n_fixed_moroso)::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (d.n_min_rate)::float8, 'fixedMinimumPayment', (d.n_fixed_min)::bigint))
        from d where d.activated
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), ev.wallet_id, ev.customer_id, ev.sequence, ev.type, ev.amount, ev.direction, ev.affects, ev.details, $1::timestamptz
      from ev
      returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select type, count(*) as n from ins group by type;
