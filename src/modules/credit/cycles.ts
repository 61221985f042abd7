/**
 * Set-based cycle batches of the credit core (issue 9, "The cycle engine", "Jobs"; decisions.md §3
 * and §6): the daily closes, grace ends and cuts of every due wallet of a scope, one SQL statement per
 * step over all due wallets (never one query per wallet), with the formulas and the order of the pure
 * engine (src/domain/credit/index.ts lists the SQL of each step, simulate.ts the order at one instant:
 * daily close, then grace ends, then the cut).
 *
 * A scope is either the real-time tenants (wallets of tenants without a `credit_clock` row; the
 * recurring `credit-cycles` job) or one tenant on its sandbox clock (Set and Advance Sandbox Clock).
 * The same code runs both.
 *
 * Idempotency and crashes: each step is one statement, so it commits whole or not at all; every step
 * is guarded by the state it changes (close: `as_of` < T; grace end: `interest_applied_at is null`; cut:
 * `next_cut_at` = T and no statement at (wallet, T), backed by the unique (wallet_id, cut_date)), so a
 * rerun or a run resumed after a crash between steps books nothing twice. Rows are locked by the
 * UPDATE of the step itself (no shared lock row); a deadlock with a concurrent operation is retried.
 *
 * Cut schedule in SQL (`nextCutSql`): cut dates are firstCutDate + n × cutFrequency; daily, weekly and
 * biweekly add whole multiples of 86 400 s; month and year add n months to the anchor as a UTC
 * `timestamp`, which PostgreSQL clamps to the month's last day exactly as schedule.ts `cutDate` does
 * (always from the anchor, never from the previous cut).
 *
 * Money: integer cents (`bigint`), rates percent (`numeric(9,4)`); every rounding is half-even on the
 * exact rational (`rheDivSql`), as decimal.js computes it in the engine. Instants are UTC.
 *
 * Money stays exact (docs/security.md "Money stays exact"): every amount a step writes stays within
 * ±(2^53 − 1) cents ({@link MAX_CENTS}), the integers a JSON reader holds exactly. Before the steps of
 * an instant, one UPDATE (`setAsideSql`) computes in `numeric` what they would write for each due
 * wallet and sets aside every wallet for which any amount would leave that range (`set_aside_at`,
 * `set_aside_reason`); every step, `nextInstant` and the settle skip set-aside wallets, so one wallet
 * never fails a batch of the others and its own stored amounts stay as they were.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { DeadlockException, LockWaitTimeoutException } from "@mikro-orm/core";
import type { CreditEventType } from "../../domain/credit/events.js";
import type { WalletDetails } from "../../domain/credit/events.js";

/** 2^53 − 1: the largest amount of cents the credit core stores or returns (docs/security.md "Money stays exact"). */
export const MAX_CENTS = 9007199254740991;

/** Which wallets a run covers: the real-time tenants (no `credit_clock` row), or one tenant's wallets on its sandbox clock. */
export type CycleScope = { kind: "real-time" } | { kind: "tenant"; customerId: string };

/** The real-time scope (tenants without a sandbox clock). */
export const REAL_TIME: CycleScope = { kind: "real-time" };

/** A notification written by a batch (spec `CreditNotification`, plus the instant `at`, UTC). */
export interface EmittedNotification {
  walletId: string;
  type: CreditEventType;
  amount: number;
  direction: "debit" | "credit";
  affectsBalance: boolean;
  walletDetails_after: WalletDetails;
  sequence: number;
  at: Date;
}

/** A wallet a run set aside (docs/security.md "Money stays exact"): which, whose, why (the text stored in `set_aside_reason`) and the instant (UTC) whose steps it was set aside before. */
export interface SetAsideWallet {
  walletId: string;
  customerId: string;
  reason: string;
  at: Date;
}

/**
 * What a run did: instants walked, wallets closed, statements whose grace ended, statements cut,
 * events written; `notifications` only when asked for; the wallets set aside by this run.
 * `complete`: every step due at or before `until` has run; otherwise the run stopped early (an
 * option's limit) and `reached` is the last instant whose steps all ran (null when none ran):
 * every step due at or before `reached` has run, none after it.
 */
