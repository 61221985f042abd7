/**
 * The credit core's time (decisions.md §3: "Everything the credit core dates takes the tenant's
 * clock while the sandbox is active"). A tenant without a `credit_clock` row follows real time; once
 * it has set or advanced its sandbox clock, its credit core time is the row's `now`, frozen between
 * calls (src/modules/credit/wallet-entities.ts `CreditClock`).
 */
import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * The tenant's current credit core instant (UTC): its sandbox clock when it has one, else `realNow`.
 * One indexed read by primary key, run on `em`'s transaction when it has one (so a transaction
 * holding locks never waits for a second pool connection). Use it inside the transaction of the
 * change so the instant and the change agree.
 * @param realNow the real time to use for tenants without a clock (injected for tests).
 */
export async function tenantNow(em: EntityManager, customerId: string, realNow: Date = new Date()): Promise<Date> {
  const rows = await em.execute<{ now: Date | string }[]>(`select "now" from "credit_clock" where "customer_id" = ?`, [customerId]);
  const row = rows[0];
  return row ? new Date(row.now) : realNow;
}

/** Whether the tenant runs on its own sandbox clock (its wallets are then skipped by the real-time jobs). */
export async function hasTestClock(em: EntityManager, customerId: string): Promise<boolean> {
  const rows = await em.execute<{ one: number }[]>(`select 1 as one from "credit_clock" where "customer_id" = ?`, [customerId]);
  return rows.length > 0;
}
