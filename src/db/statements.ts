/**
 * Hot-path SQL with bound parameters (docs/performance.md "What keeps the request path cheap"). MikroORM 7.2 formats every
 * value into the SQL text before it sends a query (`AbstractSqlConnection.execute` →
 * `platform.formatQuery`; no setting turns it off: mikro-orm/mikro-orm#8001), so every execution is
 * a new statement text, planned afresh, with literal values — an API key's hash included — in the
 * text that reaches the server (and `pg_stat_activity`). The statements here run on the ORM's own
 * `pg` pool instead, as named prepared statements: parsed and planned once per connection, values
 * sent apart from the text.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { CompiledQuery, type Transaction } from "kysely";
import type { EntityManager } from "@mikro-orm/postgresql";

/** A statement prepared once per connection: a unique `name` and its `text` with `$1…` placeholders. */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/**
 * Runs {@link PreparedStatement}s on a `pg` pool (the ORM's: `orm.em.getConnection().getNativeClient()`).
 * With `named: false` (`DATABASE_POOL_MODE=transaction`, behind PgBouncer in transaction mode) they
 * are sent unnamed: parsed and planned at each run, values still bound apart from the text, since
 * a named statement prepared on one server connection does not exist on the next one the pooler
 * hands out.
 */
export class Statements {
  constructor(
    private readonly pool: pg.Pool,
    private readonly options: { named: boolean } = { named: true },
  ) {}

  /** Whether statements are sent named (not behind PgBouncer in transaction mode). */
  get named(): boolean {
    return this.options.named;
  }

  /**
   * The rows of `statement` run with `values` (bound, never inlined).
   * @throws the driver's error; a lost database is recognised by src/db/unavailable.ts (503).
   */
  async rows<Row extends object>(statement: PreparedStatement, values: readonly unknown[]): Promise<Row[]> {
    return (await this.pool.query<Row>(queryOf(statement, values, this.options.named))).rows;
  }
}

/** The `pg` query of `statement` with `values`: named (prepared once per connection) or unnamed. */
function queryOf(statement: PreparedStatement, values: readonly unknown[], named: boolean): pg.QueryConfig {
  return named ? { name: statement.name, text: statement.text, values: values as unknown[] } : { text: statement.text, values: values as unknown[] };
}

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

/** Where statements run: a plain-SQL transaction or runner ({@link SqlRunner}), or an EntityManager (in its transaction, if any). */
export interface SqlRunner {
  /** The rows of `statement` run with `values` (bound, never inlined). @throws the driver's error. */
  rows<Row extends object>(statement: PreparedStatement, values: readonly unknown[]): Promise<Row[]>;
}

/** A {@link SqlRunner} or an EntityManager. */
export type Runner = EntityManager | SqlRunner;

/**
 * The rows of `statement` with `values` on `on`: a {@link SqlRunner} runs it as it runs statements
 * (named or not), an EntityManager bound in its transaction ({@link boundRows}, unnamed).
 */
export function runRows<Row extends object>(on: Runner, statement: PreparedStatement, values: readonly unknown[]): Promise<Row[]> {
  if ("rows" in on && typeof on.rows === "function") return on.rows<Row>(statement, values);
  return boundRows<Row>(on as EntityManager, statement.text, values);
}

/** How a {@link PlainTx} sends its statements: `named` unless `DATABASE_POOL_MODE=transaction` (src/config.ts). */
export interface PlainTxOptions {
  named: boolean;
}

/**
 * One open transaction on a connection of the ORM's own `pg` pool ({@link inPlainTransaction}): its
 * statements run named (parsed and planned once per connection) or, with `named: false` (behind
 * PgBouncer in transaction mode), unnamed, as {@link Statements} runs them.
 */
export class PlainTx implements SqlRunner {
  constructor(
    private readonly client: pg.PoolClient,
    private readonly options: PlainTxOptions,
  ) {}

