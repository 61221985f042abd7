/**
 * The customer's PIN webhook (reference: "Customer webhook", "Events › Withdrawal PIN
 * notifications"; docs/security.md "Outgoing notifications and their targets"): its
 * configuration, the outbox of notifications written in the transaction of the event, their
 * signed delivery by an Agenda job with retries, and the delivery log.
 *
 * Delivery is at least once: a delivery row is claimed in a short transaction (`FOR UPDATE SKIP
 * LOCKED`, then a lease on `next_attempt_at`), sent with no database connection held, then
 * recorded. Concurrent rounds on any number of workers never send one delivery at the same time;
 * a worker that dies mid-send leaves the lease to expire, and the next round sends it again with
 * the same `webhook-id`, so receivers can drop duplicates.
 */
import { randomUUID } from "node:crypto";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { Logger } from "pino";
import type { components } from "../../../generated/types/platform.js";
import { DomainError, quote } from "../../domain/errors.js";
import { isUuid } from "../../domain/ids.js";
import {
  MAX_DELIVERY_ATTEMPTS,
  checkTargetUrl,
  checkWebhookConfig,
  checkWebhookHeaders,
  deliveryLeaseMs,
  judgeAttempt,
  newMessageId,
  newSigningSecret,
  retryDelayMs,
  type WebhookHeaderInput,
} from "../../domain/webhooks.js";
import type { PageRequest } from "../../http/envelope.js";
import type { JobScheduler } from "../../jobs/scheduler.js";
import type { SecretBox } from "../identity/secrets.js";
import type { IdentityService } from "../identity/service.js";
import { checkTarget } from "../net/targets.js";
import type { PinEvent, PinPush } from "../withdrawals/service.js";
import { Webhook, WebhookAttempt, WebhookDelivery, type WebhookDeliveryStatus } from "./entities.js";
import { postSigned, type SendResult } from "./sender.js";

type Schemas = components["schemas"];
/** Body of Create and Update Webhook (schema `WebhookRequest`). */
export type WebhookInput = Schemas["WebhookRequest"];
/** Schema `Webhook`. */
export type WebhookView = Schemas["Webhook"];
/** Schema `WebhookDelivery`. */
export type DeliveryView = Schemas["WebhookDelivery"];
/** Schema `WebhookVerification`. */
export type VerificationView = Schemas["WebhookVerification"];
/** Schema `WithdrawalPinNotification`: the JSON body of a `withdrawal.pin` notification. */
export type PinNotification = Schemas["WithdrawalPinNotification"];

/** Settings of webhook delivery (src/config.ts). */
export interface WebhookSettings {
  /** `WEBHOOK_TIMEOUT_S`: bound of one attempt. */
  timeoutS: number;
  /** `WEBHOOK_RETRY_BASE_S`: first retry delay (see {@link retryDelayMs}). */
  retryBaseS: number;
  /** `ALLOW_PRIVATE_NETWORK_TARGETS`. */
  allowPrivate: boolean;
}

/** Name of the delivery job: a round over the due deliveries of every customer. */
export const DELIVERY_JOB = "webhook-delivery";
/** How long the previous secret keeps signing after a rotation (decisions.md §5, issue 7). */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;
/** Attempts shown per delivery in the log (the newest). */
const ATTEMPTS_SHOWN = 50;
/** The answer's body kept for Verify Webhook's `response_data`, characters. */
const RESPONSE_DATA_CHARS = 2000;

/** Sealing contexts: a sealed value opens only in its own row and role. */
const ctx = {
  headers: (customerId: string) => `webhook-headers:${customerId}`,
  secret: (customerId: string) => `webhook-secret:${customerId}`,
  previousSecret: (customerId: string) => `webhook-previous-secret:${customerId}`,
  payload: (deliveryId: string) => `webhook-payload:${deliveryId}`,
};

/** A webhook opened for sending: URL, headers and the secrets that sign now. */
interface Target {
  url: URL;
  headers: Record<string, string>;
  secrets: string[];
}

/** Webhook configuration, outbox and delivery. */
export class WebhookService implements PinPush {
  constructor(
    private readonly orm: MikroORM,
    private readonly box: SecretBox,
    private readonly identity: IdentityService,
    private readonly scheduler: JobScheduler,
    private readonly settings: WebhookSettings,
    private readonly logger: Logger,
  ) {}

