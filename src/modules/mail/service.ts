/**
 * Outgoing email (issue 4): `enqueue` writes the email to the outbox in the caller's transaction;
 * with `SMTP_URL` set, `kick()` sends it through nodemailer right after commit, and the recurring
 * Agenda job `mail-delivery` (src/app.ts, every `OUTBOX_INTERVAL_S` on worker processes) retries
 * what failed or what a crash left pending; else the email stays in the sandbox outbox that
 * `GET /api/v1/sandbox/mail` lists (decisions.md §3). nodemailer is imported with the first send,
 * so a process without `SMTP_URL`, or one that has nothing to send yet, does not load it (issue 10).
 */
import { randomUUID } from "node:crypto";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { Transporter } from "nodemailer";
import type { Logger } from "pino";
import { OutboxEmail } from "./entities.js";
import type { PreparedStatement, Statements } from "../../db/statements.js";

/** An email to send: plain text. */
export interface EmailMessage {
  customerId: string;
  to: string;
  subject: string;
  text: string;
  reference?: string;
}

/** A sandbox outbox email as `GET /sandbox/mail` shows it (schema `SandboxMail`). */
export interface SandboxMailView {
  to: string;
  subject: string;
  text: string;
  sent_at: string;
}

/** Delivery attempts before an email is marked `failed`. */
export const MAX_DELIVERY_ATTEMPTS = 10;
/** Text kept for a delivered email: the original (with its code) is not kept at rest. */
export const DELIVERED_TEXT = "[delivered by SMTP; the text is not kept]";
/** Text kept for an email given up on. */
export const FAILED_TEXT = "[not delivered; the text is not kept]";
/** How long a round may take to send one email before another round may try it (crash safety). */
export const SEND_LEASE_MS = 120_000;

/** Wait before attempt `attempts + 1`: 15 s doubling, at most 30 min (about 1.5 h over 10 attempts). */
export function retryDelayMs(attempts: number): number {
  return Math.min(15_000 * 2 ** Math.max(0, attempts - 1), 30 * 60_000);
}

/** `sent_at` as `Date.prototype.toISOString` writes it (UTC, milliseconds). */
const SENT_AT = `to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as sent_at`;

/** A customer's sandbox outbox (`$1` customer id), newest first, at most 100: Sandbox Mail's rows. */
export const SANDBOX_MAIL: PreparedStatement = {
  name: "sandbox_mail",
  text: `select "to", subject, text, ${SENT_AT} from outbox_email
          where customer_id = $1 and status = 'sandbox' order by created_at desc, id asc limit 100`,
};

/**
 * {@link SANDBOX_MAIL} for one address (`$2`), compared case-insensitively as `lower()` of both sides:
 * the form index `outbox_email_sandbox_to_index` answers in order.
 */
export const SANDBOX_MAIL_TO: PreparedStatement = {
  name: "sandbox_mail_to",
  text: `select "to", subject, text, ${SENT_AT} from outbox_email
          where customer_id = $1 and status = 'sandbox' and lower("to") = lower($2) order by created_at desc, id asc limit 100`,
};

/** The outbox and its delivery. */
export class MailService {
  /** The SMTP transport, created with the first send (`SMTP_URL` only). */
  private transport: Promise<Transporter> | undefined;
  private round: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly orm: MikroORM,
    private readonly smtpUrl: string | undefined,
    private readonly from: string,
    private readonly logger: Logger,
    /** Prepared statements of the reads ({@link listSandbox}). */
    private readonly statements: Statements,
  ) {}

  /** Whether emails go out by SMTP (else they stay in the sandbox outbox). */
  get smtpEnabled(): boolean {
    return this.smtpUrl !== undefined;
  }

  /** The SMTP transport of `url` (`SMTP_URL`), created (and nodemailer imported) on first use. */
  private smtp(url: string): Promise<Transporter> {
    this.transport ??= import("nodemailer").then(({ default: nodemailer }) => nodemailer.createTransport(url));
    return this.transport;
  }

  /** Writes `message` to the outbox in the caller's transaction. */
  enqueue(em: EntityManager, message: EmailMessage): void {
    em.create(OutboxEmail, {
      id: randomUUID(),
      customerId: message.customerId,
      to: message.to,
      subject: message.subject,
      text: message.text,
      status: this.smtpEnabled ? "pending" : "sandbox",
      attempts: 0,
      nextAttemptAt: new Date(),
      lastError: null,
      reference: message.reference ?? null,
      createdAt: new Date(),
      sentAt: null,
    });
  }

  /**
   * Sends the pending emails that are due, oldest first. Each is claimed in a short transaction
   * (`FOR UPDATE SKIP LOCKED`, then a lease on `next_attempt_at`), sent with no database connection
   * held, and then marked: `sent`, or retried later with backoff ({@link retryDelayMs}), or
   * `failed` after {@link MAX_DELIVERY_ATTEMPTS}. A round stops at the first failure (SMTP is
   * likely down). Concurrent rounds never send one email twice; a crash mid-send can (at least once).
   * @returns how many were sent.
   */
  async deliverPending(limit = 20): Promise<number> {
    const url = this.smtpUrl;
    if (url === undefined) return 0;
    let sent = 0;
    for (let i = 0; i < limit; i++) {
      const email = await this.orm.em.fork().transactional(async (tx) => {
        const [row] = await tx.execute<{ id: string }[]>(
          `select id from outbox_email where status = 'pending' and next_attempt_at <= now() order by created_at limit 1 for update skip locked`,
        );
        if (!row) return undefined;
        const claimed = await tx.findOneOrFail(OutboxEmail, { id: row.id });
        claimed.nextAttemptAt = new Date(Date.now() + SEND_LEASE_MS);
        return { id: claimed.id, to: claimed.to, subject: claimed.subject, text: claimed.text, attempts: claimed.attempts };
      });
      if (!email) break;
      try {
        const transport = await this.smtp(url);
        await transport.sendMail({ from: this.from, to: email.to, subject: email.subject, text: email.text });
        await this.orm.em.fork().nativeUpdate(OutboxEmail, { id: email.id }, { status: "sent", sentAt: new Date(), text: DELIVERED_TEXT });
        sent += 1;
      } catch (error) {
        const attempts = email.attempts + 1;
        const gaveUp = attempts >= MAX_DELIVERY_ATTEMPTS;
        await this.orm.em.fork().nativeUpdate(
          OutboxEmail,
          { id: email.id },
          {
            attempts,
            lastError: (error as Error).message,
            nextAttemptAt: new Date(Date.now() + retryDelayMs(attempts)),
            ...(gaveUp && { status: "failed" as const, text: FAILED_TEXT }),
          },
        );
        this.logger.warn({ emailId: email.id, attempts, gaveUp, err: error }, "email delivery failed");
        break;
      }
    }
    return sent;
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
   * withdrawal walk-through reads it between initiate and confirm; issue 10).
   */
  async listSandbox(customerId: string, to?: string): Promise<SandboxMailView[]> {
    return to === undefined
      ? this.statements.rows<SandboxMailView>(SANDBOX_MAIL, [customerId])
      : this.statements.rows<SandboxMailView>(SANDBOX_MAIL_TO, [customerId, to]);
  }

  /** Closes the SMTP transport, if one was created. */
  close(): void {
    void this.transport?.then((transport) => transport.close(), () => {});
  }
}
