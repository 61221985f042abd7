/**
 * Memory-first rate-limit buckets, shared across replicas in batches (docs/decisions/
 * requests-and-validation.md "Rate limits", "Across replicas"); the shared table's statements are
 * src/db/rate-limits.ts's. Each process decides on its own
 * memory (`rate-limiter-flexible`'s `RateLimiterMemory`), so a request costs no database round
 * trip and a full bucket refuses locally. Every `syncMs` milliseconds one statement adds what each
 * key consumed here since the last sync to the shared `rate_limit` row of its key (the fixed
 * window of the row: a row whose window has ended starts a new one), and each key's memory is set
 * to the shared count plus what it consumed here meanwhile, with the row's window end.
 *
 * The same sync also reads every bucket that is full in its current window, keys this process
 * never counted included, so a replica learns another's lock-out or spent quota within one
 * `syncMs`.
 *
 * A replica spends at most a share of a key's bucket ({@link SYNC_SHARE} of `points`, at least 1)
 * on its own between two syncs: the request that brings the key's unsent count to the share waits
 * for a sync before it is answered, and so does any request of that key while the count is still
 * there. So a burst faster than `syncMs` cannot spend a whole window on each replica.
 *
 * Bound: a replica never admits more than `points` per window by its own count; across R
 * replicas, a window admits at most `points` + (R − 1) × the share (docs/decisions/
 * requests-and-validation.md "Across replicas"). A failed sync keeps the counts to send again; the
 * buckets keep working from memory meanwhile, and until a sync succeeds again no request waits for
 * one.
 */
import type { Logger } from "pino";
import { RateLimiterMemory, type RateLimiterRes } from "rate-limiter-flexible";
import { addPoints, fullBuckets, purgeEnded } from "../db/rate-limits.js";
import type { Sql } from "../db/sql.js";

/** How often a process purges windows ended more than an hour ago, milliseconds. */
const PURGE_EVERY_MS = 300_000;

/** The share of a bucket one replica may spend between two syncs: a quarter of its points. */
export const SYNC_SHARE = 0.25;

/** One memory-first bucket: consume, read, and what it consumed since the last sync. */
export class SyncedLimiter {
  readonly memory: RateLimiterMemory;
  /** Points of one key this replica may count before it must sync ({@link SYNC_SHARE}). */
  readonly share: number;

  constructor(
    private readonly owner: SyncedBuckets,
    readonly name: string,
    readonly points: number,
    readonly windowS: number,
  ) {
    this.memory = new RateLimiterMemory({ points, duration: windowS, keyPrefix: name });
    this.share = Math.max(1, Math.floor(points * SYNC_SHARE));
  }

  /**
   * Counts one request of `key` in memory. While this replica holds a share of unsent counts of
   * `key`, it syncs first (waiting one statement); the request that reaches the share syncs before
   * it returns, so the replica knows the others' counts before it admits more.
   * @returns the bucket after it. @throws RateLimiterRes (rejects) when the bucket is full.
   */
  async consume(key: string): Promise<RateLimiterRes> {
    // at most a few rounds: a sync that is already running carries counts from before this request
    for (let round = 0; round < 3 && this.owner.reachable && this.owner.pendingOf(this, key) >= this.share; round++) {
      if (!(await this.owner.syncNow())) break;
    }
    this.owner.counted(this, key);
    let res: RateLimiterRes;
    try {
      res = await this.memory.consume(key);
    } catch (rejection) {
      this.owner.uncounted(this, key);
      throw rejection;
    }
    if (this.owner.reachable && this.owner.pendingOf(this, key) >= this.share) await this.owner.syncNow();
    return res;
  }

  /** The bucket of `key` as this process sees it, or null when it has no count in this window. */
  get(key: string): Promise<RateLimiterRes | null> {
    return this.memory.get(key);
  }
}

/** The memory-first buckets of one process and their sync with the shared table. */
export class SyncedBuckets {
  /** Points consumed per `rate_limit` key since the last sync, with their bucket. */
  private pending = new Map<string, { limiter: SyncedLimiter; key: string; points: number }>();
  /** The counts of the sync under way, until its answer is in memory. */
  private sending: Map<string, { limiter: SyncedLimiter; key: string; points: number }> | undefined;
  /** The buckets, by name. */
  private readonly limiters = new Map<string, SyncedLimiter>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<boolean> | undefined;
  private lastPurge = Date.now();
  /**
   * Whether the last sync reached the shared table. While it did not, no request waits for a sync
   * (a database that is down must not hold requests); the periodic sync goes on and restores it.
   */
  reachable = true;

  /**
   * @param sql where the shared table's statements run (src/db/rate-limits.ts; table `rate_limit`:
   *   key, points, expire in epoch ms), each on its own.
   * @param syncMs milliseconds between two syncs (`RATE_LIMIT_SYNC_MS`).
   */
  constructor(
    private readonly sql: Sql,
    private readonly syncMs: number,
    private readonly logger: Logger,
  ) {}

  /** A bucket of `points` per `windowS` seconds named `name` (the prefix of its keys). */
  limiter(name: string, points: number, windowS: number): SyncedLimiter {
    const limiter = new SyncedLimiter(this, name, points, windowS);
    this.limiters.set(name, limiter);
    return limiter;
  }