  /** Defines the delivery job (every process). */
  defineJobs(): void {
    this.scheduler.define(DELIVERY_JOB, async () => {
      await this.deliverDue();
    });
  }

  /** The recurring delivery round (retries, and whatever a crash left behind), every `intervalS`. */
  async scheduleRecurring(intervalS: number): Promise<void> {
    await this.scheduler.every(DELIVERY_JOB, intervalS);
  }

  // --- configuration ---------------------------------------------------------------------------

  /**
   * Create Webhook: registers (or overwrites) the customer's target with a new signing secret,
   * returned only here; enabled. Update Webhook (`mode` `update`): replaces URL and headers of an
   * existing webhook, keeps its secrets, enables it again.
   * @throws DomainError CUSTOMER_NOT_FOUND (404), WEBHOOK_NOT_FOUND (404, update without a
   *   webhook), BAD_REQUEST (400 on `url`, `headers.N.key` or `headers.N.value`:
   *   {@link checkWebhookConfig}, then the target rule {@link checkTarget} shared with the credit notifications;
   *   docs/security.md "Outgoing notifications and their targets").
   */
  async put(em: EntityManager, customerId: string, input: WebhookInput, mode: "create" | "update"): Promise<{ message: string; url: string; signing_secret?: string }> {
    await this.identity.getActiveCustomer(em, customerId);
    const headers: WebhookHeaderInput[] = input.headers ?? [];
    checkWebhookConfig(input.url, headers); // the syntax rules first, then the address rule (a DNS lookup)
    const url = await checkTarget(input.url, this.settings.allowPrivate);
    const headersSealed = this.box.seal(JSON.stringify(headers), ctx.headers(customerId));
    if (mode === "update") {
      const updated = await em.nativeUpdate(Webhook, { customerId }, { url: url.href, headersSealed, disabledAt: null, disabledReason: null, updatedAt: new Date() });
      if (updated === 0) throw this.notFound(customerId);
      return { message: "Webhook updated.", url: url.href };
    }
    const secret = newSigningSecret();
    const secretSealed = this.box.seal(secret, ctx.secret(customerId));
    const now = new Date();
    // One statement: concurrent creates of one customer both succeed, the last one wins.
    await em.execute(
      `insert into webhook (customer_id, url, headers_sealed, secret_sealed, previous_secret_sealed, previous_secret_expires_at, disabled_at, disabled_reason, created_at, updated_at)
         values (?, ?, ?, ?, null, null, null, null, ?, ?)
       on conflict (customer_id) do update set url = excluded.url, headers_sealed = excluded.headers_sealed, secret_sealed = excluded.secret_sealed,
         previous_secret_sealed = null, previous_secret_expires_at = null, disabled_at = null, disabled_reason = null, updated_at = excluded.updated_at`,
      [customerId, url.href, headersSealed, secretSealed, now, now],
    );
    return { message: "Webhook registered. Store the signing secret now: it is not shown again.", url: url.href, signing_secret: secret };
  }

  /** Get Webhook: URL and headers, every value masked. @throws DomainError CUSTOMER_NOT_FOUND, WEBHOOK_NOT_FOUND (404). */
  async get(em: EntityManager, customerId: string): Promise<WebhookView> {
    const webhook = await this.find(em, customerId);
    const headers = JSON.parse(this.box.open(webhook.headersSealed, ctx.headers(customerId))) as WebhookHeaderInput[];
    return {
      url: webhook.url,
      headers: headers.map((h) => ({ key: h.key, value: "***masked***" as const })),
      enabled: !webhook.disabledAt,
      disabled_reason: webhook.disabledAt ? `${webhook.disabledReason ?? "disabled"} (${webhook.disabledAt.toISOString()})` : null,
    };
  }

  /**
   * Delete Webhook: notifications stop; pending deliveries become `disabled` (the log is kept).
   * @throws DomainError CUSTOMER_NOT_FOUND, WEBHOOK_NOT_FOUND (404).
   */
  async delete(em: EntityManager, customerId: string): Promise<void> {
    await this.identity.getActiveCustomer(em, customerId);
    await em.transactional(async (tx) => {
      const deleted = await tx.nativeDelete(Webhook, { customerId });
      if (deleted === 0) throw this.notFound(customerId);
      await tx.nativeUpdate(WebhookDelivery, { customerId, status: "pending" }, { status: "disabled", nextAttemptAt: null });
    });
  }

