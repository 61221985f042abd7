/**
 * The job scheduler's notification channel (Agenda's `NotificationChannel`): new jobs are announced
 * with `pg_notify` on channel `agenda_jobs`, and heard on the LISTEN session of src/db/listen.ts
 * `NotificationListener`, the one the credential cache uses, with its reconnection: a doubling
 * backoff (0.1 s up to 5 s), each outage logged once when it starts (`warn`) and once when it ends
 * (`info`), and counted (`job_listen_outages_total`; docs/operations.md "Database waits").
 *
 * It replaces `@agendajs/postgres-backend`'s `PostgresNotificationChannel`, whose reconnection
 * restarts its backoff at every attempt and logs each one (many lines a second during an outage).
 * The payload is that channel's JSON (`jobId`, `jobName`, `nextRunAt`, `priority`, `timestamp`,
 * `source`), so processes of either kind hear each other. Job state notifications (Agenda's events
 * of other processes) are not sent: nothing of the service listens to them.
 *
 * While the session is down the channel's state is `reconnecting`: Agenda then announces nothing,
 * and the workers find new jobs at their next poll (`processEvery`).
 */
import { BaseNotificationChannel, toJobId, type JobNotification } from "agenda";
import type pg from "pg";
import type { Logger } from "pino";
import { NotificationListener, type ListenBackoff } from "../db/listen.js";
import { JOB_NOTIFY } from "./repository.js";

/** The LISTEN/NOTIFY channel of new jobs. */
export const JOB_CHANNEL = "agenda_jobs";

/** The channel's log lines (src/db/listen.ts `ListenMessages`). */
const MESSAGES = {
  lost: "job notification channel lost: workers find new jobs at their next poll until it is back",
  back: "job notification channel back: new jobs are announced again",
};

/** The JSON of a {@link JobNotification} as `PostgresNotificationChannel` sends it. */
interface Payload {
  jobId: string;
  jobName: string;
  nextRunAt: string | null;
  priority: number;
  timestamp: string;
  source?: string;
}

/** Agenda's notification channel on a {@link NotificationListener} session (LISTEN) and `pool` (NOTIFY). */
export class JobNotificationChannel extends BaseNotificationChannel {
  private readonly listener: NotificationListener;
  private started = false;

  /**
   * @param pool where the announcements are sent (`pg_notify`, one statement each).
   * @param sessionUrl the LISTEN session's database (`DATABASE_SESSION_URL`: not through a transaction pooler).
   */
  constructor(
    private readonly pool: pg.Pool,
    sessionUrl: string,
    private readonly logger: Logger,
    backoff?: ListenBackoff,
  ) {
    super({ channelName: JOB_CHANNEL, reconnect: { enabled: false } });
    this.listener = new NotificationListener(sessionUrl, logger, backoff, MESSAGES);
    this.listener.subscribe(JOB_CHANNEL, {
      onMessage: (payload) => this.received(payload),
      onState: (up) => this.setState(up ? "connected" : "reconnecting"),
    });
  }

  /** Outages of the LISTEN session since the start (`job_listen_outages_total`). */
  get outages(): number {
    return this.listener.outages;
  }

  /** Whether the LISTEN session runs now. */
  get up(): boolean {
    return this.listener.up;
  }

  /** Opens the LISTEN session (once; later calls do nothing). Never throws: a failed first attempt is retried in the background. */
  async connect(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.setState("connecting");
    await this.listener.start();
  }

  /** Closes the LISTEN session for good. Never throws. */
  async disconnect(): Promise<void> {
    await this.listener.close();
    this.handlers.clear();
    this.setState("disconnected");
  }

  /** Announces a new or changed job to every process listening. @throws the driver's error (Agenda logs it; the workers' poll catches up). */
  async publish(notification: JobNotification): Promise<void> {
    const payload: Payload = {
      jobId: String(notification.jobId),
      jobName: notification.jobName,
      nextRunAt: notification.nextRunAt?.toISOString() ?? null,
      priority: notification.priority,
      timestamp: notification.timestamp.toISOString(),
      ...(notification.source !== undefined && { source: notification.source }),
    };
    await this.pool.query({ text: JOB_NOTIFY.text, values: [JSON.stringify(payload)] }); // on channel JOB_CHANNEL
  }

  /** One payload heard: handed to Agenda's handlers; one that does not parse is logged and dropped. */
  private received(text: string): void {
    let notification: JobNotification;
    try {
      const data = JSON.parse(text) as Payload;
      notification = {
        jobId: toJobId(data.jobId),
        jobName: data.jobName,
        nextRunAt: data.nextRunAt ? new Date(data.nextRunAt) : null,
        priority: data.priority,
        timestamp: new Date(data.timestamp),
        ...(data.source !== undefined && { source: data.source }),
      };
    } catch (error) {
      this.logger.warn({ err: error }, "job notification channel: a payload that is not a job notification was dropped");
      return;
    }
    this.notifyHandlers(notification).catch((error: unknown) => this.logger.warn({ err: error }, "job notification channel: a handler failed"));
  }
}
