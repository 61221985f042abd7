/**
 * The live EVM networks' background work (docs/decisions/live-chains.md): one follower per live
 * network (./follower.ts), run as a recurring job every {@link FOLLOW_INTERVAL_S} seconds on the
 * workers (roles `worker` and `all`), one run at a time in the whole database
 * (docs/decisions/surfaces-and-process.md "Roles and background jobs").
 */
import type { Db } from "../../db/sql.js";
import { NATIVE_CURRENCY } from "../../domain/live-chains.js";
import type { JobSpec } from "../../jobs/port.js";
import { EvmRpc } from "../../providers/evm/rpc.js";
import type { LedgerService } from "../ledger/service.js";
import { LiveDeposits } from "../wallets/deposits.js";
import { ChainFollower, type FollowerLogger, type LiveChainSettings } from "./follower.js";

/** Seconds between two runs of a network's follower (the scheduler polls every second at most: src/app.ts). */
export const FOLLOW_INTERVAL_S = 2;

/** A live network as configured (src/config.ts `LiveChain`: the fields the follower reads). */
export interface LiveChainConfig {
  network: string;
  rpcUrl: string;
  confirmations: number;
  tokens: readonly { currency: string; contract: string; decimals: number }[];
  startBlock: number | undefined;
}

/** The job name of `network`'s follower: `chain-follow-ethereum`, `chain-follow-polygon`. */
export function followJobName(network: string): string {
  return `chain-follow-${network.replace(/^networks\//, "")}`;
}

/**
 * The followers' jobs, one per live network of `chains`, each with its own node client (calls
 * bounded by `rpcTimeoutS`). No live network: no job.
 * @param ownAddresses the service's own addresses (its gas and hot wallets, the same on every EVM network): their transfers are no deposits.
 */
export function chainJobs(
  chains: readonly LiveChainConfig[],
  rpcTimeoutS: number,
  db: Db,
  ledger: Pick<LedgerService, "post" | "walletBalances">,
  logger: FollowerLogger,
  ownAddresses: readonly string[] = [],
): JobSpec[] {
  const deposits = new LiveDeposits(ledger);
  const own = new Set(ownAddresses.map((a) => a.toLowerCase()));
  return chains.map((chain) => {
    const settings: LiveChainSettings = {
      network: chain.network,
      nativeCurrency: NATIVE_CURRENCY[chain.network] ?? "eth",
      confirmations: chain.confirmations,
      tokens: chain.tokens.map((t) => ({ ...t, contract: t.contract.toLowerCase() })),
      startBlock: chain.startBlock,
    };
    const follower = new ChainFollower(settings, new EvmRpc(chain.network, chain.rpcUrl, rpcTimeoutS), db, deposits, logger, () => own);
    return { name: followJobName(chain.network), concurrency: 1, everyS: FOLLOW_INTERVAL_S, run: () => follower.run() };
  });
}
