/**
 * The email poller (reference: "Email poller", "States and transitions › Email poller";
 * docs/decisions/withdrawals.md "The email poller"): one per customer, reading withdrawal PINs from the customer's own
 * mailbox over IMAP. Each enabled poller has its own recurring Agenda job (`email-poll`, data
 * `{pollerId}`), so one poller's failure never touches another's, and a poll runs on one worker
 * at a time. A poll reads the unseen messages of INBOX, takes the withdrawal id and PIN of each
 * ({@link extractPin}), hands them to {@link WithdrawalService.applyProviderPin}, and marks the
 * message seen, whatever it carried; one bad message never stops the rest. mailparser is imported
 * with the first message read (docs/operations.md "Start and memory": it is not needed to start).
 */
import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { ImapFlow } from "imapflow";
import type { Logger } from "pino";
import type { components } from "../../../generated/types/platform.js";
import { DomainError, ValidationFailed, quote } from "../../domain/errors.js";
import { isUuid } from "../../domain/ids.js";
import { extractPin, htmlToText } from "../../domain/pins.js";
import type { JobQueue, JobSpec } from "../../jobs/port.js";
import { Credential } from "../identity/entities.js";
import type { SecretBox } from "../identity/secrets.js";
import type { IdentityService } from "../identity/service.js";
import { TargetRefused, assertPublicHost } from "../net/targets.js";
import type { WithdrawalService } from "../withdrawals/service.js";
import { EmailPoller } from "./entities.js";
import { ImapFailure, verifyLogin, withMailbox, type ImapSettings } from "./imap.js";
import { countProcessedMessage, recordPollFailure, recordPollSuccess } from "./repository.js";
import type { Sql } from "../../db/sql.js";

type Schemas = components["schemas"];
/** Body of Create Email Poller. */
export type CreatePollerInput = Schemas["CreateEmailPollerRequest"];
/** Body of Update Email Poller. */
export type UpdatePollerInput = Schemas["UpdateEmailPollerRequest"];
/** Schema `EmailPoller` (Create). */
export type PollerView = Schemas["EmailPoller"];
/** Schema `EmailPollerWithStats` (Get, Update). */
export type PollerStatsView = Schemas["EmailPollerWithStats"];

/** Settings of the poller (src/config.ts). */
export interface PollerSettings {
  /** `POLLER_INTERVAL_S`: seconds between two polls. */
  intervalS: number;
  /** `IMAP_TIMEOUT_S`. */
  timeoutS: number;
  /** `ALLOW_PRIVATE_NETWORK_TARGETS`. */
  allowPrivate: boolean;
}

/** Name of the polling job (one recurring job per enabled poller, data `{pollerId}`). */
export const POLL_JOB = "email-poll";
/** Messages read per poll at most; the rest wait for the next poll. */
const MESSAGES_PER_POLL = 50;
/** The largest message read, bytes; bigger ones are marked seen and counted, not parsed. */
const MAX_MESSAGE_BYTES = 1024 * 1024;

const passwordContext = (pollerId: string) => `imap-password:${pollerId}`;

/** What one poll did. */
export interface PollOutcome {
  /** Messages read (and marked seen). */
  processed: number;
  /** PINs applied to pending withdrawals. */
  pinsApplied: number;
}

/** Email pollers of customers and their polling job. */
export class EmailPollerService {
  constructor(
    private readonly orm: MikroORM,
    private readonly box: SecretBox,
    private readonly identity: IdentityService,
    private readonly scheduler: JobQueue,
    private readonly withdrawals: WithdrawalService,
    private readonly settings: PollerSettings,
    private readonly logger: Logger,
    /** Where the poll's statistics are recorded (./repository.ts): the pool, each statement on its own. */
    private readonly statements: Sql,
  ) {}

  /** The polling job for the registry (src/jobs/registry.ts): one run polls the mailbox of the poller in its data (`{ pollerId }`). */
  jobs(): JobSpec[] {
    return [{ name: POLL_JOB, run: async (data) => void (await this.poll(String(data.pollerId))) }];
  }

