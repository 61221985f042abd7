-- The named statements src/modules/credit/cycles/repository/set-aside.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CYCLES_SET_ASIDE_REAL_TIME: credit_cycles_set_aside_real_time
with gr as (
        select x.wallet_id,
          sum(case when x.compound then x.interest_generated else 0 end)::numeric as dp,
          sum(case when x.compound then 0 else x.interest_generated end)::numeric
            + sum(case when x.paid_in_cycle < x.minimum_payment then (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((w.interest_rate_moroso * x.interest_basis)::numeric * 10000) as n, ((100 * x.daily_rate_divisor)::numeric * 10000) as d) y) x) + w.fixed_interest_moroso else 0 end) as di
        from credit_statement x join credit_wallet w on w.wallet_id = x.wallet_id
        where x.payment_due_date = $1::timestamptz and x.interest_applied_at is null and w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null
        group by x.wallet_id
      ),
      a as (
        select w.wallet_id, p.compound, p.interest_accrual_method as method, p.daily_rate_divisor as divisor,
          w.sum_of_daily_balance::numeric + case when ($1::timestamptz = date_trunc('day', $1::timestamptz, 'UTC') and w.as_of < $1::timestamptz) then w.principal_outstanding::numeric + case when p.compound then w.interest_outstanding else 0 end else 0 end as sum1,
          w.principal_outstanding::numeric + coalesce(gr.dp, 0) as p1,
          w.interest_outstanding::numeric + coalesce(gr.di, 0) as i1,
          w.next_cut_at = $1::timestamptz and not exists (select 1 from credit_statement c where c.wallet_id = w.wallet_id and c.cut_date = $1::timestamptz) as cut_due,
          (($1::timestamptz at time zone 'UTC')::date - (w.cycle_start at time zone 'UTC')::date) as days,
          case when w.specs_overridden then w.interest_rate_nominal else p.base_interest_rate end as rate, case when w.specs_overridden then w.fixed_interest_nominal else p.fixed_interest_amount end as fixed
        from credit_wallet w join credit_product p on p.id = w.product_id
        left join gr on gr.wallet_id = w.wallet_id
        where w.status <> 'dissolved' and not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null
          and (($1::timestamptz = date_trunc('day', $1::timestamptz, 'UTC') and w.as_of < $1::timestamptz) or gr.wallet_id is not null or w.next_cut_at = $1::timestamptz)
      ),
      b as (
        select a.*, case when not a.cut_due then 0 when a.method = 'ADB' then a.sum1 else a.days * (a.p1 + case when a.compound then a.i1 else 0 end) end as basis
        from a
      ),
      c as (
        select b.*, case when b.cut_due then (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((b.rate * b.basis)::numeric * 10000) as n, ((100 * b.divisor)::numeric * 10000) as d) y) x) + b.fixed else 0 end as interest
        from b
      ),
      bad as (
        select c.wallet_id,
          case when c.sum1 > 9007199254740991 then 'sumOfDailyBalance' when c.p1 + c.i1 > 9007199254740991 then 'totalDebt'
            when c.basis > 9007199254740991 then 'interestBasis' else 'interest' end as field,
          case when c.sum1 > 9007199254740991 then c.sum1 when c.p1 + c.i1 > 9007199254740991 then c.p1 + c.i1
            when c.basis > 9007199254740991 then c.basis else c.interest end as value
        from c
        where c.sum1 > 9007199254740991 or c.p1 + c.i1 > 9007199254740991 or c.basis > 9007199254740991 or c.interest > 9007199254740991
      )
      update credit_wallet w set set_aside_at = $1::timestamptz,
        set_aside_reason = format('The cycle steps due at %s would take %s to %s cents, beyond %s (2^53 - 1), the largest amount the service keeps exact: the wallet is set aside and its cycle steps stop.',
          to_char($1::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), bad.field, trunc(bad.value)::text, '9007199254740991'),
        updated_at = now()
      from bad
      where bad.wallet_id = w.wallet_id and w.set_aside_at is null
      returning w.wallet_id, w.customer_id, w.set_aside_reason;

