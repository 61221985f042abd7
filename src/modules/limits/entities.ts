/** A customer's own caps and allowlist policy (docs/decisions/limits-and-allowlist.md "Limits"). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { CapSet } from "../../domain/limits.js";
import { Customer } from "../identity/entities.js";

/**
 * One row per customer that called Set Limits: its own caps per kind (`withdrawalCaps`,
 * `transferCaps`: JSON objects keyed by lowercase currency code, each a {@link CapSet} of decimal
 * strings; currencies absent fall back to the service's defaults) and `allowlistRequired`.
 * Movements read it without locking it; Set Limits replaces it in one statement.
 */
export const CustomerLimits = defineEntity({
  name: "CustomerLimits",
  tableName: "customer_limits",
  properties: {
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id").primary(),
    allowlistRequired: p.boolean(),
    withdrawalCaps: p.json<Record<string, CapSet>>(),
    transferCaps: p.json<Record<string, CapSet>>(),
    updatedAt: p.datetime(),
  },
});
export type CustomerLimits = InferEntity<typeof CustomerLimits>;
