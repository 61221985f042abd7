/**
 * The credit core's time (docs/decisions/provider-and-sandbox.md "Test helpers" and
 * docs/decisions/credit.md "Batches and clocks": whatever the credit core dates for a tenant uses its
 * clock while the sandbox is the provider). A tenant without a `credit_clock` row follows real time; once
 * it has set or advanced its sandbox clock, its credit core time is the row's `now`, frozen between
 * calls (./entities.ts `CreditClock`).
 *
 * Also the statements of the sandbox clock's moves (./service.ts): the clock row created, locked
 * and moved within the transaction of each chunk.
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

/** Caps every statement of transaction `tx` at `ms` milliseconds (`SET LOCAL statement_timeout`): the backstop of a move's chunk. */
export async function limitStatementTime(tx: EntityManager, ms: number): Promise<void> {
  await tx.execute(`set local statement_timeout = ${ms}`);
}

/**
 * Locks tenant `customerId`'s clock row (`select … for update`), creating it at `real` (UTC) when
 * missing (the clock "starts at the real time").
 * @returns the clock's instant (UTC).
 */
export async function lockClock(tx: EntityManager, customerId: string, real: Date): Promise<Date> {
  await tx.execute(`insert into credit_clock (customer_id, "now", updated_at) values (?, ?, ?) on conflict (customer_id) do nothing`, [customerId, real, real]);
  const [row] = await tx.execute<{ now: Date | string }[]>(`select "now" from credit_clock where customer_id = ? for update`, [customerId]);
  return new Date(row?.now ?? real);
}

/** Whether tenant `customerId` has a credit wallet (any state). */
export async function tenantHasWallets(tx: EntityManager, customerId: string): Promise<boolean> {
  const [w] = await tx.execute<{ any: boolean }[]>(`select exists (select 1 from credit_wallet where customer_id = ?) as any`, [customerId]);
  return w?.any === true;
}

/** Moves tenant `customerId`'s clock row to `now` (UTC), `updated_at` = `real` (real time). */
export async function setClock(tx: EntityManager, customerId: string, now: Date, real: Date): Promise<void> {
  await tx.execute(`update credit_clock set "now" = ?, updated_at = ? where customer_id = ?`, [now, real, customerId]);
}