  /**
   * Rotate Webhook Secret: a new secret signs from now on, the current one keeps signing for 24 h.
   * @throws DomainError CUSTOMER_NOT_FOUND, WEBHOOK_NOT_FOUND (404).
   */
  async rotateSecret(em: EntityManager, customerId: string): Promise<{ message: string; signing_secret: string; previous_secret_expires_at: string }> {
    await this.identity.getActiveCustomer(em, customerId);
    const secret = newSigningSecret();
    const expiresAt = new Date(Date.now() + ROTATION_OVERLAP_MS);
    return em.transactional(async (tx) => {
      const [row] = await tx.execute<{ secret_sealed: string }[]>(`select secret_sealed from webhook where customer_id = ? for update`, [customerId]);
      if (!row) throw this.notFound(customerId);
      const current = this.box.open(row.secret_sealed, ctx.secret(customerId));
      await tx.nativeUpdate(Webhook, { customerId }, {
        secretSealed: this.box.seal(secret, ctx.secret(customerId)),
        previousSecretSealed: this.box.seal(current, ctx.previousSecret(customerId)),
        previousSecretExpiresAt: expiresAt,
        updatedAt: new Date(),
      });
      return {
        message: "Signing secret rotated. Store the new secret now: it is not shown again. Both secrets sign until previous_secret_expires_at.",
        signing_secret: secret,
        previous_secret_expires_at: expiresAt.toISOString(),
      };
    });
  }

  /**
   * Verify Webhook: POSTs a signed `webhook.test` payload now (not retried, not logged). Answers
   * whatever happens once the webhook is found (reference: "always 200"): a configuration that
   * cannot be built into a request, a sealed value that does not open, a target the SSRF guard
   * refuses, a failed connection or a non-2xx answer are all outcomes in `message`.
   * @returns the outcome in `message`; on a non-2xx answer its body in `response_data`.
   * @throws DomainError CUSTOMER_NOT_FOUND, WEBHOOK_NOT_FOUND (404).
   */
  async verify(em: EntityManager, customerId: string): Promise<VerificationView> {
    const webhook = await this.find(em, customerId);
    const payload = {
      type: "webhook.test" as const,
      timestamp: new Date().toISOString(),
      data: { customer_id: customerId, message: "Test notification from the custody platform." },
    };
    const target = this.target(webhook);
    if ("problem" in target) return { message: `Test notification not sent: ${target.problem}.`, payload };
    const result = await this.send(target, newMessageId(), JSON.stringify(payload));
    if (result.unsendable) return { message: `Test notification not sent: ${result.error ?? "the request cannot be built"}.`, payload };
    if (judgeAttempt(result.status) === "succeeded") {
      return { message: `Test notification delivered: the webhook answered HTTP ${result.status}.`, payload };
    }
    const why = result.status !== null ? `the webhook answered HTTP ${result.status}` : (result.error ?? "no answer");
    return { message: `Test notification failed: ${why}.`, response_data: responseData(result.body), payload };
  }

  // --- outbox ----------------------------------------------------------------------------------

  /**
   * Writes a `withdrawal.pin` notification to the outbox in `tx` when the customer has an enabled
   * webhook (decisions.md §4: every new code is pushed too); nothing otherwise.
   * @returns whether it wrote one.
   */
  async enqueuePin(tx: EntityManager, pin: PinEvent): Promise<boolean> {
    const [webhook] = await tx.execute<{ disabled_at: Date | null }[]>(`select disabled_at from webhook where customer_id = ?`, [pin.customerId]);
    if (!webhook || webhook.disabled_at !== null) return false;
    const payload: PinNotification = {
      type: "withdrawal.pin",
      timestamp: new Date().toISOString(),
      data: {
        withdrawal_id: pin.withdrawalId,
        user_id: pin.userId,
        customer_id: pin.customerId,
        code: pin.code,
        expires_at: pin.expiresAt.toISOString(),
      },
    };
    const id = randomUUID();
    tx.create(WebhookDelivery, {
      id,
      customerId: pin.customerId,
      webhookMessageId: newMessageId(),
      eventType: payload.type,
      payloadSealed: this.box.seal(JSON.stringify(payload), ctx.payload(id)),
      status: "pending",
      attemptCount: 0,
      nextAttemptAt: new Date(),
      reference: `withdrawal:${pin.withdrawalId}`,
      createdAt: new Date(),
    });
    return true;
  }

