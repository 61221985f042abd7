/** Two-step withdrawals, crypto and fiat (reference: "Withdrawal"; docs/decisions/withdrawals.md, docs/decisions/fiat.md). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { PayoutState, WithdrawalStatus, WithdrawalType } from "../../domain/withdrawals.js";
import { Customer } from "../identity/entities.js";
import { User } from "../users/entities.js";
import { Wallet } from "../wallets/entities.js";

/**
 * A withdrawal of a user's account. Its amount is held in the ledger from initiation until confirm
 * (debited) or cancel (released). The current confirmation code is stored only as a keyed hash
 * (`codeHash`, null once used or voided); its attempt counters and resends bound guessing.
 * `idempotencyKey` is the key it was initiated with (answered as `withdraw.idempotency_key`); the
 * key's uniqueness per customer and caller and the request's fingerprint live in `idempotency_key`, scope
 * `withdrawal` (src/modules/idempotency/service.ts; docs/idempotency.md).
 */
export const Withdrawal = defineEntity({
  name: "Withdrawal",
  tableName: "withdrawal",
  indexes: [
    { name: "withdrawal_user_created_index", properties: ["userId", "createdAt"] },
    { name: "withdrawal_user_currency_created_index", properties: ["userId", "currency", "createdAt"] },
    { name: "withdrawal_payout_due_index", properties: ["payoutDueAt"] },
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
    /** Wrong codes since the current code was issued (reset by a new code). */
    codeAttempts: p.integer(),
    /** Wrong codes over the withdrawal's life (never reset); reaching `WITHDRAWAL_CODE_MAX_TOTAL_ATTEMPTS` cancels it. */
    codeFailuresTotal: p.integer().default(0),
    /** Resend Code calls that issued a code (at most `WITHDRAWAL_CODE_MAX_RESENDS`). */
    codeResends: p.integer().default(0),
    /** When the current code was issued, UTC (Resend Code waits `WITHDRAWAL_CODE_RESEND_INTERVAL_S` after it). */
    codeIssuedAt: p.datetime().onCreate(() => new Date()),
    /** Why a CANCELLED withdrawal was cancelled: `user` (Cancel Withdrawal) or `too_many_attempts`. */
    cancelReason: p.string().length(32).nullable(),
    idempotencyKey: p.string(),
    txHash: p.string().nullable(),
    completedAt: p.datetime().nullable(),
    cancelledAt: p.datetime().nullable(),
    /** `crypto` (an address on a network) or `fiat` (a bank account on the currency's rail; docs/decisions/fiat.md "Fiat withdrawals"). */
    withdrawalType: p.string().length(8).$type<WithdrawalType>().default("crypto"),
    /** The bank account a fiat withdrawal pays out to (the bank-accounts module's id); null for crypto. */
    bankAccountId: p.uuid().nullable(),
    /** A confirmed fiat withdrawal's rail (its network, `networks/sepa`, `networks/ach`); null before confirm and for crypto. */
    payoutRail: p.string().length(32).nullable(),
    /** The rail's reference of the payout; null before confirm and for crypto. */
    payoutReference: p.string().length(64).nullable(),
    /** The payout's state on the rail: `submitted`, `settled`, `returned`; null before confirm and for crypto. */
    payoutState: p.string().length(16).$type<PayoutState>().nullable(),
    /** When the settlement job asks the rail about the payout next, UTC; null when nothing more is expected. */
    payoutDueAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type Withdrawal = InferEntity<typeof Withdrawal>;
