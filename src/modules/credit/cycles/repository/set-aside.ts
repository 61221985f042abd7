/**
 * Statements of the guard that runs before the steps of each instant in the cycle batches
 * (../service.ts `runDueSteps`; docs/security.md "Money stays exact"): every amount a step writes
 * stays within ±(2^53 − 1) cents ({@link MAX_CENTS}), the integers a JSON reader holds exactly. One
 * UPDATE computes in `numeric` what the steps would write for each due wallet and sets aside every
 * wallet for which any amount would leave that range; every step, `nextInstant` and the settle skip
 * set-aside wallets, so one wallet never fails a batch of the others. `$1` is the instant T, `$2` the
 * tenant of a tenant scope (./fragments.ts). Tables: `credit_wallet`, `credit_statement`
 * (../../accounts/), `credit_product` (../../products/), `credit_clock` (../../clock/) for the
 * real-time scope.
 */
import type { Sql } from "../../../../db/sql.js";
import { MAX_CENTS } from "../../set-aside.js";
import type { CycleScope } from "../types.js";
import { T, forScope, refreshed, rheDivSql, scopeSql, stepValues, type ScopeKind, type StepStatements } from "./fragments.js";
import { stepRows } from "./run.js";

/** Whether T is a daily close (00:00 UTC) and wallet `w`'s clock is before it: the close's day is then added. */
const CLOSE_DUE = `(${T} = date_trunc('day', ${T}, 'UTC') and w.as_of < ${T})`;

/** The text of the guard over the wallets of scope `kind`. */
function setAsideText(kind: ScopeKind): string {
  const scope = scopeSql(kind);
  const penal = `${rheDivSql(`w.interest_rate_moroso * x.interest_basis`, `100 * x.daily_rate_divisor`)} + w.fixed_interest_moroso`;
  return `with gr as (
        select x.wallet_id,
          sum(case when x.compound then x.interest_generated else 0 end)::numeric as dp,
          sum(case when x.compound then 0 else x.interest_generated end)::numeric
            + sum(case when x.paid_in_cycle < x.minimum_payment then ${penal} else 0 end) as di
        from credit_statement x join credit_wallet w on w.wallet_id = x.wallet_id
        where x.payment_due_date = ${T} and x.interest_applied_at is null and w.status <> 'dissolved' and ${scope}
        group by x.wallet_id
      ),
      a as (
        select w.wallet_id, p.compound, p.interest_accrual_method as method, p.daily_rate_divisor as divisor,
          w.sum_of_daily_balance::numeric + case when ${CLOSE_DUE} then w.principal_outstanding::numeric + case when p.compound then w.interest_outstanding else 0 end else 0 end as sum1,
          w.principal_outstanding::numeric + coalesce(gr.dp, 0) as p1,
          w.interest_outstanding::numeric + coalesce(gr.di, 0) as i1,
          w.next_cut_at = ${T} and not exists (select 1 from credit_statement c where c.wallet_id = w.wallet_id and c.cut_date = ${T}) as cut_due,
          ((${T} at time zone 'UTC')::date - (w.cycle_start at time zone 'UTC')::date) as days,
          ${refreshed("interest_rate_nominal", "base_interest_rate")} as rate, ${refreshed("fixed_interest_nominal", "fixed_interest_amount")} as fixed
        from credit_wallet w join credit_product p on p.id = w.product_id
        left join gr on gr.wallet_id = w.wallet_id
        where w.status <> 'dissolved' and ${scope}
          and (${CLOSE_DUE} or gr.wallet_id is not null or w.next_cut_at = ${T})
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
          to_char(${T} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), bad.field, trunc(bad.value)::text, '${MAX_CENTS}'),
        updated_at = now()
      from bad
      where bad.wallet_id = w.wallet_id and w.set_aside_at is null
      returning w.wallet_id, w.customer_id, w.set_aside_reason`;
}

/**
 * Sets aside, before the steps of instant T (`$1`), every wallet of the scope due at T for which those
 * steps would write an amount beyond {@link MAX_CENTS} (docs/security.md "Money stays exact"). What
 * the steps would write is computed in `numeric`, chained as they run: the close's
 * `sumOfDailyBalance` (+ principal, + interest on compound products, when a close is due); the grace
 * ends' principal and interest (+ nominal interest, + penal interest of a default, as ./close-grace.ts),
 * whose sum `totalDebt` bounds every amount and `walletDetails_after` they write; the cut's interest
 * basis and interest (as ./cut.ts, on the balances after the grace ends); the minimum payment is at
 * most `totalDebt`. A wallet with a stored amount already beyond the range is set aside at its next
 * due instant too. One UPDATE; `set_aside_at` = T, `set_aside_reason` names the instant, the amount
 * and its value. Rows already set aside are left alone, so each wallet is returned once.
 * The expiry step (./expiry.ts; docs/decisions/credit.md "Authorizations") needs no check here:
 * a release only lowers `amount_held` and raises AA up to max(0, limit − totalDebt − held), within
 * the limit, and `amountOverdraft` = max(0, totalDebt + held − limit) stays below `totalDebt` since
 * the holds never exceed the limit (they are placed within AA).
 */
export const CYCLES_SET_ASIDE: StepStatements = {
  tenant: { name: "credit_cycles_set_aside_tenant", text: setAsideText("tenant") },
  realTime: { name: "credit_cycles_set_aside_real_time", text: setAsideText("realTime") },
};
/** {@link CYCLES_SET_ASIDE} of one tenant (`$2`). */
export const CYCLES_SET_ASIDE_TENANT = CYCLES_SET_ASIDE.tenant;
/** {@link CYCLES_SET_ASIDE} of the real-time tenants. */
export const CYCLES_SET_ASIDE_REAL_TIME = CYCLES_SET_ASIDE.realTime;

/** A wallet {@link CYCLES_SET_ASIDE} set aside: which, whose, and the reason stored. */
export interface SetAsideRow {
  wallet_id: string;
  customer_id: string;
  set_aside_reason: string;
}

/** Sets aside, before the steps of instant `t`, the scope's due wallets whose steps would leave the exact range ({@link CYCLES_SET_ASIDE}). @returns those wallets (each once). @throws the driver's error. */
export function setAsideRunaways(on: Sql, scope: CycleScope, t: Date): Promise<SetAsideRow[]> {
  return stepRows<SetAsideRow>(on, forScope(scope, CYCLES_SET_ASIDE), stepValues(scope, t));
}
