/**
 * The chains module's statements (docs/architecture.md "Reaching the database") on its tables
 * `chain_cursor`, `chain_block` and `chain_deposit` (./entities.ts): the follower's cursor, the
 * window of followed blocks, and the deposits' life (docs/decisions/live-chains.md "Deposits",
 * "Reorgs"). Heights are block numbers; hashes `0x…` lower case; amounts decimal text.
 */
import type { Db, PreparedStatement, Sql } from "../../db/sql.js";
import type { ChainDepositStatus } from "./entities.js";

/** A network's cursor as the follower reads it. */
export interface CursorRow {
  network: string;
  chainId: number;
  head: number;
  scanned: number;
  scannedHash: string;
  lastError: string | null;
}

const CURSOR_COLUMNS = `network, chain_id::text, head::text, scanned::text, scanned_hash, last_error`;

/** The cursor of network `$1`; no row before the first run. */
export const CURSOR: PreparedStatement = { name: "chains_cursor", text: `select ${CURSOR_COLUMNS} from chain_cursor where network = $1` };

/** {@link CURSOR}, its row locked (`FOR UPDATE`) until the transaction ends: one writer of a network's cursor at a time. */
export const LOCK_CURSOR: PreparedStatement = { name: "chains_lock_cursor", text: `select ${CURSOR_COLUMNS} from chain_cursor where network = $1 for update` };

/** The first cursor of network `$1`: `$2` chain id, `$3` head, `$4` scanned, `$5` its hash; nothing when one exists. */
export const INSERT_CURSOR: PreparedStatement = {
  name: "chains_insert_cursor",
  text: `insert into chain_cursor (network, chain_id, head, scanned, scanned_hash, last_error, last_error_at, updated_at)
         values ($1, $2, $3, $4, $5, null, null, now()) on conflict (network) do nothing`,
};

/** Network `$1`'s node answered: its head `$2`; the last failure is cleared. */
export const SAVE_HEAD: PreparedStatement = {
  name: "chains_save_head",
  text: `update chain_cursor set head = $2, last_error = null, last_error_at = null, updated_at = now() where network = $1`,
};

/** Network `$1` processed up to `$3` (hash `$4`), the node's head being `$2`; the last failure is cleared. */
export const ADVANCE_CURSOR: PreparedStatement = {
  name: "chains_advance_cursor",
  text: `update chain_cursor set head = greatest($2::bigint, $3::bigint), scanned = $3, scanned_hash = $4, last_error = null, last_error_at = null, updated_at = now()
          where network = $1`,
};

/** Network `$1`'s node failed: `$2` what happened. */
export const RECORD_FAILURE: PreparedStatement = {
  name: "chains_record_failure",
  text: `update chain_cursor set last_error = $2, last_error_at = now(), updated_at = now() where network = $1`,
};

/** Blocks of network `$1`: heights `$2`, hashes `$3`, parents' hashes `$4` (arrays of one length); a stored height is overwritten. */
export const INSERT_BLOCKS: PreparedStatement = {
  name: "chains_insert_blocks",
  text: `insert into chain_block (network, height, hash, parent_hash)
         select $1, b.height, b.hash, b.parent_hash from unnest($2::bigint[], $3::text[], $4::text[]) as b(height, hash, parent_hash)
         on conflict (network, height) do update set hash = excluded.hash, parent_hash = excluded.parent_hash`,
};

/** Forgets network `$1`'s blocks above height `$2` (those a reorg replaced). */
export const DROP_BLOCKS: PreparedStatement = { name: "chains_drop_blocks", text: `delete from chain_block where network = $1 and height > $2` };

/** The stored hashes of network `$1` at heights up to `$2`, highest first, at most `$3` of them. */
export const WINDOW: PreparedStatement = {
  name: "chains_window",
  text: `select height::text, hash from chain_block where network = $1 and height <= $2 order by height desc limit $3`,
};

/** Network `$1`'s pending deposits above height `$2` turn `orphaned`; their wallet transactions' ids. */
export const ORPHAN_DEPOSITS: PreparedStatement = {
  name: "chains_orphan_deposits",
  text: `update chain_deposit set status = 'orphaned' where network = $1 and block_height > $2 and status = 'pending' returning wallet_transaction_id::text`,
};

/**
 * Network `$1`'s credited deposits above height `$2` turn `reversed` (a reorg deeper than the
 * confirmations removed their blocks: docs/decisions/live-chains.md "Reorgs"); what their reversal
 * needs, by wallet then id.
 */
