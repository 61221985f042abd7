/**
 * Ledger tables (src/domain/ledger.ts has the rules): accounts (wallet accounts with their cached
 * balance), journal entries, and postings. Amounts are `numeric(38,18)`, read and written as
 * decimal strings.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { JournalKind } from "../../domain/ledger.js";

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
    kind: p.string().$type<JournalKind>(),
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

/** The ledger module's entities, for the ORM's entity list (src/modules/entities.ts). */
export const LEDGER_ENTITIES = [LedgerAccount, JournalEntry, LedgerPosting];
