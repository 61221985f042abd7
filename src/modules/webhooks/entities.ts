/**
 * The customer's PIN webhook (reference: "Webhook configuration"; docs/decisions/notifications.md)
 * and its delivery log; the attempts of a delivery are the outbox's `delivery_attempt` rows
 * (channel `webhook`, src/modules/outbox/entities.ts). Secrets and header values are sealed at
 * rest (AES-256-GCM, {@link SecretBox.seal}).
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../identity/entities.js";

/**
 * One webhook target per customer. `headersSealed` holds the configured headers (JSON
 * `[{key, value}]`) and `secretSealed` the `whsec_` signing secret, both sealed. During a
 * rotation `previousSecretSealed` also signs until `previousSecretExpiresAt`. `disabledAt` is set
 * when the receiver answered HTTP 410; Create and Update clear it.
 */
export const Webhook = defineEntity({
  name: "Webhook",
  tableName: "webhook",
  properties: {
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id").primary(),
    url: p.string().length(2048),
    headersSealed: p.text(),
    secretSealed: p.text(),
    previousSecretSealed: p.text().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    disabledAt: p.datetime().nullable(),
    disabledReason: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type Webhook = InferEntity<typeof Webhook>;

/** Status of a delivery (schema `WebhookDeliveryStatus`). */
export type WebhookDeliveryStatus = "pending" | "succeeded" | "failed" | "disabled";

/**
 * The outbox row of one notification, written in the transaction of the event that causes it,
 * and its delivery state. `webhookMessageId` is the Standard Webhooks `webhook-id` (the same on
 * every attempt); `payloadSealed` the exact JSON body, sealed. `nextAttemptAt` is when a delivery
 * round may take it next: its backoff after a failure, or a lease while one round sends it.
 */
export const WebhookDelivery = defineEntity({
  name: "WebhookDelivery",
  tableName: "webhook_delivery",
  indexes: [
    { name: "webhook_delivery_customer_created_index", properties: ["customerId", "createdAt"] },
    { name: "webhook_delivery_due_index", properties: ["status", "nextAttemptAt"] },
  ],
  properties: {
    id: p.uuid().primary(),
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id"),
    webhookMessageId: p.string().length(64).unique(),
    eventType: p.string().length(64),
    payloadSealed: p.text(),
    status: p.string().length(16).$type<WebhookDeliveryStatus>(),
    attemptCount: p.integer(),
    nextAttemptAt: p.datetime().nullable(),
    /** What caused it, e.g. `withdrawal:<id>`. */
    reference: p.string().length(128).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type WebhookDelivery = InferEntity<typeof WebhookDelivery>;