export const REVERSE_DEPOSITS: PreparedStatement = {
  name: "chains_reverse_deposits",
  text: `with reversed as (
           update chain_deposit set status = 'reversed' where network = $1 and block_height > $2 and status = 'done'
           returning id, wallet_id, wallet_transaction_id, currency, amount, tx_hash, log_index)
         select id::text, wallet_id, wallet_transaction_id::text, currency, amount::text, tx_hash, log_index from reversed order by wallet_id, id`,
};

/**
 * The recorded deposits of network `$1` among the keys `$2` (transaction hashes) and `$3` (log
 * indexes, −1: native), arrays of one length: one row per key recorded, none for a new one.
 */
export const DEPOSITS_BY_KEYS: PreparedStatement = {
  name: "chains_deposits_by_keys",
  text: `select d.id::text, d.tx_hash, d.log_index, d.status, d.wallet_transaction_id::text
           from chain_deposit d join unnest($2::text[], $3::int[]) as k(tx_hash, log_index) on d.tx_hash = k.tx_hash and d.log_index = k.log_index
          where d.network = $1`,
};

/**
 * One batch of network `$1` written (docs/decisions/live-chains.md "Deposits"), in one statement,
 * after the cursor's row was locked and checked in the same transaction: its blocks (heights `$4`,
 * hashes `$5`, parents' hashes `$6`; a stored height is overwritten), its new deposits `pending`
 * (`$7` tx hashes, `$8` log indexes, `$9` heights, `$10` block hashes, `$11` addresses, `$12`
 * currencies, `$13` amounts, `$14` wallets, `$15` wallet transactions; arrays of one length, maybe
 * empty), the blocks below `$16` forgotten (the window's floor), and the cursor at `$3` (hash
 * `$17`), the node's head being `$2`, its last failure cleared.
 */
export const WRITE_BATCH: PreparedStatement = {
  name: "chains_write_batch",
  text: `with blocks as (
           insert into chain_block (network, height, hash, parent_hash)
           select $1, b.height, b.hash, b.parent_hash from unnest($4::bigint[], $5::text[], $6::text[]) as b(height, hash, parent_hash)
           on conflict (network, height) do update set hash = excluded.hash, parent_hash = excluded.parent_hash
           returning height),
         deposits as (
           insert into chain_deposit (network, tx_hash, log_index, block_height, block_hash, address, currency, amount, wallet_id, wallet_transaction_id, status, created_at)
           select $1, d.tx_hash, d.log_index, d.block_height, d.block_hash, d.address, d.currency, d.amount, d.wallet_id, d.wallet_transaction_id, 'pending', now()
             from unnest($7::text[], $8::int[], $9::bigint[], $10::text[], $11::text[], $12::text[], $13::numeric[], $14::uuid[], $15::bigint[])
                  as d(tx_hash, log_index, block_height, block_hash, address, currency, amount, wallet_id, wallet_transaction_id)
           returning id),
         pruned as (delete from chain_block where network = $1 and height < $16 returning height)
         update chain_cursor set head = greatest($2::bigint, $3::bigint), scanned = $3, scanned_hash = $17, last_error = null, last_error_at = null, updated_at = now()
          where network = $1`,
};

/**
 * Orphaned or reversed deposit `$1` mined again in block `$2` (hash `$3`): back to `pending`; its
 * wallet transaction's id, no row unless it was orphaned or reversed.
 */
export const REVIVE_DEPOSIT: PreparedStatement = {
  name: "chains_revive_deposit",
  text: `update chain_deposit set status = 'pending', block_height = $2, block_hash = $3 where id = $1 and status in ('orphaned', 'reversed') returning wallet_transaction_id::text`,
};

/** Network `$1`'s pending deposits at heights up to `$2`, oldest first, at most `$3`. */
export const DUE_DEPOSITS: PreparedStatement = {
  name: "chains_due_deposits",
  text: `select id::text, wallet_id, wallet_transaction_id::text, currency, amount::text, tx_hash, log_index, address
           from chain_deposit where network = $1 and status = 'pending' and block_height <= $2 order by block_height, id limit $3`,
};

/**
 * Deposits `$1` (ids) turn `done`, each only if it is still `pending` at a height up to `$2`: each
 * row's own once-only guard, for a group credited in one transaction; the ids that did.
 */
export const MARK_DONE_MANY: PreparedStatement = {
  name: "chains_mark_done_many",
  text: `update chain_deposit set status = 'done', credited_at = now() where id = any($1::bigint[]) and status = 'pending' and block_height <= $2 returning id::text`,
};

/** Per network, blocks between the node's head and the highest processed one (0 when caught up). */
export const SCAN_LAGS: PreparedStatement = {
  name: "chains_scan_lags",
  text: `select network, greatest(head - scanned, 0)::text as lag from chain_cursor order by network`,
};

