/**
 * Statements of two steps of the cycle batches (../service.ts `runDueSteps`): the daily close and the
 * grace ends of one instant over every due wallet of a scope, one statement each, with the formulas
 * and the order of the pure engine (src/domain/credit/index.ts lists the SQL of each step). Each step
 * is guarded by the state it changes (close: `as_of` < T; grace end: `interest_applied_at is null`),
 * so a rerun books nothing twice. `$1` is the instant T, `$2` the tenant of a tenant scope
 * (./fragments.ts). Tables: `credit_wallet`, `credit_statement`, `credit_event` (../../accounts/),
 * `credit_product` (../../products/), `credit_clock` (../../clock/) for the real-time scope.
 */
import type { Sql } from "../../../../db/sql.js";
import type { CycleScope } from "../types.js";
import { EVENT_RETURNING, T, detailsSql, finalSelect, forScope, forStep, rheDivSql, scopeSql, stepValues, WALLET_SPECS_OF_E, type EventStepStatements, type ScopeKind, type StepStatements } from "./fragments.js";
import { stepRows, stepRun, type EventRow } from "./run.js";

/** The text of the daily close over the wallets of scope `kind`. */
function closeText(kind: ScopeKind): string {
  return `update credit_wallet w set
        sum_of_daily_balance = w.sum_of_daily_balance + w.principal_outstanding + case when p.compound then w.interest_outstanding else 0 end,
        last_close_at = ${T}, as_of = ${T}, updated_at = now()
      from credit_product p
      where p.id = w.product_id and w.status <> 'dissolved' and w.as_of < ${T} and ${scopeSql(kind)}`;
}

/**
 * The daily close at T (`$1`, 00:00 UTC) of every wallet of the scope not dissolved whose clock is before T (docs/decisions/credit.md "The cycle": adds the principal at the end of the day just ended, plus the outstanding
 * interest on compound products; interest.ts `dailyBalanceBasis`). One UPDATE.
 */
export const CYCLES_CLOSE: StepStatements = {
  tenant: { name: "credit_cycles_close_tenant", text: closeText("tenant") },
  realTime: { name: "credit_cycles_close_real_time", text: closeText("realTime") },
};
/** {@link CYCLES_CLOSE} of one tenant (`$2`). */
export const CYCLES_CLOSE_TENANT = CYCLES_CLOSE.tenant;
/** {@link CYCLES_CLOSE} of the real-time tenants. */
export const CYCLES_CLOSE_REAL_TIME = CYCLES_CLOSE.realTime;

/** Runs the daily close at `t` (00:00 UTC) of the scope's wallets ({@link CYCLES_CLOSE}). @returns the wallets closed. @throws the driver's error. */
export function closeWallets(on: Sql, scope: CycleScope, t: Date): Promise<number> {
  return stepRun(on, forScope(scope, CYCLES_CLOSE), stepValues(scope, t));
}

/** The text of the grace ends over the wallets of scope `kind`, returning the events written (`collect`) or their count per type. */
function graceText(kind: ScopeKind, collect: boolean): string {
  const scope = scopeSql(kind);
  const defaulted = `s.paid_in_cycle < s.minimum_payment`;
  const p = `(e.p0 + sum(e.dp) over win)`;
  const i = `(e.i0 + sum(e.di) over win)`;
  return `with lk as materialized (
        select w.wallet_id from credit_wallet w
        where w.status <> 'dissolved' and ${scope}
          and exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.payment_due_date = ${T} and x.interest_applied_at is null)
        order by w.wallet_id
        for update of w
      ),
      due as (
        update credit_statement s set
          interest_applied = s.interest_generated,
          interest_applied_at = ${T},
          status = case when ${defaulted} then 'defaulted' else s.status end,
          penal_interest = case when ${defaulted} then ${rheDivSql(`w.interest_rate_moroso * s.interest_basis`, `100 * s.daily_rate_divisor`)} + w.fixed_interest_moroso else 0 end,
          interest_rate_moroso = case when ${defaulted} then w.interest_rate_moroso else null end,
          fixed_interest_moroso = case when ${defaulted} then w.fixed_interest_moroso else null end
        from credit_wallet w join lk on lk.wallet_id = w.wallet_id
        where w.wallet_id = s.wallet_id and s.payment_due_date = ${T} and s.interest_applied_at is null
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
          as_of = greatest(w.as_of, ${T}),
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
        ${detailsSql(p, i, "e.lim", "e.held", WALLET_SPECS_OF_E)},
        ${T}
      from ev e
      window win as (partition by e.wallet_id order by e.ordinal, e.n rows between unbounded preceding and current row)
      ${EVENT_RETURNING})
      ${finalSelect(collect)}`;
}

/**
 * The grace ends at T of every statement of the scope whose `payment_due_date` = T and whose
 * interest is not applied yet (simulate.ts `runGraceEnd`, oldest cut first): `Interes Nominal Aplicado`
 * (into principal when the statement was compound, else into interest; AA lowered by what it can
 * take); when `paid_in_cycle` < `minimum_payment`: the statement `defaulted`, the wallet `in_default`
 * (from active or blocked, remembered in `status_before_default`), penal interest = round_half_even(
 * interestRateMoroso/100/divisor × interest_basis) + fixedInterestMoroso (the wallet's specs in force)
 * into interest: `Interes Moroso Calculado`, `Interes Moroso Aplicado`, `Interes moroso ejecutado`.
 * The open holds do not change here (`amount_held` is read for `walletDetails_after` only, whose
 * `amountOverdraft` counts them: docs/decisions/credit.md "Authorizations").
 * One statement: the due wallets locked first (`FOR UPDATE`, in id order: the order a payment takes,
 * wallet row then statements, so the two never deadlock), then statements UPDATE, wallets UPDATE,
 * events INSERT. The events read the wallets as they were before the statement (every part of one
 * statement sees the same snapshot) by primary key, not from the wallets UPDATE's RETURNING: a join
 * of two RETURNING results has no statistics and runs as a nested loop, quadratic in the wallets.
 */
export const CYCLES_GRACE: EventStepStatements = {
  tenant: { name: "credit_cycles_grace_tenant", text: graceText("tenant", false) },
  tenantCollect: { name: "credit_cycles_grace_tenant_events", text: graceText("tenant", true) },
  realTime: { name: "credit_cycles_grace_real_time", text: graceText("realTime", false) },
  realTimeCollect: { name: "credit_cycles_grace_real_time_events", text: graceText("realTime", true) },
};
/** {@link CYCLES_GRACE} of one tenant (`$2`), the count of events per type. */
export const CYCLES_GRACE_TENANT = CYCLES_GRACE.tenant;
/** {@link CYCLES_GRACE} of one tenant (`$2`), every event written. */
export const CYCLES_GRACE_TENANT_EVENTS = CYCLES_GRACE.tenantCollect;
/** {@link CYCLES_GRACE} of the real-time tenants, the count of events per type. */
export const CYCLES_GRACE_REAL_TIME = CYCLES_GRACE.realTime;
/** {@link CYCLES_GRACE} of the real-time tenants, every event written. */
export const CYCLES_GRACE_REAL_TIME_EVENTS = CYCLES_GRACE.realTimeCollect;

/** Runs the grace ends at `t` of the scope's statements ({@link CYCLES_GRACE}). @returns the events written (`collect`) or their count per type. @throws the driver's error. */
export function graceEnds(on: Sql, scope: CycleScope, t: Date, collect = false): Promise<EventRow[]> {
  return stepRows<EventRow>(on, forStep(scope, collect, CYCLES_GRACE), stepValues(scope, t));
}
