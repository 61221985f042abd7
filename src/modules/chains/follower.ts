/**
 * The block follower of one live EVM network (docs/decisions/live-chains.md "Deposits", "Reorgs"):
 * a run asks the node's head, processes the blocks after the cursor in order, in batches of
 * {@link BLOCKS_PER_BATCH}, each batch's blocks, deposits and cursor written in one transaction,
 * then credits the deposits that reached the network's confirmations, in groups of
 * {@link CREDITS_PER_TRANSACTION} per transaction, each deposit with its own once-only guard.
 *
 * The node is read with the plain JSON-RPC client (./rpc.ts; ethers stays with the sends). While
 * a batch is written, the next {@link READ_AHEAD} are already read (blocks, logs, the deposit
 * addresses among their transfers, the receipts): the writes stay in height order, and a batch read
 * ahead is checked against the cursor as it stands once the one before it is written. The credits of a round run while the
 * next round reads and writes its batches; a reorg waits for them before it walks back.
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
import type { Db, Tx } from "../../db/sql.js";
import { DomainError } from "../../domain/errors.js";
import type { EvmRpc } from "../../providers/evm/rpc.js";
import { addressHolders } from "../wallets/repository.js";
import { liveDepositReference, type LiveDeposits } from "../wallets/deposits.js";
import { chainAmount, creditableHeight, firstHeight, forkPoint, linked, nextBatch } from "./follow.js";
import {
  advanceCursor,
  depositsByKeys,
  dropBlocksAbove,
  dueDeposits,
  insertBlocks,
  insertCursor,
  markDoneMany,
  orphanDepositsAbove,
  readCursor,
  recordFailure,
  reverseDepositsAbove,
  reviveDeposit,
  saveHead,
  windowHashes,
  writeBatch,
  type CursorRow,
  type DepositWrite,
  type DueDeposit,
} from "./repository.js";
import { ChainRpc } from "./rpc.js";
import { AddressForms, ChainMoved, fetchBatch, nativeSucceeded, type FetchedBatch, type FoundTransfer } from "./scan.js";

/** Blocks read and written per batch (one transaction each). */
export const BLOCKS_PER_BATCH = 20;
/** Batches per round at most: a run credits what is due after each round and, while behind the head, goes on with another round until {@link RUN_BUDGET_MS}. */
export const BATCHES_PER_RUN = 25;
/** Milliseconds after which a run starts no further batch (well within the job's lock lifetime). */
export const RUN_BUDGET_MS = 30_000;
/** Blocks kept in `chain_block` below the cursor: the deepest reorg followed (at least 128). */
export const WINDOW = 256;
/** Deposits credited per round at most (the rest on the next one). */
export const CREDITS_PER_RUN = 200;
/** Deposits credited per transaction at most, each with its own guard; a group with a refused credit is credited again one deposit per transaction. */
export const CREDITS_PER_TRANSACTION = 20;
/** Batches read ahead while one is written (the writes stay in height order); 2 was slower on 2 cores (docs/performance.md "Chains: the scan row"). */
export const READ_AHEAD = 1;
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

/** A batch as read: its blocks and deposits, or why it could not be read (the chain moved, or the error to throw). */
type ReadBatch = { batch: FetchedBatch; found: FoundDeposit[] } | { moved: string } | { error: unknown };

/** The follower of one live network. */
export class ChainFollower {
  /** The plain JSON-RPC client of the node (./rpc.ts), on `rpc`'s endpoint and timeout. */
  private readonly node: ChainRpc;
  /** The forms the deposit addresses may be stored in, for their lookup. */
  private readonly forms = new AddressForms();
  /** The credits of the last round, running while the next round reads and writes: what stopped them, if anything. */
  private crediting: Promise<{ error: unknown } | undefined> = Promise.resolve(undefined);

  constructor(
    private readonly chain: LiveChainSettings,
    rpc: EvmRpc,
    private readonly db: Db,
    private readonly deposits: LiveDeposits,
    private readonly logger: FollowerLogger,
    /** The service's own addresses (gas, hot wallets), lower case: their transfers are no deposits. */
    private readonly ownAddresses: () => ReadonlySet<string> = () => new Set(),
  ) {
    this.node = new ChainRpc(rpc.network, rpc.url, rpc.timeoutS);
  }

  /**
   * One run: the blocks after the cursor up to the head, then the due credits. Never throws: a node
   * failure is written to the cursor's `last_error` and logged, anything else logged.
   */
  async run(): Promise<void> {
    try {
      const [headHex, chainIdHex] = (await this.node.batch([["eth_blockNumber", []], ["eth_chainId", []]])) as [string, string];
      const head = Number(headHex);
      let cursor = await this.cursor(head, BigInt(chainIdHex));
      if (!cursor) return;
      const until = Date.now() + RUN_BUDGET_MS;
      // behind the head, the run goes on (the last round's credits running meanwhile) until it catches up or its budget ends
      do {
        const before = cursor.scanned;
        cursor = await this.follow(cursor, head, until);
        await this.creditsDone();
        this.crediting = this.creditDue(cursor).then(() => undefined, (error: unknown) => ({ error }));
        if (cursor.scanned === before) break; // nothing stored this round (a reorg walked back, a chain that moved): the next run reads again
      } while (cursor.scanned < head && Date.now() < until);
      await this.creditsDone();
    } catch (error) {
      await this.creditsDone().catch((e: unknown) => this.logger.error({ err: e, network: this.chain.network }, "the follower's credits failed"));
      await this.fail(error);
    }
  }

