/**
 * The start-up check of `DATABASE_POOL_MODE=session` (docs/operations.md "PgBouncer"): whether the
 * database URL keeps a named prepared statement with the connection that prepared it, as src/db/sql.ts
 * needs when it sends statements named.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

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
