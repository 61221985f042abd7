/**
 * Cards on credit wallets (docs/decisions/cards.md; spec spec/credit/cards.tsp `Card`): table
 * `credit_card`, one row per card. The card number is kept only sealed under the secrets key,
 * bound to the card's id (`pan_sealed`, src/modules/identity/secrets.ts `SecretBox.seal`), with
 * its keyed fingerprint (`pan_fingerprint`, `SecretBox.hash`) unique per tenant; the security code
 * is not kept. Spend controls are a JSON object (spec `CardSpendControls`), amounts in cents.
 * Instants UTC, on the tenant's sandbox clock while it is active.
 * Indexes: the wallet's list (newest first) and the tenant's unique fingerprints.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { CardState, SpendControls } from "../../../domain/cards.js";
import { CreditWallet } from "../accounts/entities.js";

/** A card on a credit wallet. */
export const CreditCard = defineEntity({
  name: "CreditCard",
  tableName: "credit_card",
  indexes: [{ name: "credit_card_wallet_created_index", properties: ["walletId", "createdAt"] }],
  uniques: [{ name: "credit_card_customer_fingerprint_unique", properties: ["customerId", "panFingerprint"] }],
  properties: {
    cardId: p.uuid().primary(),
    walletId: () => p.manyToOne(CreditWallet).mapToPk().fieldName("wallet_id"),
    customerId: p.string().length(48),
    /** `ACTIVE`, `PAUSED` (both open) or `CLOSED` (final). */
    state: p.string().length(8).$type<CardState>(),
    cardholderName: p.string().length(100),
    last4: p.string().length(4),
    expMonth: p.smallint(),
    expYear: p.smallint(),
    /** The card number sealed under the secrets key, bound to `card_id`. */
    panSealed: p.text(),
    /** Keyed fingerprint (HMAC-SHA256, hex) of the tenant and the card number: unique per tenant. */
    panFingerprint: p.string().length(64),
    spendControls: p.json<SpendControls>().nullable(),
    memo: p.string().length(255).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** When the card was closed (by an update or the wallet's dissolution); null while open. */
    closedAt: p.datetime().nullable(),
  },
});
export type CreditCard = InferEntity<typeof CreditCard>;
