/** The customer's email poller (reference: "Email poller"; docs/decisions/withdrawals.md "The email poller"). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../identity/entities.js";

/**
 * One poller per customer (`customer_id` unique). The mailbox address and IMAP login are derived
 * from the customer's owner credential; the password is sealed at rest (AES-256-GCM,
 * {@link SecretBox.seal}). The statistics are updated by every poll.
 */
export const EmailPoller = defineEntity({
  name: "EmailPoller",
  tableName: "email_poller",
  properties: {
    pollerId: p.uuid().primary(),
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id").unique(),
    email: p.string().length(255),
    imapHost: p.string().length(255),
    imapPort: p.integer(),
    imapTls: p.boolean(),
    imapUser: p.string().length(255),
    passwordSealed: p.text(),
    description: p.string().length(255).nullable(),
    enabled: p.boolean(),
    lastPolledAt: p.datetime().nullable(),
    lastSuccessfulPollAt: p.datetime().nullable(),
    lastErrorAt: p.datetime().nullable(),
    lastError: p.text().nullable(),
    totalEmailsProcessed: p.integer(),
    totalPinsExtracted: p.integer(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type EmailPoller = InferEntity<typeof EmailPoller>;

/** The email poller module's entities, for the ORM's entity list (src/modules/entities.ts). */
export const POLLER_ENTITIES = [EmailPoller];
