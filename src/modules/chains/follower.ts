/**
 * The block follower of one live EVM network (docs/decisions/live-chains.md "Deposits", "Reorgs"):
 * a run asks the node's head, processes the blocks after the cursor in order, in batches of
 * {@link BLOCKS_PER_BATCH}, each batch's blocks, deposits and cursor written in one transaction,
 * then credits the deposits that reached the network's confirmations, each in its own transaction.
 *
 * Blocks are followed by parent hash against the stored window (`chain_block`, the last
 * {@link WINDOW} blocks): a batch whose first block's parent is not the cursor's hash is a reorg;
 * the run walks back to the fork point (the highest stored height whose hash the node still has),
 * drops the stored blocks above it, turns the pending deposits in them `orphaned`, takes the
 * credited ones back (`reversed`: a `deposit_reversal`, the wallet's deficit and lock when its
 * available cannot cover it; src/modules/wallets/deposits.ts `reverse`), all in one transaction,
 * and goes on from the fork point. A node that fails or does not answer stops the run: the cursor stays, its
 * `last_error` says why, and the next run starts where this one stopped.
 */
import type { Db } from "../../db/sql.js";
import { DomainError } from "../../domain/errors.js";
import { loadEthers, type EvmRpc } from "../../providers/evm/rpc.js";
import { addressHolders } from "../wallets/repository.js";
import { liveDepositReference, type LiveDeposits } from "../wallets/deposits.js";
import { chainAmount, creditableHeight, firstHeight, forkPoint, linked, nextBatch } from "./follow.js";
import {
  advanceCursor,
  depositByKey,
  dropBlocksAbove,
  dueDeposits,
  insertBlocks,
  insertCursor,
  insertDeposit,
  markDone,
  orphanDepositsAbove,
  pruneBlocks,
  readCursor,
  recordFailure,
  reverseDepositsAbove,
  reviveDeposit,
  saveHead,
  windowHashes,
  type CursorRow,
} from "./repository.js";
import { ChainMoved, fetchBatch, nativeSucceeded, type FetchedBatch, type FoundTransfer } from "./scan.js";

/** Blocks read and written per batch (one transaction each). */
export const BLOCKS_PER_BATCH = 20;
/** Batches per round at most: a run credits what is due after each round and, while behind the head, goes on with another round until {@link RUN_BUDGET_MS}. */
export const BATCHES_PER_RUN = 25;
/** Milliseconds after which a run starts no further batch (well within the job's lock lifetime). */
export const RUN_BUDGET_MS = 30_000;
/** Blocks kept in `chain_block` below the cursor: the deepest reorg followed (at least 128). */
export const WINDOW = 256;
/** Deposits credited per run at most (the rest on the next run). */
export const CREDITS_PER_RUN = 200;
/** Hashes asked of the node at once while walking back to a fork point. */
const WALK_CHUNK = 32;
/** The parent hash of block 0. */
const ZERO_HASH = `0x${"0".repeat(64)}`;

/** A live network as the follower sees it (from src/config.ts `LiveChain`). */
export interface LiveChainSettings {
  network: string;
  /** The native coin's currency code (`eth`, `pol`). */
  nativeCurrency: string;
  confirmations: number;
  /** ERC-20 contracts, lower case. */
  tokens: readonly { currency: string; contract: string; decimals: number }[];
  startBlock: number | undefined;
}

/** What the follower logs. */
export interface FollowerLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** A deposit found in a batch, with its wallet. */
interface FoundDeposit extends FoundTransfer {
  walletId: string;
  customerId: string;
  /** The wallet's address as stored. */
  storedAddress: string;
  amount: string;
}

/** The follower of one live network. */
export class ChainFollower {
  constructor(
    private readonly chain: LiveChainSettings,
    private readonly rpc: EvmRpc,
    private readonly db: Db,
    private readonly deposits: LiveDeposits,
    private readonly logger: FollowerLogger,
    /** The service's own addresses (gas, hot wallets), lower case: their transfers are no deposits. */
    private readonly ownAddresses: () => ReadonlySet<string> = () => new Set(),
  ) {}