  /** Makes sure every enabled poller has its recurring job at the configured interval (worker start). */
  async syncJobs(): Promise<void> {
    const enabled = await this.orm.em.fork().find(EmailPoller, { enabled: true }, { fields: ["pollerId"] });
    for (const p of enabled) await this.startJob(p.pollerId);
  }

  // --- configuration ---------------------------------------------------------------------------

  /**
   * Create Email Poller: one per customer, enabled, its job started. The mailbox address and IMAP
   * login are the `user_email` of the customer's oldest active owner credential (any `email` in the
   * body is ignored); the password is sealed at rest.
   * @throws DomainError CUSTOMER_NOT_FOUND (404: customer, or its owner email), POLLER_ALREADY_EXISTS
   *   (409); ValidationFailed (422, `imap.host` resolving to a private address, docs/decisions/notifications.md "The SSRF guard").
   */
  async create(em: EntityManager, customerId: string, input: CreatePollerInput): Promise<PollerView> {
    await this.identity.getActiveCustomer(em, customerId);
    const owner = await em.findOne(Credential, { customerId, isOwner: true, isActive: true }, { orderBy: { createdAt: "asc", credentialId: "asc" } });
    if (!owner) throw new DomainError("CUSTOMER_NOT_FOUND", `Customer ${quote(customerId)} has no active owner credential, so its mailbox email was not found.`);
    if (await em.count(EmailPoller, { customerId })) throw this.exists(customerId);
    await this.checkHost(input.imap.host);
    const pollerId = randomUUID();
    const poller = em.create(EmailPoller, {
      pollerId,
      customerId,
      email: owner.userEmail,
      imapHost: input.imap.host,
      imapPort: input.imap.port,
      imapTls: input.imap.tls ?? true,
      imapUser: owner.userEmail,
      passwordSealed: this.box.seal(input.imap.password, passwordContext(pollerId)),
      description: input.description ?? null,
      enabled: true,
      lastPolledAt: null,
      lastSuccessfulPollAt: null,
      lastErrorAt: null,
      lastError: null,
      totalEmailsProcessed: 0,
      totalPinsExtracted: 0,
    });
    try {
      await em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw this.exists(customerId);
      throw error;
    }
    await this.startJob(pollerId);
    return this.view(poller);
  }

  /** Get Email Poller, with statistics. @throws DomainError CUSTOMER_NOT_FOUND, POLLER_NOT_FOUND (404). */
  async get(em: EntityManager, customerId: string): Promise<PollerStatsView> {
    return this.statsView(await this.find(em, customerId));
  }

  /**
   * Update Email Poller: any of `imap` (whole, password included), `enabled` (starts or stops the
   * job), `description`; omitted fields keep their values.
   * @throws DomainError CUSTOMER_NOT_FOUND, POLLER_NOT_FOUND (404); ValidationFailed (422, `imap.host`).
   */
  async update(em: EntityManager, customerId: string, input: UpdatePollerInput): Promise<PollerStatsView> {
    const poller = await this.find(em, customerId);
    if (input.imap) {
      await this.checkHost(input.imap.host);
      poller.imapHost = input.imap.host;
      poller.imapPort = input.imap.port;
      poller.imapTls = input.imap.tls ?? true;
      poller.passwordSealed = this.box.seal(input.imap.password, passwordContext(poller.pollerId));
    }
    if (input.description !== undefined) poller.description = input.description;
    if (input.enabled !== undefined) poller.enabled = input.enabled;
    await em.flush();
    if (input.enabled !== undefined) await (input.enabled ? this.startJob(poller.pollerId) : this.stopJob(poller.pollerId));
    return this.statsView(poller);
  }

  /** Delete Email Poller: polling stops, the configuration is erased. @throws DomainError CUSTOMER_NOT_FOUND, POLLER_NOT_FOUND. */
  async delete(em: EntityManager, customerId: string): Promise<void> {
    const poller = await this.find(em, customerId);
    await em.nativeDelete(EmailPoller, { pollerId: poller.pollerId });
    await this.stopJob(poller.pollerId);
  }