export interface DueStepsResult {
  instants: number;
  closes: number;
  graceEnds: number;
  cuts: number;
  events: number;
  notifications: EmittedNotification[];
  setAside: SetAsideWallet[];
  complete: boolean;
  reached: Date | null;
}

/**
 * Logs each wallet a run set aside, one error each (the metric `credit_wallets_set_aside` counts
 * them at scrape time): runDueSteps with a `logger`, or the sandbox clock after its chunk commits.
 */
export function reportSetAside(logger: SetAsideLogger, wallets: readonly SetAsideWallet[]): void {
  for (const { at, ...wallet } of wallets) {
    logger.error({ ...wallet, at: at.toISOString() }, "credit wallet set aside: its next cycle step would leave the exact range of amounts");
  }
}

/** Where a run reports the wallets it sets aside: one `error` per wallet (pino's signature). */
export interface SetAsideLogger {
  error(obj: object, msg: string): void;
}

/** Options of {@link runDueSteps}. */
export interface DueStepsOptions {
  /** Return the notifications written, in emission order (instant, step, wallet, sequence). Default false (the real-time job does not need them). */
  collect?: boolean;
  /**
   * Set `as_of` = `until` on every wallet of the scope whose clock is behind it, as the engine's
   * `advance` does. Default: true for a tenant scope, false for real time (there `as_of` stays at the
   * last step run: nothing is due between it and `until`, and rewriting every wallet each minute would
   * only add writes).
   */
  settle?: boolean;
  /** Stop after this many instants (tests of an interrupted batch). */
  maxInstants?: number;
  /**
   * Stop before the next instant once `Date.now()` has reached this epoch-milliseconds deadline; at
   * least one instant runs per call (the sandbox clock's chunks, docs/security.md "The sandbox clock").
   */
  deadline?: number;
  /** Stop before the next instant once this many events have been written (at least one instant runs). */
  maxEvents?: number;
  /**
   * Logs one error per wallet set aside, as soon as the step that sets it aside has run. Leave it out
   * when the run is inside a transaction that may still roll back, and log `setAside` after commit.
   */
  logger?: SetAsideLogger;
}

/** A UTC instant as an SQL literal (from `toISOString`, so never caller text). */
function ts(t: Date): string {
  return `timestamptz '${t.toISOString()}'`;
}

/**
 * SQL of round_half_even(num / den) for non-negative `num` (at most 4 decimal places, e.g. a rate ×
 * cents) and positive integer `den`, computed exactly with integer division and remainder (no
 * intermediate rounding): q = div(N, D), r = N − qD; +1 when 2r > D, + (q mod 2) when 2r = D.
 */
export function rheDivSql(num: string, den: string): string {
  return `(select x.q + case when 2 * x.r > x.d then 1 when 2 * x.r = x.d then mod(x.q, 2) else 0 end
     from (select div(y.n, y.d) as q, mod(y.n, y.d) as r, y.d from (select ((${num})::numeric * 10000) as n, ((${den})::numeric * 10000) as d) y) x)`;
}

/**
 * SQL of the first cut of the schedule (`first`, `freq`) strictly after `t` (schedule.ts
 * `nextCutAfter`): `first` when `t` is before it; fixed frequencies: first + (floor((t − first) / step) + 1)
 * × step; month/year: the candidate cut in `t`'s month (year) if it is after `t`, else the next one,
 * month arithmetic on the UTC `timestamp` (clamped to the month's end, from the anchor).
 */
export function nextCutSql(first: string, freq: string, t: string): string {
  const fixed = (days: number): string =>
    `${first} + ((floor(extract(epoch from (${t} - ${first})) / ${days * 86400}) + 1) * ${days * 86400}) * interval '1 second'`;
  const months = (n: string): string => `((${first} at time zone 'UTC') + (${n}) * interval '1 month') at time zone 'UTC'`;
  const monthIndex = `((extract(year from ${t} at time zone 'UTC') - extract(year from ${first} at time zone 'UTC')) * 12 + extract(month from ${t} at time zone 'UTC') - extract(month from ${first} at time zone 'UTC'))`;
  const yearIndex = `(extract(year from ${t} at time zone 'UTC') - extract(year from ${first} at time zone 'UTC'))`;
  return `(case
    when ${t} < ${first} then ${first}
    when ${freq} = 'daily' then ${fixed(1)}
    when ${freq} = 'weekly' then ${fixed(7)}
    when ${freq} = 'biweekly' then ${fixed(14)}
    when ${freq} = 'month' then case when ${months(monthIndex)} > ${t} then ${months(monthIndex)} else ${months(`${monthIndex} + 1`)} end
    else case when ${months(`12 * ${yearIndex}`)} > ${t} then ${months(`12 * ${yearIndex}`)} else ${months(`12 * (${yearIndex} + 1)`)} end
  end)`;
}

