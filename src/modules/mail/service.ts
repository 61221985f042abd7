/**
 * Outgoing email (docs/decisions/withdrawals.md "How a code reaches the user"): `enqueue` writes
 * the email to the outbox in the caller's transaction; with `SMTP_URL` set, `kick()` sends it
 * through nodemailer right after commit, and the recurring job `mail-delivery` (every
 * `OUTBOX_INTERVAL_S` on worker processes, {@link MailService.jobs}) retries what failed or what a
 * crash left pending; else the email stays in the sandbox outbox that `GET /api/v1/sandbox/mail`
 * lists. Delivery is the outbox's `mail` channel (docs/outbox.md): its claim, lease, attempt record
 * and retry policy ({@link MAIL_RETRY_POLICY}). nodemailer is imported with the first send, so a
 * process without `SMTP_URL`, or one that has nothing to send yet, does not load it. Its SQL is
 * ./repository.ts.
 */
import { randomUUID } from "node:crypto";
import type { Transporter } from "nodemailer";
import type { Logger } from "pino";
import { MAIL_LEASE_MS, MAIL_RETRY_POLICY } from "../../domain/outbox.js";
import type { JobSpec } from "../../jobs/port.js";
import type { Db, Sql } from "../../db/sql.js";
import type { AttemptResult, Claimed, OutboxChannel, OutboxTable, OutcomeKind, Prepared } from "../outbox/channel.js";
import { Outbox } from "../outbox/outbox.js";
import { insertEmail, sandboxMail, type SandboxMailView } from "./repository.js";

export { OUTBOX_EMAIL_COLUMNS, type SandboxMailView } from "./repository.js";

/** An email to send: plain text. */
export interface EmailMessage {
  customerId: string;
  to: string;
  subject: string;
  text: string;
  reference?: string;
}

/** Name of the email delivery job (retries of the outbox; the first attempt follows the commit). */
export const MAIL_JOB = "mail-delivery";
/** Text kept for a delivered email: the original (with its code) is not kept at rest. */
export const DELIVERED_TEXT = "[delivered by SMTP; the text is not kept]";
/** Text kept for an email given up on. */
export const FAILED_TEXT = "[not delivered; the text is not kept]";
/** An email claimed for one attempt. */
interface ClaimedEmail {
  to: string;
  subject: string;
  text: string;
}

/** The outbox and its delivery. */
export class MailService {
  /** The SMTP transport, created with the first send (`SMTP_URL` only). */
  private transport: Promise<Transporter> | undefined;
  private round: Promise<void> | undefined;
  private again = false;
  private readonly outbox: Outbox;
  /** The outbox channel `mail` (docs/outbox.md "Channels"). */
  readonly channel: OutboxChannel<ClaimedEmail>;

  constructor(
    /** Runs the statements of ./repository.ts and of the outbox. */
    private readonly statements: Db,
    private readonly smtpUrl: string | undefined,
    private readonly from: string,
    private readonly logger: Logger,
  ) {
    this.outbox = new Outbox(statements, logger);
    this.channel = mailChannel((email) => this.sendEmail(email));
  }

  /** Whether emails go out by SMTP (else they stay in the sandbox outbox). */
  get smtpEnabled(): boolean {
    return this.smtpUrl !== undefined;
  }

  /** The SMTP transport of `url` (`SMTP_URL`), created (and nodemailer imported) on first use. */
  private smtp(url: string): Promise<Transporter> {
    this.transport ??= import("nodemailer").then(({ default: nodemailer }) => nodemailer.createTransport(url));
    return this.transport;
  }

