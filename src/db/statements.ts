/**
 * Hot-path SQL with bound parameters (docs/performance.md "What keeps the request path cheap"). MikroORM 7.2 formats every
 * value into the SQL text before it sends a query (`AbstractSqlConnection.execute` →
 * `platform.formatQuery`; no setting turns it off: mikro-orm/mikro-orm#8001), so every execution is
 * a new statement text, planned afresh, with literal values — an API key's hash included — in the
 * text that reaches the server (and `pg_stat_activity`). The statements here run on the ORM's own
 * `pg` pool instead, as named prepared statements: parsed and planned once per connection, values
 * sent apart from the text.
 */
import pg from "pg";
import { CompiledQuery, type Transaction } from "kysely";
import type { PreparedStatement, Sql } from "./sql.js";
import type { EntityManager } from "@mikro-orm/postgresql";


/**
 * Runs `text` (`$1…` placeholders) with bound `values` on the pool behind `em`, outside any
 * transaction of `em`: for the few statements that write a secret's hash (credentials, the master
 * key's hash), so the hash never appears in SQL text (server logs, `pg_stat_activity`).
 * @throws Error when `em` is inside a transaction (the statement would not be part of it); the
 *   driver's error otherwise.
 */
export async function boundQuery<Row extends object>(em: EntityManager, text: string, values: readonly unknown[]): Promise<Row[]> {
  if (em.isInTransaction()) throw new Error("boundQuery runs outside transactions: its statement would not be part of the open one");
  return boundRows<Row>(em, text, values);
}

/**
 * The rows of `text` (`$1…` placeholders) run with bound `values` on `em`'s connection: in `em`'s
 * transaction when it is in one (so the statement is part of it), else on the ORM's pool. For the
 * hot path's statements inside the ORM's transactions (docs/performance.md "Withdrawals"):
 * MikroORM 7.2's `em.execute` formats every value into the SQL text, and costs more CPU than the
 * statement itself; this runs it as the driver sends it, values apart from the text. Sent unnamed
 * (parsed and planned at each run, as the ORM's statements are), so it works the same behind
 * PgBouncer in transaction mode. Dates are sent as timestamps with their offset, numbers and
 * strings as text, arrays as PostgreSQL arrays (the `pg` driver's conversions).
 * @throws the driver's error (a lost database is recognised by src/db/unavailable.ts: 503); Error
 *   when the ORM's transaction context is not the Kysely transaction MikroORM 7 makes.
 */
export async function boundRows<Row extends object>(em: EntityManager, text: string, values: readonly unknown[]): Promise<Row[]> {
  // MikroORM 7's transaction context is a Kysely transaction: its executeQuery runs on the transaction's connection
  const trx = em.getTransactionContext<Transaction<unknown> | undefined>();
  if (trx) {
    if (typeof trx.executeQuery !== "function") throw new Error("the ORM's transaction context is not a Kysely transaction: boundRows cannot run in it");
    return (await trx.executeQuery<Row>(CompiledQuery.raw(text, [...values]))).rows as Row[];
  }
  const pool = (await em.getConnection().getNativeClient()) as pg.Pool;
  return (await pool.query<Row>(text, values as unknown[])).rows;
}

/** Where statements run: a {@link Sql} (the pool or a transaction of src/db/sql.ts), or an EntityManager (in its transaction, if any). */
export type Runner = EntityManager | Sql;

/**
 * The rows of `statement` with `values` on `on`: a {@link SqlRunner} runs it as it runs statements
 * (named or not), an EntityManager bound in its transaction ({@link boundRows}, unnamed).
 */
export function runRows<Row extends object>(on: Runner, statement: PreparedStatement, values: readonly unknown[]): Promise<Row[]> {
  if ("rows" in on && typeof on.rows === "function") return on.rows<Row>(statement, values);
  return boundRows<Row>(on as EntityManager, statement.text, values);
}

