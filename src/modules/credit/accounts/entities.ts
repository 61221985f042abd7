/**
 * Credit wallet storage (docs/decisions/credit.md "Wallets"; spec/credit/wallets.tsp, statements.tsp, events.tsp, payments.tsp,
 * charges.tsp; docs/decisions/credit.md "Batches and clocks"). One row per wallet holds the engine's `WalletState` counters
 * (src/domain/credit/wallet.ts) so that operations lock only their own wallet row and the cycle
 * batches update all due wallets in one statement each:
 *
 * - `credit_wallet`: balances in integer cents (CHECKed non-negative), status, cycle position
 *   (`cycle_start`, `sum_of_daily_balance`, `last_close_at`, `next_cut_at`), the specs in force, a
 *   pending override, the last notification `sequence` and `as_of` (every scheduled step due at or
 *   before it has run);
 * - `credit_statement`: one per (wallet, cut), unique, so a rerun or a crash mid-batch books no cut twice;
 * - `credit_event`: the event log and notification outbox, one row per notification, unique per
 *   (wallet, sequence), written in the transaction of the change;
 * - `credit_charge`, `credit_payment`: the operations (authorizations: ../authorizations/entities.ts); their keys are the shared `idempotency_key`
 *   rows of scope `credit` (src/modules/idempotency/, docs/idempotency.md);
 * The HTTP attempts of a notification's delivery are the outbox's `delivery_attempt` rows
 * (channel `credit`; src/modules/outbox/entities.ts, docs/outbox.md).
 *
 * The tenant's sandbox clock (`credit_clock`) is ../clock/entities.ts.
 *
 * A wallet whose next cycle step would take an amount past ±(2^53 − 1) cents is set aside
 * (`set_aside_at`, `set_aside_reason`; docs/security.md "Money stays exact").
 *
 * Column names follow the engine's field names in snake_case; `limit` is stored as `credit_limit`
 * (a reserved word). Rates are percent `numeric(9,4)` read as decimal strings.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../../identity/entities.js";
import { User } from "../../users/entities.js";
import { CreditProduct } from "../products/entities.js";
import { streamOrderTriggerDdl, streamOrderTriggerName } from "../../outbox/stream-order.js";

/** A ChangeInterestCreditCapital override waiting for the wallet's next cut (engine `WalletState.pendingSpecs`). */
export interface PendingSpecsColumn {
  interestSpecs: { interestRateNominal: number; interestRateMoroso: number; fixedInterestNominal: number; fixedInterestMoroso: number };
  minimumPaymentSpecs: { minimumPaymentRate: number; fixedMinimumPayment: number };
  /** When the override was requested (the tenant's clock), ISO 8601 UTC. */
  requestedAt: string;
}