  /**
   * One run: the blocks after the cursor up to the head, then the due credits. Never throws: a node
   * failure is written to the cursor's `last_error` and logged, anything else logged.
   */
  async run(): Promise<void> {
    try {
      const head = Number(await this.rpc.call<string>("eth_blockNumber", []));
      let cursor = await this.cursor(head);
      if (!cursor) return;
      const until = Date.now() + RUN_BUDGET_MS;
      // behind the head, the run goes on (credits between rounds) until it catches up or its budget ends
      do {
        const before = cursor.scanned;
        cursor = await this.follow(cursor, head, until);
        await this.creditDue(cursor);
        if (cursor.scanned === before) break; // nothing stored this round (a reorg walked back, a chain that moved): the next run reads again
      } while (cursor.scanned < head && Date.now() < until);
    } catch (error) {
      await this.fail(error);
    }
  }

  /** The cursor, created at the first run (before `startBlock`, or the head). Null while the start block is not mined yet. */
  private async cursor(head: number): Promise<CursorRow | null> {
    const chainId = await this.rpc.chainId();
    const found = await readCursor(this.db, this.chain.network);
    if (found) {
      if (BigInt(found.chainId) !== chainId) throw new Error(`the node follows chain ${chainId}, the cursor chain ${found.chainId}`);
      return found;
    }
    const start = firstHeight(this.chain.startBlock, head);
    let hash = ZERO_HASH;
    if (start > 0) {
      const before = await this.rpc.call<{ hash: string; parentHash: string } | null>("eth_getBlockByNumber", [`0x${(start - 1).toString(16)}`, false]);
      if (!before) return null;
      hash = before.hash.toLowerCase();
      await this.db.transaction(async (tx) => {
        await insertCursor(tx, { network: this.chain.network, chainId, head, scanned: start - 1, scannedHash: hash });
        await insertBlocks(tx, this.chain.network, [{ height: start - 1, hash, parentHash: before.parentHash.toLowerCase() }]);
      });
    } else {
      await insertCursor(this.db, { network: this.chain.network, chainId, head, scanned: -1, scannedHash: hash });
    }
    this.logger.info({ network: this.chain.network, start }, "live network followed from its first block");
    return readCursor(this.db, this.chain.network);
  }

  /** Processes batches after `cursor` up to `head`, at most {@link BATCHES_PER_RUN} and none started after `until` (epoch ms). @returns the cursor after them. */
  private async follow(start: CursorRow, head: number, until: number): Promise<CursorRow> {
    let cursor = start;
    let stored = false;
    for (let batch = 0; batch < BATCHES_PER_RUN && Date.now() < until; batch++) {
      const range = nextBatch(cursor.scanned, head, BLOCKS_PER_BATCH);
      if (!range) break;
      let fetched: FetchedBatch;
      try {
        fetched = await fetchBatch(this.rpc, this.chain, range[0], range[1]);
      } catch (error) {
        if (!(error instanceof ChainMoved)) throw error;
        this.logger.info({ network: this.chain.network, reason: error.message }, "the chain moved while a batch was read; read again next run");
        break;
      }
      const first = fetched.blocks[0];
      if (first && first.parentHash !== cursor.scannedHash.toLowerCase()) {
        cursor = await this.rewind(cursor);
        continue;
      }
      if (!linked(cursor.scannedHash, fetched.blocks)) break; // a reorg inside the batch while it was read: next run
      const found = await this.depositsOf(fetched);
      if (found === null) break;
      cursor = await this.store(cursor, head, fetched, found);
      stored = true;
    }
    if (!stored) await saveHead(this.db, this.chain.network, head);
    return cursor;
  }

