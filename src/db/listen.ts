/**
 * PostgreSQL LISTEN on a session connection of its own (docs/decisions/credentials-and-tokens.md
 * "The credential cache"): delivers each NOTIFY of the channels subscribed to, tells the
 * subscribers whenever the connection goes down or comes back (notifications sent while it is
 * down are lost, so a subscriber must not trust what it kept from before), and reconnects with a
 * doubling backoff. Each outage is logged once when it starts and once when it ends, and counted
 * ({@link NotificationListener.outages}, exported as `auth_cache_listen_outages_total`). The job
 * scheduler's notification channel runs on one too (src/jobs/notification-channel.ts, with its own
 * log lines: {@link ListenMessages}; `job_listen_outages_total`).
 *
 * The connection must be a real session: `DATABASE_SESSION_URL` behind a transaction pooler
 * (docs/operations.md "PgBouncer"), where LISTEN on a pooled connection would hear nothing.
 */
import pg from "pg";
import type { Logger } from "pino";

/** What a subscriber is told: each payload on its channel, and the connection's state (`true` once LISTEN runs, `false` when it is lost). */
export interface Subscriber {
  onMessage(payload: string): void;
  onState(up: boolean): void;
}

/** Backoff of reconnections: the first wait and the longest, ms. */
export interface ListenBackoff {
  firstMs: number;
  maxMs: number;
}

const DEFAULT_BACKOFF: ListenBackoff = { firstMs: 100, maxMs: 5000 };

/** The log lines of an outage: `lost` at `warn` when it starts, `back` at `info` when it ends (with `downMs`). */
export interface ListenMessages {
  lost: string;
  back: string;
}

/** The credential cache's lines (docs/decisions/credentials-and-tokens.md "The credential cache"), the default. */
const CREDENTIAL_CACHE_MESSAGES: ListenMessages = {
  lost: "LISTEN connection lost: the credential cache is off (every request checks its credential in the database) until it is back",
  back: "LISTEN connection back: the credential cache is in use again",
};

/** A connection attempt that gets no answer (a server that hangs) is given up after this long and retried, ms. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Idle time before the first TCP keepalive probe of the session, ms. */
const KEEPALIVE_DELAY_MS = 10_000;

/** Channel names this listener accepts (quoted into `LISTEN`, so only plain identifiers). */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/** One LISTEN session shared by every subscriber of the process. Construct, {@link subscribe}, then {@link start}. */
export class NotificationListener {
  private readonly channels = new Map<string, Subscriber[]>();
  private client: pg.Client | undefined;
  private connected = false;
  private closed = false;
  private outageStartedAt: number | undefined;
  private outageCount = 0;
  private waitMs: number;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    private readonly backoff: ListenBackoff = DEFAULT_BACKOFF,
    private readonly messages: ListenMessages = CREDENTIAL_CACHE_MESSAGES,
  ) {
    this.waitMs = backoff.firstMs;
  }

  /** Whether LISTEN runs now (notifications are being received). */
  get up(): boolean {
    return this.connected;
  }

  /** Outages since the start: each loss of the connection (or a first connection that failed) counts once, however many retries it takes. */
  get outages(): number {
    return this.outageCount;
  }

  /**
   * Subscribes to `channel` (a lower-case identifier). Call before {@link start}; the subscriber
   * is told `onState(true)` once LISTEN runs. @throws Error for a channel that is not a plain identifier.
   */
  subscribe(channel: string, subscriber: Subscriber): void {
    if (!CHANNEL.test(channel)) throw new Error(`LISTEN channel ${JSON.stringify(channel)} is not a plain lower-case identifier`);
    this.channels.set(channel, [...(this.channels.get(channel) ?? []), subscriber]);
  }

  /**
   * Opens the session and runs LISTEN. Resolves after the first attempt whatever its outcome: a
   * failed attempt is logged, counted as an outage and retried in the background. Never throws.
   */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Stops listening for good: ends the session, cancels a pending retry. Never throws. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.setState(false);
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    // application_name: the process's own (PGAPPNAME, src/db/orm.ts `nameProcessConnections`), so the shutdown finds it too
    const client = new pg.Client({
      connectionString: this.url,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    this.client = client;
    const lost = (error?: unknown): void => this.lost(client, error);
    client.on("error", lost);
    client.on("end", () => lost());
    client.on("notification", (message) => {
      for (const subscriber of this.channels.get(message.channel) ?? []) subscriber.onMessage(message.payload ?? "");
    });
    try {
      await client.connect();
      for (const channel of this.channels.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      lost(error);
      await client.end().catch(() => {});
      return;
    }
    if (this.client !== client || this.closed) return;
    this.waitMs = this.backoff.firstMs;
    if (this.outageStartedAt !== undefined) {
      this.logger.info({ downMs: Date.now() - this.outageStartedAt }, this.messages.back);
      this.outageStartedAt = undefined;
    }
    this.setState(true);
  }

  /** The session `client` failed or ended: subscribers are told, the outage logged once, a reconnection scheduled. */
  private lost(client: pg.Client, error?: unknown): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    client.removeAllListeners("notification");
    client.end().catch(() => {});
    this.setState(false);
    if (this.outageStartedAt === undefined) {
      this.outageStartedAt = Date.now();
      this.outageCount += 1;
      this.logger.warn({ err: error }, this.messages.lost);
    }
    const wait = this.waitMs;
    this.waitMs = Math.min(this.backoff.maxMs, this.waitMs * 2);
    this.retry = setTimeout(() => void this.connect(), wait);
    this.retry.unref();
  }

  private setState(up: boolean): void {
    if (this.connected === up) return;
    this.connected = up;
    for (const subscribers of this.channels.values()) for (const subscriber of subscribers) subscriber.onState(up);
  }
}
