/**
 * Statements of the cut, the last step of an instant in the cycle batches (../service.ts
 * `runDueSteps`; simulate.ts `runCut`; src/domain/credit/index.ts lists the SQL of each step). One
 * statement over every due wallet of a scope, composed of named parts: the wallets UPDATE
 * ({@link cutWalletsCte}), the statement's figures and INSERT ({@link cutStatementCtes}), the events
 * ({@link cutEventsCte}) and their INSERT. Guarded by `next_cut_at` = T and no statement at (wallet,
 * T), backed by the unique (wallet_id, cut_date), so a rerun books no cut twice. `$1` is the instant
 * T, `$2` the tenant of a tenant scope (./fragments.ts). Tables: `credit_wallet`,
 * `credit_statement`, `credit_event` (../../accounts/), `credit_product` (../../products/),
 * `credit_clock` (../../clock/) for the real-time scope.
 */
import type { Sql } from "../../../../db/sql.js";
import type { CycleScope } from "../types.js";
import { EVENT_RETURNING, T, detailsSql, finalSelect, forStep, nextCutSql, refreshed, rheDivSql, scopeSql, stepValues, type EventStepStatements, type ScopeKind, type SpecsSql } from "./fragments.js";
import { stepRows, type EventRow } from "./run.js";

/** The specs a cut takes (wallet `w`, product `p`): the wallet's own once an override has activated, else the product's. */
const REFRESHED: SpecsSql = {
  rateNominal: refreshed("interest_rate_nominal", "base_interest_rate"),
  rateMoroso: refreshed("interest_rate_moroso", "morosidad_rate"),
  fixedNominal: refreshed("fixed_interest_nominal", "fixed_interest_amount"),
  fixedMoroso: refreshed("fixed_interest_moroso", "base_interest_morosidad"),
  minRate: refreshed("minimum_payment_rate", "base_minimum_payment_rate"),
  fixedMin: refreshed("fixed_minimum_payment", "fixed_minimum_payment_amount"),
};

/** SQL of a spec after the cut: the pending override's `group`.`field` when one is pending, else `fallback`. */
function pending(group: string, field: string, fallback: string): string {
  return `case when w.pending_specs is null then ${fallback} else (w.pending_specs -> '${group}' ->> '${field}')::numeric end`;
}

/**
 * The `wal` CTE: UPDATE of every due wallet of the scope (condition `scope`) at instant T (`$1`): the specs refreshed or a pending override activated, the cycle reset (sum 0, cycle_start
 * = T), `next_cut_at` = the product's next cut after T, the sequence moved past the cut's events;
 * RETURNING the balances and sequence before it (`old.`), the specs the cut applies (`r_…`, as they
 * were) and those after it (`n_…`), the product's cut settings and the statement's ordinal.
 */
function cutWalletsCte(scope: string): string {
  const r = REFRESHED;
  const old = (expr: string): string => expr.replaceAll("w.", "old.");
  return `update credit_wallet w set
          interest_rate_nominal = ${pending("interestSpecs", "interestRateNominal", r.rateNominal)},
          interest_rate_moroso = ${pending("interestSpecs", "interestRateMoroso", r.rateMoroso)},
          fixed_interest_nominal = ${pending("interestSpecs", "fixedInterestNominal", r.fixedNominal)},
          fixed_interest_moroso = ${pending("interestSpecs", "fixedInterestMoroso", r.fixedMoroso)},
          minimum_payment_rate = ${pending("minimumPaymentSpecs", "minimumPaymentRate", r.minRate)},
          fixed_minimum_payment = ${pending("minimumPaymentSpecs", "fixedMinimumPayment", r.fixedMin)},
          specs_overridden = w.specs_overridden or w.pending_specs is not null,
          pending_specs = null,
          sum_of_daily_balance = 0,
          cycle_start = ${T},
          next_cut_at = ${nextCutSql("w.first_cut_date", "p.cut_frequency", T)},
          sequence = w.sequence + case when w.pending_specs is null then 1 else 2 end,
          as_of = greatest(w.as_of, ${T}),
          updated_at = now()
        from credit_product p
        where p.id = w.product_id and w.next_cut_at = ${T} and w.status <> 'dissolved' and ${scope}
          and not exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.cut_date = ${T})
        returning w.wallet_id, w.customer_id, old.principal_outstanding as p0, old.interest_outstanding as i0, old.credit_limit as lim,
          old.sequence as seq0, old.amount_held as held, old.cycle_start as cycle_start, old.sum_of_daily_balance as sum0, old.pending_specs is not null as activated,
          p.compound, p.interest_accrual_method as method, p.daily_rate_divisor as divisor, p.grace_period,
          ${old(r.rateNominal)} as r_rate_nominal, ${old(r.rateMoroso)} as r_rate_moroso,
          ${old(r.fixedNominal)} as r_fixed_nominal, ${old(r.fixedMoroso)} as r_fixed_moroso,
          ${old(r.minRate)} as r_min_rate, ${old(r.fixedMin)} as r_fixed_min,
          w.interest_rate_nominal as n_rate_nominal, w.interest_rate_moroso as n_rate_moroso, w.fixed_interest_nominal as n_fixed_nominal,
          w.fixed_interest_moroso as n_fixed_moroso, w.minimum_payment_rate as n_min_rate, w.fixed_minimum_payment as n_fixed_min,
          (select count(*) from credit_statement x where x.wallet_id = w.wallet_id) as ordinal`;
}

