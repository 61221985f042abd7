/**
 * The one way the service runs SQL it writes itself (docs/architecture.md "Reaching the database"):
 * a {@link Db} over the `pg` pool, and the {@link Tx} of one open transaction. Both run
 * {@link PreparedStatement}s from their owner module's repository: the text with `$1…`
 * placeholders, the values bound apart from it (never spliced in, never rewritten), named, so
 * PostgreSQL parses and plans each statement once per connection, or unnamed behind a transaction
 * pooler (`DATABASE_POOL_MODE=transaction`: docs/operations.md "PgBouncer"), where a name prepared
 * on one server connection does not exist on the next one the pooler hands out.
 *
 * Every change that runs a statement opens its transaction with {@link Db.transaction}; MikroORM's
 * unit of work keeps only the plain CRUD of single resources outside such transactions.
 */
import pg from "pg";

/** A statement: a `name` unique in the service (what PostgreSQL prepares it under) and its `text` with `$1…` placeholders. */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/** How statements are sent: `named` unless `DATABASE_POOL_MODE=transaction` (src/config.ts). */
export interface SqlOptions {
  named: boolean;
  /**
   * Background work only ({@link Db.withStatementBound}): each statement's bound, ms, instead of the
   * pool's `DATABASE_WAIT_S` (docs/operations.md "Database waits").
   */
  statementBoundMs?: number;
}

/** What runs statements: the pool ({@link Db}, each statement on its own) or an open transaction ({@link Tx}). */
export interface Sql {
  /**
   * The rows of `statement` run with `values` (bound: numbers and strings as text, dates as
   * timestamps with their offset, arrays as PostgreSQL arrays, the `pg` driver's conversions).
   * @throws the driver's error; a lost database is recognised by src/db/unavailable.ts (503).
   */
  rows<Row extends object>(statement: PreparedStatement, values?: readonly unknown[]): Promise<Row[]>;
  /** Runs `statement` with `values`. @returns how many rows it inserted, updated or deleted. @throws as {@link Sql.rows}. */
  run(statement: PreparedStatement, values?: readonly unknown[]): Promise<number>;
}

/** A `pg` query with node-postgres's per-query `query_timeout` (ms; absent from its type declarations). */
type BoundedQuery = pg.QueryConfig & { query_timeout?: number };

/** The `pg` query of `statement` with `values`: named (prepared once per connection) or unnamed; bounded by `statementBoundMs` when set. */
function queryOf(statement: PreparedStatement, values: readonly unknown[], options: SqlOptions): pg.QueryConfig {
  const query: BoundedQuery = options.named ? { name: statement.name, text: statement.text, values: values as unknown[] } : { text: statement.text, values: values as unknown[] };
  if (options.statementBoundMs !== undefined) query.query_timeout = options.statementBoundMs;
  return query;
}

/** Lifts PostgreSQL's `statement_timeout` and `lock_timeout` to `$1` ms (text) for the rest of the transaction. */
const LIFT_BOUNDS = "select set_config('statement_timeout', $1, true), set_config('lock_timeout', $1, true)";

/** One open transaction on one connection of the pool (made by {@link Db.transaction}, READ COMMITTED). */
export class Tx implements Sql {
  private readonly committed: (() => void)[] = [];

  constructor(
    private readonly client: pg.PoolClient,
    private readonly options: SqlOptions,
  ) {}

  async rows<Row extends object>(statement: PreparedStatement, values: readonly unknown[] = []): Promise<Row[]> {
    return (await this.client.query<Row>(queryOf(statement, values, this.options))).rows;
  }

  async run(statement: PreparedStatement, values: readonly unknown[] = []): Promise<number> {
    return (await this.client.query(queryOf(statement, values, this.options))).rowCount ?? 0;
  }

  /**
   * Calls `then` once this transaction has committed, never when it rolls back: for what must
   * follow a commit, such as starting an outbox delivery (docs/outbox.md). A `then` that throws
   * is not the change's failure: its error is passed to the `Db`'s `afterCommitError`.
   */
  afterCommit(then: () => void): void {
    this.committed.push(then);
  }

  /** @internal Run by {@link Db.transaction} after COMMIT. */
  takeAfterCommit(): (() => void)[] {
    return this.committed.splice(0);
  }
}

/**
 * The pool as a {@link Sql}: each statement alone (autocommit), and {@link Db.transaction} for a
 * change of more than one statement.
 */
export class Db implements Sql {
  constructor(
    private readonly pool: pg.Pool,
    private readonly options: SqlOptions,
    /** Told of an error thrown by an {@link Tx.afterCommit} callback (the change itself committed). */
    private readonly afterCommitError: (error: unknown) => void = () => {},
  ) {}

  /** Whether statements are sent named (not behind PgBouncer in transaction mode). */
  get named(): boolean {
    return this.options.named;
  }

  /**
   * The same pool for background work whose statements may outlast `DATABASE_WAIT_S` (the credit
   * cycle batches): each statement, and each statement of its transactions, may run `ms`
   * milliseconds (PostgreSQL's `statement_timeout` and `lock_timeout` set for the transaction only,
   * the driver's `query_timeout`); a statement run on its own runs in a transaction of its own
   * (docs/operations.md "Database waits").
   */
  withStatementBound(ms: number): Db {
    return new Db(this.pool, { ...this.options, statementBoundMs: ms }, this.afterCommitError);
  }

  async rows<Row extends object>(statement: PreparedStatement, values: readonly unknown[] = []): Promise<Row[]> {
    if (this.options.statementBoundMs !== undefined) return this.transaction((tx) => tx.rows<Row>(statement, values));
    return (await this.pool.query<Row>(queryOf(statement, values, this.options))).rows;
  }

  async run(statement: PreparedStatement, values: readonly unknown[] = []): Promise<number> {
    if (this.options.statementBoundMs !== undefined) return this.transaction((tx) => tx.run(statement, values));
    return (await this.pool.query(queryOf(statement, values, this.options))).rowCount ?? 0;
  }

  /**
   * Runs `work` in a transaction of its own on one connection of the pool (READ COMMITTED, the
   * server's default): `begin`, `work`, `commit`, then the transaction's {@link Tx.afterCommit}
   * callbacks; `rollback` when anything throws, which is thrown as it is. A connection whose
   * rollback failed is destroyed, not reused.
   * @throws what `work` throws; the driver's error (a lost database: src/db/unavailable.ts).
   */
  async transaction<R>(work: (tx: Tx) => Promise<R>): Promise<R> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    let tx: Tx;
    let result: R;
    try {
      await client.query("begin");
      const bound = this.options.statementBoundMs;
      if (bound !== undefined) {
        const lift: BoundedQuery = { text: LIFT_BOUNDS, values: [String(bound)], query_timeout: bound };
        await client.query(lift);
      }
      tx = new Tx(client, this.options);
      result = await work(tx);
      await client.query("commit");
    } catch (error) {
      await client.query("rollback").catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e));
      });
      throw error;
    } finally {
      client.release(broken);
    }
    for (const then of tx.takeAfterCommit()) {
      try {
        then();
      } catch (error) {
        this.afterCommitError(error);
      }
    }
    return result;
  }
}
