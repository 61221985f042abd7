/**
 * What the follower reads from a live network's node for one batch of blocks
 * (docs/decisions/live-chains.md "Deposits"), through its plain JSON-RPC client (./rpc.ts): in one
 * JSON-RPC batch the blocks with their transactions (`eth_getBlockByNumber`, full) and the
 * configured tokens' `Transfer` logs of the range (`eth_getLogs`, one call per batch, the batch
 * being far below 500 blocks), and from them the transfers to addresses, before any of them is
 * known to be a deposit. Native transfers' receipts are asked only for those paying a deposit
 * address ({@link nativeSucceeded}). Hashes and addresses are compared in lower case; a log's
 * addresses are the last 20 bytes of its topics (no ABI decoder, no checksum).
 */
import { loadEthers } from "../../providers/evm/rpc.js";
import type { LiveChainSettings } from "./follower.js";
import type { ChainRpc, RpcCall } from "./rpc.js";
import type { LinkedBlock } from "./follow.js";

/** A block as `eth_getBlockByNumber(n, true)` answers it (the fields read). */
interface RawBlock {
  number: string;
  hash: string;
  parentHash: string;
  transactions: { hash: string; from: string; to: string | null; value: string }[];
}

/** A log as `eth_getLogs` answers it (the fields read). */
export interface RawLog {
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
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

/** An ABI-encoded address: 32 bytes, the first 12 zero (an indexed `address` topic). */
const ADDRESS_WORD = /^0x0{24}[0-9a-fA-F]{40}$/;
/** ABI-encoded data starting with one 32-byte word (the `uint256` value; more bytes are ignored, as an ABI decoder does). */
const VALUE_DATA = /^0x[0-9a-fA-F]{64}(?:[0-9a-fA-F]{2})*$/;

const quantity = (n: number) => `0x${n.toString(16)}`;

/** Blocks `from`…`to` of `chain` with the transfers they hold. @throws DomainError GATEWAY_TIMEOUT, BAD_GATEWAY; {@link ChainMoved}. */
export async function fetchBatch(rpc: ChainRpc, chain: LiveChainSettings, from: number, to: number): Promise<FetchedBatch> {
  const heights = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const contracts = chain.tokens.map((t) => t.contract);
  const calls: RpcCall[] = heights.map((h) => ["eth_getBlockByNumber", [quantity(h), true]]);
  if (contracts.length > 0) calls.push(["eth_getLogs", [{ fromBlock: quantity(from), toBlock: quantity(to), address: contracts, topics: [TRANSFER_TOPIC] }]]);
  const answers = await rpc.batch(calls);
  const blocks: LinkedBlock[] = [];
  const transfers: FoundTransfer[] = [];
  for (const [i, height] of heights.entries()) {
    const raw = answers[i] as RawBlock | null;
    if (!raw || Number(raw.number) !== height) throw new ChainMoved(`block ${height} is not on the node (any more)`);
    const block = { height, hash: raw.hash.toLowerCase(), parentHash: raw.parentHash.toLowerCase() };
    blocks.push(block);
    for (const t of raw.transactions) {
      if (t.to === null || t.to === undefined) continue;
      const value = BigInt(t.value);
      if (value === 0n) continue;
      transfers.push({ height, blockHash: block.hash, txHash: t.hash.toLowerCase(), logIndex: -1, from: t.from.toLowerCase(), to: t.to.toLowerCase(), currency: chain.nativeCurrency, raw: value, decimals: 18 });
    }
  }
  const logs = contracts.length > 0 ? (answers[heights.length] as RawLog[] | null) : [];
  transfers.push(...tokenTransfers(chain, blocks, logs ?? []));
  return { blocks, transfers };
}

/**
 * The configured tokens' `Transfer` logs of `logs` as transfers, each checked against the block
 * read at its height: three topics (the event's, then `from` and `to` as ABI-encoded addresses,
 * read as the last 20 bytes in lower case) and a `uint256` value of at least one 32-byte word. A
 * log of another shape is no deposit; one of zero value neither.
 * @throws {@link ChainMoved} when a log's block is not the block read at its height.
 */
export function tokenTransfers(chain: Pick<LiveChainSettings, "tokens">, blocks: readonly LinkedBlock[], logs: readonly RawLog[]): FoundTransfer[] {
  if (logs.length === 0) return [];
  const hashes = new Map(blocks.map((b) => [b.height, b.hash]));
  const found: FoundTransfer[] = [];
  for (const log of logs) {
    const token = chain.tokens.find((t) => t.contract === log.address.toLowerCase());
    if (!token || log.removed === true || log.topics.length !== 3 || log.topics[0]?.toLowerCase() !== TRANSFER_TOPIC) continue;
    const height = Number(log.blockNumber);
    if (hashes.get(height) !== log.blockHash.toLowerCase()) throw new ChainMoved(`the logs of block ${height} are of another branch`);
    const [, fromWord, toWord] = log.topics as [string, string, string];
    if (!ADDRESS_WORD.test(fromWord) || !ADDRESS_WORD.test(toWord) || !VALUE_DATA.test(log.data)) continue; // not a standard Transfer: no deposit
    const value = BigInt(`0x${log.data.slice(2, 66)}`);
    if (value === 0n) continue;
    found.push({
      height,
      blockHash: log.blockHash.toLowerCase(),
      txHash: log.transactionHash.toLowerCase(),
      logIndex: Number(log.logIndex),
      from: `0x${fromWord.slice(26).toLowerCase()}`,
      to: `0x${toWord.slice(26).toLowerCase()}`,
      currency: token.currency,
      raw: value,
      decimals: token.decimals,
    });
  }
  return found;
}

/**
 * Which of native transfers `transfers` succeeded (`eth_getTransactionReceipt`, status 1; one
 * JSON-RPC batch), each receipt checked against the block the transfer was read in.
 * @returns their transaction hashes. @throws DomainError GATEWAY_TIMEOUT, BAD_GATEWAY; {@link ChainMoved}.
 */
export async function nativeSucceeded(rpc: ChainRpc, transfers: readonly FoundTransfer[]): Promise<Set<string>> {
  const receipts = (await rpc.batch(transfers.map((t) => ["eth_getTransactionReceipt", [t.txHash]] as const))) as ({ status: string; blockHash: string } | null)[];
  const ok = new Set<string>();
  for (const [i, receipt] of receipts.entries()) {
    const transfer = transfers[i] as FoundTransfer;
    if (!receipt || receipt.blockHash.toLowerCase() !== transfer.blockHash) throw new ChainMoved(`the receipt of ${transfer.txHash} is of another branch`);
    if (BigInt(receipt.status) === 1n) ok.add(transfer.txHash);
  }
  return ok;
}

/** Checksummed forms kept at most by {@link AddressForms}. */
const CHECKSUMS_KEPT = 20_000;

/**
 * The forms a deposit address may be stored in (lower case, or checksummed as the wallets module
 * writes the live networks' addresses, EIP-55): the lookup of the wallets paid by a batch's
 * transfers asks both. Checksums cost a keccak each; they are remembered (at most
 * {@link CHECKSUMS_KEPT}, then forgotten at once), most transfers paying addresses seen before.
 */
export class AddressForms {
  private readonly checksums = new Map<string, string>();

  /** Each of lower-case `addresses` and its checksummed form, without repeats. */
  async of(addresses: readonly string[]): Promise<string[]> {
    const forms = new Set<string>();
    let getAddress: ((address: string) => string) | undefined;
    for (const address of addresses) {
      forms.add(address);
      let checksummed = this.checksums.get(address);
      if (checksummed === undefined) {
        getAddress ??= (await loadEthers()).getAddress;
        checksummed = getAddress(address);
        if (this.checksums.size >= CHECKSUMS_KEPT) this.checksums.clear();
        this.checksums.set(address, checksummed);
      }
      forms.add(checksummed);
    }
    return [...forms];
  }
}
