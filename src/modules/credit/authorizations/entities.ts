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
import type { CardDeclineDetail } from "../../../domain/cards.js";
import { CreditWallet } from "../accounts/entities.js";
import { CreditCard } from "../cards/entities.js";

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
    // a card's spend windows (docs/decisions/cards.md "Spend controls")
    { name: "credit_authorization_card_created_index", properties: ["cardId", "createdAt"], where: "card_id is not null" },
  ],
  uniques: [{ name: "credit_authorization_processor_reference_unique", properties: ["customerId", "processorReference"], where: "processor_reference is not null" }],
  checks: [
    { name: "credit_authorization_amounts", expression: "amount > 0 and captured_amount >= 0 and released_amount >= 0 and captured_amount + released_amount <= amount" },
    // refunds never pass what was captured (docs/decisions/cards.md "Refunds")
    { name: "credit_authorization_refunded_amount", expression: "refunded_amount >= 0 and refunded_amount <= captured_amount" },
  ],
  properties: {
    authorizationId: p.uuid().primary(),
    walletId: () => p.manyToOne(CreditWallet).mapToPk().fieldName("wallet_id"),
    /** The card of an Authorize Card (docs/decisions/cards.md); null for Authorize Credit on the wallet. */
    cardId: () => p.manyToOne(CreditCard).mapToPk().fieldName("card_id").nullable(),
    customerId: p.string().length(48),
    status: p.string().length(16).$type<CreditAuthorizationStatus>(),
    /** Why it was declined (spec `CreditDeclineReason`); null unless `declined`. */
    declineReason: p.string().length(32).nullable(),
    /** For `SPEND_LIMIT_EXCEEDED`: the control exceeded, its limit, used and remaining cents (spec `CardDeclineDetail`); null otherwise. */
    declineDetail: p.json<CardDeclineDetail>().nullable(),
    /** Amount requested, cents. */
    amount: p.bigint("number"),
    capturedAmount: p.bigint("number").defaultRaw("0"),
    /** Released by a void, an expiry, a dissolution or the rest of a partial capture, cents. */
    releasedAmount: p.bigint("number").defaultRaw("0"),
    /** Refunded so far by Refund Credit Authorization (`credit_refund` rows), cents; at most `capturedAmount`. */
    refundedAmount: p.bigint("number").defaultRaw("0"),
    merchantName: p.string().length(255),
    merchantMcc: p.string().length(4).nullable(),
    merchantCountry: p.string().length(2).nullable(),
    reference: p.string().length(255).nullable(),
    /** Authorize Card's `processorReference`, unique per tenant (its idempotency); null for Authorize Credit. */
    processorReference: p.string().length(64).nullable(),
    idempotencyKey: p.string().length(255),
    /** When the hold expires (a daily close, 00:00 UTC); null for a decline. */
    expiresAt: p.datetime().nullable(),
    /** When it was captured, voided or expired; null while open or for a decline. */
    closedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});
export type CreditAuthorization = InferEntity<typeof CreditAuthorization>;

/**
 * A refund of a captured authorization (docs/decisions/cards.md "Refunds"; spec
 * spec/credit/refunds.tsp `CreditRefund`), written with its wallet's step in the one write statement
 * (../accounts/repository/write.ts, part `refund`, which also adds `amount` to the authorization's
 * `refunded_amount`). Amounts in integer cents (`amount` = `appliedAmount` + `unappliedAmount`);
 * `createdAt` the tenant's instant. Its Idempotency-Key is a shared `idempotency_key` row of scope
 * `credit` whose result id is `refundId`.
 */
export const CreditRefund = defineEntity({
  name: "CreditRefund",
  tableName: "credit_refund",
  indexes: [{ name: "credit_refund_authorization_index", properties: ["authorizationId"] }],
  checks: [{ name: "credit_refund_amounts", expression: "amount > 0 and applied_amount >= 0 and unapplied_amount >= 0 and applied_amount + unapplied_amount = amount" }],
  properties: {
    refundId: p.uuid().primary(),
    walletId: () => p.manyToOne(CreditWallet).mapToPk().fieldName("wallet_id"),
    customerId: p.string().length(48),
    authorizationId: () => p.manyToOne(CreditAuthorization).mapToPk().fieldName("authorization_id"),
    amount: p.bigint("number"),
    /** Part that lowered the debt (principal, then interest), cents. */
    appliedAmount: p.bigint("number"),
    /** Part above the debt, owed to the cardholder by other means, cents. */
    unappliedAmount: p.bigint("number"),
    idempotencyKey: p.string().length(255),
    createdAt: p.datetime(),
  },
});
export type CreditRefund = InferEntity<typeof CreditRefund>;