/** The rates and fixed amounts of `walletDetails_after` (engine `WalletDetails`), as SQL expressions. */
interface SpecsSql {
  rateNominal: string;
  rateMoroso: string;
  fixedNominal: string;
  fixedMoroso: string;
  minRate: string;
  fixedMin: string;
}

/** SQL of `walletDetails_after` (events.ts `walletDetails`: the engine's field names) from balance and specs expressions. */
export function detailsSql(principal: string, interest: string, limit: string, s: SpecsSql): string {
  return `jsonb_build_object(
    'principal_outstanding', (${principal})::bigint,
    'interest_accrued', (${interest})::bigint,
    'totalDebt', (${principal} + ${interest})::bigint,
    'limit', (${limit})::bigint,
    'amountOverdraft', greatest(0, ${principal} + ${interest} - ${limit})::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (${s.rateNominal})::float8, 'interestRateMoroso', (${s.rateMoroso})::float8,
      'fixedInterestNominal', (${s.fixedNominal})::bigint, 'fixedInterestMoroso', (${s.fixedMoroso})::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (${s.minRate})::float8, 'fixedMinimumPayment', (${s.fixedMin})::bigint))`;
}

/** SQL condition selecting the wallets (alias `w`) of a scope whose steps run (not set aside), and its parameters. */
function scopeSql(scope: CycleScope): { sql: string; params: string[] } {
  return scope.kind === "tenant"
    ? { sql: `w.customer_id = ? and w.set_aside_at is null`, params: [scope.customerId] }
    : { sql: `not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null`, params: [] };
}

/** Columns every event insert returns when notifications are collected. */
const EVENT_RETURNING = `returning wallet_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at`;

/** The last SELECT of a step: every event written (`collect`), or the count per type. */
function finalSelect(collect: boolean): string {
  return collect ? `select *, 1 as n from ins` : `select type, count(*) as n from ins group by type`;
}

interface EventRow {
  n: string | number;
  wallet_id: string;
  sequence: string | number;
  type: string;
  amount: string | number;
  direction: "debit" | "credit";
  affects_balance: boolean;
  wallet_details_after: WalletDetails | string;
  created_at: Date | string;
}

function toNotification(r: EventRow): EmittedNotification {
  return {
    walletId: r.wallet_id,
    type: r.type as CreditEventType,
    amount: Number(r.amount),
    direction: r.direction,
    affectsBalance: r.affects_balance,
    walletDetails_after: (typeof r.wallet_details_after === "string" ? JSON.parse(r.wallet_details_after) : r.wallet_details_after) as WalletDetails,
    sequence: Number(r.sequence),
    at: new Date(r.created_at),
  };
}

/**
 * The daily close at `t` (00:00 UTC) of every wallet of the scope not dissolved whose clock is before
 * `t` (decisions.md §6: adds the principal at the end of the day just ended, plus the outstanding
 * interest on compound products; interest.ts `dailyBalanceBasis`). One UPDATE.
 */
export function closeSql(scope: CycleScope, t: Date): { sql: string; params: string[] } {
  const s = scopeSql(scope);
  return {
    sql: `update credit_wallet w set
        sum_of_daily_balance = w.sum_of_daily_balance + w.principal_outstanding + case when p.compound then w.interest_outstanding else 0 end,
        last_close_at = ${ts(t)}, as_of = ${ts(t)}, updated_at = now()
      from credit_product p
      where p.id = w.product_id and w.status <> 'dissolved' and w.as_of < ${ts(t)} and ${s.sql}`,
    params: s.params,
  };
}