/**
 * The CTEs `b`, `c`, `d` and `st` after `wal`, at instant T (`$1`): days = UTC days from cycle_start to T;
 * basis = ADB ? sum : days × (principal [+ interest if compound]); interest = round_half_even(rate ×
 * basis / (100 × divisor)) + fixed; minimum = least(round_half_even(minRate × principal / 100) +
 * fixedMin, principal + interest); the statement INSERT (due = 00:00 UTC of T + gracePeriod days;
 * `paid` when the minimum is 0).
 */
function cutStatementCtes(): string {
  return `b as (
        select wal.*, ((${T} at time zone 'UTC')::date - (wal.cycle_start at time zone 'UTC')::date) as days,
          wal.p0 + case when wal.compound then wal.i0 else 0 end as at_cut
        from wal
      ),
      c as (
        select b.*, case when b.method = 'ADB' then b.sum0 else b.days * b.at_cut end as basis from b
      ),
      d as (
        select c.*,
          ${rheDivSql(`c.r_rate_nominal * c.basis`, `100 * c.divisor`)} + c.r_fixed_nominal as interest,
          least(${rheDivSql(`c.r_min_rate * c.p0`, `100`)} + c.r_fixed_min, c.p0 + c.i0) as minimum
        from c
      ),
      st as (
        insert into credit_statement (id, wallet_id, ordinal, cut_date, cycle_start, days_in_cycle, sum_of_daily_balance, principal_at_cut,
          interest_outstanding_at_cut, interest_accrual_method, compound, interest_basis, interest_rate_nominal, daily_rate_divisor,
          fixed_interest_nominal, minimum_payment_rate, fixed_minimum_payment, interest_generated, minimum_payment, payment_due_date,
          paid_in_cycle, status, interest_applied, interest_applied_at, penal_interest, interest_rate_moroso, fixed_interest_moroso, cured_at)
        select gen_random_uuid(), d.wallet_id, d.ordinal, ${T}, d.cycle_start, d.days, d.sum0, d.p0, d.i0, d.method, d.compound, d.basis,
          d.r_rate_nominal, d.divisor, d.r_fixed_nominal, d.r_min_rate, d.r_fixed_min, d.interest, d.minimum,
          date_trunc('day', ${T}, 'UTC') + (d.grace_period * 86400) * interval '1 second',
          0, case when d.minimum = 0 then 'paid' else 'pending' end, 0, null, 0, null, null, null
        from d
      )`;
}

/** Columns of `d` holding a set of specs: `r_…` (those the cut applied) or `n_…` (those in force after it). */
function specsOf(prefix: "r" | "n"): SpecsSql {
  return {
    rateNominal: `d.${prefix}_rate_nominal`,
    rateMoroso: `d.${prefix}_rate_moroso`,
    fixedNominal: `d.${prefix}_fixed_nominal`,
    fixedMoroso: `d.${prefix}_fixed_moroso`,
    minRate: `d.${prefix}_min_rate`,
    fixedMin: `d.${prefix}_fixed_min`,
  };
}

