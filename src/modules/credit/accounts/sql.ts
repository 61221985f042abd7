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
import type { EntityManager } from "@mikro-orm/postgresql";
import { inPlainTransaction, PlainTx, type PlainTxOptions } from "../../../db/statements.js";

/** How the change path sends its statements: `named` unless `DATABASE_POOL_MODE=transaction` (src/config.ts). */
export type CreditSqlOptions = PlainTxOptions;

/** The safe default: unnamed statements work behind any pooler (src/app.ts passes `named` from `DATABASE_POOL_MODE`). */
export const UNNAMED: CreditSqlOptions = { named: false };

/** One open transaction of a wallet change: its statements, and how many `credit_event` rows it wrote. */
export class CreditTx extends PlainTx {
  /** `credit_event` rows written so far (src/modules/credit/accounts/store.ts `persistStep`), to start their delivery after commit. */
  eventsWritten = 0;
}

/**
 * Runs `work` in a transaction of its own on a connection of `em`'s pool (src/db/statements.ts
 * `inPlainTransaction`), committing what it returns and rolling back what it throws.
 * @throws Error when `em` is in a transaction; the driver's error (a lost database: src/db/unavailable.ts).
 */
export function inTransaction<R>(em: EntityManager, options: CreditSqlOptions, work: (tx: CreditTx) => Promise<R>): Promise<R> {
  return inPlainTransaction(em, (client) => new CreditTx(client, options), work);
}