  /** Starts the periodic sync. */
  start(): void {
    this.timer ??= setInterval(() => void this.sync(), this.syncMs);
    this.timer.unref?.();
  }

  /** Stops the periodic sync and sends what is pending, waiting at most `waitMs` (a database that is gone must not hold a shutdown). */
  async stop(waitMs = 2000): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    let timeout: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.sync(), new Promise<void>((resolve) => (timeout = setTimeout(resolve, waitMs)))]);
    clearTimeout(timeout);
  }

  /** Notes one point of `key` consumed in `limiter` (called by {@link SyncedLimiter.consume}). */
  counted(limiter: SyncedLimiter, key: string): void {
    const rowKey = `${limiter.name}:${key}`;
    const entry = this.pending.get(rowKey);
    if (entry) entry.points += 1;
    else this.pending.set(rowKey, { limiter, key, points: 1 });
  }

  /** Takes back a point {@link counted} for a request the bucket refused (when it has not been sent yet). */
  uncounted(limiter: SyncedLimiter, key: string): void {
    const rowKey = `${limiter.name}:${key}`;
    const entry = this.pending.get(rowKey);
    if (!entry) return;
    entry.points -= 1;
    if (entry.points <= 0) this.pending.delete(rowKey);
  }

  /** Points of `key` in `limiter` counted here and not yet confirmed by a sync (not sent, or being sent). */
  pendingOf(limiter: SyncedLimiter, key: string): number {
    const rowKey = `${limiter.name}:${key}`;
    return (this.pending.get(rowKey)?.points ?? 0) + (this.sending?.get(rowKey)?.points ?? 0);
  }

  /** One sync (never two at once): sends the pending counts and takes the shared ones back. A failure is logged and retried at the next sync. */
  async sync(): Promise<void> {
    await this.syncNow();
  }

  /** {@link sync}, telling whether it reached the shared table (false: the counts wait for the next one). */
  syncNow(): Promise<boolean> {
    this.running ??= this.send().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async send(): Promise<boolean> {
    if (this.pending.size === 0) {
      const learned = await this.learnFull();
      await this.purge();
      return learned;
    }
    const batch = this.pending;
    this.pending = new Map();
    this.sending = batch;
    try {
      return await this.sendBatch(batch);
    } finally {
      this.sending = undefined;
    }
  }

  /** Sends `batch` (the counts taken from `pending`) and sets each key's memory to the shared count. */
  private async sendBatch(batch: Map<string, { limiter: SyncedLimiter; key: string; points: number }>): Promise<boolean> {
    const keys = [...batch.keys()];
    const now = Date.now();
    try {
      const rows = await addPoints(
        this.sql,
        keys.map((key) => ({ key, points: batch.get(key)!.points, windowMs: batch.get(key)!.limiter.windowS * 1000 })),
        now,
      );
      for (const row of rows) {
        const sent = batch.get(row.key);
        if (!sent) continue;
        const msLeft = Number(row.expire) - Date.now();
        if (msLeft <= 0) continue;
        const since = this.pending.get(row.key)?.points ?? 0;
        await sent.limiter.memory.set(sent.key, row.points + since, msLeft / 1000);
      }
    } catch (error) {
      for (const [key, entry] of batch) {
        const later = this.pending.get(key);
        this.pending.set(key, { ...entry, points: entry.points + (later?.points ?? 0) });
      }
      this.logger.warn({ err: error, keys: keys.length }, "rate limits: the sync with the shared buckets failed; they count in memory until the next one");
      this.reachable = false;
      return false;
    }
    this.reachable = true;
    await this.learnFull();
    await this.purge();
    return true;
  }

  /**
   * Takes back every bucket another replica filled in its current window (`points` reached), keys
   * this process has not counted included: so a lock-out or a spent quota holds on every replica
   * within one sync interval, not only once this replica has counted the key itself. One statement
   * over the shared table; false (logged) when it failed.
   */
  private async learnFull(): Promise<boolean> {
    if (this.limiters.size === 0) return true;
    const limiters = [...this.limiters.values()];
    try {
      const rows = await fullBuckets(this.sql, limiters, Date.now());
      for (const row of rows) {
        const limiter = this.limiters.get(row.prefix);
        const msLeft = Number(row.expire) - Date.now();
        if (!limiter || msLeft <= 0) continue;
        const key = row.key.slice(row.prefix.length + 1);
        const known = await limiter.memory.get(key);
        if (known && known.consumedPoints >= row.points) continue;
        await limiter.memory.set(key, row.points + this.pendingOf(limiter, key), msLeft / 1000);
      }
      this.reachable = true;
      return true;
    } catch (error) {
      this.reachable = false;
      this.logger.warn({ err: error }, "rate limits: reading the buckets other replicas filled failed; retried at the next sync");
      return false;
    }
  }

  /** Deletes the windows ended more than an hour ago, at most once per {@link PURGE_EVERY_MS}. */
  private async purge(): Promise<void> {
    if (Date.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = Date.now();
    await purgeEnded(this.sql, Date.now() - 3_600_000).catch((error: unknown) => {
      this.logger.warn({ err: error }, "rate limits: the purge of ended windows failed");
    });
  }
}
