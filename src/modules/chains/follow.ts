/**
 * The pure rules of the block follower (docs/decisions/live-chains.md "Deposits", "Reorgs"): the
 * amount of a deposit in its currency's units, the fork point of a reorg, a deposit's
 * confirmations, and the heights a run covers. No I/O.
 */
import { Decimal } from "decimal.js";
import { money, type Money } from "../../domain/money.js";

/** Decimals a deposit is credited with: finer amounts are rounded down (docs/decisions/live-chains.md "Deposits"). */
export const DEPOSIT_DECIMALS = 8;

/**
 * `raw` chain units (wei, a token's smallest unit) of a currency with `decimals` decimals, in the
 * currency's units, rounded down to {@link DEPOSIT_DECIMALS} decimals: `chainAmount(1234567891n, 9)`
 * is 1.23456789. Zero when `raw` is below one unit of the 8th decimal.
 * @throws RangeError for a negative `raw` or `decimals` outside 0–77.
 */
export function chainAmount(raw: bigint, decimals: number): Money {
  if (raw < 0n) throw new RangeError("a chain amount is never negative");
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 77) throw new RangeError(`decimals out of range: ${decimals}`);
  return money(raw.toString()).div(money(10).pow(decimals)).toDecimalPlaces(DEPOSIT_DECIMALS, Decimal.ROUND_DOWN);
}

/**
 * A deposit's confirmations: blocks from its own to `head`, both included (head − block + 1); 0
 * when the head is below it (a node behind the follower).
 */
export function confirmationsOf(head: number, blockHeight: number): number {
  return Math.max(0, head - blockHeight + 1);
}

/**
 * The highest height a deposit may have to be credited when the follower has checked the chain up
 * to `scanned`: it then has `confirmations` blocks, its own included.
 */
export function creditableHeight(scanned: number, confirmations: number): number {
  return scanned - confirmations + 1;
}

/**
 * The fork point of a reorg: the highest stored height whose hash the node still has at that
 * height. `stored` and `node` map heights to hashes (`node` may lack heights it was not asked or
 * no longer has); both compared in lower case.
 * @returns that height, or null when no stored height matches (the reorg is deeper than the window).
 */
export function forkPoint(stored: ReadonlyMap<number, string>, node: ReadonlyMap<number, string>): number | null {
  const heights = [...stored.keys()].sort((a, b) => b - a);
  for (const height of heights) {
    const ours = stored.get(height);
    const theirs = node.get(height);
    if (ours !== undefined && theirs !== undefined && ours.toLowerCase() === theirs.toLowerCase()) return height;
  }
  return null;
}

/** A block as the follower links it: its height, hash and parent's hash. */
export interface LinkedBlock {
  height: number;
  hash: string;
  parentHash: string;
}

/**
 * Whether `blocks` (consecutive heights, in order) follow the block `previous` hash by hash: each
 * one's parent is the one before. False on the first break (a reorg under the follower, or one
 * while the blocks were fetched).
 */
export function linked(previousHash: string, blocks: readonly LinkedBlock[]): boolean {
  let expected = previousHash.toLowerCase();
  let height: number | undefined;
  for (const block of blocks) {
    if (block.parentHash.toLowerCase() !== expected) return false;
    if (height !== undefined && block.height !== height + 1) return false;
    expected = block.hash.toLowerCase();
    height = block.height;
  }
  return true;
}

/**
 * The heights of the next batch after `scanned`, up to `head`, at most `size` of them: `[from, to]`,
 * or null when the follower is at the head.
 */
export function nextBatch(scanned: number, head: number, size: number): [number, number] | null {
  if (head <= scanned) return null;
  return [scanned + 1, Math.min(head, scanned + size)];
}

/** The first height of the first run: `startBlock` when configured, else the node's head. */
export function firstHeight(startBlock: number | undefined, head: number): number {
  return startBlock ?? head;
}
