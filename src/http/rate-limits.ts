/**
 * Rate limits of both surfaces (docs/decisions/requests-and-validation.md "Rate limits"; OWASP API4:2023; the reference lists 429 on every
 * operation without thresholds). Every API replica on one database shares the buckets:
 * - memory-first (the default, `RATE_LIMIT_SYNC_MS` > 0; ./rate-limit-sync.ts): each process counts
 *   in memory and syncs with the shared `rate_limit` table in one statement per interval, so a
 *   request costs no database round trip, a full bucket refuses locally, and replicas together
 *   overshoot a bucket by at most what the others admitted in one interval;
 * - exact (`RATE_LIMIT_SYNC_MS=0`): every request counts in PostgreSQL through
 *   `rate-limiter-flexible`'s PostgreSQL store; when the database cannot be reached, a per-process
 *   memory bucket of the same size stands in (its insurance limiter).
 *
 * Buckets, each a fixed window of `points` requests per `windowS` seconds:
 * - `ip`: every request of a surface, per client address (`req.ip`; see `TRUST_PROXY`);
 * - `credential`: every authenticated request, per credential (API key, session, or user token's user);
 * - `auth-failures`: each failed guess (a secret that matches no credential), per client address;
 *   once it is full, requests from that address without a credential known to be valid answer 429
 *   until its window ends, so no secret can be guessed faster than `points` per window, while a
 *   partner's working keys and tokens from that address go on (docs/security.md "Failed
 *   authentications");
 * - `codes`: Confirm Withdrawal and Resend Code, per user.
 *
 * Every limited response carries `RateLimit-Policy` and `RateLimit` (IETF
 * draft-ietf-httpapi-ratelimit-headers) for the bucket nearest to exhaustion; a 429 also carries
 * `Retry-After`.
 */
import type { Response } from "express";
import pg from "pg";
import type { Logger } from "pino";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import { SyncedBuckets } from "./rate-limit-sync.js";
import { RATE_LIMIT_TABLE } from "../db/rate-limits.js";
import { Db } from "../db/sql.js";
import { DomainError } from "../domain/errors.js";
import type { Principal } from "../modules/identity/auth.js";

/** One bucket's size: `points` requests per fixed window of `windowS` seconds. */
export interface Quota {
  points: number;
  windowS: number;
}

/** Sizes of the buckets (src/config.ts `RATE_LIMIT_*`); `null` turns a bucket off. */
export interface RateLimitSettings {
  ip: Quota | null;
  credential: Quota | null;
  authFailures: Quota | null;
  codes: Quota | null;
}

/** Name of a bucket, as sent in the `RateLimit` headers. */
export type BucketName = "ip" | "credential" | "auth-failures" | "codes";

/** Table of the buckets (created by a committed migration; its statements: src/db/rate-limits.ts). */
export { RATE_LIMIT_TABLE };

/** What the buckets need of a limiter: count one request of a key (rejecting with a `RateLimiterRes` when full), and read a key. */
interface Limiter {
  consume(key: string): Promise<RateLimiterRes>;
  get(key: string): Promise<RateLimiterRes | null>;
}

/** A bucket: its name, size and limiter. */
interface Bucket {
  name: BucketName;
  quota: Quota;
  limiter: Limiter;
  /** Its `RateLimit-Policy` header, built once. */
  policy: string;
}

/** What the headers of a response report: the bucket with the smallest share left so far. */
interface Reported {
  bucket: Bucket;
  remaining: number;
  resetS: number;
}

/**
 * Where a response keeps its {@link Reported} bucket: a symbol property of the response itself. A
 * WeakMap keyed by every response would give the garbage collector an ephemeron entry to trace per
 * request (docs/performance.md "What keeps the request path cheap").
 */
const REPORTED = Symbol("rate-limit reported");

/** A response carrying the bucket its headers report. */
type Reporting = Response & { [REPORTED]?: Reported };

