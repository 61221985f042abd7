/**
 * Background jobs on Agenda 6 with its PostgreSQL backend, on the service's own database
 * (docs/decisions/surfaces-and-process.md "Roles and background jobs"). The job table is created by a committed migration, so every process
 * starts with `ensureSchema: false`. Agenda locks each due job with `FOR UPDATE SKIP LOCKED`, so a
 * job runs on one worker at a time; a job whose worker died is taken by another once its lock is
 * older than `lockLifetimeMs`. New jobs are announced over LISTEN/NOTIFY, so workers start them at
 * once instead of at their next poll; that LISTEN session reconnects with a backoff and logs each
 * outage once (./notification-channel.ts).
 *
 * Every process builds one scheduler: `api` processes only create and cancel jobs, `worker` and
 * `all` processes also run them ({@link JobScheduler.start}). The jobs are registered in one place,
 * src/jobs/registry.ts; the modules reach the queue through the port of src/jobs/port.ts.
 */
import { Agenda, type Job } from "agenda";
import { PostgresBackend } from "@agendajs/postgres-backend";
import pg from "pg";
import type { Logger } from "pino";
import { boundedWaitOptions, endClientsOnReadTimeout } from "../db/orm.js";
import type { ListenBackoff } from "../db/listen.js";
import { KickThrottle } from "./kick-throttle.js";
import { JobNotificationChannel } from "./notification-channel.js";
import type { JobQueue } from "./port.js";

/** Settings of a scheduler. Durations in milliseconds. */
export interface SchedulerOptions {
  databaseUrl: string;
  /** Name of this process in the job table's `last_modified_by` (host and pid by default). */
  name?: string;
  /** How long a running job stays locked to its worker (`JOB_LOCK_LIFETIME_S`). */
  lockLifetimeMs: number;
  /** How often a worker looks for due jobs besides the notifications (default 5 s). */
  processEveryMs?: number;
  /** `DATABASE_WAIT_S`: the bound of each wait on the job table (docs/operations.md "Database waits"); unbounded when absent. */
  databaseWaitS?: number;
  /** Reconnection backoff of the LISTEN session (default 0.1 s doubling to 5 s, src/db/listen.ts). */
  listenBackoff?: ListenBackoff;
  logger: Logger;
}

/** A job body: gets the job's data; a throw is logged and recorded on the job (`fail_reason`). */
export type JobBody<D> = (data: D, job: Job<D>) => Promise<void>;

/** The service's Agenda; the modules see it through {@link JobQueue} (src/jobs/port.ts). */
export class JobScheduler implements JobQueue {
  readonly agenda: Agenda;
  private readonly pool: pg.Pool;
  private readonly channel: JobNotificationChannel;
  private started = false;
  private closed = false;

  constructor(private readonly options: SchedulerOptions) {
    // One pool of ours for the job table and the announcements (the LISTEN session is the channel's
    // own): the backend's own pools have no 'error' listener, so a connection the server ends
    // (restart, failover) would crash the process.
    // Its waits are bounded like the ORM's (a request that starts or cancels a job waits no longer);
    // the job table's statements are short, and PostgreSQL's own timeouts are left at the server's.
    const bounds = options.databaseWaitS === undefined ? {} : boundedWaitOptions(options.databaseWaitS);
    this.pool = new pg.Pool({ connectionString: options.databaseUrl, max: 4, ...bounds });
    if (options.databaseWaitS !== undefined) endClientsOnReadTimeout(this.pool);
    // Once the close has begun, the server ending an idle connection (the shutdown's cut of this
    // process's connections, a stopping PostgreSQL) is part of the stop: logged at debug only.
    this.pool.on("error", (error) => options.logger[this.closed ? "debug" : "warn"]({ err: error }, "job scheduler: an idle database connection failed"));
    const backend = new PostgresBackend({ pool: this.pool, tableName: "agenda_jobs", ensureSchema: false, disableNotifications: true });
    // Agenda connects its backend once, when it is built, and is never ready if that fails (a
    // database slow or away at start): retried here until it succeeds or the scheduler closes.
    const connectOnce = backend.connect.bind(backend);
    backend.connect = () => this.connectUntilDone(connectOnce);
    this.channel = new JobNotificationChannel(this.pool, options.databaseUrl, options.logger, options.listenBackoff);
    this.agenda = new Agenda({
      backend,
      notificationChannel: this.channel,
      name: options.name ?? `pid-${process.pid}`,
      processEvery: options.processEveryMs ?? 5000,
      defaultLockLifetime: options.lockLifetimeMs,
      defaultConcurrency: 5,
      removeOnComplete: true,
    });
    // After close() an in-flight polling tick may still reach the ended pool ("Cannot use a pool
    // after calling end on the pool"): expected during a stop, so logged at debug only.
    this.agenda.on("error", (error: unknown) => {
      if (this.closed) options.logger.debug({ err: error }, "job scheduler error after close");
      else options.logger.error({ err: error }, "job scheduler error");
    });
    this.channel.on("error", (error: unknown) => {
      if (this.closed) options.logger.debug({ err: error }, "job notification channel error after close");
      else options.logger.warn({ err: error }, "job notification channel error");
    });
  }