/**
 * The grace ends at `t` of every statement of the scope whose `payment_due_date` = `t` and whose
 * interest is not applied yet (simulate.ts `runGraceEnd`, oldest cut first): `Interes Nominal Aplicado`
 * (into principal when the statement was compound, else into interest; AA lowered by what it can
 * take); when `paid_in_cycle` < `minimum_payment`: the statement `defaulted`, the wallet `in_default`
 * (from active or blocked, remembered in `status_before_default`), penal interest = round_half_even(
 * interestRateMoroso/100/divisor × interest_basis) + fixedInterestMoroso (the wallet's specs in force)
 * into interest: `Interes Moroso Calculado`, `Interes Moroso Aplicado`, `Interes moroso ejecutado`.
 * One statement: statements UPDATE, wallets UPDATE, events INSERT.
 */
export function graceSql(scope: CycleScope, t: Date, collect = false): { sql: string; params: string[] } {
  const s = scopeSql(scope);
  const defaulted = `s.paid_in_cycle < s.minimum_payment`;
  const p = `(e.p0 + sum(e.dp) over win)`;
  const i = `(e.i0 + sum(e.di) over win)`;
  return {
    sql: `with due as (
        update credit_statement s set
          interest_applied = s.interest_generated,
          interest_applied_at = ${ts(t)},
          status = case when ${defaulted} then 'defaulted' else s.status end,
          penal_interest = case when ${defaulted} then ${rheDivSql(`w.interest_rate_moroso * s.interest_basis`, `100 * s.daily_rate_divisor`)} + w.fixed_interest_moroso else 0 end,
          interest_rate_moroso = case when ${defaulted} then w.interest_rate_moroso else null end,
          fixed_interest_moroso = case when ${defaulted} then w.fixed_interest_moroso else null end
        from credit_wallet w
        where w.wallet_id = s.wallet_id and s.payment_due_date = ${ts(t)} and s.interest_applied_at is null
          and w.status <> 'dissolved' and ${s.sql}
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
          as_of = greatest(w.as_of, ${ts(t)}),
          updated_at = now()
        from agg a
        where a.wallet_id = w.wallet_id
        returning w.wallet_id, w.customer_id, old.principal_outstanding as p0, old.interest_outstanding as i0, old.available_amount as aa0,
          old.credit_limit as lim, old.sequence as seq0, w.interest_rate_nominal, w.interest_rate_moroso, w.fixed_interest_nominal,
          w.fixed_interest_moroso, w.minimum_payment_rate, w.fixed_minimum_payment
      ),
      ev as (
        select st.*, wal.customer_id, wal.p0, wal.i0, wal.aa0, wal.lim, wal.seq0, wal.interest_rate_nominal, wal.interest_rate_moroso,
          wal.fixed_interest_nominal, wal.fixed_interest_moroso, wal.minimum_payment_rate, wal.fixed_minimum_payment
        from steps st join wal on wal.wallet_id = st.wallet_id
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), e.wallet_id, e.customer_id, e.seq0 + row_number() over win, e.type, e.amount, e.direction, e.affects,
        ${detailsSql(p, i, "e.lim", {
          rateNominal: "e.interest_rate_nominal",
          rateMoroso: "e.interest_rate_moroso",
          fixedNominal: "e.fixed_interest_nominal",
          fixedMoroso: "e.fixed_interest_moroso",
          minRate: "e.minimum_payment_rate",
          fixedMin: "e.fixed_minimum_payment",
        })},
        ${ts(t)}
      from ev e
      window win as (partition by e.wallet_id order by e.ordinal, e.n rows between unbounded preceding and current row)
      ${EVENT_RETURNING})
      ${finalSelect(collect)}`,
    params: s.params,
  };
}

/**
 * The cut at `t` of every wallet of the scope not dissolved whose `next_cut_at` = `t` and which has no
 * statement at `t` (simulate.ts `runCut`): the specs refreshed from the product unless an override has
 * activated; the statement (days = UTC days from cycle_start to t; basis = ADB ? sum : days ×
 * (principal [+ interest if compound]); interest = round_half_even(rate × basis / (100 × divisor)) +
 * fixed; minimum = least(round_half_even(minRate × principal / 100) + fixedMin, principal + interest;
 * due = 00:00 UTC of t + gracePeriod days; `paid` when the minimum is 0); `Interes Nominal Calculado`;
 * a pending override activated (`Cambio Interest ejecutado`, amount 0); the cycle reset (sum 0,
 * cycle_start = t) and `next_cut_at` = the product's next cut after t. One statement: wallets UPDATE
 * (RETURNING the row before it), statements INSERT, events INSERT.
 */
