/**
 * The live EVM networks' service (docs/decisions/live-chains.md): per live network its node
 * client and settings, and the background work over them, run as recurring jobs every
 * {@link FOLLOW_INTERVAL_S} seconds on the workers (roles `worker` and `all`), one run at a time in
 * the whole database (docs/decisions/surfaces-and-process.md "Roles and background jobs"): the
 * block follower (./follower.ts); the sends with their sweeps (./sender.ts, ./sweeper.ts); and
 * the gas watcher, every 30 s (./overview.ts).
 */
import type { Db } from "../../db/sql.js";
import { NATIVE_CURRENCY } from "../../domain/live-chains.js";
import type { JobSpec } from "../../jobs/port.js";
import type { CustodyKeys } from "../../providers/evm/keys.js";
import { EvmRpc } from "../../providers/evm/rpc.js";
import type { LedgerService } from "../ledger/service.js";
import { LiveDeposits } from "../wallets/deposits.js";
import type { StatusNotifier } from "../wallets/states.js";
import { ChainFollower, type FollowerLogger, type LiveChainSettings } from "./follower.js";
import { ChainSender, type SenderSettings, type SendOutcomes } from "./sender.js";
import { ChainSweeper, type SweeperSettings } from "./sweeper.js";
import { ChainOverview } from "./overview.js";

/** Seconds between two runs of a network's follower (the scheduler polls every second at most: src/app.ts). */
export const FOLLOW_INTERVAL_S = 2;

/** A live network as configured (src/config.ts `LiveChain`: the fields the service reads). */
export interface LiveChainConfig {
  network: string;
  rpcUrl: string;
  confirmations: number;
  tokens: readonly { currency: string; contract: string; decimals: number }[];
  startBlock: number | undefined;
  /** `CHAIN_<NET>_MAX_FEE_GWEI`: the most a send pays per gas. */
  maxFeeGwei: number;
  /** `CHAIN_<NET>_GIVE_UP_S`: how long an unsigned send waits for fees under the cap. */
  giveUpS: number;
  /** `CHAIN_<NET>_SWEEP_MIN`: per currency, the smallest total of an address's deposits swept (decimal text). */
  sweepMin: Readonly<Record<string, string>>;
}

/** The job name of `network`'s sender: `chain-send-ethereum`, `chain-send-polygon`. */
export function sendJobName(network: string): string {
  return `chain-send-${network.replace(/^networks\//, "")}`;
}

/** The job name of `network`'s follower: `chain-follow-ethereum`, `chain-follow-polygon`. */
export function followJobName(network: string): string {
  return `chain-follow-${network.replace(/^networks\//, "")}`;
}

/** One live network: its settings (token contracts lower case), its sends' and sweeps' settings and its node's client. */
export interface LiveNetwork {
  settings: LiveChainSettings;
  sends: SenderSettings;
  sweeps: SweeperSettings;
  rpc: EvmRpc;
}

/** What the live networks' work needs besides their configuration. */
export interface LiveChainsDeps {
  db: Db;
  ledger: Pick<LedgerService, "post" | "walletBalances" | "reverse" | "lockAvailable">;
  /** Where `wallet.status_changed` goes (the deficit lock of a reorg reversal and its lifting). */
  notifier: StatusNotifier;
  /** The custody keys; undefined when no network is live. */
  custody: CustodyKeys | undefined;
  /** What becomes of a withdrawal whose send failed for good (src/modules/withdrawals/reversal.ts). */
  outcomes: SendOutcomes;
  logger: FollowerLogger;
}

/** The live networks of the configuration, and their background work. No live network: no job. */
export class LiveChains {
  /** The live networks, in configuration order. */
  readonly networks: readonly LiveNetwork[];

  /** @param rpcTimeoutS `CHAIN_RPC_TIMEOUT_S`: seconds one call to a node may take. */
  constructor(chains: readonly LiveChainConfig[], rpcTimeoutS: number, private readonly deps: LiveChainsDeps) {
    this.networks = chains.map((chain) => {
      const { network, confirmations, maxFeeGwei } = chain;
      const nativeCurrency = NATIVE_CURRENCY[network] ?? "eth";
      const tokens = chain.tokens.map((t) => ({ ...t, contract: t.contract.toLowerCase() }));
      return {
        settings: { network, nativeCurrency, confirmations, tokens, startBlock: chain.startBlock },
        sends: { network, nativeCurrency, confirmations, maxFeeGwei, giveUpS: chain.giveUpS },
        sweeps: { network, nativeCurrency, tokens, maxFeeGwei, sweepMin: chain.sweepMin },
        rpc: new EvmRpc(network, chain.rpcUrl, rpcTimeoutS),
      };
    });
  }

  /** The service's own addresses (its gas and hot wallets, the same on every EVM network), lower case; none without a live network. */
  ownAddresses(): string[] {
    const custody = this.deps.custody;
    return custody ? [custody.gasWallet.address.toLowerCase(), custody.hotWallet.address.toLowerCase()] : [];
  }

  /** The hot wallet's address (lower case): every send leaves from it; undefined without a live network. */
  hotAddress(): string | undefined {
    return this.deps.custody?.hotWallet.address.toLowerCase();
  }

  /** The live network `network` (`networks/ethereum`), or undefined when it is the sandbox's. */
  network(network: string): LiveNetwork | undefined {
    return this.networks.find((n) => n.settings.network === network);
  }

  /** The operators' view of the live networks and their gas watchers (./overview.ts). */
  overview(): ChainOverview {
    return new ChainOverview(this.networks, this.deps);
  }

  /** The recurring jobs of the live networks: a follower, a sender (./sender.ts) and a gas watcher (./overview.ts) each. */
  jobs(): JobSpec[] {
    return [...this.followJobs(), ...this.overview().watchJobs()];
  }

  /** Per live network its follower and, with the custody keys, its sender. */
  private followJobs(): JobSpec[] {
    const deposits = new LiveDeposits(this.deps.ledger, this.deps.notifier);
    const own = new Set(this.ownAddresses());
    const custody = this.deps.custody;
    return this.networks.flatMap(({ settings, sends, sweeps, rpc }) => {
      const follower = new ChainFollower(settings, rpc, this.deps.db, deposits, this.deps.logger, () => own);
      const jobs: JobSpec[] = [{ name: followJobName(settings.network), concurrency: 1, everyS: FOLLOW_INTERVAL_S, run: () => follower.run() }];
      if (custody) {
        const keys = { hot: custody.hotWallet, gas: custody.gasWallet, deposit: (path: string, address: string) => custody.depositWallet(settings.network, path, address) };
        const sender = new ChainSender(sends, rpc, this.deps.db, keys, this.deps.outcomes, this.deps.logger);
        const sweeper = new ChainSweeper(sweeps, rpc, this.deps.db, { gas: custody.gasWallet.address.toLowerCase(), hot: custody.hotWallet.address.toLowerCase() }, this.deps.logger);
        // one job: the sweeps are planned, then every send (withdrawals, refills, top-ups, sweeps) moves one step
        jobs.push({ name: sendJobName(settings.network), concurrency: 1, everyS: FOLLOW_INTERVAL_S, run: async () => { await sweeper.plan(); await sender.run(); } });
      }
      return jobs;
    });
  }
}
