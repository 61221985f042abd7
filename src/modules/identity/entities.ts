/**
 * Identity entities: service settings (generated secrets), customers (tenants) and their
 * credentials. Columns are snake_case (MikroORM's underscore naming); the schema lives in the
 * committed migrations under src/db/migrations.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { BusinessProfile } from "../../domain/customers.js";

/** Key/value of service-wide settings: the generated secrets key and the master key's keyed hash. */
export const ServiceSetting = defineEntity({
  name: "ServiceSetting",
  tableName: "service_setting",
  properties: {
    key: p.string().primary(),
    value: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type ServiceSetting = InferEntity<typeof ServiceSetting>;

/** A customer (tenant). Soft-deleted: `deletedAt` set and `isActive` false, never erased. */
export const Customer = defineEntity({
  name: "Customer",
  tableName: "customer",
  indexes: [{ name: "customer_created_at_index", columns: [{ name: "created_at", sort: "DESC" }] }],
  properties: {
    customerId: p.string().length(48).primary(),
    email: p.string(),
    accountType: p.string().$type<"individual" | "corporation">(),
    accountRole: p.string().$type<"client" | "partner">(),
    accountPurpose: p.text(),
    firstName: p.string(),
    lastName: p.string(),
    phoneCountryCode: p.string(),
    phoneNumber: p.string(),
    business: p.json<BusinessProfile>(),
    status: p.string(),
    isActive: p.boolean(),
    deletedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type Customer = InferEntity<typeof Customer>;

/**
 * An API credential of a customer. The secret is stored only as a keyed hash (`secretHash`,
 * HMAC-SHA256 hex) and a short display prefix; every generated credential is an owner credential.
 */
export const Credential = defineEntity({
  name: "Credential",
  tableName: "credential",
  indexes: [{ name: "credential_customer_id_index", properties: ["customerId"] }],
  properties: {
    credentialId: p.uuid().primary(),
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id"),
    secretHash: p.string().unique(),
    secretPrefix: p.string(),
    isOwner: p.boolean(),
    userEmail: p.string(),
    userName: p.string(),
    isActive: p.boolean(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type Credential = InferEntity<typeof Credential>;

/** The identity module's entities, for the ORM's entity list (src/modules/entities.ts). */
export const IDENTITY_ENTITIES = [ServiceSetting, Customer, Credential];