type RawCursor = { network: string; chain_id: string; head: string; scanned: string; scanned_hash: string; last_error: string | null };

const cursorOf = (r: RawCursor): CursorRow => ({
  network: r.network,
  chainId: Number(r.chain_id),
  head: Number(r.head),
  scanned: Number(r.scanned),
  scannedHash: r.scanned_hash,
  lastError: r.last_error,
});

/** Network `network`'s cursor (locked for `sql`'s transaction when `lock`), or null before the first run. */
export async function readCursor(sql: Sql, network: string, lock = false): Promise<CursorRow | null> {
  const [row] = await sql.rows<RawCursor>(lock ? LOCK_CURSOR : CURSOR, [network]);
  return row ? cursorOf(row) : null;
}

/** Creates network `network`'s first cursor (nothing when it exists). */
export async function insertCursor(sql: Sql, c: { network: string; chainId: bigint; head: number; scanned: number; scannedHash: string }): Promise<void> {
  await sql.run(INSERT_CURSOR, [c.network, c.chainId.toString(), c.head, c.scanned, c.scannedHash]);
}

/** Saves the node's head and clears the last failure. */
export async function saveHead(sql: Sql, network: string, head: number): Promise<void> {
  await sql.run(SAVE_HEAD, [network, head]);
}

/** Moves the cursor to `scanned` (hash `hash`), the head to `head`, and clears the last failure. */
export async function advanceCursor(sql: Sql, network: string, head: number, scanned: number, hash: string): Promise<void> {
  await sql.run(ADVANCE_CURSOR, [network, head, scanned, hash]);
}

/** Records the node's failure `message` on the cursor (nothing before the first run). */
export async function recordFailure(sql: Sql, network: string, message: string): Promise<void> {
  await sql.run(RECORD_FAILURE, [network, message]);
}

/** Stores `blocks` of `network`. */
export async function insertBlocks(sql: Sql, network: string, blocks: readonly { height: number; hash: string; parentHash: string }[]): Promise<void> {
  if (blocks.length === 0) return;
  await sql.run(INSERT_BLOCKS, [network, blocks.map((b) => b.height), blocks.map((b) => b.hash), blocks.map((b) => b.parentHash)]);
}

/** Forgets `network`'s blocks above `height`. */
export async function dropBlocksAbove(sql: Sql, network: string, height: number): Promise<void> {
  await sql.run(DROP_BLOCKS, [network, height]);
}

/** `network`'s stored hashes at heights up to `top`, at most `limit`, by height. */
export async function windowHashes(sql: Sql, network: string, top: number, limit: number): Promise<Map<number, string>> {
  const rows = await sql.rows<{ height: string; hash: string }>(WINDOW, [network, top, limit]);
  return new Map(rows.map((r) => [Number(r.height), r.hash]));
}

/** Turns `network`'s pending deposits above `height` `orphaned`. @returns their wallet transactions' ids. */
export async function orphanDepositsAbove(sql: Sql, network: string, height: number): Promise<number[]> {
  const rows = await sql.rows<{ wallet_transaction_id: string }>(ORPHAN_DEPOSITS, [network, height]);
  return rows.map((r) => Number(r.wallet_transaction_id));
}

/** A deposit's row as the credits and the reorg reversals read it. */
export interface ReversedRow {
  id: number;
  walletId: string;
  walletTransactionId: number;
  currency: string;
  /** Decimal text. */
  amount: string;
  txHash: string;
  logIndex: number;
}

/** The columns {@link ReversedRow} is read from (ids as text). */
type DepositColumns = { id: string; wallet_id: string; wallet_transaction_id: string; currency: string; amount: string; tx_hash: string; log_index: number };

/** The {@link ReversedRow} of a row of {@link DepositColumns}. */
function depositRowOf(r: DepositColumns): ReversedRow {
  return { id: Number(r.id), walletId: r.wallet_id, walletTransactionId: Number(r.wallet_transaction_id), currency: r.currency, amount: r.amount, txHash: r.tx_hash, logIndex: r.log_index };
}

/** Turns `network`'s credited deposits above `height` `reversed`. @returns them, by wallet then id. */
export async function reverseDepositsAbove(sql: Sql, network: string, height: number): Promise<ReversedRow[]> {
  return (await sql.rows<DepositColumns>(REVERSE_DEPOSITS, [network, height])).map(depositRowOf);
}

/** A deposit's identity on chain. */
export interface DepositKey {
  network: string;
  txHash: string;
  /** The token log's index in its block; −1 for a native transfer. */
  logIndex: number;
}

