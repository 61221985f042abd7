/**
 * The transaction of a credit wallet change (docs/performance.md "Authorizations and credit
 * changes"): a transaction of src/db/sql.ts `Db`, its statements named or, behind a transaction
 * pooler, unnamed. A change claims its Idempotency-Key in it with the mechanism's own statements
 * (src/modules/idempotency/repository.ts, docs/idempotency.md), and counts the `credit_event` rows it
 * writes ({@link countEvents}) so that their delivery starts once it has committed.
 */
import type { Tx } from "../../../db/sql.js";

/** `credit_event` rows written so far by each open change (./repository/write.ts `persistStep`). */
const eventsWritten = new WeakMap<Tx, number>();

/** Records that `tx` wrote `count` more `credit_event` rows. */
export function countEvents(tx: Tx, count: number): void {
  eventsWritten.set(tx, (eventsWritten.get(tx) ?? 0) + count);
}

/** How many `credit_event` rows `tx` has written. */
export function eventsOf(tx: Tx): number {
  return eventsWritten.get(tx) ?? 0;
}
