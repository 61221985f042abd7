/**
 * The customer's PIN webhook (reference: "Customer webhook", "Events › Withdrawal PIN
 * notifications"; docs/security.md "Outgoing notifications and their targets"): its
 * configuration, the outbox of notifications written in the transaction of the event, their
 * signed delivery by the outbox's `webhook` channel (src/modules/webhooks/channel.ts,
 * docs/outbox.md) on an Agenda job with retries, and the delivery log.
 *
 * Delivery is at least once: a delivery row is claimed in a short statement (`FOR UPDATE SKIP
 * LOCKED`, then a lease on `next_attempt_at`), sent with no database connection held, then
 * recorded. Concurrent rounds on any number of workers never send one delivery at the same time;
 * a worker that dies mid-send leaves the lease to expire, and the next round sends it again with
 * the same `webhook-id`, so receivers can drop duplicates.
 *
 * Every write of `webhook` and `webhook_delivery` is a statement of ./repository.ts; a change of
 * more than one runs in `db.transaction`. The ORM reads the webhook and the delivery log.
 */
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Logger } from "pino";
import type { components } from "../../../generated/types/platform.js";
import type { Db, Sql } from "../../db/sql.js";
import { DomainError, quote } from "../../domain/errors.js";
import { isUuid } from "../../domain/ids.js";
import { judgeAttempt } from "../../domain/outbox.js";
import { checkWebhookConfig, newMessageId, newSigningSecret, type WebhookHeaderInput } from "../../domain/webhooks.js";
import type { PageRequest } from "../../domain/paging.js";
import type { JobQueue, JobSpec } from "../../jobs/port.js";
import type { SecretBox } from "../identity/secrets.js";
import type { IdentityService } from "../identity/service.js";
import { checkTarget } from "../net/targets.js";
import type { DeliveryAttempt } from "../outbox/entities.js";
import type { NotificationSettings } from "../outbox/http-sender.js";
import { Outbox } from "../outbox/outbox.js";
import { recoverSince, requeueFailed } from "../outbox/recover.js";
import type { OutboxChannel } from "../outbox/channel.js";
import type { PinEvent, PinPush } from "../withdrawals/service.js";
import { webhookChannel, type PinMessage } from "./channel.js";
import { Webhook, WebhookDelivery, type WebhookDeliveryStatus } from "./entities.js";
import { deleteWebhook, disablePendingDeliveries, enqueueDelivery, lockSecret, rotateSecret, upsertWebhook } from "./repository.js";
import { openTarget, sendTo, webhookContexts as ctx } from "./target.js";

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

/**
 * A notification to a customer's webhook: `type` (at most 64 characters, e.g. `address.added`),
 * its JSON `data`, and what caused it (`reference`, at most 128 characters, e.g. `address:<id>`).
 */
export interface WebhookEvent {
  customerId: string;
  type: string;
  data: Record<string, unknown>;
  reference: string;
}

/** Settings of webhook delivery (src/config.ts): `WEBHOOK_TIMEOUT_S`, `WEBHOOK_RETRY_BASE_S`, `ALLOW_PRIVATE_NETWORK_TARGETS`. */
export type WebhookSettings = NotificationSettings;

/** Name of the delivery job: a round over the due deliveries of every customer. */
export const DELIVERY_JOB = "webhook-delivery";
/** How long the previous secret keeps signing after a rotation (docs/decisions/notifications.md "The PIN webhook"). */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;
/** Attempts shown per delivery in the log (the newest). */
const ATTEMPTS_SHOWN = 50;
/** The answer's body kept for Verify Webhook's `response_data`, characters. */
const RESPONSE_DATA_CHARS = 2000;

/** Webhook configuration, outbox and delivery. */
export class WebhookService implements PinPush {
  private readonly outbox: Outbox;
  /** The outbox channel `webhook` (src/modules/webhooks/channel.ts). */
  readonly channel: OutboxChannel<PinMessage>;