  /** Waits for the last round's credits. @throws what stopped them (a node failure, the database). */
  private async creditsDone(): Promise<void> {
    const outcome = await this.crediting;
    this.crediting = Promise.resolve(undefined);
    if (outcome) throw outcome.error;
  }

  /** The cursor, created at the first run (before `startBlock`, or the head). Null while the start block is not mined yet. */
  private async cursor(head: number, chainId: bigint): Promise<CursorRow | null> {
    const found = await readCursor(this.db, this.chain.network);
    if (found) {
      if (BigInt(found.chainId) !== chainId) throw new Error(`the node follows chain ${chainId}, the cursor chain ${found.chainId}`);
      return found;
    }
    const start = firstHeight(this.chain.startBlock, head);
    let hash = ZERO_HASH;
    if (start > 0) {
      const before = await this.node.call<{ hash: string; parentHash: string } | null>("eth_getBlockByNumber", [`0x${(start - 1).toString(16)}`, false]);
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

  /**
   * Processes batches after `cursor` up to `head`, at most {@link BATCHES_PER_RUN} and none started
   * after `until` (epoch ms), the next {@link READ_AHEAD} batches read while one is written.
   * @returns the cursor after them.
   */
  private async follow(start: CursorRow, head: number, until: number): Promise<CursorRow> {
    let cursor = start;
    let stored = false;
    const ahead: { from: number; to: number; read: Promise<ReadBatch> }[] = [];
    const drop = () => Promise.all(ahead.splice(0).map((a) => a.read)); // reads never reject: the batches read ahead are dropped
    try {
      for (let batch = 0; batch < BATCHES_PER_RUN && Date.now() < until; batch++) {
        const range = nextBatch(cursor.scanned, head, BLOCKS_PER_BATCH);
        if (!range) break;
        if (ahead[0] && ahead[0].from !== range[0]) await drop(); // never so: the batches read ahead follow the one written
        const read = await (ahead.shift()?.read ?? this.read(range));
        if ("error" in read) throw read.error;
        if ("moved" in read) {
          this.logger.info({ network: this.chain.network, reason: read.moved }, "the chain moved while a batch was read; read again next run");
          break;
        }
        const first = read.batch.blocks[0];
        if (first && first.parentHash !== cursor.scannedHash.toLowerCase()) {
          await drop();
          await this.creditsDone(); // the last round's credits end before the walk back
          cursor = await this.rewind(cursor);
          continue;
        }
        if (!linked(cursor.scannedHash, read.batch.blocks)) break; // a reorg inside the batch while it was read: next run
        for (let last = ahead.at(-1)?.to ?? range[1]; ahead.length < READ_AHEAD && batch + 1 + ahead.length < BATCHES_PER_RUN; ) {
          const following = nextBatch(last, head, BLOCKS_PER_BATCH);
          if (!following) break;
          ahead.push({ from: following[0], to: following[1], read: this.read(following) });
          last = following[1];
        }
        cursor = await this.store(cursor, head, read.batch, read.found);
        stored = true;
      }
    } finally {
      await drop();
    }
    if (!stored) await saveHead(this.db, this.chain.network, head);
    return cursor;
  }

  /** Reads batch `range`: its blocks and transfers, then its deposits. Never rejects: a failure is in the answer. */
  private async read(range: [number, number]): Promise<ReadBatch> {
    try {
      const batch = await fetchBatch(this.node, this.chain, range[0], range[1]);
      const found = await this.depositsOf(batch);
      return { batch, found };
    } catch (error) {
      if (error instanceof ChainMoved) return { moved: error.message };
      return { error };
    }
  }

  /** The deposits among `batch`'s transfers: to a wallet's address, not from the service's own, succeeded, a positive 8-decimal amount. @throws {@link ChainMoved}. */
  private async depositsOf(batch: FetchedBatch): Promise<FoundDeposit[]> {
    const own = this.ownAddresses();
    const candidates = batch.transfers.filter((t) => !own.has(t.from));
    if (candidates.length === 0) return [];
    const forms = await this.forms.of(candidates.map((t) => t.to));
    const holders = await addressHolders(this.db, this.chain.network, forms);
    const byLower = new Map([...holders].map(([address, holder]) => [address.toLowerCase(), { ...holder, storedAddress: address }]));
    const paying = candidates.filter((t) => byLower.has(t.to));
    const natives = paying.filter((t) => t.logIndex === -1);
    const succeeded = natives.length > 0 ? await nativeSucceeded(this.node, natives) : new Set<string>();
    const found: FoundDeposit[] = [];
    for (const t of paying) {
      if (t.logIndex === -1 && !succeeded.has(t.txHash)) continue;
      const amount = chainAmount(t.raw, t.decimals);
      if (amount.isZero()) continue; // finer than 8 decimals: nothing to credit
      found.push({ ...t, ...(byLower.get(t.to) as { walletId: string; customerId: string; storedAddress: string }), amount: amount.toFixed() });
    }
    return found;
  }

  /**
   * Writes `batch` in one transaction: the cursor's row locked and checked unchanged, the known
   * deposits among it looked up at once (an orphaned or reversed one revived), the new ones'
   * pending wallet transactions, then blocks, new deposits, window and cursor in one statement.
   * @returns the new cursor. @throws Error when another run moved the cursor.
   */
  private async store(cursor: CursorRow, head: number, batch: FetchedBatch, found: readonly FoundDeposit[]): Promise<CursorRow> {
    const last = batch.blocks[batch.blocks.length - 1] as FetchedBatch["blocks"][number];
    const network = this.chain.network;
    await this.db.transaction(async (tx) => {
      const locked = await readCursor(tx, network, true);
      if (!locked || locked.scanned !== cursor.scanned || locked.scannedHash !== cursor.scannedHash) throw new Error("the cursor moved under this run");
      const known = await depositsByKeys(tx, network, found);
      const fresh: DepositWrite[] = [];
      for (const d of found) {
        const key = { network, txHash: d.txHash, logIndex: d.logIndex };
        const seen = known.get(`${d.txHash}:${d.logIndex}`);
        if (seen?.status === "orphaned" || seen?.status === "reversed") {
          const id = await reviveDeposit(tx, seen.id, d.height, d.blockHash);
          if (id !== null) await this.deposits.revive(tx, id);
          continue;
        }
        if (seen) continue; // pending or credited already: the same deposit, once (a reversed one was taken back: credited again at the confirmations)
        const walletTransactionId = await this.deposits.recordPending(tx, {
          walletId: d.walletId, customerId: d.customerId, network, address: d.storedAddress, currency: d.currency, amount: d.amount, hash: d.txHash,
        });
        fresh.push({ ...key, blockHeight: d.height, blockHash: d.blockHash, address: d.to, currency: d.currency, amount: d.amount, walletId: d.walletId, walletTransactionId });
      }
      await writeBatch(tx, { network, head, blocks: batch.blocks, deposits: fresh, floor: last.height - WINDOW, scanned: last.height, scannedHash: last.hash });
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
      const answers = (await this.node.batch(chunk.map((h) => ["eth_getBlockByNumber", [`0x${h.toString(16)}`, false]] as const))) as ({ hash: string } | null)[];
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
   * cursor), at most {@link CREDITS_PER_RUN}, {@link CREDITS_PER_TRANSACTION} per transaction: the
   * group's rows turn `done` in one statement, each only if still pending (its own guard), then each
   * one's ledger entry and wallet transaction. A group in which a credit fails is rolled back and
   * its deposits credited one per transaction, so that a refused one alone stays pending. None while the node's block at
   * the cursor is not the cursor's (a reorg at the head not yet followed: the next block shows it).
   */
  private async creditDue(cursor: CursorRow): Promise<void> {
    const height = creditableHeight(cursor.scanned, this.chain.confirmations);
    const network = this.chain.network;
    const due = await dueDeposits(this.db, network, height, CREDITS_PER_RUN);
    if (due.length === 0) return;
    const top = await this.node.call<{ hash: string } | null>("eth_getBlockByNumber", [`0x${cursor.scanned.toString(16)}`, false]);
    if (top?.hash.toLowerCase() !== cursor.scannedHash.toLowerCase()) return;
    for (let i = 0; i < due.length; i += CREDITS_PER_TRANSACTION) {
      const group = due.slice(i, i + CREDITS_PER_TRANSACTION);
      try {
        await this.db.transaction(async (tx) => {
          const guarded = await markDoneMany(tx, group.map((d) => d.id), height);
          const credited = group.filter((d) => guarded.has(d.id));
          await this.deposits.lockForCredits(tx, credited); // every wallet of the group at once, in the ledger's lock order: no deadlock with a transfer
          for (const d of credited) await this.credit(tx, d);
        });
      } catch {
        for (const d of group) {
          try {
            await this.db.transaction(async (tx) => {
              if ((await markDoneMany(tx, [d.id], height)).has(d.id)) await this.credit(tx, d);
            });
          } catch (error) {
            this.logger.error({ err: error, network, deposit: d.id }, "a live deposit could not be credited; it stays pending");
          }
        }
      }
    }
  }

  /** Credits deposit `d` in `tx`, its row turned `done` just before (its guard): the ledger's entry and its wallet transaction `done`. */
  private async credit(tx: Tx, d: DueDeposit): Promise<void> {
    await this.deposits.credit(tx, {
      walletId: d.walletId,
      walletTransactionId: d.walletTransactionId,
      network: this.chain.network,
      currency: d.currency,
      amount: d.amount,
      reference: liveDepositReference(this.chain.network, d.txHash, d.logIndex),
    });
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
