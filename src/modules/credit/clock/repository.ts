/**
 * The statements of the credit core's clock, on its table `credit_clock` (docs/decisions/provider-and-sandbox.md
 * "Test helpers" and docs/decisions/credit.md "Batches and clocks": whatever the credit core dates for a tenant
 * uses its clock while the sandbox is the provider). A tenant without a `credit_clock` row follows real
 * time; once it has set or advanced its sandbox clock, its credit core time is the row's `now`, frozen
 * between calls (./entities.ts `CreditClock`).
 *
 * Also the statements of the sandbox clock's moves (./service.ts): the clock row created, locked and
 * moved within the transaction of each chunk, whose statements are capped in time. Instants are UTC.
 */
import type { PreparedStatement, Sql, Tx } from "../../../db/sql.js";

/** The instant of tenant `$1`'s clock (no row: real time). */
export const CLOCK_NOW: PreparedStatement = {
  name: "credit_clock_now",
  text: `select "now" from credit_clock where customer_id = $1`,
};

/**
 * The tenant's current credit core instant (UTC): its sandbox clock when it has one, else `realNow`.
 * One indexed read by primary key ({@link CLOCK_NOW}) on `on`: the pool, or the change's transaction
 * (src/db/sql.ts), so a transaction holding locks never waits for a second pool connection. Use it inside the transaction
 * of the change so the instant and the change agree.
 * @param realNow the real time to use for tenants without a clock (injected for tests).
 * @throws the driver's error.
 */
export async function tenantNow(on: Sql, customerId: string, realNow: Date = new Date()): Promise<Date> {
  const [row] = await on.rows<{ now: Date | string }>(CLOCK_NOW, [customerId]);
  return row ? new Date(row.now) : realNow;
}

/** Whether tenant `$1` has a clock row. */
export const CLOCK_EXISTS: PreparedStatement = {
  name: "credit_clock_exists",
  text: `select 1 as one from credit_clock where customer_id = $1`,
};

/** Whether the tenant runs on its own sandbox clock (its wallets are then skipped by the real-time jobs) ({@link CLOCK_EXISTS}). @throws the driver's error. */
export async function hasTestClock(on: Sql, customerId: string): Promise<boolean> {
  return (await on.rows(CLOCK_EXISTS, [customerId])).length > 0;
}

/** Caps every later statement of the transaction at `$1` milliseconds (text): `statement_timeout`, local to the transaction. */
export const CLOCK_STATEMENT_TIMEOUT: PreparedStatement = {
  name: "credit_clock_statement_timeout",
  text: `select set_config('statement_timeout', $1, true)`,
};

/** Caps every statement of transaction `tx` at `ms` milliseconds ({@link CLOCK_STATEMENT_TIMEOUT}): the backstop of a move's chunk. @throws the driver's error. */
export async function limitStatementTime(tx: Tx, ms: number): Promise<void> {
  await tx.rows(CLOCK_STATEMENT_TIMEOUT, [String(Math.ceil(ms))]);
}

/** Creates tenant `$1`'s clock row at `$2` (its instant and `updated_at`), unless it exists. */
export const CLOCK_CREATE: PreparedStatement = {
  name: "credit_clock_create",
  text: `insert into credit_clock (customer_id, "now", updated_at) values ($1, $2, $2) on conflict (customer_id) do nothing`,
};

/** Locks tenant `$1`'s clock row (`for update`) and reads its instant. */
export const CLOCK_LOCK: PreparedStatement = {
  name: "credit_clock_lock",
  text: `select "now" from credit_clock where customer_id = $1 for update`,
};

/**
 * Locks tenant `customerId`'s clock row ({@link CLOCK_LOCK}), creating it at `real` (UTC) when
 * missing ({@link CLOCK_CREATE}: the clock "starts at the real time"), in transaction `tx`.
 * @returns the clock's instant (UTC). @throws the driver's error.
 */
export async function lockClock(tx: Sql, customerId: string, real: Date): Promise<Date> {
  await tx.run(CLOCK_CREATE, [customerId, real]);
  const [row] = await tx.rows<{ now: Date | string }>(CLOCK_LOCK, [customerId]);
  return new Date(row?.now ?? real);
}

/** Moves tenant `$3`'s clock row to `$1`, `updated_at` = `$2`. */
export const CLOCK_SET: PreparedStatement = {
  name: "credit_clock_set",
  text: `update credit_clock set "now" = $1, updated_at = $2 where customer_id = $3`,
};

/** Moves tenant `customerId`'s clock row to `now` (UTC), `updated_at` = `real` (real time) ({@link CLOCK_SET}). @throws the driver's error. */
export async function setClock(tx: Sql, customerId: string, now: Date, real: Date): Promise<void> {
  await tx.run(CLOCK_SET, [now, real, customerId]);
}
