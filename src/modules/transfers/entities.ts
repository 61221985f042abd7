/** Internal transfers between two wallets of one customer (docs/decisions/limits-and-allowlist.md "Transfers"). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../identity/entities.js";
import { JournalEntry } from "../ledger/entities.js";
import { User } from "../users/entities.js";
import { Wallet } from "../wallets/entities.js";

/** A transfer's status: always `COMPLETED` (one ledger entry, booked at once). */
export type TransferStatus = "COMPLETED";

/**
 * A transfer: `amount` (`numeric(38,18)`, decimal string, units of `currency`) moved from
 * `fromWalletId` (of `fromUserId`) to `toWalletId` (of `toUserId`) by the ledger entry
 * `journalEntryId`, in the transaction that wrote this row. `idempotencyKey` is the key it was
 * created with (sent or generated); the key's uniqueness per customer and caller and the request's
 * fingerprint live in `idempotency_key`, scope `transfer` (docs/idempotency.md). The indexes serve
 * List Wallet Transfers (both directions, newest first) and the sender's cap sums
 * (src/modules/transfers/repository.ts `transferUsage`).
 */
export const Transfer = defineEntity({
  name: "Transfer",
  tableName: "transfer",
  indexes: [
    { name: "transfer_from_wallet_created_index", properties: ["fromWalletId", "createdAt"] },
    { name: "transfer_to_wallet_created_index", properties: ["toWalletId", "createdAt"] },
    { name: "transfer_from_user_currency_created_index", properties: ["fromUserId", "currency", "createdAt"] },
  ],
  properties: {
    id: p.uuid().primary(),
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id"),
    fromWalletId: () => p.manyToOne(Wallet).mapToPk().fieldName("from_wallet_id"),
    toWalletId: () => p.manyToOne(Wallet).mapToPk().fieldName("to_wallet_id"),
    fromUserId: () => p.manyToOne(User).mapToPk().fieldName("from_user_id"),
    toUserId: () => p.manyToOne(User).mapToPk().fieldName("to_user_id"),
    currency: p.string().length(16),
    amount: p.decimal("string").precision(38).scale(18),
    memo: p.string().length(255).nullable(),
    status: p.string().length(16).$type<TransferStatus>(),
    idempotencyKey: p.string().length(255),
    journalEntryId: () => p.manyToOne(JournalEntry).mapToPk().fieldName("journal_entry_id"),
    /** Booking time, UTC. */
    createdAt: p.datetime(),
  },
});
export type Transfer = InferEntity<typeof Transfer>;

/** The transfers module's entities, for the ORM's entity list (src/modules/entities.ts). */
export const TRANSFER_ENTITIES = [Transfer];
