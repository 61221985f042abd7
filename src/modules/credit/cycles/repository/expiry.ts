/**
 * Statements of the expiry step of the cycle batches (../service.ts `runDueSteps`): at a daily close
 * (00:00 UTC), right after the close adds the day to `sum_of_daily_balance` and before the grace ends
 * and the cut of the same instant, every open hold whose expiry has come is released (simulate.ts
 * `runDailyClose`; docs/decisions/credit.md "Authorizations"; docs/credit-engine.md "The SQL twin").
 * One statement over every due wallet of a scope. Guarded by `status = 'approved'`, so a rerun (or a
 * run resumed after a crash) releases no hold twice. `$1` is the instant T, `$2` the tenant of a
 * tenant scope (./fragments.ts). Tables: `credit_authorization` (../../authorizations/),
 * `credit_wallet`, `credit_event` (../../accounts/), `credit_clock` (../../clock/) for the real-time scope.
 */
import type { Sql } from "../../../../db/sql.js";
import type { CycleScope } from "../types.js";
import { EVENT_RETURNING, T, WALLET_SPECS_OF_E, detailsSql, finalSelect, forStep, releaseAtSql, scopeSql, stepValues, type EventStepStatements, type ScopeKind } from "./fragments.js";
import { stepRows, type EventRow } from "./run.js";

/** The text of the expiry over the wallets of scope `kind`, returning the events written (`collect`) or their count per type. */
function expiryText(kind: ScopeKind, collect: boolean): string {
  const scope = scopeSql(kind);
  const held = `(e.held0 - e.released)`;
  return `with lk as materialized (
        select w.wallet_id from credit_wallet w
        where w.status <> 'dissolved' and ${scope}
          and exists (select 1 from credit_authorization a where a.wallet_id = w.wallet_id and a.status = 'approved' and ${releaseAtSql("a")} <= ${T})
        order by w.wallet_id
        for update of w
      ),
      exp as (
        update credit_authorization a set status = 'expired', released_amount = a.amount, closed_at = ${T}
        from lk
        where lk.wallet_id = a.wallet_id and a.status = 'approved' and ${releaseAtSql("a")} <= ${T}
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
          as_of = greatest(w.as_of, ${T}),
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
        ${detailsSql("e.p0", "e.i0", "e.lim", held, WALLET_SPECS_OF_E)},
        e.card_id,
        ${T}
      from ev e
      ${EVENT_RETURNING})
      ${finalSelect(collect)}`;
}

/**
 * The expiry at T (`$1`, 00:00 UTC) of every open hold (`credit_authorization` row `approved`) of the
 * scope's wallets, not dissolved nor set aside, whose release instant (./fragments.ts `releaseAtSql`) is at or
 * before T. Per wallet, oldest first (`created_at`, then `authorization_id`, the engine's order of
 * its holds), each release k of amount a_k: held_k = held_0 − S_k (S_k the running sum of the
 * amounts released), AA_k = AA_{k−1} + min(a_k, max(0, limit − (AO + IO) − held_k − AA_{k−1}))
 * (holds.ts `settleHold`, payments.ts `reinstatedAvailable`), which unrolls to
 * AA_k = greatest(AA_0, least(AA_0 + S_k, greatest(0, limit − (AO + IO) − held_k))), computed with one
 * window sum. Writes: the authorization `expired`, `released_amount` = amount, `closed_at` = T; the
 * wallet's `amount_held`, `available_amount` and `sequence`; one `Autorizacion Liberada` each
 * (credit, `affectsBalance` false, amount = the hold's amount, `walletDetails_after` after that
 * release, `sequence` = the wallet's last + k). The debt and the interest do not change.
 * The events read the wallets as they were before the statement (every part of one statement sees
 * the same snapshot), joined by primary key, not the wallets UPDATE's RETURNING: a join of two
 * RETURNING results has no statistics and ran as a nested loop, quadratic in the holds released.
 * One statement: the due wallets locked first (`FOR UPDATE`, in id order: the order a capture or
 * void takes, wallet row then authorization row, so the two never deadlock), then authorizations
 * UPDATE, wallets UPDATE, events INSERT; the `…_EVENTS` statements return the events written, the others their
 * count per type (./fragments.ts `finalSelect`).
 */
export const CYCLES_EXPIRY: EventStepStatements = {
  tenant: { name: "credit_cycles_expiry_tenant", text: expiryText("tenant", false) },
  tenantCollect: { name: "credit_cycles_expiry_tenant_events", text: expiryText("tenant", true) },
  realTime: { name: "credit_cycles_expiry_real_time", text: expiryText("realTime", false) },
  realTimeCollect: { name: "credit_cycles_expiry_real_time_events", text: expiryText("realTime", true) },
};
/** {@link CYCLES_EXPIRY} of one tenant (`$2`), the count of events per type. */
export const CYCLES_EXPIRY_TENANT = CYCLES_EXPIRY.tenant;
/** {@link CYCLES_EXPIRY} of one tenant (`$2`), every event written. */
export const CYCLES_EXPIRY_TENANT_EVENTS = CYCLES_EXPIRY.tenantCollect;
/** {@link CYCLES_EXPIRY} of the real-time tenants, the count of events per type. */
export const CYCLES_EXPIRY_REAL_TIME = CYCLES_EXPIRY.realTime;
/** {@link CYCLES_EXPIRY} of the real-time tenants, every event written. */
export const CYCLES_EXPIRY_REAL_TIME_EVENTS = CYCLES_EXPIRY.realTimeCollect;

/** Runs the expiry at `t` (00:00 UTC) of the scope's due holds ({@link CYCLES_EXPIRY}). @returns the events written (`collect`) or their count per type. @throws the driver's error. */
export function expireHolds(on: Sql, scope: CycleScope, t: Date, collect = false): Promise<EventRow[]> {
  return stepRows<EventRow>(on, forStep(scope, collect, CYCLES_EXPIRY), stepValues(scope, t));
}