  /** The deposits among `batch`'s transfers: to a wallet's address, not from the service's own, succeeded, a positive 8-decimal amount. Null when the chain moved. */
  private async depositsOf(batch: FetchedBatch): Promise<FoundDeposit[] | null> {
    const own = this.ownAddresses();
    const candidates = batch.transfers.filter((t) => !own.has(t.from));
    if (candidates.length === 0) return [];
    const { getAddress } = await loadEthers();
    const forms = candidates.flatMap((t) => [t.to, getAddress(t.to)]);
    const holders = await addressHolders(this.db, this.chain.network, forms);
    const byLower = new Map([...holders].map(([address, holder]) => [address.toLowerCase(), { ...holder, storedAddress: address }]));
    const paying = candidates.filter((t) => byLower.has(t.to));
    let succeeded: Set<string>;
    try {
      succeeded = await nativeSucceeded(this.rpc, paying.filter((t) => t.logIndex === -1));
    } catch (error) {
      if (error instanceof ChainMoved) return null;
      throw error;
    }
    const found: FoundDeposit[] = [];
    for (const t of paying) {
      if (t.logIndex === -1 && !succeeded.has(t.txHash)) continue;
      const amount = chainAmount(t.raw, t.decimals);
      if (amount.isZero()) continue; // finer than 8 decimals: nothing to credit
      found.push({ ...t, ...(byLower.get(t.to) as { walletId: string; customerId: string; storedAddress: string }), amount: amount.toFixed() });
    }
    return found;
  }

  /** Writes `batch` (blocks, deposits, cursor) in one transaction. @returns the new cursor. @throws Error when another run moved the cursor. */
  private async store(cursor: CursorRow, head: number, batch: FetchedBatch, found: readonly FoundDeposit[]): Promise<CursorRow> {
    const last = batch.blocks[batch.blocks.length - 1] as FetchedBatch["blocks"][number];
    const network = this.chain.network;
    await this.db.transaction(async (tx) => {
      const locked = await readCursor(tx, network, true);
      if (!locked || locked.scanned !== cursor.scanned || locked.scannedHash !== cursor.scannedHash) throw new Error("the cursor moved under this run");
      await insertBlocks(tx, network, batch.blocks);
      for (const d of found) {
        const key = { network, txHash: d.txHash, logIndex: d.logIndex };
        const known = await depositByKey(tx, key);
        if (known?.status === "orphaned" || known?.status === "reversed") {
          const id = await reviveDeposit(tx, known.id, d.height, d.blockHash);
          if (id !== null) await this.deposits.revive(tx, id);
          continue;
        }
        if (known) continue; // pending or credited already: the same deposit, once (a reversed one was taken back: credited again at the confirmations)
        const walletTransactionId = await this.deposits.recordPending(tx, {
          walletId: d.walletId, customerId: d.customerId, network, address: d.storedAddress, currency: d.currency, amount: d.amount, hash: d.txHash,
        });
        await insertDeposit(tx, { ...key, blockHeight: d.height, blockHash: d.blockHash, address: d.to, currency: d.currency, amount: d.amount, walletId: d.walletId, walletTransactionId });
      }
      await advanceCursor(tx, network, head, last.height, last.hash);
      await pruneBlocks(tx, network, last.height - WINDOW);
    });
    if (found.length > 0) this.logger.info({ network, deposits: found.length, to: last.height }, "live deposits seen");
    return { ...cursor, head: Math.max(head, last.height), scanned: last.height, scannedHash: last.hash, lastError: null };
  }

