/**
 * The live EVM networks' variables (docs/decisions/live-chains.md "Configuration"), read by
 * src/config.ts: `CHAIN_<NET>_…` for `NET` = `ETHEREUM` | `POLYGON`.
 */

/** What reading the live networks needs of src/config.ts's reader: values, bounded integers, and where problems go. */
export interface ChainEnv {
  readonly problems: string[];
  optional(name: string): string | undefined;
  int(name: string, fallback: number, min: number, max: number): number;
}

/** The EVM networks that can be live (docs/decisions/live-chains.md), by the infix of their variables. */
export const LIVE_NETWORKS = { ETHEREUM: "networks/ethereum", POLYGON: "networks/polygon" } as const;

/** An EVM network the service follows and sends on itself (docs/decisions/live-chains.md "Configuration"). */
export interface LiveChain {
  /** `networks/ethereum` or `networks/polygon`. */
  network: (typeof LIVE_NETWORKS)[keyof typeof LIVE_NETWORKS];
  /** `CHAIN_<NET>_RPC_URL`: the node's JSON-RPC endpoint (http or https); setting it makes the network live. */
  rpcUrl: string;
  /** `CHAIN_<NET>_CONFIRMATIONS` (default 12 on ethereum, 50 on polygon; 1 to 1000): blocks, the deposit's own included, before it is credited. */
  confirmations: number;
  /** `CHAIN_<NET>_TOKENS` (`usdt=0x…:6,usdc=0x…:6`): the ERC-20 contract (lower case) and decimals of each token currency. */
  tokens: readonly { currency: string; contract: string; decimals: number }[];
  /** `CHAIN_<NET>_MAX_FEE_GWEI` (default 200 on ethereum, 3000 on polygon): the most a send pays per gas, gwei. */
  maxFeeGwei: number;
  /** `CHAIN_<NET>_GIVE_UP_S` (default 3600): how long a send waits for fees under the cap before it fails. */
  giveUpS: number;
  /** `CHAIN_<NET>_START_BLOCK` (default: the head at the first start): the first block the follower scans. */
  startBlock: number | undefined;
  /**
   * `CHAIN_<NET>_SWEEP_MIN` (`eth=0.05,usdt=50`; default empty): per currency, the smallest total of
   * a deposit address's credited deposits that is swept into the hot wallet, a decimal string of at
   * most 8 decimals; a currency not listed is swept at any amount (docs/decisions/live-chains.md "Sweeps").
   */
  sweepMin: Readonly<Record<string, string>>;
}

/** Defaults of each live network: confirmations and the fee cap in gwei. */
const LIVE_DEFAULTS: Record<keyof typeof LIVE_NETWORKS, { confirmations: number; maxFeeGwei: number }> = {
  ETHEREUM: { confirmations: 12, maxFeeGwei: 200 },
  POLYGON: { confirmations: 50, maxFeeGwei: 3000 },
};

/** The live EVM networks of `env` ({@link LiveChain}): one per `CHAIN_<NET>_RPC_URL` set; each bad value adds a line to `env.problems`. */
export function readLiveChains(env: ChainEnv): LiveChain[] {
  const chains: LiveChain[] = [];
  for (const [net, network] of Object.entries(LIVE_NETWORKS) as [keyof typeof LIVE_NETWORKS, LiveChain["network"]][]) {
    const rpcUrl = env.optional(`CHAIN_${net}_RPC_URL`);
    if (rpcUrl === undefined) continue;
    if (!/^https?:\/\/[^\s]+$/.test(rpcUrl)) env.problems.push(`CHAIN_${net}_RPC_URL must be an http:// or https:// URL`);
    const start = env.optional(`CHAIN_${net}_START_BLOCK`);
    const tokens = readTokens(env, `CHAIN_${net}_TOKENS`);
    chains.push({
      network,
      rpcUrl,
      confirmations: env.int(`CHAIN_${net}_CONFIRMATIONS`, LIVE_DEFAULTS[net].confirmations, 1, 1000),
      tokens,
      maxFeeGwei: env.int(`CHAIN_${net}_MAX_FEE_GWEI`, LIVE_DEFAULTS[net].maxFeeGwei, 1, 1_000_000),
      giveUpS: env.int(`CHAIN_${net}_GIVE_UP_S`, 3600, 60, 30 * 86_400),
      startBlock: start === undefined ? undefined : env.int(`CHAIN_${net}_START_BLOCK`, 0, 0, Number.MAX_SAFE_INTEGER),
      sweepMin: readSweepMin(env, `CHAIN_${net}_SWEEP_MIN`, [NATIVE_CURRENCY[network] ?? "eth", ...tokens.map((t) => t.currency)]),
    });
  }
  return chains;
}

