/**
 * Storage of the one Idempotency-Key mechanism (docs/idempotency.md): table `idempotency_key`.
 * The mechanism reads and writes it with raw SQL (src/modules/idempotency/repository.ts); the entity
 * exists so that the schema check (tests/integration/schema.test.ts) covers the table.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * One used `Idempotency-Key`: primary key (`customerId`, `scope`, `caller`, `key`), so a key is
 * unique per tenant, scope (the operation, or the family of operations sharing one key space) and
 * caller (whose key it is: src/modules/idempotency/service.ts `keyCaller`; `*` for the keys stored
 * before keys were scoped per caller, which answer every caller of their tenant). It keeps
 * the SHA-256 (64 hex characters) of the canonical request it was first used with
 * (`requestFingerprint`) and a reference to what that request produced (`resultId`, e.g. the
 * withdrawal's or the payment's id). Rows are never purged (docs/idempotency.md "The rules", retention).
 * `customerId` carries no foreign key: the credit core's tenants and the platform's customers
 * share the column (both are `customer.customer_id` values).
 */
export const IdempotencyKey = defineEntity({
  name: "IdempotencyKey",
  tableName: "idempotency_key",
  primaryKeys: ["customerId", "scope", "caller", "key"],
  properties: {
    customerId: p.string().length(48).primary(),
    scope: p.string().length(32).primary(),
    /** `user:<userId>`, `credential:<credentialId>`, `operator`, `tenant` (a caller not named) or `*` (before callers). */
    caller: p.string().length(64).primary(),
    key: p.string().length(255).primary(),
    requestFingerprint: p.string().length(64),
    resultId: p.string().length(255),
    /** When the key was first used (UTC). */
    createdAt: p.datetime(),
  },
});
export type IdempotencyKey = InferEntity<typeof IdempotencyKey>;
