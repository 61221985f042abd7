/**
 * Ledger tables (src/domain/ledger.ts has the rules): accounts (wallet accounts with their cached
 * balance), journal entries, and postings. Amounts are `numeric(38,18)`, read and written as
 * decimal strings.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { JournalKind } from "../../domain/ledger.js";

/**
 * Kinds of journal entries the ledger writes: src/domain/ledger.ts `JournalKind`, and
 * `deposit_reversal` (the wallet's available → the network's external account): a credited live
 * deposit taken back after a reorg, and the later credits that cover its deficit
 * (docs/decisions/live-chains.md "Reorgs"; ./deficits.ts).
 */
export type LedgerEntryKind = JournalKind | "deposit_reversal";

/**
 * A ledger account: a wallet's `available` or `held` bucket of one currency, the `external`
 * account of a network and currency, or the trading `liquidity` and `fees` accounts of a currency
 * (uncached like external ones; docs/decisions/trading.md "The ledger").
 *
 * `balance`: for a wallet bucket, the cache of the sum of its postings, kept under a row lock in
 * the same transaction as the postings, never negative and never null (CHECK constraints). For an
 * external account, null: it keeps no cache, so no deposit or withdrawal locks or rewrites its row
 * (docs/decisions/customers-users-and-wallets.md "The custody ledger"); its balance is the sum of its postings (`LedgerService.externalBalances`). A value
 * there is stale: `verify()` reports it and `rebuildBalanceCache()` clears it.
 */
export const LedgerAccount = defineEntity({
  name: "LedgerAccount",
  tableName: "ledger_account",
  checks: [
    { name: "ledger_account_balance_check", expression: "bucket = 'external' or bucket = 'liquidity' or bucket = 'fees' or balance >= 0" },
    { name: "ledger_account_cached_balance_check", expression: "bucket = 'external' or bucket = 'liquidity' or bucket = 'fees' or balance is not null" },
  ],
  indexes: [{ name: "ledger_account_wallet_id_index", properties: ["walletId"] }],
  properties: {
    id: p.bigint("number").primary(),
    code: p.string().unique(),
    bucket: p.string().$type<"available" | "held" | "external" | "liquidity" | "fees">(),
    walletId: p.uuid().nullable(),
    network: p.string().nullable(),
    currency: p.string(),
    /** Cached balance of a wallet bucket; null for an external account (derived from its postings). */
    balance: p.decimal("string").precision(38).scale(18).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type LedgerAccount = InferEntity<typeof LedgerAccount>;

/**
 * A journal entry: one balanced set of postings, with what caused it. `walletId` is the wallet it
 * concerns (a transfer's: the source; the destination is in the transfer its `reference` names).
 */
export const JournalEntry = defineEntity({
  name: "JournalEntry",
  tableName: "journal_entry",
  indexes: [{ name: "journal_entry_wallet_id_index", properties: ["walletId"] }],
  properties: {
    id: p.bigint("number").primary(),
    kind: p.string().$type<LedgerEntryKind>(),
    walletId: p.uuid(),
    network: p.string(),
    currency: p.string(),
    amount: p.decimal("string").precision(38).scale(18),
    /** What caused the entry, e.g. `wallet_transaction:42`, `withdrawal:<id>` or `transfer:<id>`. */
    reference: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type JournalEntry = InferEntity<typeof JournalEntry>;

/** One line of a journal entry; the postings of an entry sum to zero per currency. */
export const LedgerPosting = defineEntity({
  name: "LedgerPosting",
  tableName: "ledger_posting",
  indexes: [
    { name: "ledger_posting_entry_id_index", properties: ["entryId"] },
    { name: "ledger_posting_account_id_index", properties: ["accountId"] },
  ],
  properties: {
    id: p.bigint("number").primary(),
    entryId: () => p.manyToOne(JournalEntry).mapToPk().fieldName("entry_id"),
    accountId: () => p.manyToOne(LedgerAccount).mapToPk().fieldName("account_id"),
    currency: p.string(),
    amount: p.decimal("string").precision(38).scale(18),
  },
});
export type LedgerPosting = InferEntity<typeof LedgerPosting>;

/**
 * What a wallet owes in one currency on one network after a reorg took back a credited deposit the
 * wallet's available could not cover (docs/decisions/live-chains.md "Reorgs"): the part of the
 * reversal not yet posted. Later credits of the currency post it (`deposit_reversal` entries) and
 * the row goes once nothing is owed; it never holds zero or less (CHECK). Exact decimal text,
 * 8 decimals at most (a live deposit's amount).
 */
export const WalletDeficit = defineEntity({
  name: "WalletDeficit",
  tableName: "wallet_deficit",
  checks: [{ name: "wallet_deficit_amount_check", expression: "amount > 0" }],
  properties: {
    walletId: p.uuid().primary(),
    currency: p.string().length(16).primary(),
    /** The network whose external account the reversal owes (`networks/ethereum`). */
    network: p.string().length(32).primary(),
    amount: p.decimal("string").precision(38).scale(18),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type WalletDeficit = InferEntity<typeof WalletDeficit>;

/** The ledger module's entities, for the ORM's entity list (src/modules/entities.ts). */
export const LEDGER_ENTITIES = [LedgerAccount, JournalEntry, LedgerPosting, WalletDeficit];
