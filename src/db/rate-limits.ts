/**
 * The statements of the shared rate-limit buckets (docs/decisions/requests-and-validation.md
 * "Across replicas"), on the table `rate_limit` (`key`, `points`, `expire` in epoch milliseconds).
 * The table is `rate-limiter-flexible`'s (its PostgreSQL store's layout, created by the committed
 * migration Migration20261122190000_rate_limits), one of the ORM's foreign tables
 * (src/db/orm.ts `FOREIGN_TABLES`), so its statements live here, beside the other infrastructure:
 * the memory-first sync (src/http/rate-limit-sync.ts) runs them; the exact mode's store
 * (src/http/rate-limits.ts) runs the library's own.
 */
import type { PreparedStatement, Sql } from "./sql.js";

/** Table of the buckets (created by a committed migration). */
export const RATE_LIMIT_TABLE = "rate_limit";

/**
 * Adds each key's points to its row: `$1` keys (`<bucket>:<key>`), `$2` points (integers), `$3`
 * now (epoch ms), `$4` each key's window (ms). A row whose window has ended (or a new key) starts a
 * new window ending `$3` + its window with these points; a current one adds them. Returns every
 * key's row after the change: `key`, `points`, `expire` (epoch ms, as text).
 */
export const ADD_POINTS: PreparedStatement = {
  name: "rate_limit_add_points",
  text: `insert into ${RATE_LIMIT_TABLE} (key, points, expire)
           select u.k, u.p, $3::bigint + u.d from unnest($1::text[], $2::int[], $4::bigint[]) as u (k, p, d)
         on conflict (key) do update set
           points = case when ${RATE_LIMIT_TABLE}.expire is null or ${RATE_LIMIT_TABLE}.expire <= $3 then excluded.points else ${RATE_LIMIT_TABLE}.points + excluded.points end,
           expire = case when ${RATE_LIMIT_TABLE}.expire is null or ${RATE_LIMIT_TABLE}.expire <= $3 then excluded.expire else ${RATE_LIMIT_TABLE}.expire end
         returning key, points, expire`,
};

/**
 * The rows of full buckets in their current window: `$1` bucket names (the prefixes of their
 * keys), `$2` each bucket's points, `$3` now (epoch ms). Returns `key`, `points`, `expire` (epoch
 * ms, as text) and `prefix` (the bucket's name).
 */
export const FULL_BUCKETS: PreparedStatement = {
  name: "rate_limit_full_buckets",
  text: `select r.key, r.points, r.expire, b.prefix from ${RATE_LIMIT_TABLE} r
           join unnest($1::text[], $2::int[]) as b (prefix, points) on starts_with(r.key, b.prefix || ':') and r.points >= b.points
         where r.expire > $3`,
};

/** Deletes the windows that ended before `$1` (epoch ms). */
export const PURGE_ENDED: PreparedStatement = {
  name: "rate_limit_purge_ended",
  text: `delete from ${RATE_LIMIT_TABLE} where expire < $1`,
};

/** A bucket row: its key (`<bucket>:<key>`), its points in the window and the window's end (epoch ms). */
export interface RateLimitRow {
  key: string;
  points: number;
  /** Epoch milliseconds (a `bigint`, read as text). */
  expire: string;
}

/** Points to add to one key, in a window of `windowMs`. */
export interface PointsToAdd {
  key: string;
  points: number;
  windowMs: number;
}

/** Adds `adds` in one statement ({@link ADD_POINTS}) at `nowMs`. @returns each key's row after it. @throws the driver's error. */
export function addPoints(sql: Sql, adds: readonly PointsToAdd[], nowMs: number): Promise<RateLimitRow[]> {
  return sql.rows<RateLimitRow>(ADD_POINTS, [adds.map((a) => a.key), adds.map((a) => a.points), nowMs, adds.map((a) => a.windowMs)]);
}

/**
 * The rows of the buckets that are full at `nowMs` ({@link FULL_BUCKETS}), each with its bucket's
 * name as `prefix`, for `buckets` (name and points). @throws the driver's error.
 */
export function fullBuckets(sql: Sql, buckets: readonly { name: string; points: number }[], nowMs: number): Promise<(RateLimitRow & { prefix: string })[]> {
  return sql.rows<RateLimitRow & { prefix: string }>(FULL_BUCKETS, [buckets.map((b) => b.name), buckets.map((b) => b.points), nowMs]);
}

/** Deletes the windows that ended before `beforeMs` ({@link PURGE_ENDED}). @throws the driver's error. */
export async function purgeEnded(sql: Sql, beforeMs: number): Promise<void> {
  await sql.run(PURGE_ENDED, [beforeMs]);
}
