/**
 * Memory-first rate-limit buckets, shared across replicas in batches (docs/decisions/
 * requests-and-validation.md "Rate limits", "Across replicas"). Each process decides on its own
 * memory (`rate-limiter-flexible`'s `RateLimiterMemory`), so a request costs no database round
 * trip and a full bucket refuses locally. Every `syncMs` milliseconds one statement adds what each
 * key consumed here since the last sync to the shared `rate_limit` row of its key (the fixed
 * window of the row: a row whose window has ended starts a new one), and each key's memory is set
 * to the shared count plus what it consumed here meanwhile, with the row's window end.
 *
 * Bound: a replica never admits more than `points` per window by its own count; across R
 * replicas, a window admits at most `points` plus what the other replicas admitted since their
 * last sync, i.e. at most (R − 1) × the requests one replica admits in `syncMs` (plus a statement's
 * time) above `points`. A failed sync keeps the counts to send again; the buckets keep working
 * from memory meanwhile.
 */
import type pg from "pg";
import type { Logger } from "pino";
import { RateLimiterMemory, type RateLimiterRes } from "rate-limiter-flexible";

/** How often a process purges windows ended more than an hour ago, milliseconds. */
const PURGE_EVERY_MS = 300_000;

/** One memory-first bucket: consume, read, and what it consumed since the last sync. */
export class SyncedLimiter {
  readonly memory: RateLimiterMemory;

  constructor(
    private readonly owner: SyncedBuckets,
    readonly name: string,
    readonly points: number,
    readonly windowS: number,
  ) {
    this.memory = new RateLimiterMemory({ points, duration: windowS, keyPrefix: name });
  }

  /**
   * Counts one request of `key` in memory.
   * @returns the bucket after it. @throws RateLimiterRes (rejects) when the bucket is full.
   */
  async consume(key: string): Promise<RateLimiterRes> {
    const res = await this.memory.consume(key);
    this.owner.counted(this, key);
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
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;
  private lastPurge = Date.now();

  /**
   * @param pool the connections of the shared table (`rate_limit`: key, points, expire in epoch ms).
   * @param syncMs milliseconds between two syncs (`RATE_LIMIT_SYNC_MS`).
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly table: string,
    private readonly syncMs: number,
    private readonly logger: Logger,
  ) {}

  /** A bucket of `points` per `windowS` seconds named `name` (the prefix of its keys). */
  limiter(name: string, points: number, windowS: number): SyncedLimiter {
    return new SyncedLimiter(this, name, points, windowS);
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

  /** One sync (never two at once): sends the pending counts and takes the shared ones back. A failure is logged and retried at the next sync. */
  sync(): Promise<void> {
    this.running ??= this.send().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async send(): Promise<void> {
    if (this.pending.size === 0) return this.purge();
    const batch = this.pending;
    this.pending = new Map();
    const keys = [...batch.keys()];
    const now = Date.now();
    try {
      const { rows } = await this.pool.query<{ key: string; points: number; expire: string }>(
        `insert into ${this.table} (key, points, expire)
           select u.k, u.p, $3::bigint + u.d from unnest($1::text[], $2::int[], $4::bigint[]) as u (k, p, d)
         on conflict (key) do update set
           points = case when ${this.table}.expire is null or ${this.table}.expire <= $3 then excluded.points else ${this.table}.points + excluded.points end,
           expire = case when ${this.table}.expire is null or ${this.table}.expire <= $3 then excluded.expire else ${this.table}.expire end
         returning key, points, expire`,
        [keys, keys.map((k) => batch.get(k)!.points), now, keys.map((k) => batch.get(k)!.limiter.windowS * 1000)],
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
    }
    await this.purge();
  }

  /** Deletes the windows ended more than an hour ago, at most once per {@link PURGE_EVERY_MS}. */
  private async purge(): Promise<void> {
    if (Date.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = Date.now();
    await this.pool.query(`delete from ${this.table} where expire < $1`, [Date.now() - 3_600_000]).catch((error: unknown) => {
      this.logger.warn({ err: error }, "rate limits: the purge of ended windows failed");
    });
  }
}
