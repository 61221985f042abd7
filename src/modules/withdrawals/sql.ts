/**
 * Runs the withdrawals module's statements (src/modules/withdrawals/queries.ts) with bound
 * parameters on the ORM's own connections (docs/performance.md "Withdrawals"): inside a
 * transaction of the `EntityManager`, on that transaction's connection, so the statement is part
 * of it; outside one, on the ORM's `pg` pool. MikroORM 7.2's `em.execute` formats every value into
 * the SQL text (src/db/statements.ts), and its entity reads and flushes cost far more CPU than the
 * statements themselves; these run as the driver sends them, values apart from the text.
 *
 * They are sent unnamed (parsed and planned at each run, as the ORM's inlined statements were), so
 * they work the same behind PgBouncer in transaction mode (`DATABASE_POOL_MODE=transaction`,
 * docs/operations.md "PgBouncer").
 */
import type pg from "pg";
import { CompiledQuery, type Transaction } from "kysely";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { PreparedStatement } from "../../db/statements.js";

/**
 * The rows of `statement` (its `text`, `$1…` placeholders) run with `values` on `em`'s connection:
 * in `em`'s transaction when it is in one, else on the ORM's pool. Dates are sent as timestamps
 * with their offset, numbers and strings as text, arrays as PostgreSQL arrays (the `pg` driver's
 * conversions).
 * @throws the driver's error (a lost database is recognised by src/db/unavailable.ts: 503); Error
 *   when the ORM's transaction context is not the Kysely transaction MikroORM 7 makes.
 */
export async function boundRows<Row extends object>(em: EntityManager, statement: PreparedStatement, values: readonly unknown[]): Promise<Row[]> {
  // MikroORM 7's transaction context is a Kysely transaction: its executeQuery runs on the transaction's connection
  const trx = em.getTransactionContext<Transaction<unknown> | undefined>();
  if (trx) {
    if (typeof trx.executeQuery !== "function") throw new Error("the ORM's transaction context is not a Kysely transaction: boundRows cannot run in it");
    return (await trx.executeQuery<Row>(CompiledQuery.raw(statement.text, [...values]))).rows as Row[];
  }
  const pool = (await em.getConnection().getNativeClient()) as pg.Pool;
  return (await pool.query<Row>(statement.text, values as unknown[])).rows;
}
