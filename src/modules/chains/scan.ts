/**
 * What the follower reads from a live network's node for one batch of blocks
 * (docs/decisions/live-chains.md "Deposits"): the blocks with their transactions
 * (`eth_getBlockByNumber`, full), the configured tokens' `Transfer` logs of the range
 * (`eth_getLogs`, one call per batch, the batch being far below 500 blocks), and the transfers to
 * addresses, before any of them is known to be a deposit. Native transfers' receipts are asked
 * only for those paying a deposit address ({@link nativeSucceeded}).
 */
import type { LiveChainSettings } from "./follower.js";
import type { EvmRpc } from "../../providers/evm/rpc.js";
import { loadEthers } from "../../providers/evm/rpc.js";
import type { LinkedBlock } from "./follow.js";

/** A block as `eth_getBlockByNumber(n, true)` answers it (the fields read). */
interface RawBlock {
  number: string;
  hash: string;
  parentHash: string;
  transactions: { hash: string; from: string; to: string | null; value: string }[];
}

/** A log as `eth_getLogs` answers it (the fields read). */
interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  logIndex: string;
  removed?: boolean;
}

/** A transfer to an address found in a block: a native one (`logIndex` −1) or a token's `Transfer` log. */
export interface FoundTransfer {
  height: number;
  blockHash: string;
  txHash: string;
  logIndex: number;
  /** Lower case. */
  from: string;
  /** Lower case. */
  to: string;
  currency: string;
  /** In the chain's units. */
  raw: bigint;
  decimals: number;
}

/** One fetched batch: its blocks in height order and the transfers they hold. */
export interface FetchedBatch {
  blocks: LinkedBlock[];
  transfers: FoundTransfer[];
}

/** The node's answers changed under the batch (a reorg while it was read): the run stops and the next one reads again. */
export class ChainMoved extends Error {}

/** `Transfer(address,address,uint256)`'s topic. */
const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

const quantity = (n: number) => `0x${n.toString(16)}`;

/** Blocks `from`…`to` of `chain` with the transfers they hold. @throws DomainError GATEWAY_TIMEOUT, BAD_GATEWAY; {@link ChainMoved}. */
export async function fetchBatch(rpc: EvmRpc, chain: LiveChainSettings, from: number, to: number): Promise<FetchedBatch> {
  const heights = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const contracts = chain.tokens.map((t) => t.contract);
  const [raws, logs] = await Promise.all([
    Promise.all(heights.map((h) => rpc.call<RawBlock | null>("eth_getBlockByNumber", [quantity(h), true]))),
    contracts.length === 0
      ? Promise.resolve([] as RawLog[])
      : rpc.call<RawLog[]>("eth_getLogs", [{ fromBlock: quantity(from), toBlock: quantity(to), address: contracts, topics: [TRANSFER_TOPIC] }]),
  ]);
  const blocks: LinkedBlock[] = [];
  const transfers: FoundTransfer[] = [];
  for (const [i, raw] of raws.entries()) {
    if (!raw || Number(raw.number) !== heights[i]) throw new ChainMoved(`block ${heights[i]} is not on the node (any more)`);
    const block = { height: Number(raw.number), hash: raw.hash.toLowerCase(), parentHash: raw.parentHash.toLowerCase() };
    blocks.push(block);
    for (const t of raw.transactions) {
      const value = BigInt(t.value);
      if (t.to === null || value === 0n) continue;
      transfers.push({ height: block.height, blockHash: block.hash, txHash: t.hash.toLowerCase(), logIndex: -1, from: t.from.toLowerCase(), to: t.to.toLowerCase(), currency: chain.nativeCurrency, raw: value, decimals: 18 });
    }
  }
  transfers.push(...(await tokenTransfers(chain, blocks, logs)));
  return { blocks, transfers };
}

/** The configured tokens' `Transfer` logs of `logs`, each checked against the block read at its height. @throws {@link ChainMoved}. */
async function tokenTransfers(chain: LiveChainSettings, blocks: readonly LinkedBlock[], logs: readonly RawLog[]): Promise<FoundTransfer[]> {
  if (logs.length === 0) return [];
  const { AbiCoder, getAddress } = await loadEthers();
  const coder = AbiCoder.defaultAbiCoder();
  const hashes = new Map(blocks.map((b) => [b.height, b.hash]));
  const found: FoundTransfer[] = [];
  for (const log of logs) {
    const token = chain.tokens.find((t) => t.contract === log.address.toLowerCase());
    if (!token || log.removed === true || log.topics.length !== 3 || log.topics[0]?.toLowerCase() !== TRANSFER_TOPIC) continue;
    const height = Number(log.blockNumber);
    if (hashes.get(height) !== log.blockHash.toLowerCase()) throw new ChainMoved(`the logs of block ${height} are of another branch`);
    let from: string, to: string, value: bigint;
    try {
      [from, to] = [log.topics[1], log.topics[2]].map((topic) => getAddress(coder.decode(["address"], topic as string)[0] as string).toLowerCase()) as [string, string];
      [value] = coder.decode(["uint256"], log.data) as unknown as [bigint];
    } catch {
      continue; // not a standard Transfer: no deposit
    }
    if (value === 0n) continue;
    found.push({ height, blockHash: log.blockHash.toLowerCase(), txHash: log.transactionHash.toLowerCase(), logIndex: Number(log.logIndex), from, to, currency: token.currency, raw: value, decimals: token.decimals });
  }
  return found;
}

/**
 * Which of native transfers `transfers` succeeded (`eth_getTransactionReceipt`, status 1), each
 * receipt checked against the block the transfer was read in. @returns their transaction hashes.
 * @throws DomainError GATEWAY_TIMEOUT, BAD_GATEWAY; {@link ChainMoved}.
 */
export async function nativeSucceeded(rpc: EvmRpc, transfers: readonly FoundTransfer[]): Promise<Set<string>> {
  const receipts = await Promise.all(
    transfers.map((t) => rpc.call<{ status: string; blockHash: string } | null>("eth_getTransactionReceipt", [t.txHash])),
  );
  const ok = new Set<string>();
  for (const [i, receipt] of receipts.entries()) {
    const transfer = transfers[i] as FoundTransfer;
    if (!receipt || receipt.blockHash.toLowerCase() !== transfer.blockHash) throw new ChainMoved(`the receipt of ${transfer.txHash} is of another branch`);
    if (BigInt(receipt.status) === 1n) ok.add(transfer.txHash);
  }
  return ok;
}