/** A recorded deposit, as {@link depositsByKeys} finds it. */
export interface KnownDeposit extends DepositKey {
  id: number;
  status: ChainDepositStatus;
  walletTransactionId: number;
}

/** The recorded deposits of `network` among `keys`, by `<tx hash>:<log index>`; a new key has none. */
export async function depositsByKeys(sql: Sql, network: string, keys: readonly { txHash: string; logIndex: number }[]): Promise<Map<string, KnownDeposit>> {
  if (keys.length === 0) return new Map();
  const rows = await sql.rows<{ id: string; tx_hash: string; log_index: number; status: ChainDepositStatus; wallet_transaction_id: string }>(DEPOSITS_BY_KEYS, [
    network,
    keys.map((k) => k.txHash),
    keys.map((k) => k.logIndex),
  ]);
  return new Map(
    rows.map((r) => [
      `${r.tx_hash}:${r.log_index}`,
      { network, txHash: r.tx_hash, logIndex: r.log_index, id: Number(r.id), status: r.status, walletTransactionId: Number(r.wallet_transaction_id) },
    ]),
  );
}

/** A deposit to record: its key, block, address (lower case), currency, amount (8 decimals at most), wallet and wallet transaction. */
export interface DepositWrite extends DepositKey {
  blockHeight: number;
  blockHash: string;
  address: string;
  currency: string;
  amount: string;
  walletId: string;
  walletTransactionId: number;
}

/** What {@link writeBatch} writes: the blocks, the new deposits, the window's floor and the cursor's new place. */
export interface BatchWrite {
  network: string;
  /** The node's head as this run asked it. */
  head: number;
  blocks: readonly { height: number; hash: string; parentHash: string }[];
  deposits: readonly DepositWrite[];
  /** Blocks below this height are forgotten. */
  floor: number;
  /** The cursor's new place: the batch's last block. */
  scanned: number;
  scannedHash: string;
}

/** Writes batch `b` in one statement ({@link WRITE_BATCH}); the caller locked and checked the cursor in the same transaction. */
export async function writeBatch(sql: Sql, b: BatchWrite): Promise<void> {
  const d = b.deposits;
  await sql.run(WRITE_BATCH, [
    b.network,
    b.head,
    b.scanned,
    b.blocks.map((x) => x.height),
    b.blocks.map((x) => x.hash),
    b.blocks.map((x) => x.parentHash),
    d.map((x) => x.txHash),
    d.map((x) => x.logIndex),
    d.map((x) => x.blockHeight),
    d.map((x) => x.blockHash),
    d.map((x) => x.address),
    d.map((x) => x.currency),
    d.map((x) => x.amount),
    d.map((x) => x.walletId),
    d.map((x) => x.walletTransactionId),
    b.floor,
    b.scannedHash,
  ]);
}

/** Orphaned or reversed deposit `id`, mined again at `height` (`hash`), back to `pending`. @returns its wallet transaction's id, or null when it was neither. */
export async function reviveDeposit(sql: Sql, id: number, height: number, hash: string): Promise<number | null> {
  const [row] = await sql.rows<{ wallet_transaction_id: string }>(REVIVE_DEPOSIT, [id, height, hash]);
  return row ? Number(row.wallet_transaction_id) : null;
}

/** A pending deposit due for its credit: its row and its deposit address (lower case). */
export interface DueDeposit extends ReversedRow {
  address: string;
}

/** `network`'s pending deposits at heights up to `height`, oldest first, at most `limit`. */
export async function dueDeposits(sql: Sql, network: string, height: number, limit: number): Promise<DueDeposit[]> {
  const rows = await sql.rows<DepositColumns & { address: string }>(DUE_DEPOSITS, [network, height, limit]);
  return rows.map((r) => ({ ...depositRowOf(r), address: r.address }));
}

/** Turns each of deposits `ids` `done` if it is still pending at a height up to `height` ({@link MARK_DONE_MANY}). @returns the ids that did (the others: credited already, or orphaned). */
export async function markDoneMany(sql: Sql, ids: readonly number[], height: number): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await sql.rows<{ id: string }>(MARK_DONE_MANY, [ids, height]);
  return new Set(rows.map((r) => Number(r.id)));
}


/** Per network, the blocks the follower is behind the node's head (metrics). */
export async function scanLags(db: Db): Promise<{ network: string; lag: number }[]> {
  const rows = await db.rows<{ network: string; lag: string }>(SCAN_LAGS);
  return rows.map((r) => ({ network: r.network, lag: Number(r.lag) }));
}
