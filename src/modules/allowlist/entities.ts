/** The withdrawal allowlist of users (docs/decisions/limits-and-allowlist.md "Destination allowlist"). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../identity/entities.js";
import { User } from "../users/entities.js";

/**
 * One destination of a user's allowlist. `address` is kept as added; `addressKey` is the form two
 * spellings of one destination share (src/domain/allowlist.ts `addressKey`), unique per user and
 * currency. `activatesAt` = `createdAt` + `ALLOWLIST_COOLDOWN_S`; the status is computed from it
 * at each read.
 */
export const AllowlistAddress = defineEntity({
  name: "AllowlistAddress",
  tableName: "allowlist_address",
  indexes: [{ name: "allowlist_address_user_created_index", properties: ["userId", "createdAt"] }],
  uniques: [{ name: "allowlist_address_user_currency_address_unique", properties: ["userId", "currency", "addressKey"] }],
  properties: {
    id: p.uuid().primary(),
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id"),
    userId: () => p.manyToOne(User).mapToPk().fieldName("user_id"),
    currency: p.string().length(16),
    address: p.string().length(128),
    addressKey: p.string().length(128),
    label: p.string().length(100),
    createdAt: p.datetime(),
    activatesAt: p.datetime(),
  },
});
export type AllowlistAddress = InferEntity<typeof AllowlistAddress>;