  /**
   * Defines job `name`. Define every job on every process (api processes create jobs of names they
   * never run). A body's error is logged; Agenda records it on the job and, for recurring jobs,
   * runs it again at its next interval.
   */
  define<D>(name: string, body: JobBody<D>, settings: { concurrency?: number } = {}): void {
    this.agenda.define<D>(
      name,
      async (job) => {
        try {
          await body(job.attrs.data, job);
        } catch (error) {
          this.options.logger.error({ err: error, job: name }, "job failed");
          throw error;
        }
      },
      { ...(settings.concurrency !== undefined && { concurrency: settings.concurrency }), lockLifetime: this.options.lockLifetimeMs },
    );
  }

  /**
   * Runs `connect` until it succeeds, waiting 0.1 s doubling to 5 s between attempts (as the LISTEN
   * sessions do, src/db/listen.ts); the first failure is logged once at `warn`, the success after it
   * at `info`. Stops (resolving) once the scheduler is closed. Never throws.
   */
  private async connectUntilDone(connect: () => Promise<void>): Promise<void> {
    let failedAt: number | undefined;
    for (let waitMs = 100; !this.closed; waitMs = Math.min(waitMs * 2, 5000)) {
      try {
        await connect();
        if (failedAt !== undefined) this.options.logger.info({ downMs: Date.now() - failedAt }, "job scheduler: connected to the database");
        return;
      } catch (error) {
        if (failedAt === undefined) {
          failedAt = Date.now();
          this.options.logger.warn({ err: error }, "job scheduler: cannot connect to the database yet; retrying with a backoff");
        }
        await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
      }
    }
  }

  /** Outages of the job notification channel's LISTEN session since the start (`job_listen_outages_total`). */
  get listenOutages(): number {
    return this.channel.outages;
  }

  /** Whether the job notification channel's LISTEN session runs now (`job_listen_up`). */
  get listenUp(): boolean {
    return this.channel.up;
  }

  /** Connects (and, on worker processes, starts running due jobs). @throws when the database is unreachable. */
  async start(runJobs: boolean): Promise<void> {
    await this.agenda.ready;
    if (runJobs) {
      await this.agenda.start();
      this.started = true;
    } else {
      // Only to announce new jobs to the workers at once.
      await this.channel.connect();
    }
  }

  /** Runs job `name` once, as soon as a worker is free (announced to every worker). */
  async now(name: string, data: Record<string, unknown> = {}): Promise<void> {
    await this.agenda.now(name, data);
  }

  /** Starts of {@link kick}, coalesced per job name (./kick-throttle.ts). */
  private readonly kicks = new KickThrottle((name) => {
    if (this.closed) return;
    this.now(name).catch((error: unknown) => this.options.logger.warn({ err: error, job: name }, "could not start a job"));
  });

  /**
   * {@link now} without waiting, at most once per 100 ms (`KICK_WINDOW_MS`) per job name (the later
   * kicks of a window become one start at its end; ./kick-throttle.ts); a failure is logged (the
   * recurring round catches up).
   */
  kick(name: string): void {
    if (this.closed) return;
    this.kicks.kick(name);
  }

  /** Makes `name` run every `seconds` (one such job in the whole database, whatever the number of processes). */
  async every(name: string, seconds: number): Promise<void> {
    await this.agenda.every(`${seconds} seconds`, name, undefined, { skipImmediate: false });
  }

  /**
   * Makes `name` run every `seconds` with `data`, one job per value of `data[key]` (for example one
   * polling job per email poller). Creating it again replaces the interval.
   */
  async everyFor(name: string, seconds: number, data: Record<string, string>, key: string): Promise<void> {
    const job = this.agenda.create(name, data);
    job.unique({ [`data.${key}`]: data[key] });
    job.repeatEvery(`${seconds} seconds`, { skipImmediate: false });
    await job.save();
  }

  /** Removes every job `name` whose data holds `data` (stops a recurring job). @returns how many. */
  async cancel(name: string, data: Record<string, string>): Promise<number> {
    return this.agenda.cancel({ name, data });
  }

  /**
   * Stops taking new jobs, lets running ones finish for up to `timeoutMs` (SIGTERM), then closes
   * the connections. Jobs still running after that stay locked and are taken by another worker once
   * their lock expires.
   */
  async close(timeoutMs: number): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.kicks.stop();
    if (this.started) {
      // Agenda's drain() can miss the end of the last job when the job is removed on completion
      // (it checks one tick after 'complete', before the removal is done) and then waits for its
      // whole timeout; watching the running count ourselves ends the wait when the jobs have ended.
      const stopWaiting = new AbortController();
      const watch = setInterval(() => {
        void this.agenda.getRunningStats().then(
          (stats) => {
            if (stats.runningJobs === 0) stopWaiting.abort();
          },
          () => {},
        );
      }, 100);
      try {
        const result = await this.agenda.drain({ timeout: timeoutMs, signal: stopWaiting.signal, closeConnection: true });
        if (result.timedOut) this.options.logger.warn({ running: result.running }, "jobs still running at shutdown");
      } finally {
        clearInterval(watch);
      }
    } else {
      await this.channel.disconnect().catch(() => {});
    }
    await this.pool.end();
  }
}