  /**
   * Walks back from `cursor` to the fork point, asking the node the hashes of the stored window
   * from the top down, then in one transaction drops the blocks above it, orphans their pending
   * deposits and takes back their credited ones (docs/decisions/live-chains.md "Reorgs").
   * @returns the cursor at the fork point.
   * @throws Error when no stored block is on the node's chain any more (a reorg deeper than the window).
   */
  private async rewind(cursor: CursorRow): Promise<CursorRow> {
    const network = this.chain.network;
    const stored = await windowHashes(this.db, network, cursor.scanned, WINDOW + 1);
    const heights = [...stored.keys()].sort((a, b) => b - a);
    const node = new Map<number, string>();
    let fork: number | null = null;
    for (let i = 0; i < heights.length && fork === null; i += WALK_CHUNK) {
      const chunk = heights.slice(i, i + WALK_CHUNK);
      const answers = await Promise.all(chunk.map((h) => this.rpc.call<{ hash: string } | null>("eth_getBlockByNumber", [`0x${h.toString(16)}`, false])));
      for (const [j, answer] of answers.entries()) if (answer) node.set(chunk[j] as number, answer.hash);
      fork = forkPoint(stored, node);
    }
    if (fork === null) throw new Error(`reorg deeper than the ${WINDOW} blocks followed below block ${cursor.scanned}`);
    const forkHash = stored.get(fork) as string;
    let orphaned = 0;
    let reversed = 0;
    let owing = 0;
    await this.db.transaction(async (tx) => {
      const locked = await readCursor(tx, network, true);
      if (!locked || locked.scanned !== cursor.scanned) throw new Error("the cursor moved under this run");
      await dropBlocksAbove(tx, network, fork);
      const ids = await orphanDepositsAbove(tx, network, fork);
      await this.deposits.orphan(tx, ids);
      orphaned = ids.length;
      const credited = await reverseDepositsAbove(tx, network, fork);
      owing = await this.deposits.reverse(tx, credited.map((d) => ({ ...d, network })));
      reversed = credited.length;
      await advanceCursor(tx, network, cursor.head, fork, forkHash);
    });
    const log = reversed > 0 ? this.logger.error.bind(this.logger) : this.logger.warn.bind(this.logger);
    log({ network, from: cursor.scanned, fork, orphaned, reversed, owing }, reversed > 0 ? "reorg below the confirmations: credited deposits taken back" : "reorg: blocks above the fork point dropped");
    return { ...cursor, scanned: fork, scannedHash: forkHash };
  }

  /**
   * Credits the pending deposits with the network's confirmations on the followed chain (up to the
   * cursor), each in its own transaction; none while the node's block at the cursor is not the
   * cursor's (a reorg at the head not yet followed: the next block shows it).
   */
  private async creditDue(cursor: CursorRow): Promise<void> {
    const height = creditableHeight(cursor.scanned, this.chain.confirmations);
    const network = this.chain.network;
    const due = await dueDeposits(this.db, network, height, CREDITS_PER_RUN);
    if (due.length === 0) return;
    const top = await this.rpc.call<{ hash: string } | null>("eth_getBlockByNumber", [`0x${cursor.scanned.toString(16)}`, false]);
    if (top?.hash.toLowerCase() !== cursor.scannedHash.toLowerCase()) return;
    for (const d of due) {
      try {
        await this.db.transaction(async (tx) => {
          if (!(await markDone(tx, d.id, height))) return; // credited or orphaned meanwhile
          await this.deposits.credit(tx, {
            walletId: d.walletId,
            walletTransactionId: d.walletTransactionId,
            network,
            currency: d.currency,
            amount: d.amount,
            reference: liveDepositReference(network, d.txHash, d.logIndex),
          });
        });
      } catch (error) {
        this.logger.error({ err: error, network, deposit: d.id }, "a live deposit could not be credited; it stays pending");
      }
    }
  }

  /** Records a failed run: a node failure on the cursor (`last_error`), everything logged. */
  private async fail(error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    const node = error instanceof DomainError && (error.code === "GATEWAY_TIMEOUT" || error.code === "BAD_GATEWAY");
    this.logger.warn({ network: this.chain.network, err: node ? undefined : error, reason: message }, "the live network's follower stopped this run");
    await recordFailure(this.db, this.chain.network, message.slice(0, 1000)).catch((e: unknown) => {
      this.logger.error({ err: e, network: this.chain.network }, "the follower's failure could not be recorded");
    });
  }
}
