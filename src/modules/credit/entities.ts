/**
 * Credit core entities of issue 9's first endpoints (reference: "Credit product (credit core)";
 * decisions.md §5–§6): the tenants' credit products and each tenant's credit notification target.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../identity/entities.js";

/**
 * A credit product of one tenant (platform customer), identified within the tenant by its
 * three-digit `code` (unique per tenant: `credit_product_customer_code_unique`). Rates are percent
 * with at most 4 decimal places, stored `numeric` and read as decimal strings so the cycle engine
 * gets them exactly; amounts are integer cents (`bigint`). `interestAccrualMethod` is stored as the
 * short name (`ADB` | `BAC`).
 */
export const CreditProduct = defineEntity({
  name: "CreditProduct",
  tableName: "credit_product",
  uniques: [{ name: "credit_product_customer_code_unique", properties: ["customerId", "code"] }],
  properties: {
    id: p.uuid().primary(),
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id"),
    code: p.string().length(3),
    revolving: p.boolean(),
    compound: p.boolean(),
    cutFrequency: p.string().length(16).$type<"daily" | "weekly" | "biweekly" | "month" | "year">(),
    fixedInterestAmount: p.bigint("number"),
    baseInterestRate: p.decimal("string").precision(9).scale(4),
    baseMinimumPaymentRate: p.decimal("string").precision(9).scale(4),
    fixedMinimumPaymentAmount: p.bigint("number"),
    capitalInterestSplit: p.decimal("string").precision(9).scale(4),
    gracePeriod: p.integer(),
    variableSpecs: p.boolean(),
    morosidadRate: p.decimal("string").precision(9).scale(4),
    baseInterestMorosidad: p.bigint("number"),
    interestAccrualMethod: p.string().length(3).$type<"ADB" | "BAC">(),
    dailyRateDivisor: p.integer().$type<360 | 365>(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type CreditProduct = InferEntity<typeof CreditProduct>;

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
