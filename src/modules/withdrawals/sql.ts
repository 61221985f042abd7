/**
 * Runs the withdrawals module's statements (src/modules/withdrawals/queries.ts) with bound
 * parameters on the ORM's own connections, through src/db/statements.ts `boundRows`
 * (docs/performance.md "Withdrawals").
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { boundRows as boundText, type PreparedStatement } from "../../db/statements.js";

/** The rows of `statement` run with `values` on `em`'s connection, in its transaction when it has one (src/db/statements.ts `boundRows`). */
export function boundRows<Row extends object>(em: EntityManager, statement: PreparedStatement, values: readonly unknown[]): Promise<Row[]> {
  return boundText<Row>(em, statement.text, values);
}
