/**
 * The chain of the scan row of `npm run bench` (`BENCH_ONLY=scan`; docs/performance.md "Chains: the
 * scan row"): a fresh Anvil (scripts/chain/anvil.ts `startAnvil`) with the test ERC-20
 * (scripts/chain/test-token.ts `deployTestToken`, 6 decimals, as `usdt`), then blocks packed with
 * transfers, native and token alternately, from {@link SENDERS} of Anvil's funded accounts.
 *
 * Speed: automine is off; each block is one JSON-RPC batch of `eth_sendTransaction` (Anvil signs
 * for its own unlocked accounts; the nonces, gas and fees are given, so nothing is estimated),
 * then one `evm_mine`. Within a block every transfer has another sender, so the order Anvil takes a
 * batch's calls in does not matter.
 *
 * Layout: block 1 deploys the token and the next {@link SENDERS} blocks mint each sender's tokens
 * (automine on); the transfers follow, spread evenly over the blocks up to `head − tail`; the last
 * `tail` blocks (the confirmations − 1) are empty, so that every deposit of the pre-built chain has
 * its confirmations at the head. Every `transfers / deposits`-th transfer pays a deposit address
 * (round-robin over `addresses`), the others pay {@link STRANGERS} addresses nobody holds, in turn.
 */
import { createHash } from "node:crypto";
import { startAnvil, anvilProvider, anvilWallet, type Anvil } from "../chain/anvil.js";
import { deployTestToken } from "../chain/test-token.js";

/** Anvil's funded accounts that send the transfers (accounts 1…SENDERS; account 0 deploys the token). */
export const SENDERS = 9;
/** The token's decimals (`CHAIN_ETHEREUM_TOKENS=usdt=<contract>:6`). */
export const TOKEN_DECIMALS = 6;
/** `transfer(address,uint256)`'s selector. */
const TRANSFER_SELECTOR = "0xa9059cbb";
/** Gas of each transfer (a token transfer to a fresh holder needs about 52 000), and its fees in wei (far above Anvil's base fee). */
const GAS = { native: 21_000, token: 80_000, maxFee: 10_000_000_000n, tip: 1_000_000_000n } as const;

/** A JSON-RPC client of one node: single calls and batches over fetch. */
export class Rpc {
  private id = 0;
  constructor(readonly url: string) {}

  /** One call. @throws Error with the node's error. */
  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    const [answer] = await this.batch<T>([[method, params]]);
    return answer as T;
  }

  /** `calls` in one JSON-RPC batch (one HTTP request); the results in the calls' order. @throws Error on any error answer. */
  async batch<T>(calls: readonly (readonly [string, unknown[]])[]): Promise<T[]> {
    if (calls.length === 0) return [];
    const first = this.id;
    const body = calls.map(([method, params], i) => ({ jsonrpc: "2.0", id: first + i, method, params }));
    this.id += calls.length;
    const res = await fetch(this.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const answers = (await res.json()) as { id: number; result?: T; error?: { message: string } }[];
    const byId = new Map(answers.map((a) => [a.id, a]));
    return calls.map(([method], i) => {
      const a = byId.get(first + i);
      if (!a || a.error) throw new Error(`${method}: ${a?.error?.message ?? "no answer"}`);
      return a.result as T;
    });
  }
}

/** The quantity `n` as JSON-RPC wants it (`0x…`). */
export const hex = (n: number | bigint): string => `0x${n.toString(16)}`;

/**
 * Addresses nobody holds that the other transfers pay, in turn. Few on purpose: a fresh address per
 * transfer grows Anvil's state with every block, and its cost of mining a block with it (5 000
 * blocks took 210 s on 2 busy cores instead of about a minute).
 */
export const STRANGERS = 200;

/** A deterministic address nobody holds: the first 20 bytes of sha256("scan-bench" + i). */
const strangerAddress = (i: number): string => `0x${createHash("sha256").update(`scan-bench-${i}`).digest("hex").slice(0, 40)}`;

/** One transfer to put in a block. */
interface Planned {
  to: string;
  token: boolean;
  /** Wei, or the token's base units. */
  amount: bigint;
  deposit: boolean;
}

/** The running chain and what the bench needs of it. */
export interface ScanChain {
  anvil: Anvil;
  rpc: Rpc;
  /** The token's contract, lower case. */
  token: string;
  /** Anvil's funded account addresses, by index. */
  accounts: string[];
  /** The next nonce of each sender (by account index). */
  nonces: Map<number, number>;
  stop(): Promise<void>;
}

/** Starts Anvil, deploys the token and mints each sender 10¹² tokens (automine on), then turns automine off. */
export async function startScanChain(): Promise<ScanChain> {
  const anvil = await startAnvil({ accounts: SENDERS + 1 });
  const provider = anvilProvider(anvil.url, anvil.chainId);
  try {
    const deployer = anvilWallet(provider, 0, anvil.mnemonic);
    const { contract, address } = await deployTestToken(deployer, { name: "Bench USD", symbol: "USDT", decimals: TOKEN_DECIMALS });
    const accounts = Array.from({ length: SENDERS + 1 }, (_, i) => anvilWallet(provider, i, anvil.mnemonic).address.toLowerCase());
    for (let i = 1; i <= SENDERS; i++) await (await contract.getFunction("mint")(accounts[i], 10n ** 18n)).wait();
    const rpc = new Rpc(anvil.url);
    await rpc.call("evm_setAutomine", [false]);
    const nonces = new Map<number, number>();
    for (let i = 1; i <= SENDERS; i++) nonces.set(i, Number(await rpc.call<string>("eth_getTransactionCount", [accounts[i], "latest"])));
    return { anvil, rpc, token: address.toLowerCase(), accounts, nonces, stop: () => anvil.stop() };
  } finally {
    provider.destroy();
  }
}