  /**
   * Verify Email Poller: a live IMAP login with the stored settings.
   * @throws DomainError CUSTOMER_NOT_FOUND, POLLER_NOT_FOUND (404); UNAUTHORIZED (401, the
   *   connection or login failed: bad credentials, timeout, refused; the message gives the reason).
   */
  async verify(em: EntityManager, customerId: string): Promise<{ success: true; message: string }> {
    const poller = await this.find(em, customerId);
    try {
      await verifyLogin(this.imapSettings(poller));
    } catch (error) {
      if (error instanceof ImapFailure) throw new DomainError("UNAUTHORIZED", `Mailbox verification failed: ${error.message}.`);
      throw error;
    }
    return { success: true, message: `Logged in to ${poller.imapHost}:${poller.imapPort} as ${poller.imapUser}.` };
  }

  /**
   * Enable or disable the poller by `poller_id` (reference: Enable/Disable Email Poller): starts or
   * stops its job; the configuration is kept.
   * @throws DomainError CUSTOMER_NOT_FOUND, POLLER_NOT_FOUND (404, also for a `poller_id` that is not this customer's).
   */
  async setEnabled(em: EntityManager, customerId: string, pollerId: string, enabled: boolean): Promise<{ message: string }> {
    const poller = await this.find(em, customerId);
    if (!isUuid(pollerId) || poller.pollerId !== pollerId.toLowerCase()) {
      throw new DomainError("POLLER_NOT_FOUND", `Email poller ${quote(pollerId)} not found for customer ${quote(customerId)}.`);
    }
    poller.enabled = enabled;
    await em.flush();
    await (enabled ? this.startJob(poller.pollerId) : this.stopJob(poller.pollerId));
    return { message: enabled ? "Email poller enabled: polling started." : "Email poller disabled: polling stopped; the configuration is kept." };
  }

  // --- polling ---------------------------------------------------------------------------------

  /**
   * One poll of poller `pollerId` (the `email-poll` job): reads up to 50 unseen messages, applies
   * the PINs they carry, marks them seen, and records the statistics (or the failure) on the poller.
   * A poller that is gone or disabled, or whose customer was deleted, has its job removed instead. Never throws for a mailbox
   * problem: it is recorded in `last_error`.
   */
  async poll(pollerId: string): Promise<PollOutcome> {
    const em = this.orm.em.fork();
    const poller = await em.findOne(EmailPoller, { pollerId });
    const customerActive = poller ? await this.identity.getActiveCustomer(em, poller.customerId).then(() => true, () => false) : false;
    if (!poller || !poller.enabled || !customerActive) {
      // gone, disabled, or its customer deleted: the job ends here
      await this.stopJob(pollerId);
      return { processed: 0, pinsApplied: 0 };
    }
    const outcome: PollOutcome = { processed: 0, pinsApplied: 0 };
    const startedAt = new Date();
    try {
      await withMailbox(this.imapSettings(poller), async (client) => {
        const lock = await client.getMailboxLock("INBOX");
        try {
          const unseen = (await client.search({ seen: false }, { uid: true })) || [];
          for (const uid of unseen.slice(0, MESSAGES_PER_POLL)) {
            if (await this.handleMessage(client, poller, uid)) outcome.pinsApplied += 1;
            await client.messageFlagsAdd(String(uid), ["\\Seen"], { uid: true });
            outcome.processed += 1;
            // counted as it goes, so a poll cut short still counts what it read
            await countProcessedMessage(this.statements, pollerId);
          }
        } finally {
          lock.release();
        }
      });
      await recordPollSuccess(this.statements, pollerId, startedAt, outcome.pinsApplied);
    } catch (error) {
      const message = error instanceof ImapFailure ? error.message : `poll failed: ${(error as Error).message}`.slice(0, 500);
      this.logger.warn({ pollerId, customerId: poller.customerId, reason: message }, "email poll failed");
      await recordPollFailure(this.statements, pollerId, startedAt, message, outcome.pinsApplied);
    }
    return outcome;
  }