  /** Starts a delivery round on a worker, after commit (the recurring round catches up if this is lost). */
  kick(): void {
    this.scheduler.kick(DELIVERY_JOB);
  }

  /**
   * A delivery round: sends due `pending` deliveries, oldest first, each claimed so that no other
   * round sends it at the same time (see the module docs), until none is due or `limit` is reached.
   * @returns how many were attempted.
   */
  async deliverDue(limit = 100): Promise<number> {
    let attempted = 0;
    for (; attempted < limit; attempted++) {
      const claimed = await this.claimDue();
      if (!claimed) break;
      await this.attempt(claimed.id, claimed.customerId);
    }
    return attempted;
  }

  // --- delivery log ------------------------------------------------------------------------------

  /** The delivery log, newest first. @throws DomainError CUSTOMER_NOT_FOUND (404). */
  async listDeliveries(em: EntityManager, customerId: string, page: PageRequest, status?: WebhookDeliveryStatus): Promise<{ items: DeliveryView[]; total: number }> {
    await this.identity.getActiveCustomer(em, customerId);
    const where = { customerId, ...(status !== undefined && { status }) };
    const [rows, total] = await em.findAndCount(WebhookDelivery, where, { orderBy: { createdAt: "desc", id: "desc" }, limit: page.limit, offset: page.skip });
    const attempts = rows.length === 0 ? [] : await em.find(WebhookAttempt, { deliveryId: { $in: rows.map((r) => r.id) } }, { orderBy: { attemptedAt: "asc", id: "asc" } });
    return { items: rows.map((r) => this.deliveryView(r, attempts.filter((a) => a.deliveryId === r.id))), total };
  }

  /**
   * Retry Webhook Delivery: one attempt now with the same `webhook-id` and body, whatever the
   * delivery's status; a 2xx makes it `succeeded`.
   * @throws DomainError CUSTOMER_NOT_FOUND, WEBHOOK_NOT_FOUND, NOT_FOUND (404); BAD_REQUEST (400,
   *   the webhook is disabled by HTTP 410).
   */
  async retry(em: EntityManager, customerId: string, deliveryId: string): Promise<DeliveryView> {
    const webhook = await this.find(em, customerId);
    if (webhook.disabledAt) {
      throw new DomainError("BAD_REQUEST", "The webhook is disabled after its receiver answered HTTP 410 Gone; update the webhook to enable it, then retry.");
    }
    const delivery = isUuid(deliveryId) ? await em.findOne(WebhookDelivery, { id: deliveryId.toLowerCase(), customerId }) : null;
    if (!delivery) throw new DomainError("NOT_FOUND", `Delivery ${quote(deliveryId)} not found.`);
    await this.attempt(delivery.id, customerId, true);
    const fresh = em.fork();
    const row = await fresh.findOneOrFail(WebhookDelivery, { id: delivery.id });
    const attempts = await fresh.find(WebhookAttempt, { deliveryId: row.id }, { orderBy: { attemptedAt: "asc", id: "asc" } });
    return this.deliveryView(row, attempts);
  }

  // --- internals -----------------------------------------------------------------------------------

  private notFound(customerId: string): DomainError {
    return new DomainError("WEBHOOK_NOT_FOUND", `Customer ${quote(customerId)} has no webhook configured.`);
  }

  /** The customer's webhook. @throws DomainError CUSTOMER_NOT_FOUND, WEBHOOK_NOT_FOUND. */
  private async find(em: EntityManager, customerId: string): Promise<Webhook> {
    await this.identity.getActiveCustomer(em, customerId);
    const webhook = await em.findOne(Webhook, { customerId });
    if (!webhook) throw this.notFound(customerId);
    return webhook;
  }

