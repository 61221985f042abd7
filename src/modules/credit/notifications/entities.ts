/**
 * Credit notification entity (docs/decisions/notifications.md "Credit notifications"): each tenant's credit notification target.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../../identity/entities.js";

/**
 * The credit notification target of one tenant (NotificationsEnlist): the callback URL and its
 * `whsec_` Standard Webhooks signing secret, sealed at rest ({@link SecretBox.seal}, context
 * `credit-notifications-secret:<customer_id>`). `disabledAt` is set when the receiver answered
 * HTTP 410; NotificationsEnlist clears it.
 */
export const CreditNotificationTarget = defineEntity({
  name: "CreditNotificationTarget",
  tableName: "credit_notification_target",
  properties: {
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id").primary(),
    url: p.string().length(2048),
    secretSealed: p.text(),
    disabledAt: p.datetime().nullable(),
    disabledReason: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type CreditNotificationTarget = InferEntity<typeof CreditNotificationTarget>;
