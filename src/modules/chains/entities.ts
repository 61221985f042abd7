/**
 * The live EVM networks' state (docs/decisions/live-chains.md): per network the follower's cursor
 * and the node's last head, the window of blocks followed by parent hash, and the deposits found on
 * chain. Heights are block numbers; amounts exact decimal text in the currency's units (8 decimals
 * at most, rounded down from the chain's units); instants UTC.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * The follower of one live network: the chain it follows (`chain_id`), the node's head when last
 * asked, the highest block processed (`scanned`, its hash `scanned_hash`), and the last node failure.
 */
export const ChainCursor = defineEntity({
  name: "ChainCursor",
  tableName: "chain_cursor",
  properties: {
    network: p.string().length(32).primary(),
    chainId: p.bigint("number"),
    /** The node's head block number when last asked. */
    head: p.bigint("number"),
    /** The highest block number processed; its deposits are recorded. */
    scanned: p.bigint("number"),
    scannedHash: p.string().length(66),
    /** The last failure of the node (a timeout, an error answer), or null once it answers again. */
    lastError: p.text().nullable(),
    lastErrorAt: p.datetime().nullable(),
    updatedAt: p.datetime(),
  },
});
export type ChainCursor = InferEntity<typeof ChainCursor>;

/**
 * A block the follower processed, kept for a window deeper than any followed reorg (at least 64
 * blocks, docs/decisions/live-chains.md "Reorgs"): its hash and its parent's, by network and height.
 */
export const ChainBlock = defineEntity({
  name: "ChainBlock",
  tableName: "chain_block",
  properties: {
    network: p.string().length(32).primary(),
    height: p.bigint("number").primary(),
    hash: p.string().length(66),
    parentHash: p.string().length(66),
  },
});
export type ChainBlock = InferEntity<typeof ChainBlock>;

/** A deposit's life on chain: `pending` (seen, not yet credited), `done` (credited), `orphaned` (its block left the chain before the credit), `reversed` (taken back after the credit). */
export type ChainDepositStatus = "pending" | "done" | "orphaned" | "reversed";

/**
 * A deposit found on a live network: a top-level native transfer (`log_index` −1) or a token's
 * `Transfer` log to a deposit address, once per (network, transaction hash, log index) whatever
 * restarts, replays and re-inclusions happen. It has its wallet transaction from the moment it is
 * seen (`pending`); the ledger entry is posted at the network's confirmations (`done`).
 */
export const ChainDeposit = defineEntity({
  name: "ChainDeposit",
  tableName: "chain_deposit",
  uniques: [{ name: "chain_deposit_network_tx_log_unique", properties: ["network", "txHash", "logIndex"] }],
  indexes: [
    { name: "chain_deposit_pending_index", properties: ["network", "blockHeight"], where: "status = 'pending'" },
    { name: "chain_deposit_wallet_transaction_index", properties: ["walletTransactionId"] },
  ],
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    network: p.string().length(32),
    txHash: p.string().length(66),
    /** The token `Transfer` log's index in its block; −1 for a native transfer. */
    logIndex: p.integer(),
    blockHeight: p.bigint("number"),
    blockHash: p.string().length(66),
    /** The deposit address (lower case). */
    address: p.string().length(42),
    currency: p.string().length(16),
    /** In the currency's units, exact, at most 8 decimals (the chain's amount rounded down). */
    amount: p.decimal("string").precision(38).scale(8),
    walletId: p.uuid(),
    /** Its row in the wallet's transactions (`deposit`, status as this row's). */
    walletTransactionId: p.bigint("number"),
    status: p.string().length(16).$type<ChainDepositStatus>(),
    createdAt: p.datetime(),
    /** When it was credited (the ledger entry posted); null before. */
    creditedAt: p.datetime().nullable(),
  },
});
export type ChainDeposit = InferEntity<typeof ChainDeposit>;

/** The chains module's entities. */
export const CHAIN_ENTITIES = [ChainCursor, ChainBlock, ChainDeposit];
