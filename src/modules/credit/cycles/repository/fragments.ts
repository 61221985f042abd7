/**
 * SQL building blocks of the cycle batches' statements (./close-grace.ts, ./expiry.ts, ./cut.ts,
 * ./set-aside.ts, ./schedule.ts): the instant and scope parameters, the scope condition, exact
 * half-even division, the cut schedule, `walletDetails_after`, and the columns an event insert
 * returns. Every fragment is constant SQL composed once, when the statements are built at module
 * load; no value is ever spliced in (docs/architecture.md "Reaching the database").
 *
 * Cut schedule in SQL (`nextCutSql`): cut dates are firstCutDate + n × cutFrequency; daily, weekly and
 * biweekly add whole multiples of 86 400 s; month and year add n months to the anchor as a UTC
 * `timestamp`, which PostgreSQL clamps to the month's last day exactly as schedule.ts `cutDate` does
 * (always from the anchor, never from the previous cut).
 *
 * Money: integer cents (`bigint`), rates percent (`numeric(9,4)`); every rounding is half-even on the
 * exact rational (`rheDivSql`), as decimal.js computes it in the engine. Instants are UTC.
 */
import type { PreparedStatement } from "../../../../db/sql.js";
import type { CycleScope } from "../types.js";

/** The instant T of a step statement: always its first parameter (a `Date`, bound as `timestamptz`). */
export const T = `$1::timestamptz`;

/** Which statement of a pair a scope runs: one tenant's wallets (its customer id a parameter) or the real-time tenants'. */
export type ScopeKind = "tenant" | "realTime";

/**
 * SQL condition selecting the wallets (alias `w`) of a scope whose steps run (not set aside): a
 * tenant's (its customer id the parameter `$n`), or every wallet of a tenant without a
 * `credit_clock` row (no parameter).
 */
export function scopeSql(kind: ScopeKind, n = 2): string {
  return kind === "tenant"
    ? `w.customer_id = $${n} and w.set_aside_at is null`
    : `not exists (select 1 from credit_clock c where c.customer_id = w.customer_id) and w.set_aside_at is null`;
}

/** The values of a step statement: `$1` the instant `t`, then `$2` the tenant of a tenant scope. */
export function stepValues(scope: CycleScope, t: Date): unknown[] {
  return scope.kind === "tenant" ? [t, scope.customerId] : [t];
}

/** A statement of each scope and, for the steps that write events, with or without the events returned. */
export interface StepStatements {
  tenant: PreparedStatement;
  realTime: PreparedStatement;
}

/** The statements of a step that writes events: per scope, returning the count per type, or every event written (`…Collect`). */
export interface EventStepStatements extends StepStatements {
  tenantCollect: PreparedStatement;
  realTimeCollect: PreparedStatement;
}

/** The statement of `scope` among a pair. */
export function forScope(scope: CycleScope, pair: StepStatements): PreparedStatement {
  return scope.kind === "tenant" ? pair.tenant : pair.realTime;
}

/** The statement of `scope` of an event-writing step, with the events returned when `collect`. */
export function forStep(scope: CycleScope, collect: boolean, step: EventStepStatements): PreparedStatement {
  if (scope.kind === "tenant") return collect ? step.tenantCollect : step.tenant;
  return collect ? step.realTimeCollect : step.realTime;
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
export interface SpecsSql {
  rateNominal: string;
  rateMoroso: string;
  fixedNominal: string;
  fixedMoroso: string;
  minRate: string;
  fixedMin: string;
}

/** The specs in force of a wallet row read as alias `e` (its own columns), for `walletDetails_after`. */
export const WALLET_SPECS_OF_E: SpecsSql = {
  rateNominal: "e.interest_rate_nominal",
  rateMoroso: "e.interest_rate_moroso",
  fixedNominal: "e.fixed_interest_nominal",
  fixedMoroso: "e.fixed_interest_moroso",
  minRate: "e.minimum_payment_rate",
  fixedMin: "e.fixed_minimum_payment",
};

/**
 * SQL of `walletDetails_after` (events.ts `walletDetails`: the engine's field names) from balance and
 * specs expressions, integer cents: `held` is the sum of the open holds after the event
 * (`amountHeld`, docs/decisions/credit.md "Authorizations"), and `amountOverdraft` = greatest(0,
 * principal + interest + held − limit) (payments.ts `amountOverdraft`; docs/credit-engine.md).
 */
export function detailsSql(principal: string, interest: string, limit: string, held: string, s: SpecsSql): string {
  return `jsonb_build_object(
    'principal_outstanding', (${principal})::bigint,
    'interest_accrued', (${interest})::bigint,
    'totalDebt', (${principal} + ${interest})::bigint,
    'limit', (${limit})::bigint,
    'amountOverdraft', greatest(0, ${principal} + ${interest} + ${held} - ${limit})::bigint,
    'amountHeld', (${held})::bigint,
    'interestSpecs', jsonb_build_object('interestRateNominal', (${s.rateNominal})::float8, 'interestRateMoroso', (${s.rateMoroso})::float8,
      'fixedInterestNominal', (${s.fixedNominal})::bigint, 'fixedInterestMoroso', (${s.fixedMoroso})::bigint),
    'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', (${s.minRate})::float8, 'fixedMinimumPayment', (${s.fixedMin})::bigint))`;
}

/** Columns every event insert returns when notifications are collected. */
export const EVENT_RETURNING = `returning wallet_id, card_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at`;

/** The last SELECT of a step: every event written (`collect`), or the count per type. */
export function finalSelect(collect: boolean): string {
  return collect ? `select *, 1 as n from ins` : `select type, count(*) as n from ins group by type`;
}

/** SQL of a wallet's spec at a cut (wallet `w`, product `p`): its own column `own` once an override has activated, else the product's `product`. */
export function refreshed(own: string, product: string): string {
  return `case when w.specs_overridden then w.${own} else p.${product} end`;
}

/**
 * SQL of the instant at which the engine releases the open hold `a` (a `credit_authorization` row):
 * the first daily close at or after its `expires_at` that runs after its creation, i.e.
 * greatest(the first 00:00 UTC at or after `expires_at`, the first 00:00 UTC strictly after
 * `created_at`). Every hold the engine places (TTL ≥ 1 day, authorizations.ts `authorize`,
 * `holdExpiry`) expires after its creation, so this is `expires_at`, a daily close; the second term
 * only keeps a row with `expires_at` at or before its creation to the engine's rule (an operation at
 * an instant runs after the close of that instant, so the next close releases it). Always a 00:00
 * UTC instant, so the expiry step (./expiry.ts), which runs with the close, reaches it. Also read
 * by ./schedule.ts `nextInstant`, so a run resumed after a crash between the close and the expiry
 * still releases at that instant.
 */
export function releaseAtSql(a: string): string {
  return `greatest(date_trunc('day', ${a}.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', ${a}.created_at, 'UTC') + interval '86400 seconds')`;
}