  /** Reads and applies one message; a bad message is logged and skipped. @returns whether a PIN was applied. */
  private async handleMessage(client: ImapFlow, poller: EmailPoller, uid: number): Promise<boolean> {
    try {
      const message = await client.fetchOne(String(uid), { source: true, size: true }, { uid: true });
      if (!message || !message.source || (message.size ?? message.source.length) > MAX_MESSAGE_BYTES) return false;
      const { simpleParser } = await import("mailparser");
      const parsed = await simpleParser(message.source);
      const text = parsed.text ?? (typeof parsed.html === "string" ? htmlToText(parsed.html) : "");
      const found = extractPin(parsed.subject ?? "", text);
      if (!found) return false;
      const applied = await this.withdrawals.applyProviderPin(poller.customerId, found.withdrawalId, found.pin);
      this.logger.info({ pollerId: poller.pollerId, withdrawalId: found.withdrawalId, outcome: applied }, "mailbox PIN read");
      return applied === "applied";
    } catch (error) {
      this.logger.warn({ err: error, pollerId: poller.pollerId, uid }, "a polled message could not be read");
      return false;
    }
  }

  // --- internals -----------------------------------------------------------------------------------

  private exists(customerId: string): DomainError {
    return new DomainError("POLLER_ALREADY_EXISTS", `Customer ${quote(customerId)} already has an email poller; update it instead.`);
  }

  /** The customer's poller. @throws DomainError CUSTOMER_NOT_FOUND, POLLER_NOT_FOUND. */
  private async find(em: EntityManager, customerId: string): Promise<EmailPoller> {
    await this.identity.getActiveCustomer(em, customerId);
    const poller = await em.findOne(EmailPoller, { customerId });
    if (!poller) throw new DomainError("POLLER_NOT_FOUND", `Customer ${quote(customerId)} has no email poller.`);
    return poller;
  }

  /** The SSRF guard at configuration time. @throws ValidationFailed (422, `imap.host`). */
  private async checkHost(host: string): Promise<void> {
    try {
      await assertPublicHost(host, this.settings.allowPrivate);
    } catch (error) {
      if (error instanceof TargetRefused) throw new ValidationFailed([{ field: "imap.host", message: error.message }]);
      throw error;
    }
  }

  private imapSettings(poller: EmailPoller): ImapSettings {
    return {
      host: poller.imapHost,
      port: poller.imapPort,
      tls: poller.imapTls,
      user: poller.imapUser,
      password: this.box.open(poller.passwordSealed, passwordContext(poller.pollerId)),
      timeoutMs: this.settings.timeoutS * 1000,
      allowPrivate: this.settings.allowPrivate,
    };
  }

  private async startJob(pollerId: string): Promise<void> {
    await this.scheduler.everyFor(POLL_JOB, this.settings.intervalS, { pollerId }, "pollerId");
  }

  private async stopJob(pollerId: string): Promise<void> {
    await this.scheduler.cancel(POLL_JOB, { pollerId });
  }

  private view(p: EmailPoller): PollerView {
    return {
      poller_id: p.pollerId,
      customer_id: p.customerId,
      email: p.email,
      imap: { host: p.imapHost, port: p.imapPort, tls: p.imapTls, user: p.imapUser, password: "***masked***" },
      description: p.description ?? null,
      enabled: p.enabled,
      created_at: p.createdAt.toISOString(),
      updated_at: p.updatedAt.toISOString(),
    };
  }

  private statsView(p: EmailPoller): PollerStatsView {
    return {
      ...this.view(p),
      last_polled_at: p.lastPolledAt?.toISOString() ?? null,
      last_successful_poll_at: p.lastSuccessfulPollAt?.toISOString() ?? null,
      last_error_at: p.lastErrorAt?.toISOString() ?? null,
      last_error: p.lastError ?? null,
      total_emails_processed: p.totalEmailsProcessed,
      total_pins_extracted: p.totalPinsExtracted,
    };
  }
}
