/**
 * Statements of the cycle batches that read or write outside one step's SQL (./service.ts
 * `runDueSteps`): the next due instant, running a step with its deadlock retry, settling the clocks
 * of a scope, and moving the stored next cuts of a product's wallets. Instants are UTC.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { DeadlockException, LockWaitTimeoutException } from "@mikro-orm/core";
import { releaseAtSql } from "./expiry-sql.js";
import { nextCutSql, scopeSql, ts } from "./sql.js";
import type { CycleScope } from "./types.js";

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
 * (00:00 UTC after a wallet's `as_of`), `next_cut_at`, a statement's unapplied `payment_due_date` and
 * an open hold's release instant (./expiry-sql.ts `releaseAtSql`; docs/decisions/credit.md
 * "Authorizations"), over wallets not dissolved nor set aside; null when none. Holds expire only at
 * daily closes, which are instants already; the fourth aggregate is there for a run resumed after a
 * crash between the close of an instant and its expiry step (the wallet's `as_of` is then that
 * instant, so the next close is a day later, yet its holds are due now). Four aggregates in one query.
 */
export async function nextInstant(em: EntityManager, scope: CycleScope): Promise<Date | null> {
  const s = scopeSql(scope);
  const rows = await em.execute<{ t: Date | string | null }[]>(
    `select least(
        (select min(date_trunc('day', w.as_of, 'UTC') + interval '86400 seconds') from credit_wallet w where w.status <> 'dissolved' and ${s.sql}),
        (select min(w.next_cut_at) from credit_wallet w where w.status <> 'dissolved' and ${s.sql}),
        (select min(x.payment_due_date) from credit_statement x join credit_wallet w on w.wallet_id = x.wallet_id
          where x.interest_applied_at is null and w.status <> 'dissolved' and ${s.sql}),
        (select min(${releaseAtSql("a")}) from credit_authorization a join credit_wallet w on w.wallet_id = a.wallet_id
          where a.status = 'approved' and w.status <> 'dissolved' and ${s.sql})
      ) as t`,
    [...s.params, ...s.params, ...s.params, ...s.params],
  );
  const t = rows[0]?.t;
  return t === null || t === undefined ? null : new Date(t);
}

/** Runs one step statement, retrying it (it is idempotent) when PostgreSQL chose it as a deadlock victim (outside a caller's transaction only: there the caller retries). */
export async function runStep<R>(em: EntityManager, sql: string, params: string[]): Promise<R[]> {
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

/** Runs one step statement that returns no rows, with the deadlock retry of {@link runStep}. @returns the rows it changed. */
export async function affected(em: EntityManager, sql: string, params: string[]): Promise<number> {
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

/** Sets `as_of` = `at` on every wallet of the scope whose clock is behind it, as the engine's `advance` does. One UPDATE. */
export async function settleWallets(em: EntityManager, scope: CycleScope, at: Date): Promise<void> {
  const s = scopeSql(scope);
  const literal = ts(at);
  await em.execute(`update credit_wallet w set as_of = ${literal}, updated_at = now() where w.as_of < ${literal} and ${s.sql}`, s.params, "run");
}
