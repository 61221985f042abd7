/**
 * The pure rules of on-chain sends (docs/decisions/live-chains.md "Sends"): the amount in the
 * chain's units, the EIP-1559 fees under the cap, the replacement's fees, and when a send is
 * replaced. Fees in wei per gas (bigint); no I/O.
 */
import { Decimal } from "decimal.js";
import { money } from "../../domain/money.js";

/** Blocks a broadcast transaction may wait unmined before it is replaced with the same nonce and higher fees. */
export const REPLACE_AFTER_BLOCKS = 20;

/** How much a replacement raises both fees at least, in percent: nodes refuse a replacement under +10 % ("replacement transaction underpriced"). */
export const REPLACEMENT_BUMP_PERCENT = 25n;

/** The gas limit sent: the node's estimate plus this margin, in percent (unused gas is not paid). */
export const GAS_MARGIN_PERCENT = 20n;

/** One gwei in wei. */
export const GWEI = 1_000_000_000n;

/** The two EIP-1559 fees of a transaction, wei per gas. */
export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * `amount` (decimal text in the currency's units) in the chain's units of a currency with
 * `decimals` decimals: `unitsOf("1.5", 6)` is 1500000n.
 * @returns null when the amount is not a whole number of the chain's units (finer than `decimals`) or not positive.
 */
export function unitsOf(amount: string, decimals: number): bigint | null {
  const units = money(amount).mul(new Decimal(10).pow(decimals));
  if (!units.isInteger() || units.lte(0)) return null;
  return BigInt(units.toFixed(0));
}

/**
 * The fees of a new transaction when the latest block's base fee is `baseFee` and the node
 * suggests the tip `tip`, under the cap `cap` (all wei per gas): max fee = min(cap, 2 × base + tip)
 * (room for two full blocks' rise), tip = min(tip, max fee).
 * @returns null while the base fee alone is above the cap: the send waits.
 */
export function feesFor(baseFee: bigint, tip: bigint, cap: bigint): Fees | null {
  if (baseFee > cap) return null;
  const maxFeePerGas = min(cap, 2n * baseFee + tip);
  return { maxFeePerGas, maxPriorityFeePerGas: min(tip, maxFeePerGas) };
}

/**
 * The fees of a replacement of a transaction sent with `previous`: each raised by at least
 * {@link REPLACEMENT_BUMP_PERCENT}, and at least what a new transaction would pay now (`market`,
 * {@link feesFor}), under the cap `cap`.
 * @returns null when the raised max fee would pass the cap: the transaction is not replaced (it is
 *   broadcast again as it is, and still waits to be mined).
 */
export function replacementFees(previous: Fees, market: Fees | null, cap: bigint): Fees | null {
  const bump = (fee: bigint): bigint => fee + (fee * REPLACEMENT_BUMP_PERCENT + 99n) / 100n;
  const maxFeePerGas = max(bump(previous.maxFeePerGas), market?.maxFeePerGas ?? 0n);
  const maxPriorityFeePerGas = max(bump(previous.maxPriorityFeePerGas), market?.maxPriorityFeePerGas ?? 0n);
  if (maxFeePerGas > cap) return null;
  return { maxFeePerGas, maxPriorityFeePerGas: min(maxPriorityFeePerGas, maxFeePerGas) };
}

/** Whether a transaction first broadcast at height `broadcastHeight` and not mined by `head` is due for replacement ({@link REPLACE_AFTER_BLOCKS}). */
export function replacementDue(head: number, broadcastHeight: number): boolean {
  return head - broadcastHeight >= REPLACE_AFTER_BLOCKS;
}

/** The gas limit for the node's estimate `estimate`: plus {@link GAS_MARGIN_PERCENT}. */
export function gasLimitOf(estimate: bigint): bigint {
  return estimate + (estimate * GAS_MARGIN_PERCENT + 99n) / 100n;
}

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);