export function cutSql(scope: CycleScope, t: Date, collect = false): { sql: string; params: string[] } {
  const s = scopeSql(scope);
  const T = ts(t);
  const refreshed = (own: string, product: string): string => `case when w.specs_overridden then w.${own} else p.${product} end`;
  const pending = (group: string, field: string, fallback: string): string =>
    `case when w.pending_specs is null then ${fallback} else (w.pending_specs -> '${group}' ->> '${field}')::numeric end`;
  const r = {
    rateNominal: refreshed("interest_rate_nominal", "base_interest_rate"),
    rateMoroso: refreshed("interest_rate_moroso", "morosidad_rate"),
    fixedNominal: refreshed("fixed_interest_nominal", "fixed_interest_amount"),
    fixedMoroso: refreshed("fixed_interest_moroso", "base_interest_morosidad"),
    minRate: refreshed("minimum_payment_rate", "base_minimum_payment_rate"),
    fixedMin: refreshed("fixed_minimum_payment", "fixed_minimum_payment_amount"),
  };
  const c = (name: string): string => `c.${name}`;
  return {
    sql: `with wal as (
        update credit_wallet w set
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
        where p.id = w.product_id and w.next_cut_at = ${T} and w.status <> 'dissolved' and ${s.sql}
          and not exists (select 1 from credit_statement x where x.wallet_id = w.wallet_id and x.cut_date = ${T})
        returning w.wallet_id, w.customer_id, old.principal_outstanding as p0, old.interest_outstanding as i0, old.credit_limit as lim,
          old.sequence as seq0, old.cycle_start as cycle_start, old.sum_of_daily_balance as sum0, old.pending_specs is not null as activated,
          p.compound, p.interest_accrual_method as method, p.daily_rate_divisor as divisor, p.grace_period,
          ${r.rateNominal.replaceAll("w.", "old.")} as r_rate_nominal, ${r.rateMoroso.replaceAll("w.", "old.")} as r_rate_moroso,
          ${r.fixedNominal.replaceAll("w.", "old.")} as r_fixed_nominal, ${r.fixedMoroso.replaceAll("w.", "old.")} as r_fixed_moroso,
          ${r.minRate.replaceAll("w.", "old.")} as r_min_rate, ${r.fixedMin.replaceAll("w.", "old.")} as r_fixed_min,
          w.interest_rate_nominal as n_rate_nominal, w.interest_rate_moroso as n_rate_moroso, w.fixed_interest_nominal as n_fixed_nominal,
          w.fixed_interest_moroso as n_fixed_moroso, w.minimum_payment_rate as n_min_rate, w.fixed_minimum_payment as n_fixed_min,
          (select count(*) from credit_statement x where x.wallet_id = w.wallet_id) as ordinal
      ),
      b as (
        select wal.*, ((${T} at time zone 'UTC')::date - (wal.cycle_start at time zone 'UTC')::date) as days,
          wal.p0 + case when wal.compound then wal.i0 else 0 end as at_cut
        from wal
      ),
      c as (
        select b.*, case when b.method = 'ADB' then b.sum0 else b.days * b.at_cut end as basis from b
      ),
      d as (
        select c.*,
          ${rheDivSql(`${c("r_rate_nominal")} * ${c("basis")}`, `100 * ${c("divisor")}`)} + c.r_fixed_nominal as interest,
          least(${rheDivSql(`${c("r_min_rate")} * ${c("p0")}`, `100`)} + c.r_fixed_min, c.p0 + c.i0) as minimum
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
      ),
      ev as (
        select d.wallet_id, d.customer_id, d.seq0 + 1 as sequence, 'Interes Nominal Calculado' as type, d.interest as amount, 'debit' as direction,
          false as affects,
          ${detailsSql("d.p0", "d.i0", "d.lim", {
            rateNominal: "d.r_rate_nominal",
            rateMoroso: "d.r_rate_moroso",
            fixedNominal: "d.r_fixed_nominal",
            fixedMoroso: "d.r_fixed_moroso",
            minRate: "d.r_min_rate",
            fixedMin: "d.r_fixed_min",
          })} as details
        from d
        union all
        select d.wallet_id, d.customer_id, d.seq0 + 2, 'Cambio Interest ejecutado', 0, 'credit', false,
          ${detailsSql("d.p0", "d.i0", "d.lim", {
            rateNominal: "d.n_rate_nominal",
            rateMoroso: "d.n_rate_moroso",
            fixedNominal: "d.n_fixed_nominal",
            fixedMoroso: "d.n_fixed_moroso",
            minRate: "d.n_min_rate",
            fixedMin: "d.n_fixed_min",
          })}
        from d where d.activated
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), ev.wallet_id, ev.customer_id, ev.sequence, ev.type, ev.amount, ev.direction, ev.affects, ev.details, ${T}
      from ev
      ${EVENT_RETURNING})
      ${finalSelect(collect)}`,
    params: s.params,
  };
}

