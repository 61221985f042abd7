/**
 * The outbox's one attempt record (docs/outbox.md "Attempts"): every attempt of every channel's
 * messages, read by the PIN webhook's delivery log and its retry endpoint. Rows of the former
 * `webhook_attempt` and `credit_event_attempt` tables were moved here with their ids
 * (migration 20261126040000).
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** The channels of the outbox, as stored in `delivery_attempt.channel`. */
export type ChannelName = "mail" | "webhook" | "credit";

/**
 * One attempt of a message: `channel` and `messageId` name the message (the id of its row in the
 * channel's table: `outbox_email`, `webhook_delivery`, `credit_event`). No foreign key (the
 * message tables differ); messages are never deleted.
 */
export const DeliveryAttempt = defineEntity({
  name: "DeliveryAttempt",
  tableName: "delivery_attempt",
  indexes: [{ name: "delivery_attempt_message_index", properties: ["channel", "messageId", "attemptedAt"] }],
  properties: {
    id: p.uuid().primary(),
    channel: p.string().length(16).$type<ChannelName>(),
    messageId: p.uuid(),
    /** When the attempt started (real time). */
    attemptedAt: p.datetime(),
    /** The receiver's HTTP status; null when no HTTP answer came (timeout, refused target, connection error) or for mail. */
    httpStatus: p.integer().nullable(),
    /** Milliseconds from the start of the attempt to the end of the answer (or the failure). */
    durationMs: p.integer(),
    /** Why the attempt failed (`HTTP 503`, the connection or SMTP error); null when it succeeded. */
    error: p.text().nullable(),
  },
});
export type DeliveryAttempt = InferEntity<typeof DeliveryAttempt>;
