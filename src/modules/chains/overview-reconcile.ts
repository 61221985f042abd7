/**
 * The reconciliation of the live EVM networks with the ledger, for `npm run ledger:check`
 * (docs/decisions/live-chains.md "Reconciliation"): per live network and currency (the native
 * coin, each configured token), what the service's addresses hold on chain (every deposit address
 * of the network, from the wallets' `wallet_address`, and the hot wallet; the gas wallet's coin is
 * left out) against what the ledger owes on that network and currency: minus the balance of the
 * external account `external:<network>:<currency>`, through which every deposit enters custody and
 * every withdrawal leaves it (docs/decisions/customers-users-and-wallets.md "The custody ledger").
 * Less on chain than owed is a deficit (the check fails); more is a surplus (reported only).
 *
 * The ledger is read first, the chain then at one block (the head when asked): money that moves
 * between the two reads shows as a surplus, never as a deficit, except a withdrawal confirmed and
 * already mined within those seconds.
 */
import type { Db } from "../../db/sql.js";
import { money, type Money } from "../../domain/money.js";
import { NATIVE_CURRENCY } from "../../domain/live-chains.js";
import type { CustodyKeys } from "../../providers/evm/keys.js";
import { EvmRpc, loadEthers, rpcError } from "../../providers/evm/rpc.js";
import type { LedgerService } from "../ledger/service.js";
import { chainAmount } from "./follow.js";
import { NATIVE_DECIMALS } from "./overview.js";
import { depositAddresses } from "./repository/overview.js";
import type { LiveChainConfig } from "./service.js";

/** Balances asked of a node at once (ethers batches up to 50 calls per HTTP request). */
const CHUNK = 200;

/** The ERC-20 `balanceOf` function, in ethers' human-readable ABI. */
const BALANCE_OF_ABI = ["function balanceOf(address owner) view returns (uint256)"];

/** One network and currency: what the service's addresses hold and what the ledger owes, in the currency's units. */
export interface ChainHolding {
  network: string;
  currency: string;
  /** What the deposit addresses and the hot wallet hold at `height`, 8 decimals rounded down; null when the currency has no configured contract (cannot be asked). */
  held: Money | null;
  /** What the ledger owes: minus the external account's balance. */
  owed: Money;
  /** held − owed: below zero a deficit; null with `held`. */
  difference: Money | null;
  /** The block the chain was read at. */
  height: number;
  /** Addresses asked (deposit addresses and the hot wallet). */
  addresses: number;
}

/** What the reconciliation reads. */
export interface ReconcileDeps {
  db: Db;
  ledger: Pick<LedgerService, "externalBalances">;
  /** The custody keys the app opens (src/providers/evm/keys.ts `openCustodyKeys`): the hot and gas wallets. */
  custody: CustodyKeys;
  /** `CHAIN_RPC_TIMEOUT_S`. */
  rpcTimeoutS: number;
}

/**
 * Every live network's holdings against the ledger, in configuration order, per currency: the
 * native coin, each configured token, then any other currency the ledger owes on the network
 * (`held` null: no contract to ask).
 * @throws DomainError GATEWAY_TIMEOUT, BAD_GATEWAY when a node does not answer or answers an error.
 */
export async function reconcileChains(chains: readonly LiveChainConfig[], deps: ReconcileDeps): Promise<ChainHolding[]> {
  const owedBy = new Map<string, Map<string, Money>>();
  for (const chain of chains) {
    const external = await deps.ledger.externalBalances(deps.db, { network: chain.network });
    owedBy.set(chain.network, new Map(external.map((e) => [e.currency, e.balance.neg()])));
  }
  const result: ChainHolding[] = [];
  for (const chain of chains) result.push(...(await reconcileOne(chain, owedBy.get(chain.network) ?? new Map(), deps)));
  return result;
}

/** One network's holdings (see {@link reconcileChains}). */
async function reconcileOne(chain: LiveChainConfig, owed: ReadonlyMap<string, Money>, deps: ReconcileDeps): Promise<ChainHolding[]> {
  const rpc = new EvmRpc(chain.network, chain.rpcUrl, deps.rpcTimeoutS);
  try {
    const gas = deps.custody.gasWallet.address.toLowerCase();
    const hot = deps.custody.hotWallet.address.toLowerCase();
    const addresses = [...new Set([...(await depositAddresses(deps.db, chain.network)), hot])].filter((a) => a !== gas);
    const height = Number(await rpc.call<string>("eth_blockNumber", []));
    const tag = `0x${height.toString(16)}`;
    const native = NATIVE_CURRENCY[chain.network] ?? "eth";
    const rows: { currency: string; held: Money | null }[] = [];
    const nativeRaw = await sumChunks(addresses, (a) => rpc.call<string>("eth_getBalance", [a, tag]).then(BigInt));
    rows.push({ currency: native, held: chainAmount(nativeRaw, NATIVE_DECIMALS) });
    const { Contract } = await loadEthers();
    const provider = await rpc.provider();
    for (const token of chain.tokens) {
      const contract = new Contract(token.contract, BALANCE_OF_ABI, provider);
      const balanceOf = contract.getFunction("balanceOf");
      const raw = await sumChunks(addresses, async (a) => {
        try {
          return (await balanceOf(a, { blockTag: height })) as bigint;
        } catch (error) {
          throw rpcError(chain.network, `balanceOf on ${token.contract}`, error);
        }
      });
      rows.push({ currency: token.currency, held: chainAmount(raw, token.decimals) });
    }
    for (const currency of owed.keys()) if (!rows.some((r) => r.currency === currency)) rows.push({ currency, held: null });
    return rows.map(({ currency, held }) => {
      const owes = owed.get(currency) ?? money(0);
      return { network: chain.network, currency, held, owed: owes, difference: held === null ? null : held.minus(owes), height, addresses: addresses.length };
    });
  } finally {
    rpc.destroy();
  }
}

/** The sum of `ask(a)` over `addresses`, {@link CHUNK} calls at a time. */
async function sumChunks(addresses: readonly string[], ask: (address: string) => Promise<bigint>): Promise<bigint> {
  let sum = 0n;
  for (let i = 0; i < addresses.length; i += CHUNK) {
    for (const value of await Promise.all(addresses.slice(i, i + CHUNK).map(ask))) sum += value;
  }
  return sum;
}

/** Whether any holding falls short of what the ledger owes (or cannot be asked while something is owed). */
export function hasDeficit(holdings: readonly ChainHolding[]): boolean {
  return holdings.some((h) => (h.difference === null ? h.owed.gt(0) : h.difference.isNegative()));
}

/** One line per holding for the check's output: `networks/ethereum eth: held 1.50000000, owed 1.50000000 (balanced)`. */
export function holdingLine(h: ChainHolding): string {
  const text = (m: Money): string => (m.decimalPlaces() <= 8 ? m.toFixed(8) : m.toFixed());
  const head = `${h.network} ${h.currency}: held ${h.held === null ? "unknown (no contract configured)" : text(h.held)}, owed ${text(h.owed)}`;
  if (h.difference === null) return `${head} (${h.owed.gt(0) ? "DEFICIT: cannot be asked on chain" : "nothing owed"})`;
  if (h.difference.isNegative()) return `${head} (DEFICIT ${text(h.difference.neg())})`;
  if (h.difference.isZero()) return `${head} (balanced)`;
  return `${head} (surplus ${text(h.difference)}, reported only)`;
}
