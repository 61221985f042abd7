/**
 * Statements of the cycle batches outside one step (../service.ts `runDueSteps`): the next due
 * instant of a scope, settling the wallets' clocks of a scope, and moving the stored next cuts of a
 * product's wallets (Update Credit Product Settings). Instants are UTC. Tables: `credit_wallet`,
 * `credit_statement` (../../accounts/), `credit_authorization` (../../authorizations/),
 * `credit_product` (../../products/), `credit_clock` (../../clock/) for the real-time scope.
 */
import type { PreparedStatement, Sql } from "../../../../db/sql.js";
import type { CycleScope } from "../types.js";
import { forScope, nextCutSql, releaseAtSql, scopeSql, stepValues, type ScopeKind, type StepStatements } from "./fragments.js";

/**
 * Moves the stored next cut of every wallet of product `$1` (not dissolved) to the product's current
 * schedule: the first cut of firstCutDate + n × the product's `cutFrequency` strictly after the
 * wallet's `as_of` (wallet.ts `nextCutDate`, which the engine derives at every step from the product
 * as it is). One UPDATE.
 */
export const CYCLES_RESCHEDULE: PreparedStatement = {
  name: "credit_cycles_reschedule",
  text: `update credit_wallet w set next_cut_at = ${nextCutSql("w.first_cut_date", "p.cut_frequency", "w.as_of")}, updated_at = now()
     from credit_product p where p.id = w.product_id and p.id = $1 and w.status <> 'dissolved'`,
};

/**
 * Moves the stored next cut of every wallet of product `productId` to the product's current schedule
 * ({@link CYCLES_RESCHEDULE}). Update Credit Product Settings calls it in its transaction when
 * `cutFrequency` changes, so the batches follow the new schedule from the next cut, as the engine does.
 * @returns the number of wallets updated. @throws the driver's error.
 */
export function rescheduleWallets(on: Sql, productId: string): Promise<number> {
  return on.run(CYCLES_RESCHEDULE, [productId]);
}

/** The text of the next due instant of scope `kind` (its tenant, if any, is `$1`). */
function nextInstantText(kind: ScopeKind): string {
  const scope = scopeSql(kind, 1);
  return `select least(
        (select min(date_trunc('day', w.as_of, 'UTC') + interval '86400 seconds') from credit_wallet w where w.status <> 'dissolved' and ${scope}),
        (select min(w.next_cut_at) from credit_wallet w where w.status <> 'dissolved' and ${scope}),
        (select min(x.payment_due_date) from credit_statement x join credit_wallet w on w.wallet_id = x.wallet_id
          where x.interest_applied_at is null and w.status <> 'dissolved' and ${scope}),
        (select min(${releaseAtSql("a")}) from credit_authorization a join credit_wallet w on w.wallet_id = a.wallet_id
          where a.status = 'approved' and w.status <> 'dissolved' and ${scope})
      ) as t`;
}

/**
 * The next instant at which a step of the scope falls due: the earliest of the next daily close
 * (00:00 UTC after a wallet's `as_of`), `next_cut_at`, a statement's unapplied `payment_due_date` and
 * an open hold's release instant (./fragments.ts `releaseAtSql`; docs/decisions/credit.md
 * "Authorizations"), over wallets not dissolved nor set aside; null when none. Holds expire only at
 * daily closes, which are instants already; the fourth aggregate is there for a run resumed after a
 * crash between the close of an instant and its expiry step (the wallet's `as_of` is then that
 * instant, so the next close is a day later, yet its holds are due now). Four aggregates in one query.
 * The tenant of a tenant scope is `$1`.
 */
export const CYCLES_NEXT_INSTANT: StepStatements = {
  tenant: { name: "credit_cycles_next_instant_tenant", text: nextInstantText("tenant") },
  realTime: { name: "credit_cycles_next_instant_real_time", text: nextInstantText("realTime") },
};
/** {@link CYCLES_NEXT_INSTANT} of one tenant (`$1`). */
export const CYCLES_NEXT_INSTANT_TENANT = CYCLES_NEXT_INSTANT.tenant;
/** {@link CYCLES_NEXT_INSTANT} of the real-time tenants. */
export const CYCLES_NEXT_INSTANT_REAL_TIME = CYCLES_NEXT_INSTANT.realTime;

/** The next instant (UTC) at which a step of the scope falls due ({@link CYCLES_NEXT_INSTANT}), or null when none. @throws the driver's error. */
export async function nextInstant(on: Sql, scope: CycleScope): Promise<Date | null> {
  const rows = await on.rows<{ t: Date | string | null }>(forScope(scope, CYCLES_NEXT_INSTANT), scope.kind === "tenant" ? [scope.customerId] : []);
  const t = rows[0]?.t;
  return t === null || t === undefined ? null : new Date(t);
}

/** The text of the settle of scope `kind` at `$1`. */
function settleText(kind: ScopeKind): string {
  return `update credit_wallet w set as_of = $1::timestamptz, updated_at = now() where w.as_of < $1::timestamptz and ${scopeSql(kind)}`;
}

/** Sets `as_of` = `$1` on every wallet of the scope whose clock is behind it, as the engine's `advance` does. One UPDATE. */
export const CYCLES_SETTLE: StepStatements = {
  tenant: { name: "credit_cycles_settle_tenant", text: settleText("tenant") },
  realTime: { name: "credit_cycles_settle_real_time", text: settleText("realTime") },
};
/** {@link CYCLES_SETTLE} of one tenant (`$2`). */
export const CYCLES_SETTLE_TENANT = CYCLES_SETTLE.tenant;
/** {@link CYCLES_SETTLE} of the real-time tenants. */
export const CYCLES_SETTLE_REAL_TIME = CYCLES_SETTLE.realTime;

/** Sets `as_of` = `at` (UTC) on every wallet of the scope whose clock is behind it ({@link CYCLES_SETTLE}). @throws the driver's error. */
export async function settleWallets(on: Sql, scope: CycleScope, at: Date): Promise<void> {
  await on.run(forScope(scope, CYCLES_SETTLE), stepValues(scope, at));
}
