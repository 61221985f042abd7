/**
 * Hot-path SQL with bound parameters (docs/performance.md "What keeps the request path cheap"). MikroORM 7.2 formats every
 * value into the SQL text before it sends a query (`AbstractSqlConnection.execute` →
 * `platform.formatQuery`; no setting turns it off: mikro-orm/mikro-orm#8001), so every execution is
 * a new statement text, planned afresh, with literal values — an API key's hash included — in the
 * text that reaches the server (and `pg_stat_activity`). The statements here run on the ORM's own
 * `pg` pool instead, as named prepared statements: parsed and planned once per connection, values
 * sent apart from the text.
 */
import type pg from "pg";
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

  /**
   * The rows of `statement` run with `values` (bound, never inlined).
   * @throws the driver's error; a lost database is recognised by src/db/unavailable.ts (503).
   */
  async rows<Row extends object>(statement: PreparedStatement, values: readonly unknown[]): Promise<Row[]> {
    const query = this.options.named ? { name: statement.name, text: statement.text, values: values as unknown[] } : { text: statement.text, values: values as unknown[] };
    const result = await this.pool.query<Row>(query);
    return result.rows;
  }
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
  const pool = await em.getConnection().getNativeClient();
  return (await pool.query<Row>(text, values as unknown[])).rows;
}
