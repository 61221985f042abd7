/**
 * The baseline of the scan row of `npm run bench` (`BENCH_ONLY=scan`; docs/performance.md "Chains:
 * the scan row"): a bare loop making the JSON-RPC calls the block follower makes
 * (src/modules/chains/scan.ts; docs/decisions/live-chains.md "Deposits"), with no database and no
 * ethers: per batch of {@link BARE_BATCH} blocks one JSON-RPC batch (one HTTP request, fetch) of
 * `eth_getBlockByNumber(n, true)` for each block and one `eth_getLogs` of the token contracts'
 * `Transfer` logs over the range, then one batch of `eth_getTransactionReceipt` for the native
 * transfers paying a deposit address (status 1 counts). Each batch's blocks are checked linked by
 * parent hash, as the follower checks them. The deposit addresses are a set in memory.
 */
import { Rpc, hex } from "./scan-chain.js";

/** Blocks per batch: the follower's (src/modules/chains/follower.ts `BLOCKS_PER_BATCH`). */
export const BARE_BATCH = 20;
/** `Transfer(address,address,uint256)`'s topic. */
const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

interface RawBlock {
  number: string;
  hash: string;
  parentHash: string;
  transactions: { hash: string; to: string | null; value: string }[];
}

interface RawLog {
  topics: string[];
  data: string;
}

/** What one bare scan did. */
export interface BareScan {
  /** Blocks read (`from`…`to`, both included). */
  blocks: number;
  seconds: number;
  /** Blocks per second. */
  rate: number;
  /** Deposits found: token `Transfer` logs to a deposit address plus native transfers to one whose receipt has status 1. */
  deposits: number;
  /** Receipts asked. */
  receipts: number;
  /** HTTP requests made (JSON-RPC batches). */
  requests: number;
}

/**
 * Reads blocks `from`…`to` of the node at `url` as the follower does (see the module's comment).
 * `addresses` and `tokens` in lower case.
 * @throws Error on an error answer, a missing block or a batch whose blocks are not linked.
 */
export async function bareScan(url: string, range: { from: number; to: number }, tokens: readonly string[], addresses: ReadonlySet<string>): Promise<BareScan> {
  const rpc = new Rpc(url);
  const began = performance.now();
  let deposits = 0;
  let receipts = 0;
  let requests = 0;
  let previous: string | null = null;
  for (let from = range.from; from <= range.to; from += BARE_BATCH) {
    const to = Math.min(range.to, from + BARE_BATCH - 1);
    const calls: [string, unknown[]][] = [];
    for (let h = from; h <= to; h++) calls.push(["eth_getBlockByNumber", [hex(h), true]]);
    if (tokens.length > 0) calls.push(["eth_getLogs", [{ fromBlock: hex(from), toBlock: hex(to), address: tokens, topics: [TRANSFER_TOPIC] }]]);
    const answers = await rpc.batch<unknown>(calls);
    requests++;
    const paying: string[] = [];
    for (let i = 0; i <= to - from; i++) {
      const block = answers[i] as RawBlock | null;
      if (!block || Number(block.number) !== from + i) throw new Error(`block ${from + i} is missing`);
      if (previous !== null && block.parentHash !== previous) throw new Error(`block ${from + i} does not follow block ${from + i - 1}`);
      previous = block.hash;
      for (const t of block.transactions) if (t.to !== null && BigInt(t.value) > 0n && addresses.has(t.to.toLowerCase())) paying.push(t.hash);
    }
    const logs = (tokens.length > 0 ? answers[answers.length - 1] : []) as RawLog[];
    for (const log of logs) {
      const topic = log.topics[2];
      if (log.topics.length === 3 && topic !== undefined && addresses.has(`0x${topic.slice(26)}`.toLowerCase()) && BigInt(log.data) > 0n) deposits++;
    }
    if (paying.length > 0) {
      const got = await rpc.batch<{ status: string } | null>(paying.map((h) => ["eth_getTransactionReceipt", [h]] as const));
      requests++;
      receipts += paying.length;
      deposits += got.filter((r) => r !== null && BigInt(r.status) === 1n).length;
    }
  }
  const seconds = (performance.now() - began) / 1000;
  const blocks = range.to - range.from + 1;
  return { blocks, seconds, rate: blocks / seconds, deposits, receipts, requests };
}
