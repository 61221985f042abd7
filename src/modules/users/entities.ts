/** The end-user entity (reference: "User"); soft-deleted users keep their row with `deletedAt`. */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../identity/entities.js";
import type { IndividualProfile } from "../../domain/users.js";

/** User lifecycle status (reference: "States and transitions › User"). */
export type UserStatus = "PENDING" | "VERIFIED" | "SUSPENDED";
/** Verification attribute named by the list filters. */
export type VerificationStatus = "verified" | "unverified" | "pending";

/**
 * An end user of a customer. `emailNormalized` (lower-case) and `phoneE164` carry the per-customer
 * uniqueness among users that are not deleted (partial unique indexes in the migration).
 */
export const User = defineEntity({
  name: "User",
  tableName: "app_user",
  indexes: [
    { name: "app_user_customer_created_index", columns: [{ name: "customer_id" }, { name: "created_at", sort: "DESC" }] },
  ],
  uniques: [
    { name: "app_user_email_per_customer_unique", properties: ["customerId", "emailNormalized"], where: "deleted_at is null" },
    { name: "app_user_phone_per_customer_unique", properties: ["customerId", "phoneE164"], where: "deleted_at is null" },
  ],
  properties: {
    userId: p.uuid().primary(),
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id"),
    accountType: p.string(),
    accountRole: p.string(),
    accountPurpose: p.string(),
    firstName: p.string(),
    lastName: p.string(),
    email: p.string(),
    emailNormalized: p.string(),
    phoneCountryCode: p.string(),
    phoneNumber: p.string(),
    phoneE164: p.string(),
    status: p.string().$type<UserStatus>(),
    verificationStatus: p.string().$type<VerificationStatus>(),
    isActive: p.boolean(),
    individual: p.json<IndividualProfile>(),
    deletedAt: p.datetime().nullable(),
    /** Time of the last deactivation (reference: User, Deactivate); tokens are revoked through `tokenVersion`. */
    tokensRevokedAt: p.datetime().nullable(),
    /**
     * Version of the user's tokens: each deactivation adds one, and a user token authenticates only
     * while the version it carries is the user's (src/modules/identity/auth.ts; docs/security.md
     * "Tokens and rate-limit headers").
     */
    tokenVersion: p.integer().default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
    // The creation instant itself, so a new user's updated_at equals its created_at (two `new Date()` could straddle a millisecond).
    updatedAt: p.datetime().onCreate((user: { createdAt?: Date }) => user.createdAt ?? new Date()).onUpdate(() => new Date()),
  },
});
export type User = InferEntity<typeof User>;

/** The users module's entities, for the ORM's entity list (src/modules/entities.ts). */
export const USER_ENTITIES = [User];