/**
 * The `ev` CTE: the events of each cut wallet: `Interes Nominal Calculado` (sequence + 1, with the
 * specs the cut applied) and, when a pending override activated, `Cambio Interest ejecutado`
 * (sequence + 2, amount 0, with the new specs).
 */
function cutEventsCte(): string {
  return `select d.wallet_id, d.customer_id, d.seq0 + 1 as sequence, 'Interes Nominal Calculado' as type, d.interest as amount, 'debit' as direction,
          false as affects,
          ${detailsSql("d.p0", "d.i0", "d.lim", "d.held", specsOf("r"))} as details
        from d
        union all
        select d.wallet_id, d.customer_id, d.seq0 + 2, 'Cambio Interest ejecutado', 0, 'credit', false,
          ${detailsSql("d.p0", "d.i0", "d.lim", "d.held", specsOf("n"))}
        from d where d.activated`;
}

/** The text of the cut over the wallets of scope `kind`, returning the events written (`collect`) or their count per type. */
function cutText(kind: ScopeKind, collect: boolean): string {
  return `with wal as (
        ${cutWalletsCte(scopeSql(kind))}
      ),
      ${cutStatementCtes()},
      ev as (
        ${cutEventsCte()}
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), ev.wallet_id, ev.customer_id, ev.sequence, ev.type, ev.amount, ev.direction, ev.affects, ev.details, ${T}
      from ev
      ${EVENT_RETURNING})
      ${finalSelect(collect)}`;
}

/**
 * The cut at T (`$1`) of every wallet of the scope not dissolved whose `next_cut_at` = T and which has no
 * statement at T (simulate.ts `runCut`): the specs refreshed from the product unless an override has
 * activated; the statement (days = UTC days from cycle_start to T; basis = ADB ? sum : days ×
 * (principal [+ interest if compound]); interest = round_half_even(rate × basis / (100 × divisor)) +
 * fixed; minimum = least(round_half_even(minRate × principal / 100) + fixedMin, principal + interest;
 * due = 00:00 UTC of T + gracePeriod days; `paid` when the minimum is 0); `Interes Nominal Calculado`;
 * a pending override activated (`Cambio Interest ejecutado`, amount 0); the cycle reset (sum 0,
 * cycle_start = T) and `next_cut_at` = the product's next cut after T. One statement: wallets UPDATE
 * (RETURNING the row before it), statements INSERT, events INSERT.
 */
export const CYCLES_CUT: EventStepStatements = {
  tenant: { name: "credit_cycles_cut_tenant", text: cutText("tenant", false) },
  tenantCollect: { name: "credit_cycles_cut_tenant_events", text: cutText("tenant", true) },
  realTime: { name: "credit_cycles_cut_real_time", text: cutText("realTime", false) },
  realTimeCollect: { name: "credit_cycles_cut_real_time_events", text: cutText("realTime", true) },
};
/** {@link CYCLES_CUT} of one tenant (`$2`), the count of events per type. */
export const CYCLES_CUT_TENANT = CYCLES_CUT.tenant;
/** {@link CYCLES_CUT} of one tenant (`$2`), every event written. */
export const CYCLES_CUT_TENANT_EVENTS = CYCLES_CUT.tenantCollect;
/** {@link CYCLES_CUT} of the real-time tenants, the count of events per type. */
export const CYCLES_CUT_REAL_TIME = CYCLES_CUT.realTime;
/** {@link CYCLES_CUT} of the real-time tenants, every event written. */
export const CYCLES_CUT_REAL_TIME_EVENTS = CYCLES_CUT.realTimeCollect;

/** Runs the cut at `t` of the scope's due wallets ({@link CYCLES_CUT}). @returns the events written (`collect`) or their count per type. @throws the driver's error. */
export function cutWallets(on: Sql, scope: CycleScope, t: Date, collect = false): Promise<EventRow[]> {
  return stepRows<EventRow>(on, forStep(scope, collect, CYCLES_CUT), stepValues(scope, t));
}
