/**
 * The PIN webhook as a channel of the outbox (docs/outbox.md "Channels"; docs/decisions/notifications.md
 * "The PIN webhook"): table `webhook_delivery`, the notification retry policy, a lease of
 * 3 × `WEBHOOK_TIMEOUT_S` + 5 s; HTTP 410 disables the webhook and every pending delivery of the
 * customer; a deleted or disabled webhook, or a deleted customer, makes a claimed delivery
 * `disabled` without an attempt.
 */
import type { Logger } from "pino";
import type { Sql, Tx } from "../../db/sql.js";
import { deliveryLeaseMs, notificationRetryPolicy } from "../../domain/outbox.js";
import type { SecretBox } from "../identity/secrets.js";
import type { Claimed, OutboxChannel, OutboxTable, Prepared } from "../outbox/channel.js";
import { attemptResult, type NotificationSettings } from "../outbox/http-sender.js";
import { disablePendingDeliveries, disableWebhook, pinMessage, type DeliveryToSend, type WebhookTarget } from "./repository.js";
import { openTarget, sendTo, webhookContexts } from "./target.js";

/** Why a webhook is disabled after a 410 (`webhook.disabled_reason`). */
export const GONE_REASON = "the receiver answered HTTP 410 Gone";

/** A delivery loaded for one attempt, with its webhook. */
export interface PinMessage {
  webhook: WebhookTarget;
  delivery: DeliveryToSend;
}

/** What the channel needs from the service. */
export interface WebhookChannelDeps {
  box: SecretBox;
  settings: NotificationSettings;
  logger: Logger;
}

/** The PIN webhook's outbox table, `webhook_delivery`. */
export const WEBHOOK_TABLE: OutboxTable = {
  name: "webhook_delivery",
  status: "status",
  attempts: "attempt_count",
  statuses: { succeeded: "succeeded", failed: "failed", disabled: "disabled" },
  countsSuccess: true,
  clearsNextAttempt: true,
  nullIsDue: false,
  touched: "updated_at",
};

/** The `webhook` channel of the outbox (see the module docs). */
export function webhookChannel(deps: WebhookChannelDeps): OutboxChannel<PinMessage> {
  const { box, settings, logger } = deps;
  return {
    name: "webhook",
    table: WEBHOOK_TABLE,
    policy: {
      retry: notificationRetryPolicy(settings.retryBaseS * 1000),
      leaseMs: deliveryLeaseMs(settings.timeoutS * 1000),
      onGone: "disable",
      stopRoundOnFailure: false,
    },
    returning: ["customer_id"],
    async prepare(sql: Sql, claimed: Claimed): Promise<Prepared<PinMessage>> {
      // the delivery, and its customer's webhook unless the customer is inactive or has none
      const { delivery, webhook } = await pinMessage(sql, claimed.id);
      if (!webhook || webhook.disabledAt) return { skip: "disable" };
      return { message: { webhook, delivery } };
    },
    /**
     * Sends one delivery. A configuration that cannot be sent is `unsendable` naming the rule and
     * the header; a sealed value that does not open is a failed attempt naming it, retried on the
     * schedule (a corrected `SECRETS_KEY` lets it go).
     */
    async send({ webhook, delivery }: PinMessage) {
      const target = openTarget(box, logger, webhook);
      if ("problem" in target) return { httpStatus: null, error: target.problem, durationMs: 0, ...(target.permanent && { unsendable: true }) };
      let body: string;
      try {
        body = box.open(delivery.payloadSealed, webhookContexts.payload(delivery.id));
      } catch (error) {
        logger.error({ err: error, deliveryId: delivery.id }, "webhook delivery payload does not open");
        return { httpStatus: null, error: "the notification's sealed payload cannot be opened with the current SECRETS_KEY", durationMs: 0 };
      }
      return attemptResult(await sendTo(target, settings, delivery.webhookMessageId, body));
    },
    async disableTarget(tx: Tx, claimed: Claimed) {
      const customerId = String(claimed.row.customer_id);
      await disableWebhook(tx, customerId, new Date(), GONE_REASON);
      await disablePendingDeliveries(tx, customerId);
    },
  };
}
