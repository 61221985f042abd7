/**
 * The database's readiness probe (`/readyz`, src/http/ops.ts; docs/decisions/surfaces-and-process.md
 * "Where everything is served"): one trivial statement that needs a working connection and nothing
 * of the schema.
 */
import type { PreparedStatement, Sql } from "./sql.js";

/** A statement any reachable PostgreSQL answers with one row. */
export const PING: PreparedStatement = {
  name: "health_ping",
  text: `select 1 as ok`,
};

/** Resolves once the database answered {@link PING} on `sql`. @throws the driver's error when it cannot be reached. */
export async function ping(sql: Sql): Promise<void> {
  await sql.rows(PING, []);
}
