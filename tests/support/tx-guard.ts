/**
 * The rule of docs/architecture.md "Reaching the database", checked while the tests run: inside a
 * transaction every statement runs on its `Tx`; a statement sent to the pool (`Db.rows`, `Db.run`)
 * or a second transaction opened from inside one takes another connection while the first is held,
 * and under load the pool stalls (every connection held by a transaction waiting for one more).
 *
 * {@link guardTransactions} wraps `Db`'s methods once per test process: the work of a transaction
 * runs in an AsyncLocalStorage context, and a pool call made in that context throws an Error that
 * names the statement, so the request that did it fails (500) and its test with it. What runs after
 * the commit (`Tx.afterCommit` callbacks) is outside the context. Only the tests install it; the
 * service's own `Db` is unchanged.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Db, type PreparedStatement } from "../../src/db/sql.js";

const inTransaction = new AsyncLocalStorage<true>();
let installed = false;

/** The error of a pool call made inside a transaction. */
function violation(what: string): Error {
  return new Error(`${what} from inside a transaction: a second connection while the first is held (docs/architecture.md "Reaching the database")`);
}

/** Wraps `Db.prototype` (once): pool calls and nested transactions inside a transaction's work throw. */
export function guardTransactions(): void {
  if (installed) return;
  installed = true;
  const proto = Db.prototype as unknown as {
    rows: (statement: PreparedStatement, values?: readonly unknown[]) => Promise<unknown[]>;
    run: (statement: PreparedStatement, values?: readonly unknown[]) => Promise<number>;
    transaction: <R>(work: (tx: unknown) => Promise<R>) => Promise<R>;
  };
  const { rows, run, transaction } = proto;
  proto.rows = function (this: Db, statement, values) {
    if (inTransaction.getStore()) return Promise.reject(violation(`statement ${statement.name} sent to the pool`));
    return rows.call(this, statement, values);
  };
  proto.run = function (this: Db, statement, values) {
    if (inTransaction.getStore()) return Promise.reject(violation(`statement ${statement.name} sent to the pool`));
    return run.call(this, statement, values);
  };
  proto.transaction = function <R>(this: Db, work: (tx: unknown) => Promise<R>): Promise<R> {
    if (inTransaction.getStore()) return Promise.reject(violation("a transaction opened"));
    return transaction.call(this, (tx: unknown) => inTransaction.run(true, () => work(tx))) as Promise<R>;
  };
}
