/** Two-step crypto withdrawals (reference: "Withdrawal"; decisions.md §4). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { WithdrawalStatus } from "../../domain/withdrawals.js";
import { Customer } from "../identity/entities.js";
import { User } from "../users/entities.js";
import { Wallet } from "../wallets/entities.js";

/**
 * A withdrawal of a user's account. Its amount is held in the ledger from initiation until confirm
 * (debited) or cancel (released). The current confirmation code is stored only as a keyed hash
 * (`codeHash`, null once used or voided). `idempotencyKey` is unique per customer and kept as long
 * as the withdrawal; `requestFingerprint` (SHA-256 of the canonical request) tells a repeat from a
 * reuse of the key with another body.
 */
export const Withdrawal = defineEntity({
  name: "Withdrawal",
  tableName: "withdrawal",
  uniques: [{ name: "withdrawal_customer_idempotency_key_unique", properties: ["customerId", "idempotencyKey"] }],
  indexes: [
    { name: "withdrawal_user_created_index", properties: ["userId", "createdAt"] },
    { name: "withdrawal_user_currency_created_index", properties: ["userId", "currency", "createdAt"] },
  ],
  properties: {
    id: p.uuid().primary(),
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id"),
    userId: () => p.manyToOne(User).mapToPk().fieldName("user_id"),
    walletId: () => p.manyToOne(Wallet).mapToPk().fieldName("wallet_id"),
    network: p.string(),
    currency: p.string(),
    amount: p.decimal("string").precision(38).scale(18),
    address: p.string(),
    memo: p.string().length(255).nullable(),
    status: p.string().$type<WithdrawalStatus>(),
    codeHash: p.string().nullable(),
    codeExpiresAt: p.datetime(),
    codeAttempts: p.integer(),
    idempotencyKey: p.string(),
    requestFingerprint: p.string(),
    txHash: p.string().nullable(),
    completedAt: p.datetime().nullable(),
    cancelledAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type Withdrawal = InferEntity<typeof Withdrawal>;