  async rows<Row extends object>(statement: PreparedStatement, values: readonly unknown[]): Promise<Row[]> {
    return (await this.client.query<Row>(queryOf(statement, values, this.options.named))).rows;
  }
}

/**
 * Runs `work` in a transaction of its own on a connection of `em`'s pool (READ COMMITTED, the
 * server's default): `begin`, `work` on the transaction `open` makes of the connection, `commit`
 * (or `rollback` when anything throws, thrown as it is). `em` must not be inside a transaction:
 * the change would not be part of it. A connection whose rollback failed is destroyed, not reused.
 * @throws Error when `em` is in a transaction; the driver's error (a lost database: src/db/unavailable.ts).
 */
export async function inPlainTransaction<Tx extends PlainTx, R>(em: EntityManager, open: (client: pg.PoolClient) => Tx, work: (tx: Tx) => Promise<R>): Promise<R> {
  if (em.isInTransaction()) throw new Error("a plain-SQL transaction runs on its own connection, not inside the EntityManager's transaction");
  const pool = (await em.getConnection().getNativeClient()) as pg.Pool;
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("begin");
    const result = await work(open(client));
    await client.query("commit");
    return result;
  } catch (error) {
    await client.query("rollback").catch((e: unknown) => {
      broken = e instanceof Error ? e : new Error(String(e));
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * Raised at start when `DATABASE_POOL_MODE=session` but `DATABASE_URL` goes through a pooler in
 * transaction mode; the message names the fix (docs/operations.md "PgBouncer").
 */
export class PoolModeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PoolModeError";
  }
}

/** SQLSTATEs of a named statement missing on, or already on, the server connection a pooler handed out. */
const LOST_STATEMENT = new Set(["26000", "42P05"]);

/**
 * The start-up check of `DATABASE_POOL_MODE=session` (docs/operations.md "PgBouncer"): whether a
 * named prepared statement stays with the connection that prepared it, as the hot path's
 * {@link Statements} need. Two connections to `databaseUrl`: A prepares and runs a statement under
 * a name of its own; B opens a transaction and prepares the same name; A runs it again while B's
 * transaction holds B's server connection. Directly, or behind a pooler in session mode, each
 * connection has its server session and both succeed. Behind a pooler in transaction mode (PgBouncer
 * `pool_mode = transaction`, which hands out its most recently used server connection first) B is
 * handed A's server connection, where the name exists ("prepared statement … already exists"), or
 * A is handed another one, where it does not ("… does not exist"): every named statement would
 * fail the same way, so the start is refused. A pooler that keeps track of prepared statements
 * itself (PgBouncer 1.21 and later with `max_prepared_statements`) passes. `SHOW pool_mode` cannot
 * tell instead: PgBouncer passes it to PostgreSQL, which knows no such setting.
 * @throws PoolModeError naming `DATABASE_POOL_MODE=transaction` as the fix on a mismatch; the
 *   driver's error when the database cannot be reached.
 */
export async function checkNamedStatementsSurvive(databaseUrl: string): Promise<void> {
  const statement = { name: `pool_mode_check_${randomBytes(6).toString("hex")}`, text: "select 1 as one" };
  const a = new pg.Client({ connectionString: databaseUrl });
  const b = new pg.Client({ connectionString: databaseUrl });
  try {
    await a.connect();
    await b.connect();
    await a.query(statement);
    await b.query("begin");
    try {
      await b.query(statement);
      await a.query(statement);
    } finally {
      await b.query("rollback").catch(() => {});
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === undefined || !LOST_STATEMENT.has(code)) throw error;
    throw new PoolModeError(
      `DATABASE_URL goes through a pooler in transaction mode, where named prepared statements do not stay with their connection ` +
        `(${(error as Error).message}), and DATABASE_POOL_MODE is session: set DATABASE_POOL_MODE=transaction ` +
        `(and DATABASE_SESSION_URL to a direct connection), docs/operations.md "PgBouncer"`,
    );
  } finally {
    await Promise.all([a.end().catch(() => {}), b.end().catch(() => {})]);
  }
}
