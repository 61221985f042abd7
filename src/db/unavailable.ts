/**
 * The one place that decides whether an error means "the database cannot be reached right now"
 * (docs/decisions/requests-and-validation.md "When the database cannot be reached"): such errors answer 503 `SERVICE_UNAVAILABLE` with `Retry-After`
 * (src/http/errors.ts) instead of 500, and `/readyz` answers 503. A database that does not answer
 * within `DATABASE_WAIT_S` counts as unreachable too (docs/operations.md "Database waits"). Anything else stays a 500.
 */
import { ConnectionException } from "@mikro-orm/core";

/** Seconds a client should wait before retrying a request refused because the database is down (`Retry-After`). */
export const DATABASE_RETRY_AFTER_S = 2;

/** Socket errors of a connection that could not be made or was lost (Node's `code`). */
const NETWORK_CODES = new Set([
  "ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH",
  "ENOTFOUND", "EAI_AGAIN", "ENOTCONN",
]);

/**
 * PostgreSQL SQLSTATEs of a server going away or refusing connections for now: 57P01
 * admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up or shutting down),
 * 53300 too_many_connections; of a wait cut at `DATABASE_WAIT_S`: 57014 query_canceled (by
 * `statement_timeout`, or the shutdown's cancel), 55P03 lock_not_available (by `lock_timeout`);
 * of a standby reached where the leader was meant: 25006 read_only_sql_transaction (HAProxy counts
 * every node up at its start until its checks mark the standbys down, and a node being promoted or
 * demoted answers as a standby for a moment: docs/operations.md "Failover"; the service itself never
 * writes in a read-only transaction); the whole class 08 (connection exception) is matched separately.
 * PostgreSQL documentation, Appendix A "PostgreSQL Error Codes".
 */
const SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "57014", "55P03", "25006"]);

/** Messages of node-postgres and its pool for a lost or impossible connection (they carry no code). */
const MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /query read timeout/i,
  /connection timeout/i,
  /client has encountered a connection error and is not queryable/i,
  /client was closed and is not queryable/i,
  /server closed the connection unexpectedly/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

/** One error, without looking at its causes. */
function matchesOne(error: object): boolean {
  if (error instanceof ConnectionException) return true;
  const { code, sqlState, message } = error as { code?: unknown; sqlState?: unknown; message?: unknown };
  for (const c of [code, sqlState]) {
    if (typeof c !== "string") continue;
    if (NETWORK_CODES.has(c) || SQLSTATES.has(c) || /^08[0-9A-Z]{3}$/.test(c)) return true;
  }
  return typeof message === "string" && MESSAGES.some((m) => m.test(message));
}

/**
 * Whether `error` (or any error in its `cause`/`previous` chain, or of an AggregateError) says the
 * database is unreachable: refused or reset connections, a server shutting down or starting up
 * (SQLSTATE 57P01, 57P02, 57P03), connection exceptions (SQLSTATE class 08), too many connections
 * (53300), a pool that timed out waiting for a connection, "Connection terminated"; or did not
 * answer within `DATABASE_WAIT_S`: a statement cancelled (57014) or a lock wait given up (55P03),
 * the driver's "Query read timeout".
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === null || typeof current !== "object" || seen.has(current)) continue;
    seen.add(current);
    if (matchesOne(current)) return true;
    const { cause, previous, errors } = current as { cause?: unknown; previous?: unknown; errors?: unknown };
    queue.push(cause, previous);
    if (Array.isArray(errors)) queue.push(...(errors as unknown[]));
  }
  return false;
}
