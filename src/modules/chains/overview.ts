/**
 * The operators' view of the live EVM networks (docs/decisions/live-chains.md "The operators'
 * view"): `GET /api/v1/chains` asks each node its head and the gas wallet's balance as it answers
 * (one JSON-RPC batch per node) and reads the rest from the database; and the gas watcher, one
 * recurring job per live network (`chain-watch-ethereum`, `chain-watch-polygon`, every
 * {@link WATCH_INTERVAL_S} seconds on the workers, like the followers), stores the gas wallet's
 * balance so that `/metrics` shows it without asking the node.
 */
import type { Db } from "../../db/sql.js";
import type { JobSpec } from "../../jobs/port.js";
import type { CustodyKeys } from "../../providers/evm/keys.js";
import type { EvmRpc } from "../../providers/evm/rpc.js";
import { chainAmount } from "./follow.js";
import type { FollowerLogger } from "./follower.js";
import { overviewRows, saveGasBalance } from "./repository/overview.js";
import type { LiveNetwork } from "./service.js";

/** Seconds between two runs of a network's gas watcher. */
export const WATCH_INTERVAL_S = 30;

/** Decimals of the live networks' native coins (eth, pol): balances are in wei. */
export const NATIVE_DECIMALS = 18;

/** The job name of `network`'s gas watcher: `chain-watch-ethereum`, `chain-watch-polygon`. */
export function watchJobName(network: string): string {
  return `chain-watch-${network.replace(/^networks\//, "")}`;
}

/** What the view and the watcher need besides the networks. */
export interface OverviewDeps {
  db: Db;
  /** The custody keys (the gas wallet); undefined when no network is live. */
  custody: CustodyKeys | undefined;
  logger: FollowerLogger;
}

/** One live network as `GET /api/v1/chains` shows it. */
export interface LiveChainView {
  network: string;
  chainId: number;
  /** The node's head block number, asked now. */
  head: number;
  /** The highest block the follower processed; null before its first run (no cursor). */
  scanned: number | null;
  confirmations: number;
  /** The gas wallet (checksum address) and its native coin balance asked now, 8-decimal text rounded down. */
  gasWallet: { address: string; balance: string };
  /** Sends `queued` or `broadcast`. */
  pendingSends: number;
  /** The follower's last node failure (`chain_cursor.last_error`), or null. */
  error: string | null;
}

/** What one node answers: its chain id, its head, and an address's native coin balance (wei). */
export interface NodeAnswer {
  chainId: bigint;
  head: number;
  balance: bigint;
}

/**
 * Asks `rpc`'s node its head (`eth_blockNumber`) and `address`'s balance (`eth_getBalance` at
 * `latest`) in one JSON-RPC batch (calls made in the same tick travel together: src/providers/evm/rpc.ts),
 * after its chain id (asked once per client).
 * @throws DomainError GATEWAY_TIMEOUT (no answer within `CHAIN_RPC_TIMEOUT_S`), BAD_GATEWAY (a refusal, an error answer).
 */
export async function askNode(rpc: EvmRpc, address: string): Promise<NodeAnswer> {
  const chainId = await rpc.chainId();
  const [head, balance] = await Promise.all([rpc.call<string>("eth_blockNumber", []), rpc.call<string>("eth_getBalance", [address, "latest"])]);
  return { chainId, head: Number(head), balance: BigInt(balance) };
}

/** The operators' view of the live networks and their gas watchers. */
export class ChainOverview {
  constructor(
    /** The live networks, in configuration order. */
    private readonly networks: readonly LiveNetwork[],
    private readonly deps: OverviewDeps,
  ) {}

  /**
   * Every live network, in configuration order (empty without one): its node asked now (head, gas
   * wallet balance; every node at once), the follower's progress, last failure and the open sends
   * read from the database (docs/decisions/live-chains.md "The operators' view").
   * @throws DomainError GATEWAY_TIMEOUT (504) when a node does not answer within `CHAIN_RPC_TIMEOUT_S`,
   *   BAD_GATEWAY (502) when one refuses or answers an error.
   */
  async list(): Promise<LiveChainView[]> {
    if (this.networks.length === 0) return [];
    const gas = this.gasAddress();
    const [answers, rows] = await Promise.all([
      Promise.all(this.networks.map((n) => askNode(n.rpc, gas))),
      overviewRows(this.deps.db, this.networks.map((n) => n.settings.network)),
    ]);
    return this.networks.map((n, i) => {
      const answer = answers[i] as NodeAnswer;
      const row = rows[i];
      return {
        network: n.settings.network,
        chainId: Number(answer.chainId),
        head: answer.head,
        scanned: row?.scanned ?? null,
        confirmations: n.settings.confirmations,
        gasWallet: { address: gas, balance: chainAmount(answer.balance, NATIVE_DECIMALS).toFixed(8) },
        pendingSends: row?.pendingSends ?? 0,
        error: row?.lastError ?? null,
      };
    });
  }

  /** One gas watcher per live network: every {@link WATCH_INTERVAL_S} s, one run at a time in the whole database. */
  watchJobs(): JobSpec[] {
    return this.networks.map((n) => ({ name: watchJobName(n.settings.network), concurrency: 1, everyS: WATCH_INTERVAL_S, run: () => this.watch(n) }));
  }

  /**
   * One watcher run: asks `n`'s node the gas wallet's balance and stores it (`chain_gas_balance`).
   * Never throws: a node or database failure is logged and the stored balance stays as it was.
   */
  async watch(n: LiveNetwork): Promise<void> {
    const network = n.settings.network;
    try {
      const gas = this.gasAddress();
      const answer = await askNode(n.rpc, gas);
      await saveGasBalance(this.deps.db, network, gas, chainAmount(answer.balance, NATIVE_DECIMALS).toFixed(8), answer.head);
    } catch (error) {
      this.deps.logger.warn({ network, reason: error instanceof Error ? error.message : String(error) }, "the gas wallet's balance could not be asked; the stored one stays");
    }
  }

  /** The gas wallet's address (checksum form). @throws Error when the custody keys are missing (a live network always has them). */
  private gasAddress(): string {
    const custody = this.deps.custody;
    if (!custody) throw new Error("live networks without custody keys");
    return custody.gasWallet.address;
  }
}