  /**
   * A webhook ready to send: its URL and headers checked again by the registration rules (a
   * configuration stored before them may break them), its sealed parts opened. Never throws.
   * @returns the target, or `problem` (why nothing can be sent, naming the URL rule, the header or
   *   the sealed value) and whether it is `permanent` (a stored configuration that breaks the
   *   rules: retrying cannot help) or not (a sealed value that does not open with the current
   *   `SECRETS_KEY`, which a corrected key can fix).
   */
  private target(webhook: Webhook): Target | { problem: string; permanent: boolean } {
    const customerId = webhook.customerId;
    let headers: WebhookHeaderInput[];
    const secrets: string[] = [];
    try {
      headers = JSON.parse(this.box.open(webhook.headersSealed, ctx.headers(customerId))) as WebhookHeaderInput[];
    } catch (error) {
      this.logger.error({ err: error, customerId }, "webhook headers do not open");
      return { problem: "the webhook's sealed headers cannot be opened with the current SECRETS_KEY", permanent: false };
    }
    try {
      secrets.push(this.box.open(webhook.secretSealed, ctx.secret(customerId)));
      if (webhook.previousSecretSealed && webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt.getTime() > Date.now()) {
        secrets.push(this.box.open(webhook.previousSecretSealed, ctx.previousSecret(customerId)));
      }
    } catch (error) {
      this.logger.error({ err: error, customerId }, "webhook signing secret does not open");
      return { problem: "the webhook's sealed signing secret cannot be opened with the current SECRETS_KEY", permanent: false };
    }
    let url: URL;
    try {
      url = checkTargetUrl(webhook.url);
      checkWebhookHeaders(headers);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return { problem: `the stored configuration cannot be sent (${error.message.replace(/\.$/, "")}); update the webhook`, permanent: true };
    }
    return { url, headers: Object.fromEntries(headers.map((h) => [h.key, h.value])), secrets };
  }

  /** One signed POST (Standard Webhooks headers after the configured ones, so they cannot be overridden). */
  private send(target: Target, messageId: string, body: string): Promise<SendResult> {
    return postSigned(target.url, target.headers, target.secrets, messageId, body, this.settings.timeoutS * 1000, this.settings.allowPrivate);
  }

  /** How long a claim keeps other rounds off a delivery ({@link deliveryLeaseMs}). */
  private get leaseMs(): number {
    return deliveryLeaseMs(this.settings.timeoutS * 1000);
  }

  /** Claims the oldest due pending delivery (lease on `next_attempt_at`), in its own short transaction. */
  private async claimDue(): Promise<{ id: string; customerId: string } | undefined> {
    const rows = await this.orm.em.fork().execute<{ id: string; customer_id: string }[]>(
      `update webhook_delivery set next_attempt_at = now() + (? * interval '1 millisecond'), updated_at = now()
        where id = (select id from webhook_delivery where status = 'pending' and next_attempt_at <= now()
                     order by next_attempt_at, created_at limit 1 for update skip locked)
        returning id, customer_id`,
      [this.leaseMs],
    );
    const row = rows[0];
    return row ? { id: row.id, customerId: row.customer_id } : undefined;
  }