/**
 * Sets aside, before the steps of instant `t`, every wallet of the scope due at `t` for which those
 * steps would write an amount beyond {@link MAX_CENTS} (docs/security.md "Money stays exact"). What
 * the steps would write is computed in `numeric`, chained as they run: the close's
 * `sumOfDailyBalance` (+ principal, + interest on compound products, when a close is due); the grace
 * ends' principal and interest (+ nominal interest, + penal interest of a default, as `graceSql`),
 * whose sum `totalDebt` bounds every amount and `walletDetails_after` they write; the cut's interest
 * basis and interest (as `cutSql`, on the balances after the grace ends); the minimum payment is at
 * most `totalDebt`. A wallet with a stored amount already beyond the range is set aside at its next
 * due instant too. One UPDATE; `set_aside_at` = `t`, `set_aside_reason` names the instant, the amount
 * and its value. Rows already set aside are left alone, so each wallet is returned once.
 */
export function setAsideSql(scope: CycleScope, t: Date): { sql: string; params: string[] } {
  const s = scopeSql(scope);
  const T = ts(t);
  const closeDue = t.getTime() % 86_400_000 === 0 ? `w.as_of < ${T}` : `false`;
  const refreshed = (own: string, product: string): string => `case when w.specs_overridden then w.${own} else p.${product} end`;
  const penal = `${rheDivSql(`w.interest_rate_moroso * x.interest_basis`, `100 * x.daily_rate_divisor`)} + w.fixed_interest_moroso`;
  return {
    sql: `with gr as (
        select x.wallet_id,
          sum(case when x.compound then x.interest_generated else 0 end)::numeric as dp,
          sum(case when x.compound then 0 else x.interest_generated end)::numeric
            + sum(case when x.paid_in_cycle < x.minimum_payment then ${penal} else 0 end) as di
        from credit_statement x join credit_wallet w on w.wallet_id = x.wallet_id
        where x.payment_due_date = ${T} and x.interest_applied_at is null and w.status <> 'dissolved' and ${s.sql}
        group by x.wallet_id
      ),
      a as (
        select w.wallet_id, p.compound, p.interest_accrual_method as method, p.daily_rate_divisor as divisor,
          w.sum_of_daily_balance::numeric + case when ${closeDue} then w.principal_outstanding::numeric + case when p.compound then w.interest_outstanding else 0 end else 0 end as sum1,
          w.principal_outstanding::numeric + coalesce(gr.dp, 0) as p1,
          w.interest_outstanding::numeric + coalesce(gr.di, 0) as i1,
          w.next_cut_at = ${T} and not exists (select 1 from credit_statement c where c.wallet_id = w.wallet_id and c.cut_date = ${T}) as cut_due,
          ((${T} at time zone 'UTC')::date - (w.cycle_start at time zone 'UTC')::date) as days,
          ${refreshed("interest_rate_nominal", "base_interest_rate")} as rate, ${refreshed("fixed_interest_nominal", "fixed_interest_amount")} as fixed
        from credit_wallet w join credit_product p on p.id = w.product_id
        left join gr on gr.wallet_id = w.wallet_id
        where w.status <> 'dissolved' and ${s.sql}
          and (${closeDue} or gr.wallet_id is not null or w.next_cut_at = ${T})
      ),
      b as (
        select a.*, case when not a.cut_due then 0 when a.method = 'ADB' then a.sum1 else a.days * (a.p1 + case when a.compound then a.i1 else 0 end) end as basis
        from a
      ),
      c as (
        select b.*, case when b.cut_due then ${rheDivSql(`b.rate * b.basis`, `100 * b.divisor`)} + b.fixed else 0 end as interest
        from b
      ),
      bad as (
        select c.wallet_id,
          case when c.sum1 > ${MAX_CENTS} then 'sumOfDailyBalance' when c.p1 + c.i1 > ${MAX_CENTS} then 'totalDebt'
            when c.basis > ${MAX_CENTS} then 'interestBasis' else 'interest' end as field,
          case when c.sum1 > ${MAX_CENTS} then c.sum1 when c.p1 + c.i1 > ${MAX_CENTS} then c.p1 + c.i1
            when c.basis > ${MAX_CENTS} then c.basis else c.interest end as value
        from c
        where c.sum1 > ${MAX_CENTS} or c.p1 + c.i1 > ${MAX_CENTS} or c.basis > ${MAX_CENTS} or c.interest > ${MAX_CENTS}
      )
      update credit_wallet w set set_aside_at = ${T},
        set_aside_reason = format('The cycle steps due at %s would take %s to %s cents, beyond %s (2^53 - 1), the largest amount the service keeps exact: the wallet is set aside and its cycle steps stop.',
          '${t.toISOString()}', bad.field, trunc(bad.value)::text, '${MAX_CENTS}'),
        updated_at = now()
      from bad
      where bad.wallet_id = w.wallet_id and w.set_aside_at is null
      returning w.wallet_id, w.customer_id, w.set_aside_reason`,
    params: [...s.params, ...s.params],
  };
}

