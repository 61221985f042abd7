/**
 * The transaction of a credit wallet change on plain SQL (docs/performance.md "Authorizations and
 * credit changes"): one connection of the ORM's own `pg` pool, `begin`, the change's statements with
 * bound parameters, `commit` (or `rollback` when anything throws). The statements are
 * {@link PreparedStatement}s, run named (parsed and planned once per connection) or, with
 * `named: false` (`DATABASE_POOL_MODE=transaction`, behind PgBouncer in transaction mode), unnamed,
 * as src/db/statements.ts `Statements` runs them: a named statement prepared on one server
 * connection does not exist on the next one the pooler hands out.
 *
 * A {@link CreditTx} is a `StatementTx` of the Idempotency-Key mechanism (src/modules/idempotency/
 * queries.ts, docs/idempotency.md): a change claims its key on it with the mechanism's own statements.
 */
import type pg from "pg";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { PreparedStatement } from "../../../db/statements.js";

/** How the change path sends its statements: `named` unless `DATABASE_POOL_MODE=transaction` (src/config.ts). */
export interface CreditSqlOptions {
  named: boolean;
}

/** The safe default: unnamed statements work behind any pooler (src/app.ts passes `named` from `DATABASE_POOL_MODE`). */
export const UNNAMED: CreditSqlOptions = { named: false };

/** One open transaction of a wallet change: its statements, and how many `credit_event` rows it wrote. */
export class CreditTx {
  /** `credit_event` rows written so far (src/modules/credit/accounts/store.ts `persistStep`), to start their delivery after commit. */
  eventsWritten = 0;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly options: CreditSqlOptions,
  ) {}

  /** The rows of `statement` run with `values` (bound, never inlined) in this transaction. @throws the driver's error. */
  async rows<Row extends object>(statement: PreparedStatement, values: readonly unknown[]): Promise<Row[]> {
    const query = this.options.named ? { name: statement.name, text: statement.text, values: values as unknown[] } : { text: statement.text, values: values as unknown[] };
    return (await this.client.query<Row>(query)).rows;
  }
}

/**
 * Runs `work` in a transaction of its own on a connection of `em`'s pool (READ COMMITTED, the
 * server's default), committing what it returns and rolling back what it throws (thrown as it is).
 * `em` must not be inside a transaction: the change would not be part of it.
 * @throws Error when `em` is in a transaction; the driver's error (a lost database: src/db/unavailable.ts).
 */
export async function inTransaction<R>(em: EntityManager, options: CreditSqlOptions, work: (tx: CreditTx) => Promise<R>): Promise<R> {
  if (em.isInTransaction()) throw new Error("a credit wallet change runs in a transaction of its own, not inside the EntityManager's");
  const pool = await em.getConnection().getNativeClient();
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("begin");
    const result = await work(new CreditTx(client, options));
    await client.query("commit");
    return result;
  } catch (error) {
    await client.query("rollback").catch((e: unknown) => {
      broken = e instanceof Error ? e : new Error(String(e));
    });
    throw error;
  } finally {
    // a connection whose rollback failed is destroyed, not reused
    client.release(broken);
  }
}