  /**
   * One attempt of a delivery: sends it (no connection held), records the attempt and the
   * delivery's new state in one transaction: 2xx `succeeded`; 410 disables the webhook and its
   * pending deliveries; otherwise the next attempt after {@link retryDelayMs}, or `failed` after
   * {@link MAX_DELIVERY_ATTEMPTS}. A deleted or disabled webhook, or a deleted customer, makes the
   * delivery `disabled`.
   * `manual` (Retry Webhook Delivery) leaves a non-2xx delivery's status and schedule as they were.
   */
  private async attempt(deliveryId: string, customerId: string, manual = false): Promise<void> {
    const em = this.orm.em.fork();
    const delivery = await em.findOneOrFail(WebhookDelivery, { id: deliveryId });
    const customerActive = await this.identity.getActiveCustomer(em, customerId).then(() => true, () => false);
    const webhook = customerActive ? await em.findOne(Webhook, { customerId }) : null;
    if (!webhook || webhook.disabledAt) {
      if (!manual) await em.nativeUpdate(WebhookDelivery, { id: deliveryId, status: "pending" }, { status: "disabled", nextAttemptAt: null });
      return;
    }
    const attemptedAt = new Date();
    const result = await this.sendDelivery(webhook, delivery);
    // A request that cannot be built from the stored configuration gives up at once: retrying cannot help.
    const verdict = result.unsendable ? "unsendable" : judgeAttempt(result.status);
    const attempts = delivery.attemptCount + 1;
    const error = verdict === "succeeded" ? null : result.status !== null ? `HTTP ${result.status}` : result.error;
    await em.transactional(async (tx) => {
      tx.create(WebhookAttempt, { id: randomUUID(), deliveryId, attemptedAt, httpStatus: result.status, durationMs: result.durationMs, error });
      if (verdict === "succeeded") {
        await tx.nativeUpdate(WebhookDelivery, { id: deliveryId }, { status: "succeeded", attemptCount: attempts, nextAttemptAt: null });
      } else if (verdict === "disable") {
        await tx.nativeUpdate(Webhook, { customerId }, { disabledAt: new Date(), disabledReason: "the receiver answered HTTP 410 Gone" });
        await tx.nativeUpdate(WebhookDelivery, { customerId, status: "pending" }, { status: "disabled", nextAttemptAt: null });
        await tx.nativeUpdate(WebhookDelivery, { id: deliveryId }, { attemptCount: attempts, ...(delivery.status === "pending" && { status: "disabled", nextAttemptAt: null }) });
      } else if (manual) {
        await tx.nativeUpdate(WebhookDelivery, { id: deliveryId }, { attemptCount: attempts });
      } else if (verdict === "unsendable" || attempts >= MAX_DELIVERY_ATTEMPTS) {
        await tx.nativeUpdate(WebhookDelivery, { id: deliveryId }, { status: "failed", attemptCount: attempts, nextAttemptAt: null });
      } else {
        const wait = retryDelayMs(attempts, this.settings.retryBaseS * 1000, Math.random());
        await tx.nativeUpdate(WebhookDelivery, { id: deliveryId }, { attemptCount: attempts, nextAttemptAt: new Date(Date.now() + wait) });
      }
    });
    if (verdict !== "succeeded") this.logger.warn({ deliveryId, customerId, attempts, status: result.status, error }, "webhook delivery attempt failed");
  }

  /**
   * Sends one delivery to `webhook`. Never throws: a configuration that cannot be sent is an
   * `unsendable` result whose `error` names the rule and the header (docs/security.md "Outgoing
   * notifications and their targets"); a sealed value that does not open is a failed attempt
   * naming it, retried on the schedule (a corrected `SECRETS_KEY` lets it go).
   */
  private async sendDelivery(webhook: Webhook, delivery: WebhookDelivery): Promise<SendResult> {
    const target = this.target(webhook);
    if ("problem" in target) return { status: null, body: "", error: target.problem, durationMs: 0, unsendable: target.permanent };
    let body: string;
    try {
      body = this.box.open(delivery.payloadSealed, ctx.payload(delivery.id));
    } catch (error) {
      this.logger.error({ err: error, deliveryId: delivery.id }, "webhook delivery payload does not open");
      return { status: null, body: "", error: "the notification's sealed payload cannot be opened with the current SECRETS_KEY", durationMs: 0 };
    }
    return this.send(target, delivery.webhookMessageId, body);
  }

  private deliveryView(d: WebhookDelivery, attempts: WebhookAttempt[]): DeliveryView {
    return {
      delivery_id: d.id,
      webhook_id: d.webhookMessageId,
      event_type: d.eventType,
      status: d.status,
      attempt_count: d.attemptCount,
      attempts: attempts.slice(-ATTEMPTS_SHOWN).map((a) => ({
        attempted_at: a.attemptedAt.toISOString(),
        http_status: a.httpStatus ?? null,
        duration_ms: a.durationMs,
        error: a.error ?? null,
      })),
      next_attempt_at: d.status === "pending" && d.nextAttemptAt ? d.nextAttemptAt.toISOString() : null,
      created_at: d.createdAt.toISOString(),
      payload: JSON.parse(this.box.open(d.payloadSealed, ctx.payload(d.id))) as PinNotification,
    };
  }
}

/** The receiver's answer as Verify Webhook's `response_data`: parsed JSON, else at most 2000 characters of text. */
export function responseData(body: string): unknown {
  if (body === "") return "";
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body.slice(0, RESPONSE_DATA_CHARS);
  }
}