/** `<currency>=<0x contract>:<decimals>` items separated by commas (a token currency once, decimals 0–36). */
function readTokens(env: ChainEnv, name: string): LiveChain["tokens"] {
  const raw = env.optional(name);
  if (raw === undefined) return [];
  const tokens: { currency: string; contract: string; decimals: number }[] = [];
  for (const item of raw.split(",").map((x) => x.trim()).filter((x) => x !== "")) {
    const m = /^([a-z][a-z0-9]{1,15})=(0x[0-9a-fA-F]{40}):(\d{1,2})$/.exec(item);
    if (!m || Number(m[3]) > 36 || tokens.some((t) => t.currency === m[1])) {
      env.problems.push(`${name} must list <currency>=<0x contract address>:<decimals 0-36>, each currency once, comma-separated; got "${item}"`);
      continue;
    }
    tokens.push({ currency: m[1]!, contract: m[2]!.toLowerCase(), decimals: Number(m[3]) });
  }
  return tokens;
}

/** `<currency>=<decimal>` items separated by commas: each a currency the network holds (`held`), once, at most 12 integer digits and 8 decimals. */
function readSweepMin(env: ChainEnv, name: string, held: readonly string[]): Record<string, string> {
  const raw = env.optional(name);
  const mins: Record<string, string> = {};
  if (raw === undefined) return mins;
  for (const item of raw.split(",").map((x) => x.trim()).filter((x) => x !== "")) {
    const m = /^([a-z][a-z0-9]{1,15})=(\d{1,12}(?:\.\d{1,8})?)$/.exec(item);
    if (!m || !held.includes(m[1]!) || mins[m[1]!] !== undefined) {
      env.problems.push(`${name} must list <currency>=<decimal amount, at most 8 decimals>, each currency once, among the network's native coin and CHAIN_*_TOKENS (${held.join(", ")}); got "${item}"`);
      continue;
    }
    mins[m[1]!] = m[2]!;
  }
  return mins;
}

/** The native coin of each live network, as the catalogue codes it. */
export const NATIVE_CURRENCY: Readonly<Record<string, string>> = { "networks/ethereum": "eth", "networks/polygon": "pol" };

/**
 * Which networks are live and which currencies each can hold (docs/decisions/live-chains.md
 * "Configuration"): its native coin and the tokens of `CHAIN_<NET>_TOKENS`; a token not listed
 * there could never be seen arriving. Networks that are not live hold what the catalogue says.
 */
export interface LiveNetworkSet {
  isLive(network: string): boolean;
  /** Whether `network` can hold `currency` (lower case): always true when the network is not live. */
  holds(network: string, currency: string): boolean;
}

/** The live networks of `chains` ({@link LiveNetworkSet}). */
export function liveNetworkSet(chains: readonly LiveChain[]): LiveNetworkSet {
  const held = new Map(chains.map((c) => [c.network as string, new Set([NATIVE_CURRENCY[c.network] ?? "eth", ...c.tokens.map((t) => t.currency)])]));
  return {
    isLive: (network) => held.has(network),
    holds: (network, currency) => held.get(network)?.has(currency) ?? true,
  };
}
