/**
 * A customer's PIN webhook opened for sending (docs/security.md "Outgoing notifications and their
 * targets"): its sealing contexts, its URL and headers checked again by the registration rules,
 * its sealed parts opened, and one signed POST to it.
 */
import type { Logger } from "pino";
import { DomainError } from "../../domain/errors.js";
import { checkTargetUrl, checkWebhookHeaders, type WebhookHeaderInput } from "../../domain/webhooks.js";
import type { SecretBox } from "../identity/secrets.js";
import { postSigned, type NotificationSettings, type SendResult } from "../outbox/http-sender.js";
import type { WebhookTarget } from "./repository.js";

/** Sealing contexts: a sealed value opens only in its own row and role. */
export const webhookContexts = {
  headers: (customerId: string) => `webhook-headers:${customerId}`,
  secret: (customerId: string) => `webhook-secret:${customerId}`,
  previousSecret: (customerId: string) => `webhook-previous-secret:${customerId}`,
  payload: (deliveryId: string) => `webhook-payload:${deliveryId}`,
};

/** A webhook opened for sending: URL, headers and the secrets that sign now. */
export interface Target {
  url: URL;
  headers: Record<string, string>;
  secrets: string[];
}

/** Why nothing can be sent to a webhook, and whether retrying can help. */
export interface TargetProblem {
  /** Names the URL rule, the header or the sealed value. */
  problem: string;
  /**
   * A stored configuration that breaks the rules (retrying cannot help), or not (a sealed value
   * that does not open with the current `SECRETS_KEY`, which a corrected key can fix).
   */
  permanent: boolean;
}

/**
 * A webhook ready to send: its URL and headers checked again by the registration rules (a
 * configuration stored before them may break them), its sealed parts opened (the previous secret
 * while its rotation overlap lasts). Never throws.
 */
export function openTarget(box: SecretBox, logger: Logger, webhook: Omit<WebhookTarget, "disabledAt">): Target | TargetProblem {
  const customerId = webhook.customerId;
  let headers: WebhookHeaderInput[];
  const secrets: string[] = [];
  try {
    headers = JSON.parse(box.open(webhook.headersSealed, webhookContexts.headers(customerId))) as WebhookHeaderInput[];
  } catch (error) {
    logger.error({ err: error, customerId }, "webhook headers do not open");
    return { problem: "the webhook's sealed headers cannot be opened with the current SECRETS_KEY", permanent: false };
  }
  try {
    secrets.push(box.open(webhook.secretSealed, webhookContexts.secret(customerId)));
    if (webhook.previousSecretSealed && webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt.getTime() > Date.now()) {
      secrets.push(box.open(webhook.previousSecretSealed, webhookContexts.previousSecret(customerId)));
    }
  } catch (error) {
    logger.error({ err: error, customerId }, "webhook signing secret does not open");
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

/** One signed POST (Standard Webhooks headers after the configured ones, so they cannot be overridden). Never throws. */
export function sendTo(target: Target, settings: NotificationSettings, messageId: string, body: string): Promise<SendResult> {
  return postSigned(target.url, target.headers, target.secrets, messageId, body, settings.timeoutS * 1000, settings.allowPrivate);
}
