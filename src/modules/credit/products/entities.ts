/**
 * Credit product entity (reference: "Credit product (credit core)"; docs/decisions/credit.md "Products"): the
 * tenants' credit products.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../../identity/entities.js";

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
