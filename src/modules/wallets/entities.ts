/** Custodial wallets, their deposit addresses and their transaction history (reference: "Wallet", "Wallet transaction"). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../identity/entities.js";
import { User } from "../users/entities.js";
import type { WalletStatus } from "../../domain/wallet-states.js";

/** One network/currency pair of a wallet (reference: `networks[]`). */
export interface WalletNetworkEntry {
  /** Vault network identifier, `networks/<network>`. */
  name: string;
  /** Lower-case currency code. */
  currency: string;
}

/**
 * A custodial wallet of a user. Its name is unique per user as people read it: `nameKey`
 * (src/domain/text.ts `nameKey`: NFKC, case-folded) is unique per user, so "Main" and "ＭＡＩＮ"
 * cannot both exist even under concurrent creates (docs/security.md "Names people compare").
 */
export const Wallet = defineEntity({
  name: "Wallet",
  tableName: "wallet",
  uniques: [{ name: "wallet_user_name_key_unique", properties: ["userId", "nameKey"] }],
  indexes: [{ name: "wallet_customer_id_index", properties: ["customerId"] }],
  properties: {
    walletId: p.uuid().primary(),
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id"),
    userId: () => p.manyToOne(User).mapToPk().fieldName("user_id"),
    vaultWalletId: p.string(),
    name: p.string().length(100),
    /**
     * The name's comparison key (src/domain/text.ts `nameKey`). Null only on a wallet created before
     * the rule whose name matched an older wallet of the same user under it: the older one holds the
     * key (Migration20261126030000_names_tokens).
     */
    nameKey: p.text().nullable(),
    description: p.text().nullable(),
    walletType: p.string().$type<"virtual" | "real">(),
    networks: p.json<WalletNetworkEntry[]>(),
    /** The wallet's state (src/domain/wallet-states.ts; docs/decisions/customers-users-and-wallets.md "Wallet states"). */
    status: p.string().length(16).$type<WalletStatus>(),
    /** Why it is `LOCKED` or `SUSPENDED` (1–255 characters); null otherwise. */
    statusReason: p.string().length(255).nullable(),
    /** While `SUSPENDED`: the status to reinstate (`ACTIVE` or `LOCKED`); null otherwise. */
    suspendedStatus: p.string().length(16).$type<WalletStatus>().nullable(),
    /** While `SUSPENDED`: the reason of the status to reinstate; null otherwise. */
    suspendedReason: p.string().length(255).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type Wallet = InferEntity<typeof Wallet>;

/** A deposit address of a wallet, one per `networks[]` entry; entries of one network share its address. */
export const WalletAddress = defineEntity({
  name: "WalletAddress",
  tableName: "wallet_address",
  uniques: [{ name: "wallet_address_wallet_network_currency_unique", properties: ["walletId", "network", "currency"] }],
  indexes: [{ name: "wallet_address_network_address_index", properties: ["network", "address"] }],
  properties: {
    addressId: p.uuid().primary(),
    walletId: () => p.manyToOne(Wallet).mapToPk().fieldName("wallet_id"),
    network: p.string(),
    currency: p.string(),
    address: p.string(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type WalletAddress = InferEntity<typeof WalletAddress>;

/**
 * A transaction on one of a wallet's addresses (reference: "Wallet transaction"). Amounts are
 * `numeric(38,18)` decimal strings; `balanceAfter` is the wallet's balance of the currency after it.
 */
export const WalletTransaction = defineEntity({
  name: "WalletTransaction",
  tableName: "wallet_transaction",
  indexes: [{ name: "wallet_transaction_wallet_created_index", properties: ["walletId", "createdAt"] }],
  properties: {
    id: p.bigint("number").primary(),
    walletId: () => p.manyToOne(Wallet).mapToPk().fieldName("wallet_id"),
    customerId: p.string(),
    network: p.string(),
    address: p.string(),
    action: p.string(),
    status: p.string(),
    currency: p.string(),
    amount: p.decimal("string").precision(38).scale(18),
    fees: p.decimal("string").precision(38).scale(18),
    netProceeds: p.decimal("string").precision(38).scale(18),
    price: p.decimal("string").precision(38).scale(18),
    balanceAfter: p.decimal("string").precision(38).scale(18),
    hash: p.string(),
    memo: p.string(),
    description: p.string(),
    orderId: p.uuid(),
    /** A trade's pair symbol (e.g. `BTCUSDT`); null for every other movement, whose symbol is its currency's. */
    symbol: p.string().length(32).nullable(),
    tradeId: p.string(),
    idempotencyId: p.string().nullable(),
    journalEntryId: p.bigint("number").nullable(),
    createdAt: p.datetime(),
  },
});
export type WalletTransaction = InferEntity<typeof WalletTransaction>;

/** The wallets module's entities, for the ORM's entity list (src/modules/entities.ts). */
export const WALLET_ENTITIES = [Wallet, WalletAddress, WalletTransaction];