/** The `eth_sendTransaction` call of `t` from account `sender`, with its nonce taken from `chain.nonces`. */
function sendCall(chain: ScanChain, sender: number, t: Planned): readonly [string, unknown[]] {
  const nonce = chain.nonces.get(sender) as number;
  chain.nonces.set(sender, nonce + 1);
  const common = { from: chain.accounts[sender], nonce: hex(nonce), maxFeePerGas: hex(GAS.maxFee), maxPriorityFeePerGas: hex(GAS.tip) };
  if (!t.token) return ["eth_sendTransaction", [{ ...common, to: t.to, value: hex(t.amount), gas: hex(GAS.native) }]];
  const data = `${TRANSFER_SELECTOR}${t.to.slice(2).padStart(64, "0")}${t.amount.toString(16).padStart(64, "0")}`;
  return ["eth_sendTransaction", [{ ...common, to: chain.token, value: "0x0", data, gas: hex(GAS.token) }]];
}

/**
 * Mines one block holding `transfers` (each from another sender, starting at sender `firstSender`).
 * @returns the new block's height and the wall time (ms since the epoch) `evm_mine` answered: the block is on the node from then.
 * @throws Error when a send or the mining fails.
 */
export async function mineBlock(chain: ScanChain, transfers: readonly Planned[], firstSender = 1): Promise<{ height: number; minedAt: number }> {
  if (transfers.length > SENDERS) throw new Error(`at most ${SENDERS} transfers per block (one per sender)`);
  await chain.rpc.batch(transfers.map((t, i) => sendCall(chain, ((firstSender - 1 + i) % SENDERS) + 1, t)));
  await chain.rpc.call("evm_mine", []);
  const minedAt = Date.now();
  const [head, count] = await chain.rpc.batch<string>([["eth_blockNumber", []], ["eth_getBlockTransactionCountByNumber", ["latest"]]]);
  if (Number(count) !== transfers.length) throw new Error(`block ${Number(head)} holds ${Number(count)} transactions, not ${transfers.length}`);
  return { height: Number(head), minedAt };
}

/** A deposit of `index` to `address`: native (0.01 ETH + index gwei) on even indexes, token (1 + index/10⁶ USDT) on odd ones. */
export function depositTransfer(index: number, address: string): Planned {
  const token = index % 2 === 1;
  return { to: address.toLowerCase(), token, amount: token ? 1_000_000n + BigInt(index) : 10n ** 16n + BigInt(index) * 10n ** 9n, deposit: true };
}

/** What {@link buildScanChain} built. */
export interface BuiltChain {
  /** The head: the last block of the chain. */
  head: number;
  /** The first block holding transfers (those below it deploy and mint the token). */
  firstTransferBlock: number;
  transfers: number;
  deposits: number;
  native: number;
  tokenTransfers: number;
  /** Seconds the transfer blocks took to build. */
  seconds: number;
}

/**
 * Mines the chain up to `blocks` (the head's height), holding `transfers` transfers of which
 * `deposits` pay `addresses` (round-robin), the last `tail` blocks empty (see the module's comment).
 * @throws Error when the setup blocks leave no room, or a send fails.
 */
export async function buildScanChain(
  chain: ScanChain,
  size: { blocks: number; transfers: number; deposits: number; tail: number },
  addresses: readonly string[],
  log: (line: string) => void,
): Promise<BuiltChain> {
  const began = performance.now();
  const start = Number(await chain.rpc.call<string>("eth_blockNumber"));
  const room = size.blocks - start - size.tail;
  if (room <= 0 || size.transfers > room * SENDERS) throw new Error(`${size.transfers} transfers do not fit in blocks ${start + 1}–${size.blocks - size.tail}`);
  if (size.deposits > size.transfers || addresses.length === 0) throw new Error("more deposits than transfers, or no deposit address");
  const every = size.transfers / size.deposits;
  let deposits = 0;
  let native = 0;
  let sent = 0;
  for (let b = 0; b < room; b++) {
    const upTo = Math.round(((b + 1) * size.transfers) / room);
    const planned: Planned[] = [];
    for (; sent < upTo; sent++) {
      const isDeposit = deposits < size.deposits && sent >= Math.round(deposits * every);
      const t = isDeposit ? depositTransfer(deposits, addresses[deposits % addresses.length] as string) : { to: strangerAddress(sent % STRANGERS), token: sent % 2 === 1, amount: BigInt(1000 + sent), deposit: false };
      if (isDeposit) deposits++;
      if (!t.token) native++;
      planned.push(t);
    }
    await mineBlock(chain, planned, (b % SENDERS) + 1);
    if ((b + 1) % 1000 === 0) log(`    ${b + 1} of ${room} transfer blocks mined (${((performance.now() - began) / 1000).toFixed(1)} s)`);
  }
  await chain.rpc.call("anvil_mine", [hex(size.tail)]);
  const head = Number(await chain.rpc.call<string>("eth_blockNumber"));
  if (head !== size.blocks) throw new Error(`the chain's head is ${head}, not ${size.blocks}`);
  return { head, firstTransferBlock: start + 1, transfers: sent, deposits, native, tokenTransfers: sent - native, seconds: (performance.now() - began) / 1000 };
}