  /** One SMTP send of `email`. Never throws: a failure is the result's `error`. */
  private async sendEmail(email: ClaimedEmail): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const transport = await this.smtp(this.smtpUrl as string);
      await transport.sendMail({ from: this.from, to: email.to, subject: email.subject, text: email.text });
      return { httpStatus: null, error: null, durationMs: elapsed() };
    } catch (error) {
      return { httpStatus: null, error: (error as Error).message, durationMs: elapsed() };
    }
  }

  /**
   * Writes `message` to the outbox on `on`: the caller's transaction (a `Tx` of src/db/sql.ts
   * `Db.transaction`), or the pool, a statement of its own. One statement (./repository.ts `insertEmail`);
   * call {@link kick} after the commit.
   */
  async enqueue(on: Sql, message: EmailMessage): Promise<void> {
    await insertEmail(on, this.outboxValues(message));
  }

  /**
   * The values of `message`'s outbox row in {@link OUTBOX_EMAIL_COLUMNS} order, exactly the row
   * {@link enqueue} writes (status `pending` with SMTP, else `sandbox`), for a change that inserts
   * it in a statement of its own, in its transaction (src/modules/withdrawals/repository.ts).
   */
  outboxValues(message: EmailMessage): unknown[] {
    const row = this.outboxRow(message);
    return [row.id, row.customerId, row.to, row.subject, row.text, row.status, row.attempts, row.nextAttemptAt, row.lastError, row.reference, row.createdAt, row.sentAt];
  }

  /** The outbox row of `message`: new, due now, not tried yet. */
  private outboxRow(message: EmailMessage) {
    const now = new Date();
    return {
      id: randomUUID(),
      customerId: message.customerId,
      to: message.to,
      subject: message.subject,
      text: message.text,
      status: this.smtpEnabled ? ("pending" as const) : ("sandbox" as const),
      attempts: 0,
      nextAttemptAt: now,
      lastError: null,
      reference: message.reference ?? null,
      createdAt: now,
      sentAt: null,
    };
  }

  /**
   * Sends the pending emails that are due, oldest due first, through the outbox (docs/outbox.md):
   * each is claimed (`FOR UPDATE SKIP LOCKED`, then a lease of {@link MAIL_LEASE_MS} on
   * `next_attempt_at`), sent with no database connection held, and then marked: `sent`, or retried
   * later with the backoff of {@link MAIL_RETRY_POLICY}, or `failed` after its last attempt. A
   * round stops at the first failure (SMTP is likely down). Concurrent rounds never send one email
   * twice; a crash mid-send can (at least once).
   * @returns how many were sent.
   */
  async deliverPending(limit = 20): Promise<number> {
    if (this.smtpUrl === undefined) return 0;
    return (await this.outbox.round(this.channel, { limit })).succeeded;
  }

  /**
   * The recurring delivery job `mail-delivery` (src/jobs/registry.ts), one round at a time; it
   * recurs every `intervalS` (`OUTBOX_INTERVAL_S`) only with `SMTP_URL`.
   */
  jobs(intervalS: number): JobSpec[] {
    return [{ name: MAIL_JOB, run: async () => {
      await this.deliverPending();
    }, concurrency: 1, ...(this.smtpEnabled && { everyS: intervalS }) }];
  }

  /**
   * Starts a delivery round without waiting (errors are logged; the email is retried later). At
   * most one round runs per process: a kick during a round makes it run once more.
   */
  kick(): void {
    if (!this.smtpEnabled) return;
    if (this.round) {
      this.again = true;
      return;
    }
    this.round = (async () => {
      do {
        this.again = false;
        await this.deliverPending().catch((error: unknown) => this.logger.error({ err: error }, "email delivery round failed"));
      } while (this.again);
      this.round = undefined;
    })();
  }

  /** Waits for the running delivery round, if any (tests, shutdown). */
  async idle(): Promise<void> {
    await this.round;
  }

  /**
   * The sandbox outbox of a customer, newest first (at most 100), optionally for one address
   * (case-insensitive). One prepared statement, rows read as they are (no entity hydration: the
   * withdrawal walk-through reads it between initiate and confirm; docs/performance.md "What keeps the request path cheap").
   */
  listSandbox(customerId: string, to?: string): Promise<SandboxMailView[]> {
    return sandboxMail(this.statements, customerId, to);
  }

  /** Closes the SMTP transport, if one was created. */
  close(): void {
    void this.transport?.then((transport) => transport.close(), () => {});
  }
}

/** The emails' outbox table, `outbox_email`: `attempts` counts the failed attempts only; `next_attempt_at` is always set. */
export const MAIL_TABLE: OutboxTable = {
  name: "outbox_email",
  status: "status",
  attempts: "attempts",
  statuses: { succeeded: "sent", failed: "failed", disabled: "failed" },
  countsSuccess: false,
  clearsNextAttempt: false,
  nullIsDue: false,
};

/**
 * The outbox channel of the emails (docs/outbox.md "Channels"): table `outbox_email` (`attempts`
 * counts the failed attempts only; `next_attempt_at` is always set), {@link MAIL_RETRY_POLICY}, a
 * lease of {@link MAIL_LEASE_MS}, a round stops at its first failure. A delivered email keeps
 * {@link DELIVERED_TEXT} instead of its text, one given up {@link FAILED_TEXT}.
 * @param send one SMTP send.
 */
function mailChannel(send: (email: ClaimedEmail) => Promise<AttemptResult>): OutboxChannel<ClaimedEmail> {
  return {
    name: "mail",
    table: MAIL_TABLE,
    policy: { retry: MAIL_RETRY_POLICY, leaseMs: MAIL_LEASE_MS, onGone: "disable", stopRoundOnFailure: true },
    returning: ['"to"', "subject", "text"],
    async prepare(_sql: Sql, claimed: Claimed): Promise<Prepared<ClaimedEmail>> {
      const { to, subject, text } = claimed.row as unknown as ClaimedEmail;
      return { message: { to, subject, text } };
    },
    send,
    settledColumns(outcome: OutcomeKind, error: string | null): Record<string, unknown> {
      if (outcome === "succeeded") return { sent_at: new Date(), text: DELIVERED_TEXT };
      if (outcome === "failed") return { last_error: error, text: FAILED_TEXT };
      return { last_error: error };
    },
  };
}