/** A credit wallet of one tenant's user, tied to one of the tenant's credit products. */
export const CreditWallet = defineEntity({
  name: "CreditWallet",
  tableName: "credit_wallet",
  indexes: [
    { name: "credit_wallet_customer_created_index", properties: ["customerId", "createdAt"] },
    { name: "credit_wallet_next_cut_index", properties: ["nextCutAt"] },
    { name: "credit_wallet_product_index", properties: ["productId"] },
    { name: "credit_wallet_set_aside_index", properties: ["setAsideAt"], where: "set_aside_at is not null" },
  ],
  checks: [
    { name: "credit_wallet_counters_non_negative", expression: "credit_limit >= 0 and available_amount >= 0 and principal_outstanding >= 0 and interest_outstanding >= 0 and sum_of_daily_balance >= 0 and sequence >= 0 and amount_held >= 0" },
  ],
  properties: {
    walletId: p.uuid().primary(),
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id"),
    userId: () => p.manyToOne(User).mapToPk().fieldName("user_id"),
    productId: () => p.manyToOne(CreditProduct).mapToPk().fieldName("product_id"),
    currency: p.string().length(3),
    description: p.string().length(255).nullable(),
    status: p.string().length(16).$type<"active" | "blocked" | "in_default" | "dissolved">(),
    statusBeforeDefault: p.string().length(16).nullable().$type<"active" | "blocked">(),
    limit: p.bigint("number").fieldName("credit_limit"),
    availableAmount: p.bigint("number"),
    principalOutstanding: p.bigint("number"),
    interestOutstanding: p.bigint("number"),
    /** Sum of the open holds (`credit_authorization` rows `approved`), cents (docs/decisions/credit.md "Authorizations"). */
    amountHeld: p.bigint("number").defaultRaw("0"),
    firstCutDate: p.datetime(),
    time: p.integer().nullable(),
    expiresAt: p.datetime().nullable(),
    cycleStart: p.datetime(),
    sumOfDailyBalance: p.bigint("number"),
    /** Instant (00:00 UTC) of the last daily close run, or null before the first. */
    lastCloseAt: p.datetime().nullable(),
    /** The next cut the batches will run (engine `nextCutAfter`); null once dissolved. */
    nextCutAt: p.datetime().nullable(),
    interestRateNominal: p.decimal("string").precision(9).scale(4),
    interestRateMoroso: p.decimal("string").precision(9).scale(4),
    fixedInterestNominal: p.bigint("number"),
    fixedInterestMoroso: p.bigint("number"),
    minimumPaymentRate: p.decimal("string").precision(9).scale(4),
    fixedMinimumPayment: p.bigint("number"),
    specsOverridden: p.boolean(),
    pendingSpecs: p.json<PendingSpecsColumn>().nullable(),
    /** Last notification sequence used (0 before the first event). */
    sequence: p.bigint("number"),
    /** Every scheduled step due at or before this instant has run. */
    asOf: p.datetime(),
    /**
     * Set when the cycle batches set the wallet aside (docs/security.md "Money stays exact"): the
     * credit core instant of the step that would have taken an amount past ±(2^53 − 1) cents and was
     * not run. Its steps stop from then on; reads still answer; changes are refused (409).
     */
    setAsideAt: p.datetime().nullable(),
    /** Why the wallet was set aside (which step, at which instant, which amount); null while it is not. */
    setAsideReason: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type CreditWallet = InferEntity<typeof CreditWallet>;

/** A statement: the outcome of one cut (spec `CreditStatement`, engine `Statement`), unique per (wallet, cut date). */
export const CreditStatement = defineEntity({
  name: "CreditStatement",
  tableName: "credit_statement",
  uniques: [{ name: "credit_statement_wallet_cut_unique", properties: ["walletId", "cutDate"] }],
  indexes: [{ name: "credit_statement_due_index", properties: ["paymentDueDate"] }],
  properties: {
    id: p.uuid().primary(),
    walletId: () => p.manyToOne(CreditWallet).mapToPk().fieldName("wallet_id"),
    /** Ordinal of the statement in its wallet: 0 for the first cut. */
    ordinal: p.integer(),
    cutDate: p.datetime(),
    cycleStart: p.datetime(),
    daysInCycle: p.integer(),
    sumOfDailyBalance: p.bigint("number"),
    principalAtCut: p.bigint("number"),
    interestOutstandingAtCut: p.bigint("number"),
    interestAccrualMethod: p.string().length(3).$type<"ADB" | "BAC">(),
    compound: p.boolean(),
    interestBasis: p.bigint("number"),
    interestRateNominal: p.decimal("string").precision(9).scale(4),
    dailyRateDivisor: p.integer().$type<360 | 365>(),
    fixedInterestNominal: p.bigint("number"),
    minimumPaymentRate: p.decimal("string").precision(9).scale(4),
    fixedMinimumPayment: p.bigint("number"),
    interestGenerated: p.bigint("number"),
    minimumPayment: p.bigint("number"),
    paymentDueDate: p.datetime(),
    paidInCycle: p.bigint("number"),
    status: p.string().length(16).$type<"pending" | "paid" | "defaulted">(),
    interestApplied: p.bigint("number"),
    interestAppliedAt: p.datetime().nullable(),
    penalInterest: p.bigint("number"),
    interestRateMoroso: p.decimal("string").precision(9).scale(4).nullable(),
    fixedInterestMoroso: p.bigint("number").nullable(),
    curedAt: p.datetime().nullable(),
  },
});
export type CreditStatement = InferEntity<typeof CreditStatement>;

/** Delivery state of a credit notification (src/modules/credit/notifications/delivery.ts). */
export type CreditDeliveryStatus = "pending" | "succeeded" | "failed" | "disabled";

/**
 * One credit notification (spec `CreditWalletEvent`): the wallet's event log and the outbox of its
 * notifications, written in the transaction of the change. `id` is the `webhook-id` of every
 * delivery attempt; `sequence` is per wallet (1, 2, 3, …; unique per wallet).
 *
 * Delivery state (src/modules/credit/notifications/delivery.ts, docs/outbox.md): `deliveryStatus`,
 * `attemptCount` and `nextAttemptAt` have column defaults (`pending`, 0, null), so writers insert
 * events without them and every new event is a pending delivery. `nextAttemptAt` null means due
 * now; otherwise the backoff after a failed attempt, the lease of the round sending it, or a
 * far-future instant while its tenant has no enabled target (`PARKED_AT`) or while an earlier
 * event of its wallet is pending (`WAITING_AT`, set by the table's insert trigger). The partial indexes of the pending events find each
 * wallet's next event to send (per (wallet, sequence)) and the due ones (per `next_attempt_at`).
 */
export const CreditEvent = defineEntity({
  name: "CreditEvent",
  tableName: "credit_event",
  uniques: [{ name: "credit_event_wallet_sequence_unique", properties: ["walletId", "sequence"] }],
  indexes: [
    { name: "credit_event_pending_delivery_index", properties: ["walletId", "sequence"], where: "delivery_status = 'pending'" },
    { name: "credit_event_pending_due_index", columns: [{ name: "next_attempt_at", sort: "ASC", nulls: "FIRST" }], where: "delivery_status = 'pending'" },
  ],
  // a wallet's later events wait behind its pending one (src/modules/outbox/stream-order.ts, docs/outbox.md)
  triggers: [{ name: streamOrderTriggerName("credit_event"), timing: "before", events: ["insert"], expression: streamOrderTriggerDdl("credit_event", { key: "wallet_id", order: "sequence" }, "delivery_status") }],
  properties: {
    id: p.uuid().primary(),
    walletId: () => p.manyToOne(CreditWallet).mapToPk().fieldName("wallet_id"),
    customerId: p.string().length(48),
    sequence: p.bigint("number"),
    type: p.string().length(32),
    amount: p.bigint("number"),
    direction: p.string().length(6).$type<"debit" | "credit">(),
    affectsBalance: p.boolean(),
    walletDetailsAfter: p.json<Record<string, unknown>>(),
    /** Only on `Reembolso`: the cents of the refund above the debt (docs/decisions/cards.md "Refunds"); null otherwise. */
    unappliedAmount: p.bigint("number").nullable(),
    /** The card of the authorization an `Autorizacion …` or `Reembolso` event is about (docs/decisions/cards.md); null otherwise. */
    cardId: p.uuid().nullable(),
    /** When the event happened (the tenant's clock while the sandbox is active). */
    createdAt: p.datetime(),
    /** `pending` until it is delivered (`succeeded`), given up after the last attempt (`failed`) or its tenant deleted (`disabled`). */
    deliveryStatus: p.string().length(16).default("pending").$type<CreditDeliveryStatus>(),
    /** Attempts recorded so far (`delivery_attempt` rows of channel `credit`). */
    attemptCount: p.integer().default(0),
    /** When a delivery round may take it next (real time); null: due now, or no longer pending. */
    nextAttemptAt: p.datetime().nullable(),
  },
});
export type CreditEvent = InferEntity<typeof CreditEvent>;

/** A charge (PayOutCredit), in cents. */
export const CreditCharge = defineEntity({
  name: "CreditCharge",
  tableName: "credit_charge",
  indexes: [{ name: "credit_charge_wallet_index", properties: ["walletId", "createdAt"] }],
  properties: {
    id: p.uuid().primary(),
    walletId: () => p.manyToOne(CreditWallet).mapToPk().fieldName("wallet_id"),
    amount: p.bigint("number"),
    description: p.string().length(255),
    idempotencyKey: p.string().length(255),
    createdAt: p.datetime(),
  },
});
export type CreditCharge = InferEntity<typeof CreditCharge>;

/** A reported payment (ReportPayCredit) and its split, in cents. */
export const CreditPayment = defineEntity({
  name: "CreditPayment",
  tableName: "credit_payment",
  indexes: [{ name: "credit_payment_wallet_index", properties: ["walletId", "createdAt"] }],
  properties: {
    id: p.uuid().primary(),
    walletId: () => p.manyToOne(CreditWallet).mapToPk().fieldName("wallet_id"),
    amount: p.bigint("number"),
    appliedToInterest: p.bigint("number"),
    appliedToPrincipal: p.bigint("number"),
    appliedToOverdraft: p.bigint("number"),
    idempotencyKey: p.string().length(255),
    createdAt: p.datetime(),
  },
});
export type CreditPayment = InferEntity<typeof CreditPayment>;