  /** @param db runs the statements of ./repository.ts and of the outbox. */
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly identity: IdentityService,
    private readonly queue: JobQueue,
    private readonly settings: WebhookSettings,
    private readonly logger: Logger,
  ) {
    this.outbox = new Outbox(db, logger);
    this.channel = webhookChannel({ box, settings, logger });
  }

  /**
   * The delivery job `webhook-delivery` (src/jobs/registry.ts): a round over the due deliveries,
   * after every new PIN notification ({@link kick}) and every `intervalS` (`OUTBOX_INTERVAL_S`:
   * retries, and whatever a crash left behind).
   */
  jobs(intervalS: number): JobSpec[] {
    return [{ name: DELIVERY_JOB, run: async () => {
      await this.deliverDue();
    }, everyS: intervalS }];
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
    // One statement: concurrent creates of one customer both succeed, the last one wins.
    await upsertWebhook(this.db, { customerId, url: url.href, headersSealed, secretSealed, now: new Date() });
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
    await this.db.transaction(async (tx) => {
      if (!(await deleteWebhook(tx, customerId))) throw this.notFound(customerId);
      await disablePendingDeliveries(tx, customerId);
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
    return this.db.transaction(async (tx) => {
      const sealed = await lockSecret(tx, customerId);
      if (sealed === undefined) throw this.notFound(customerId);
      const current = this.box.open(sealed, ctx.secret(customerId));
      await rotateSecret(tx, {
        customerId,
        secretSealed: this.box.seal(secret, ctx.secret(customerId)),
        previousSealed: this.box.seal(current, ctx.previousSecret(customerId)),
        previousExpiresAt: expiresAt,
        now: new Date(),
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
    const target = openTarget(this.box, this.logger, webhook);
    if ("problem" in target) return { message: `Test notification not sent: ${target.problem}.`, payload };
    const result = await sendTo(target, this.settings, newMessageId(), JSON.stringify(payload));
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
   * webhook (docs/decisions/withdrawals.md "How a code reaches the user": every new code is pushed too); nothing otherwise.
   * `tx`: the caller's transaction (a `Tx` of src/db/sql.ts `Db.transaction`).
   * @returns whether it wrote one.
   */
  async enqueuePin(tx: Sql, pin: PinEvent): Promise<boolean> {
    const data: PinNotification["data"] = {
      withdrawal_id: pin.withdrawalId,
      user_id: pin.userId,
      customer_id: pin.customerId,
      code: pin.code,
      expires_at: pin.expiresAt.toISOString(),
    };
    return this.enqueueEvent(tx, { customerId: pin.customerId, type: "withdrawal.pin", data, reference: `withdrawal:${pin.withdrawalId}` });
  }

  /**
   * Writes notification `event` (any type: `withdrawal.pin`, `address.added`, …) to the outbox in
   * `tx` when the customer has an enabled webhook; nothing otherwise. Its body is `{type,
   * timestamp, data}` (timestamp: now, ISO 8601 UTC), sealed at rest, and it is delivered and
   * signed like every notification of the channel (docs/decisions/notifications.md "The PIN
   * webhook"). Call {@link kick} after the commit when it returns true. One statement
   * (./repository.ts `enqueueDelivery`: the insert only when the webhook is enabled), in the
   * caller's transaction `tx`.
   * @returns whether it wrote one.
   */
  async enqueueEvent(tx: Sql, event: WebhookEvent): Promise<boolean> {
    const payload = { type: event.type, timestamp: new Date().toISOString(), data: event.data };
    const id = randomUUID();
    return enqueueDelivery(tx, {
      id,
      customerId: event.customerId,
      webhookMessageId: newMessageId(),
      eventType: event.type,
      payloadSealed: this.box.seal(JSON.stringify(payload), ctx.payload(id)),
      reference: event.reference,
      now: new Date(),
    });
  }

  /** Starts a delivery round on a worker, after commit (the recurring round catches up if this is lost). */
  kick(): void {
    this.queue.kick(DELIVERY_JOB);
  }

  /**
   * A delivery round: sends due `pending` deliveries, oldest due first, one at a time, each claimed
   * so that no other round sends it at the same time (see the module docs), until none is due or
   * `limit` is reached.
   * @returns how many were claimed (attempted, or found without an enabled webhook).
   */
  async deliverDue(limit = 100): Promise<number> {
    return (await this.outbox.round(this.channel, { limit })).claimed;
  }

  // --- delivery log ------------------------------------------------------------------------------

  /** The delivery log, newest first. @throws DomainError CUSTOMER_NOT_FOUND (404). */
  async listDeliveries(em: EntityManager, customerId: string, page: PageRequest, status?: WebhookDeliveryStatus): Promise<{ items: DeliveryView[]; total: number }> {
    await this.identity.getActiveCustomer(em, customerId);
    const where = { customerId, ...(status !== undefined && { status }) };
    const [rows, total] = await em.findAndCount(WebhookDelivery, where, { orderBy: { createdAt: "desc", id: "desc" }, limit: page.limit, offset: page.skip });
    const attempts = await this.outbox.attemptsOf(em, "webhook", rows.map((r) => r.id));
    return { items: rows.map((r) => this.deliveryView(r, attempts.filter((a) => a.messageId === r.id))), total };
  }

  /**
   * Retry Webhook Delivery: one attempt now with the same `webhook-id` and body, whatever the
   * delivery's status; a 2xx makes it `succeeded`, a failure leaves its status and schedule as they
   * were (docs/outbox.md "Retry and disable"). One send at a time per delivery: the attempt takes
   * the outbox's lease on the delivery ({@link Outbox.claimMessage}, a row lock and a conditional
   * update in PostgreSQL, so it holds across API replicas). A retry of a delivery that may already
   * be in flight (another retry, or a delivery round, is sending it; or a pending delivery is due
   * within a lease anyway) sends nothing and answers the delivery as it is, `pending` with its
   * `next_attempt_at` for one a round is sending.
   * @returns the delivery after this call: `WebhookDelivery`, its attempts oldest first (the newest 50).
   * @throws DomainError CUSTOMER_NOT_FOUND, WEBHOOK_NOT_FOUND, NOT_FOUND (404); BAD_REQUEST (400,
   *   the webhook is disabled by HTTP 410).
   */
  async retry(em: EntityManager, customerId: string, deliveryId: string): Promise<DeliveryView> {
    const webhook = await this.find(em, customerId);
    if (webhook.disabledAt) {
      throw new DomainError("BAD_REQUEST", "The webhook is disabled after its receiver answered HTTP 410 Gone; update the webhook to enable it, then retry.");
    }
    const claim = isUuid(deliveryId) ? await this.outbox.claimMessage(this.channel, deliveryId.toLowerCase(), customerId) : { missing: true as const };
    if ("missing" in claim) throw new DomainError("NOT_FOUND", `Delivery ${quote(deliveryId)} not found.`);
    if ("claimed" in claim) await this.outbox.deliver(this.channel, claim.claimed, true);
    const fresh = em.fork();
    const row = await fresh.findOneOrFail(WebhookDelivery, { id: deliveryId.toLowerCase() });
    return this.deliveryView(row, await this.outbox.attemptsOf(fresh, "webhook", [row.id]));
  }

  /**
   * Recover Webhook Deliveries (docs/outbox.md "Recovering missed notifications"): every delivery
   * of the customer created at or after `since` whose last attempt failed — `failed`, `disabled`,
   * or `pending` with a retry still to come — is `pending`, due now, attempt counter 0, with its
   * `webhook-id`, body and attempt history kept ({@link requeueFailed}: one that may be in flight
   * keeps its lease); then a round starts (after the commit). Never-attempted and succeeded
   * deliveries are not touched. A disabled webhook is not enabled.
   * @param since ISO 8601 date-time, at most 30 days back, not in the future.
   * @returns `{ recovered }`: how many deliveries were re-queued.
   * @throws DomainError CUSTOMER_NOT_FOUND, WEBHOOK_NOT_FOUND (404); BAD_REQUEST (400, the webhook
   *   is disabled by HTTP 410); ValidationFailed (422 on `since`).
   */
  async recover(em: EntityManager, customerId: string, since: string): Promise<{ recovered: number }> {
    const from = recoverSince(since);
    const webhook = await this.find(em, customerId);
    if (webhook.disabledAt) {
      throw new DomainError("BAD_REQUEST", "The webhook is disabled after its receiver answered HTTP 410 Gone; update the webhook to enable it, then recover.");
    }
    const recovered = await this.db.transaction((tx) => requeueFailed(tx, this.channel, customerId, from));
    if (recovered > 0) this.kick();
    return { recovered };
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

  private deliveryView(d: WebhookDelivery, attempts: DeliveryAttempt[]): DeliveryView {
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
