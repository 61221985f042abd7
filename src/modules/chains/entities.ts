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
    { name: "chain_deposit_unswept_index", properties: ["network", "address"], where: "status = 'done' and swept_by is null" },
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
    /** The `chain_send` (kind `sweep`) that moves it into the hot wallet; null until one is queued, and again when that sweep failed. */
    sweptBy: p.bigint("number").nullable(),
  },
});
export type ChainDeposit = InferEntity<typeof ChainDeposit>;


/**
 * A send's life on chain (docs/decisions/live-chains.md "Sends"): `queued` (waiting for its fees,
 * or signed and stored but not yet accepted by the node), `broadcast` (the node took it; mined or
 * not), `confirmed` (mined with success and the network's confirmations on it), `failed` (the chain
 * rejected it for good: its withdrawal is reversed).
 */
export type ChainSendState = "queued" | "broadcast" | "confirmed" | "failed";

/**
 * What a send is for (docs/decisions/live-chains.md "Funds and fees", "Sweeps"): a withdrawal's
 * payment (hot wallet), a `refill` of the hot wallet's fees (gas wallet), a `topup` of a deposit
 * address's fees (gas wallet), a `sweep` of a deposit address's credited deposits into the hot wallet.
 */
export type ChainSendKind = "withdrawal" | "refill" | "topup" | "sweep";

/**
 * A send on a live network: a withdrawal's, from the hot wallet (one row per withdrawal, queued in
 * the confirm's transaction), or a refill of the hot wallet's fees from the gas wallet (queued in the
 * transaction that ends the withdrawal's send). The nonce and the signed bytes are stored in one transaction before the
 * first broadcast; a replacement keeps the nonce and adds its hash to `txHashes`. Amounts in the
 * chain's units (wei, a token's smallest unit) as exact integer text; `fee` in the native coin.
 */
export const ChainSend = defineEntity({
  name: "ChainSend",
  tableName: "chain_send",
  indexes: [{ name: "chain_send_open_index", properties: ["network", "id"], where: "state in ('queued', 'broadcast')" }],
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    network: p.string().length(32),
    /** {@link ChainSendKind}: `withdrawal`, `refill`, `topup` or `sweep`. */
    kind: p.string().length(16).$type<ChainSendKind>().default("withdrawal"),
    /** The withdrawal it pays; null for a refill. */
    withdrawalId: p.uuid().nullable().unique("chain_send_withdrawal_unique"),
    /** The withdrawal's customer (tenant); null for a refill. */
    customerId: p.string().nullable(),
    /** The sending address (lower case): the hot wallet, the gas wallet, or a deposit address for a sweep. */
    fromAddress: p.string().length(42),
    /** A deposit address's derivation path (a sweep's signing key, derived from the custody mnemonic); null for the service's own wallets. */
    keyPath: p.string().length(64).nullable(),
    /** The send that must be `confirmed` before this one is signed (a sweep's top-up), or null. */
    dependsOn: p.bigint("number").nullable(),
    /** The destination (lower case). */
    toAddress: p.string().length(42),
    currency: p.string().length(16),
    /** The token's contract (lower case), or null for the native coin. */
    contract: p.string().length(42).nullable(),
    /** The amount in the chain's units (wei, the token's smallest unit), exact integer text. */
    amountUnits: p.decimal("string").precision(78).scale(0),
    state: p.string().length(16).$type<ChainSendState>(),
    /** The sender's nonce; null until the send is signed. */
    nonce: p.bigint("number").nullable(),
    /** The signed transaction of the latest attempt (hex), stored before it is broadcast. */
    rawTx: p.text().nullable(),
    /** The latest attempt's hash; every attempt's hash is in `txHashes`, oldest first. */
    txHash: p.string().length(66).nullable(),
    txHashes: p.array().defaultRaw("'{}'"),
    maxFeePerGas: p.decimal("string").precision(78).scale(0).nullable(),
    maxPriorityFeePerGas: p.decimal("string").precision(78).scale(0).nullable(),
    gasLimit: p.decimal("string").precision(78).scale(0).nullable(),
    /** The followed head when the latest attempt was first broadcast: it is replaced 20 blocks later. */
    broadcastHeight: p.bigint("number").nullable(),
    /** The block the send was mined in (any attempt's), or null. */
    minedHeight: p.bigint("number").nullable(),
    /** The fee paid (gas used × effective gas price), 8-decimal text of the native coin, once mined. */
    fee: p.decimal("string").precision(38).scale(8).nullable(),
    /** Since when the fees have been above the cap with the send not yet signed; null otherwise. */
    feeWaitSince: p.datetime().nullable(),
    /** The last failure (the node's refusal, the revert), or null. */
    lastError: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type ChainSend = InferEntity<typeof ChainSend>;

/** The next nonce of an address the service sends from, per network: allocated under this row's lock in the transaction that stores the signed send. */
export const ChainNonce = defineEntity({
  name: "ChainNonce",
  tableName: "chain_nonce",
  properties: {
    network: p.string().length(32).primary(),
    address: p.string().length(42).primary(),
    nextNonce: p.bigint("number"),
  },
});
export type ChainNonce = InferEntity<typeof ChainNonce>;

/** The chains module's entities. */
export const CHAIN_ENTITIES = [ChainCursor, ChainBlock, ChainDeposit, ChainSend, ChainNonce];
