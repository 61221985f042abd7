/**
 * SQL of the expiry step of the cycle batches (./service.ts `runDueSteps`): at a daily close (00:00
 * UTC), right after the close adds the day to `sum_of_daily_balance` and before the grace ends and the
 * cut of the same instant, every open hold whose expiry has come is released (simulate.ts
 * `runDailyClose`; docs/decisions/credit.md "Authorizations"; docs/credit-engine.md "The SQL twin").
 * One statement over every due wallet of a scope. Guarded by `status = 'approved'`, so a rerun (or a
 * run resumed after a crash) releases no hold twice.
 */
import { EVENT_RETURNING, detailsSql, finalSelect, scopeSql, ts } from "./sql.js";
import type { CycleScope } from "./types.js";

/**
 * SQL of the instant at which the engine releases the open hold `a` (a `credit_authorization` row):
 * the first daily close at or after its `expires_at` that runs after its creation, i.e.
 * greatest(the first 00:00 UTC at or after `expires_at`, the first 00:00 UTC strictly after
 * `created_at`). Every hold the engine places (TTL ≥ 1 day, authorizations.ts `authorize`,
 * `holdExpiry`) expires after its creation, so this is `expires_at`, a daily close; the second term
 * only keeps a row with `expires_at` at or before its creation to the engine's rule (an operation at
 * an instant runs after the close of that instant, so the next close releases it). Always a 00:00
 * UTC instant, so the expiry step, which runs with the close, reaches it. Also read by ./queries.ts `nextInstant`, so a run resumed after a crash
 * between the close and the expiry still releases at that instant.
 */
export function releaseAtSql(a: string): string {
  return `greatest(date_trunc('day', ${a}.expires_at - interval '1 microsecond', 'UTC') + interval '86400 seconds',
    date_trunc('day', ${a}.created_at, 'UTC') + interval '86400 seconds')`;
}

/**
 * The expiry at `t` (00:00 UTC) of every open hold (`credit_authorization` row `approved`) of the
 * scope's wallets, not dissolved nor set aside, whose release instant ({@link releaseAtSql}) is at or
 * before `t`. Per wallet, oldest first (`created_at`, then `authorization_id`, the engine's order of
 * its holds), each release k of amount a_k: held_k = held_0 − S_k (S_k the running sum of the
 * amounts released), AA_k = AA_{k−1} + min(a_k, max(0, limit − (AO + IO) − held_k − AA_{k−1}))
 * (holds.ts `settleHold`, payments.ts `reinstatedAvailable`), which unrolls to
 * AA_k = greatest(AA_0, least(AA_0 + S_k, greatest(0, limit − (AO + IO) − held_k))), computed with one
 * window sum. Writes: the authorization `expired`, `released_amount` = amount, `closed_at` = `t`; the
 * wallet's `amount_held`, `available_amount` and `sequence`; one `Autorizacion Liberada` each
 * (credit, `affectsBalance` false, amount = the hold's amount, `walletDetails_after` after that
 * release, `sequence` = the wallet's last + k). The debt and the interest do not change.
 * The events read the wallets as they were before the statement (every part of one statement sees
 * the same snapshot), joined by primary key, not the wallets UPDATE's RETURNING: a join of two
 * RETURNING results has no statistics and ran as a nested loop, quadratic in the holds released.
 * One statement: the due wallets locked first (`FOR UPDATE`, in id order: the order a capture or
 * void takes, wallet row then authorization row, so the two never deadlock), then authorizations
 * UPDATE, wallets UPDATE, events INSERT; with `collect` it returns the events written, else their
 * count per type (./sql.ts `finalSelect`).
 */
export function expirySql(scope: CycleScope, t: Date, collect = false): { sql: string; params: string[] } {
  const s = scopeSql(scope);
  const T = ts(t);
  const held = `(e.held0 - e.released)`;
  return {
    sql: `with lk as materialized (
        select w.wallet_id from credit_wallet w
        where w.status <> 'dissolved' and ${s.sql}
          and exists (select 1 from credit_authorization a where a.wallet_id = w.wallet_id and a.status = 'approved' and ${releaseAtSql("a")} <= ${T})
        order by w.wallet_id
        for update of w
      ),
      exp as (
        update credit_authorization a set status = 'expired', released_amount = a.amount, closed_at = ${T}
        from lk
        where lk.wallet_id = a.wallet_id and a.status = 'approved' and ${releaseAtSql("a")} <= ${T}
        returning a.wallet_id, a.authorization_id, a.amount, a.created_at
      ),
      run as (
        select x.wallet_id, x.amount, sum(x.amount) over win as released, row_number() over win as k
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
        select r.amount, r.released, r.k, w.wallet_id, w.customer_id, w.principal_outstanding as p0, w.interest_outstanding as i0,
          w.credit_limit as lim, w.amount_held as held0, w.sequence as seq0, w.interest_rate_nominal, w.interest_rate_moroso,
          w.fixed_interest_nominal, w.fixed_interest_moroso, w.minimum_payment_rate, w.fixed_minimum_payment
        from run r join credit_wallet w on w.wallet_id = r.wallet_id
      ),
      ins as (insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
      select gen_random_uuid(), e.wallet_id, e.customer_id, e.seq0 + e.k, 'Autorizacion Liberada', e.amount, 'credit', false,
        ${detailsSql("e.p0", "e.i0", "e.lim", held, {
          rateNominal: "e.interest_rate_nominal",
          rateMoroso: "e.interest_rate_moroso",
          fixedNominal: "e.fixed_interest_nominal",
          fixedMoroso: "e.fixed_interest_moroso",
          minRate: "e.minimum_payment_rate",
          fixedMin: "e.fixed_minimum_payment",
        })},
        ${T}
      from ev e
      ${EVENT_RETURNING})
      ${finalSelect(collect)}`,
    params: s.params,
  };
}