-- CYCLES_SET_ASIDE_TENANT: credit_cycles_set_aside_tenant
with gr as (
        select x.wallet_id,
          sum(case when x.compound then x.interest_generated else 0 end)::numeric as dp,
          sum(case when x.compound then 0 else x.interest_generated end)::numeric
            + sum(case when x.paid_in_cycle < x.minimum_payment then (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((w.interest_rate_moroso * x.interest_basis)::numeric * 10000) as n, ((100 * x.daily_rate_divisor)::numeric * 10000) as d) y) x) + w.fixed_interest_moroso else 0 end) as di
        from credit_statement x join credit_wallet w on w.wallet_id = x.wallet_id
        where x.payment_due_date = $1::timestamptz and x.interest_applied_at is null and w.status <> 'dissolved' and w.customer_id = $2 and w.set_aside_at is null
        group by x.wallet_id
      ),
      a as (
        select w.wallet_id, p.compound, p.interest_accrual_method as method, p.daily_rate_divisor as divisor,
          w.sum_of_daily_balance::numeric + case when ($1::timestamptz = date_trunc('day', $1::timestamptz, 'UTC') and w.as_of < $1::timestamptz) then w.principal_outstanding::numeric + case when p.compound then w.interest_outstanding else 0 end else 0 end as sum1,
          w.principal_outstanding::numeric + coalesce(gr.dp, 0) as p1,
          w.interest_outstanding::numeric + coalesce(gr.di, 0) as i1,
          w.next_cut_at = $1::timestamptz and not exists (select 1 from credit_statement c where c.wallet_id = w.wallet_id and c.cut_date = $1::timestamptz) as cut_due,
          (($1::timestamptz at time zone 'UTC')::date - (w.cycle_start at time zone 'UTC')::date) as days,
          case when w.specs_overridden then w.interest_rate_nominal else p.base_interest_rate end as rate, case when w.specs_overridden then w.fixed_interest_nominal else p.fixed_interest_amount end as fixed
        from credit_wallet w join credit_product p on p.id = w.product_id
        left join gr on gr.wallet_id = w.wallet_id
        where w.status <> 'dissolved' and w.customer_id = $2 and w.set_aside_at is null
          and (($1::timestamptz = date_trunc('day', $1::timestamptz, 'UTC') and w.as_of < $1::timestamptz) or gr.wallet_id is not null or w.next_cut_at = $1::timestamptz)
      ),
      b as (
        select a.*, case when not a.cut_due then 0 when a.method = 'ADB' then a.sum1 else a.days * (a.p1 + case when a.compound then a.i1 else 0 end) end as basis
        from a
      ),
      c as (
        select b.*, case when b.cut_due then (select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((b.rate * b.basis)::numeric * 10000) as n, ((100 * b.divisor)::numeric * 10000) as d) y) x) + b.fixed else 0 end as interest
        from b
      ),
      bad as (
        select c.wallet_id,
          case when c.sum1 > 9007199254740991 then 'sumOfDailyBalance' when c.p1 + c.i1 > 9007199254740991 then 'totalDebt'
            when c.basis > 9007199254740991 then 'interestBasis' else 'interest' end as field,
          case when c.sum1 > 9007199254740991 then c.sum1 when c.p1 + c.i1 > 9007199254740991 then c.p1 + c.i1
            when c.basis > 9007199254740991 then c.basis else c.interest end as value
        from c
        where c.sum1 > 9007199254740991 or c.p1 + c.i1 > 9007199254740991 or c.basis > 9007199254740991 or c.interest > 9007199254740991
      )
      update credit_wallet w set set_aside_at = $1::timestamptz,
        set_aside_reason = format('The cycle steps due at %s would take %s to %s cents, beyond %s (2^53 - 1), the largest amount the service keeps exact: the wallet is set aside and its cycle steps stop.',
          to_char($1::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), bad.field, trunc(bad.value)::text, '9007199254740991'),
        updated_at = now()
      from bad
      where bad.wallet_id = w.wallet_id and w.set_aside_at is null
      returning w.wallet_id, w.customer_id, w.set_aside_reason;