/**
 * Moves the stored next cut of every wallet of product `productId` (not dissolved) to the product's
 * current schedule: the first cut of firstCutDate + n × the product's `cutFrequency` strictly after the
 * wallet's `as_of` (wallet.ts `nextCutDate`, which the engine derives at every step from the product as
 * it is). Update Credit Product Settings calls it in its transaction when `cutFrequency` changes, so
 * the batches follow the new schedule from the next cut, as the engine does. One UPDATE.
 * @returns the number of wallets updated.
 */
export async function rescheduleWallets(em: EntityManager, productId: string): Promise<number> {
  const res = await em.execute(
    `update credit_wallet w set next_cut_at = ${nextCutSql("w.first_cut_date", "p.cut_frequency", "w.as_of")}, updated_at = now()
     from credit_product p where p.id = w.product_id and p.id = ? and w.status <> 'dissolved'`,
    [productId],
    "run",
  );
  return (res as { affectedRows?: number }).affectedRows ?? 0;
}

/**
 * The next instant at which a step of the scope falls due: the earliest of the next daily close
 * (00:00 UTC after a wallet's `as_of`), `next_cut_at` and a statement's unapplied `payment_due_date`,
 * over wallets not dissolved nor set aside; null when none. Three aggregates in one query.
 */
async function nextInstant(em: EntityManager, scope: CycleScope): Promise<Date | null> {
  const s = scopeSql(scope);
  const rows = await em.execute<{ t: Date | string | null }[]>(
    `select least(
        (select min(date_trunc('day', w.as_of, 'UTC') + interval '86400 seconds') from credit_wallet w where w.status <> 'dissolved' and ${s.sql}),
        (select min(w.next_cut_at) from credit_wallet w where w.status <> 'dissolved' and ${s.sql}),
        (select min(x.payment_due_date) from credit_statement x join credit_wallet w on w.wallet_id = x.wallet_id
          where x.interest_applied_at is null and w.status <> 'dissolved' and ${s.sql})
      ) as t`,
    [...s.params, ...s.params, ...s.params],
  );
  const t = rows[0]?.t;
  return t === null || t === undefined ? null : new Date(t);
}

/** Runs one step statement, retrying it (it is idempotent) when PostgreSQL chose it as a deadlock victim (outside a caller's transaction only: there the caller retries). */
async function runStep<R>(em: EntityManager, sql: string, params: string[]): Promise<R[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await em.execute<R[]>(sql, params, "all");
      return res;
    } catch (error) {
      if (attempt >= 5 || em.isInTransaction() || !(error instanceof DeadlockException || error instanceof LockWaitTimeoutException)) throw error;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
}