/** Whole seconds until a bucket refills (at least 1). */
const secondsOf = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/**
 * The service's rate limits on one PostgreSQL. Construct once per process; `close()` ends its pool.
 */
export class RateLimits {
  private readonly pool: pg.Pool;
  private readonly buckets: Partial<Record<BucketName, Bucket>> = {};
  /** The memory-first buckets' sync, or undefined in exact mode. */
  private readonly synced: SyncedBuckets | undefined;
  /** Set by {@link close}. */
  private closing = false;

  /**
   * @param databaseUrl the service's database (the `rate_limit` table must exist).
   * @param settings bucket sizes; a `null` bucket is never counted.
   * @param syncMs `RATE_LIMIT_SYNC_MS`: milliseconds between two syncs of the memory-first buckets;
   *   0 counts every request in PostgreSQL (exact across replicas, one round trip per bucket).
   */
  constructor(databaseUrl: string, settings: RateLimitSettings, logger: Logger, syncMs = 0) {
    // a connection that cannot be made fails within 5 s: the buckets then count in memory (never a hung request)
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 4, connectionTimeoutMillis: 5000 });
    // once closing, a connection the server ends is part of the stop (debug only)
    this.pool.on("error", (error) => logger[this.closing ? "debug" : "warn"]({ err: error }, "rate limits: an idle database connection failed"));
    // sent unnamed: `databaseUrl` may be a transaction pooler's (docs/operations.md "PgBouncer"), and the sync runs once per interval
    this.synced = syncMs > 0 ? new SyncedBuckets(new Db(this.pool, { named: false }), syncMs, logger) : undefined;
    const names: [BucketName, Quota | null][] = [
      ["ip", settings.ip],
      ["credential", settings.credential],
      ["auth-failures", settings.authFailures],
      ["codes", settings.codes],
    ];
    for (const [name, quota] of names) {
      if (!quota) continue;
      this.buckets[name] = { name, quota, limiter: this.limiterOf(name, quota), policy: `"${name}";q=${quota.points};w=${quota.windowS}` };
    }
    this.synced?.start();
  }

  /** A memory-first limiter, or in exact mode a PostgreSQL one with its memory insurance. */
  private limiterOf(name: BucketName, quota: Quota): Limiter {
    if (this.synced) return this.synced.limiter(name, quota.points, quota.windowS);
    const options = { points: quota.points, duration: quota.windowS, keyPrefix: name };
    return new RateLimiterPostgres({
      ...options,
      storeClient: this.pool,
      storeType: "pool",
      tableName: RATE_LIMIT_TABLE,
      tableCreated: true,
      clearExpiredByTimeout: name === "ip",
      insuranceLimiter: new RateLimiterMemory(options),
    });
  }

  /** Sends the memory-first buckets' pending counts (a sync now); nothing in exact mode. */
  async sync(): Promise<void> {
    await this.synced?.sync();
  }

  /** Stops the sync (sending what is pending) and ends the buckets' connection pool. */
  async close(): Promise<void> {
    this.closing = true;
    await this.synced?.stop();
    await this.pool.end();
  }

  /**
   * Admission of a request from `ip`: counts it in the `ip` bucket and, while the address's
   * `auth-failures` bucket is full, refuses it unless `exempt()` says its credential is known to be
   * valid (src/modules/identity/auth.ts `knownCredential`). Sets the rate-limit headers
   * on `res` for whichever of the two has the smaller share left: the `auth-failures` bucket is
   * read, not counted, and its remaining is `points` − failures so far (docs/security.md "Tokens
   * and rate-limit headers").
   * @throws DomainError RATE_LIMIT_EXCEEDED (429, with `retryAfterS`).
   */
  async admit(ip: string, res: Response, exempt: () => Promise<boolean> = async () => false): Promise<void> {
    const failures = this.buckets["auth-failures"];
    const [, seen] = await Promise.all([
      this.consume("ip", `ip:${ip}`, res),
      failures ? failures.limiter.get(`ip:${ip}`) : Promise.resolve(null),
    ]);
    if (!failures || !seen) return; // no failure in the current window: the bucket is untouched
    const remaining = Math.max(0, failures.quota.points - seen.consumedPoints);
    this.report(res, failures, remaining, seen.msBeforeNext);
    if (remaining === 0 && !(await exempt())) {
      throw limited(failures, seen.msBeforeNext, `Too many failed authentications from this address: retry in ${secondsOf(seen.msBeforeNext)} s.`);
    }
  }

  /**
   * Counts an authenticated request in its credential's bucket.
   * @throws DomainError RATE_LIMIT_EXCEEDED (429).
   */
  async chargeCredential(principal: Principal, res: Response): Promise<void> {
    await this.consume("credential", credentialKey(principal), res);
  }

  /**
   * Counts a Confirm Withdrawal or Resend Code call of `userId`.
   * @throws DomainError RATE_LIMIT_EXCEEDED (429).
   */
  async chargeCodes(userId: string, res: Response): Promise<void> {
    await this.consume("codes", `user:${userId.toLowerCase()}`, res);
  }

  /**
   * Counts a failed guess (a 401 for a secret that matches no credential) of `ip`; never throws (a store failure is not the
   * caller's). With `res` (headers not sent yet), the rate-limit headers of that 401 reflect the
   * failure just counted when `auth-failures` is now the bucket nearest to exhaustion.
   */
  async recordAuthFailure(ip: string, res?: Response): Promise<void> {
    const bucket = this.buckets["auth-failures"];
    if (!bucket) return;
    try {
      const outcome = await bucket.limiter.consume(`ip:${ip}`);
      if (res) this.report(res, bucket, outcome.remainingPoints, outcome.msBeforeNext);
    } catch (rejection) {
      if (res && rejection instanceof RateLimiterRes) this.report(res, bucket, 0, rejection.msBeforeNext);
    }
  }

  /** Consumes one point of bucket `name` for `key`; reports it; throws 429 when the bucket is empty. */
  private async consume(name: BucketName, key: string, res: Response): Promise<void> {
    const bucket = this.buckets[name];
    if (!bucket) return;
    try {
      const outcome = await bucket.limiter.consume(key);
      this.report(res, bucket, outcome.remainingPoints, outcome.msBeforeNext);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      this.report(res, bucket, 0, rejection.msBeforeNext);
      throw limited(bucket, rejection.msBeforeNext, `Rate limit of the ${name} bucket reached (${bucket.quota.points} requests per ${bucket.quota.windowS} s): retry in ${secondsOf(rejection.msBeforeNext)} s.`);
    }
  }

  /** Sets the `RateLimit-Policy`/`RateLimit` headers when `bucket` has the smallest share left so far. */
  private report(res: Response, bucket: Bucket, remaining: number, msBeforeNext: number): void {
    const current = (res as Reporting)[REPORTED];
    if (current && current.remaining / current.bucket.quota.points <= remaining / bucket.quota.points) return;
    const resetS = secondsOf(msBeforeNext);
    (res as Reporting)[REPORTED] = { bucket, remaining, resetS };
    if (res.headersSent) return;
    res.setHeader("RateLimit-Policy", bucket.policy);
    res.setHeader("RateLimit", `"${bucket.name}";r=${remaining};t=${resetS}`);
  }
}

/** The bucket key of a principal: its credential, or for operator access the one operator. */
export function credentialKey(principal: Principal): string {
  switch (principal.kind) {
    case "master":
    case "operator-session":
      return "operator";
    case "customer-session":
    case "owner":
      return `credential:${principal.credentialId}`;
    case "user":
      return `user:${principal.userId}`;
  }
}

/** The 429 of an empty bucket. */
function limited(bucket: Bucket, msBeforeNext: number, message: string): DomainError {
  return new DomainError("RATE_LIMIT_EXCEEDED", message, undefined, secondsOf(msBeforeNext));
}
