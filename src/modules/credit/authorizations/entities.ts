/**
 * Card authorizations on credit wallets (docs/decisions/credit.md "Authorizations"; spec
 * spec/credit/authorizations.tsp `CreditAuthorization`). One row per authorization, approved or
 * declined, written in the transaction of the wallet change that decided it; the open ones
 * (`approved`) are the engine's holds (src/domain/credit/holds.ts), loaded with the wallet when its
 * `amount_held` is not 0, and their sum is the wallet's `amount_held`.
 *
 * Amounts in integer cents (`bigint`); instants UTC (the tenant's sandbox clock while it is active).
 * Indexes: the wallet's list (newest first); the open holds of a wallet; and the open holds by
 * expiry, for the cycle batches' expiry step (src/modules/credit/cycles/).
 * The Idempotency-Key of an Authorize is a shared `idempotency_key` row of scope `credit`
 * (src/modules/idempotency/, docs/idempotency.md).
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CreditWallet } from "../accounts/entities.js";

/** Lifecycle of an authorization (spec `CreditAuthorizationStatus`): `approved` is open, the others are final. */
export type CreditAuthorizationStatus = "approved" | "declined" | "captured" | "voided" | "expired";

/** An authorization of a card processor on a credit wallet. */
export const CreditAuthorization = defineEntity({
  name: "CreditAuthorization",
  tableName: "credit_authorization",
  indexes: [
    { name: "credit_authorization_wallet_created_index", properties: ["walletId", "createdAt"] },
    { name: "credit_authorization_open_wallet_index", properties: ["walletId"], where: "status = 'approved'" },
    { name: "credit_authorization_open_expiry_index", properties: ["expiresAt"], where: "status = 'approved'" },
  ],
  checks: [
    { name: "credit_authorization_amounts", expression: "amount > 0 and captured_amount >= 0 and released_amount >= 0 and captured_amount + released_amount <= amount" },
  ],
  properties: {
    authorizationId: p.uuid().primary(),
    walletId: () => p.manyToOne(CreditWallet).mapToPk().fieldName("wallet_id"),
    customerId: p.string().length(48),
    status: p.string().length(16).$type<CreditAuthorizationStatus>(),
    /** Why it was declined (spec `CreditDeclineReason`); null unless `declined`. */
    declineReason: p.string().length(32).nullable(),
    /** Amount requested, cents. */
    amount: p.bigint("number"),
    capturedAmount: p.bigint("number").defaultRaw("0"),
    /** Released by a void, an expiry, a dissolution or the rest of a partial capture, cents. */
    releasedAmount: p.bigint("number").defaultRaw("0"),
    merchantName: p.string().length(255),
    merchantMcc: p.string().length(4).nullable(),
    merchantCountry: p.string().length(2).nullable(),
    reference: p.string().length(255).nullable(),
    idempotencyKey: p.string().length(255),
    /** When the hold expires (a daily close, 00:00 UTC); null for a decline. */
    expiresAt: p.datetime().nullable(),
    /** When it was captured, voided or expired; null while open or for a decline. */
    closedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});
export type CreditAuthorization = InferEntity<typeof CreditAuthorization>;