async function affected(em: EntityManager, sql: string, params: string[]): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await em.execute(sql, params, "run");
      return (res as { affectedRows?: number }).affectedRows ?? 0;
    } catch (error) {
      if (attempt >= 5 || em.isInTransaction() || !(error instanceof DeadlockException || error instanceof LockWaitTimeoutException)) throw error;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
}

/**
 * Runs, in time order, every scheduled step of the scope's wallets due at or before `until` (UTC):
 * at each instant the daily close (00:00 UTC), then the grace ends, then the cuts, each step one SQL
 * statement over all due wallets of the scope (engine order of simulate.ts; formulas of
 * src/domain/credit/index.ts). Dissolved wallets are skipped. Before the steps of each instant, the
 * due wallets whose steps would take an amount beyond ±(2^53 − 1) cents are set aside
 * (`setAsideSql`; docs/security.md "Money stays exact") and skipped from then on; the others run as
 * usual. With `settle` (default for a tenant scope), every wallet of the scope behind the instant
 * reached (`until` when complete) then gets `as_of` = that instant, as the engine's `advance` does.
 *
 * Rerunning, or resuming after a crash between (or inside) steps, books nothing twice (module note).
 * @returns counts of what ran, the wallets set aside, whether every step due by `until` ran
 *   (`complete`) and the instant reached; with `collect`, the notifications written in emission order.
 * @throws Error when a due instant does not move forward (a wallet whose `next_cut_at` already has a
 *   statement: an inconsistent row, never produced by these batches); database errors as thrown.
 */
export async function runDueSteps(em: EntityManager, scope: CycleScope, until: Date, options: DueStepsOptions = {}): Promise<DueStepsResult> {
  const collect = options.collect ?? false;
  const settle = options.settle ?? scope.kind === "tenant";
  const result: DueStepsResult = { instants: 0, closes: 0, graceEnds: 0, cuts: 0, events: 0, notifications: [], setAside: [], complete: false, reached: null };
  let previous = -Infinity;
  for (;;) {
    if (options.maxInstants !== undefined && result.instants >= options.maxInstants) break;
    if (result.instants > 0 && options.deadline !== undefined && Date.now() >= options.deadline) break;
    if (result.instants > 0 && options.maxEvents !== undefined && result.events >= options.maxEvents) break;
    const t = await nextInstant(em, scope);
    if (t === null || t.getTime() > until.getTime()) {
      result.complete = true;
      break;
    }
    if (t.getTime() <= previous) throw new Error(`credit cycles: the due instant ${t.toISOString()} did not move forward (inconsistent wallet row)`);
    previous = t.getTime();
    result.instants += 1;
    const guard = setAsideSql(scope, t);
    const aside = await runStep<{ wallet_id: string; customer_id: string; set_aside_reason: string }>(em, guard.sql, guard.params);
    const wallets = aside.map((row) => ({ walletId: row.wallet_id, customerId: row.customer_id, reason: row.set_aside_reason, at: t }));
    result.setAside.push(...wallets);
    if (options.logger) reportSetAside(options.logger, wallets);
    if (t.getTime() % 86_400_000 === 0) {
      const close = closeSql(scope, t);
      result.closes += await affected(em, close.sql, close.params);
    }
    for (const [kind, step] of [["grace", graceSql(scope, t, collect)], ["cut", cutSql(scope, t, collect)]] as const) {
      const rows = await runStep<EventRow>(em, step.sql, step.params);
      const counted = (type: CreditEventType): number => rows.filter((r) => r.type === type).reduce((n, r) => n + Number(r.n), 0);
      result.events += rows.reduce((n, r) => n + Number(r.n), 0);
      if (kind === "grace") result.graceEnds += counted("Interes Nominal Aplicado");
      else result.cuts += counted("Interes Nominal Calculado");
      if (collect) result.notifications.push(...rows.map(toNotification).sort((a, b) => a.walletId.localeCompare(b.walletId) || a.sequence - b.sequence));
    }
    result.reached = t;
  }
  if (result.complete) result.reached = until;
  if (settle && result.reached !== null) {
    const s = scopeSql(scope);
    const at = ts(result.reached);
    await em.execute(`update credit_wallet w set as_of = ${at}, updated_at = now() where w.as_of < ${at} and ${s.sql}`, s.params, "run");
  }
  return result;
}
