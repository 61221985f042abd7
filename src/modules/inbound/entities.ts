/**
 * The customer's inbound webhook: the secrets a provider signs pushed PINs with, and the
 * `webhook-id`s already answered (docs/decisions/withdrawals.md "PINs pushed by the provider").
 * Every statement on these tables is in ./repository.ts; the entities define the schema.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../identity/entities.js";

/**
 * One row per customer with an inbound webhook. `secretSealed` is the current `whsec_` secret,
 * sealed (src/modules/identity/secrets.ts `SecretBox.seal`); after a rotation `previousSecretSealed` still verifies until
 * `previousSecretExpiresAt`. `createdAt` is when the current secret was created. Deleting the row
 * ends every secret.
 */
export const InboundWebhook = defineEntity({
  name: "InboundWebhook",
  tableName: "inbound_webhook",
  properties: {
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id").primary(),
    secretSealed: p.text(),
    createdAt: p.datetime(),
    previousSecretSealed: p.text().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
  },
});
export type InboundWebhook = InferEntity<typeof InboundWebhook>;

/**
 * A verified message of a customer's inbound webhook, by its `webhook-id`, with the answer it got:
 * `answerStatus` (200 or 400), and for a 400 `answerCode` and `answerField`; `answerMessage` the
 * message. The answer columns are null only inside the transaction that claimed the id. Rows are
 * kept 7 days (./repository.ts `PURGE_MESSAGES`), then purged.
 */
export const InboundWebhookMessage = defineEntity({
  name: "InboundWebhookMessage",
  tableName: "inbound_webhook_message",
  indexes: [{ name: "inbound_webhook_message_customer_received_index", properties: ["customerId", "receivedAt"] }],
  properties: {
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id").primary(),
    webhookId: p.string().length(255).primary(),
    receivedAt: p.datetime(),
    answerStatus: p.smallint().nullable(),
    answerCode: p.string().length(32).nullable(),
    answerField: p.string().length(32).nullable(),
    answerMessage: p.text().nullable(),
  },
});
export type InboundWebhookMessage = InferEntity<typeof InboundWebhookMessage>;

/** The entities of the module, for src/modules/entities.ts. */
export const INBOUND_ENTITIES = [InboundWebhook, InboundWebhookMessage];
