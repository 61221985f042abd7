/**
 * The sweeps of one live network (docs/decisions/live-chains.md "Sweeps"): credited deposits move
 * from their deposit addresses into the hot wallet, which pays the withdrawals. Each run of the
 * network's send job first plans: per deposit address and currency whose credited, unswept
 * deposits reach `CHAIN_<NET>_SWEEP_MIN` (any amount when the currency is not listed), and whose
 * address has no open sweep, it queues in ONE transaction
 * - a `topup` from the gas wallet to the address of what the address lacks to pay the sweep's fee
 *   at the cap (`gas limit × CHAIN_<NET>_MAX_FEE_GWEI`, less the native coin the address already
 *   holds beyond its deposits), when it lacks anything;
 * - the `sweep`: the deposits' total from the address to the hot wallet, signed with the address's
 *   own key (its derivation path is stored on the send; the key is derived when it signs), waiting
 *   for its top-up to be `confirmed`;
 * - and marks the deposits swept by it, so that no deposit is swept twice.
 * The sender (./sender.ts) then signs, broadcasts and follows them like every send. A sweep that
 * fails gives its deposits back to be swept again. Nothing here touches the ledger: the money stays
 * the customers', it only changes address.
 */
import type { Db } from "../../db/sql.js";
import { DomainError } from "../../domain/errors.js";
import type { EvmRpc } from "../../providers/evm/rpc.js";
import { depositAddressPaths } from "../../providers/repository.js";
import { transferData } from "./erc20.js";
import { NATIVE_DECIMALS } from "./send-queue.js";
import { gasLimitOf, GWEI, unitsOf } from "./send-rules.js";
import type { FollowerLogger } from "./follower.js";
import { dueSweeps, insertSweep, unsweptNative, type DueSweep } from "./repository/sweeps.js";

/** Most groups of deposits one run plans a sweep for. */
const PLAN_LIMIT = 20;

/** The gas of a native transfer to an address without code. */
const NATIVE_TRANSFER_GAS = 21_000n;

/** A live network's settings as the sweeper reads them. */
export interface SweeperSettings {
  network: string;
  nativeCurrency: string;
  /** The configured tokens: contract lower case, decimals. */
  tokens: readonly { currency: string; contract: string; decimals: number }[];
  /** `CHAIN_<NET>_MAX_FEE_GWEI`: a sweep's fee budget is its gas limit at this fee. */
  maxFeeGwei: number;
  /** `CHAIN_<NET>_SWEEP_MIN`: per currency, the smallest total swept (decimal text). */
  sweepMin: Readonly<Record<string, string>>;
}

/** Raised inside a planning transaction when a deposit changed under it: the transaction rolls back and the group waits for the next run. */
class DepositsMoved extends Error {}

/** Plans the sweeps of one live network. */
export class ChainSweeper {
  /** The currencies swept (the native coin and the configured tokens), each with its smallest total swept ("0": any). */
  private readonly minimums: ReadonlyMap<string, string>;

  constructor(
    private readonly settings: SweeperSettings,
    private readonly rpc: EvmRpc,
    private readonly db: Db,
    /** The gas wallet (pays the top-ups) and the hot wallet (receives the sweeps), lower case. */
    private readonly wallets: { gas: string; hot: string },
    private readonly logger: FollowerLogger,
  ) {
    const currencies = [settings.nativeCurrency, ...settings.tokens.map((t) => t.currency)];
    this.minimums = new Map(currencies.map((c) => [c, settings.sweepMin[c] ?? "0"]));
  }

  /**
   * Queues the sweeps that are due (at most {@link PLAN_LIMIT} per run).
   * A group the node cannot plan (an error answer) waits for the next run and the others go on.
   * @throws DomainError GATEWAY_TIMEOUT when the node does not answer (the run stops; nothing is queued for that group).
   */
  async plan(now: () => Date = () => new Date()): Promise<void> {
    const due = await dueSweeps(this.db, this.settings.network, this.minimums, PLAN_LIMIT);
    if (due.length === 0) return;
    const paths = await depositAddressPaths(this.db, this.settings.network, [...new Set(due.map((d) => d.address))]);
    const planned = new Set<string>(); // one sweep per address per run: the next currency waits for it to end
    for (const group of due) {
      if (planned.has(group.address)) continue;
      const path = paths.get(group.address);
      if (path === undefined) {
        this.logger.error({ network: this.settings.network, address: group.address }, "chain sweep: no derivation path is recorded for this deposit address; its deposits stay there");
        continue;
      }
      try {
        if (await this.planOne(group, path, now())) planned.add(group.address);
      } catch (error) {
        if (error instanceof DomainError && error.code === "GATEWAY_TIMEOUT") throw error;
        // an estimate the token refuses (a paused or blocking contract), or a node error: this group waits, the others go on
        this.logger.warn({ network: this.settings.network, address: group.address, currency: group.currency, err: error instanceof Error ? error.message : String(error) }, "chain sweep not planned; tried again on the next run");
      }
    }
  }

  /** Queues the sweep of `group` (and its top-up). @returns whether one was queued. */
  private async planOne(group: DueSweep, path: string, at: Date): Promise<boolean> {
    const native = group.currency === this.settings.nativeCurrency;
    const token = this.settings.tokens.find((t) => t.currency === group.currency);
    if (!native && token === undefined) return false; // unreachable: dueSweeps asks the configured currencies only
    const units = unitsOf(group.amount, native ? NATIVE_DECIMALS : token!.decimals);
    if (units === null) return false;
    const contract = native ? null : token!.contract;
    const gas = gasLimitOf(native ? NATIVE_TRANSFER_GAS : await this.tokenGas(group.address, contract!, units));
    const budget = gas * BigInt(this.settings.maxFeeGwei) * GWEI;
    const balance = BigInt(await this.rpc.call<string>("eth_getBalance", [group.address, "latest"]));
    const held = unitsOf(await unsweptNative(this.db, this.settings.network, group.address, this.settings.nativeCurrency), NATIVE_DECIMALS) ?? 0n;
    const spare = balance > held ? balance - held : 0n;
    const topup = budget > spare ? budget - spare : 0n;
    try {
      await this.db.transaction(async (tx) => {
        const id = await insertSweep(tx, {
          network: this.settings.network,
          address: group.address,
          keyPath: path,
          hot: this.wallets.hot,
          currency: group.currency,
          contract,
          amountUnits: units,
          topup: topup > 0n ? { gas: this.wallets.gas, wei: topup, currency: this.settings.nativeCurrency } : null,
          depositIds: group.ids,
          at,
        });
        if (id === null) throw new DepositsMoved();
      });
    } catch (error) {
      if (error instanceof DepositsMoved) return false;
      throw error;
    }
    this.logger.info({ network: this.settings.network, address: group.address, currency: group.currency, amount: group.amount, deposits: group.ids.length, topupWei: topup.toString() }, "chain sweep queued");
    return true;
  }

  /** The node's gas estimate of the token transfer of `units` from `address` to the hot wallet. */
  private async tokenGas(address: string, contract: string, units: bigint): Promise<bigint> {
    return BigInt(await this.rpc.call<string>("eth_estimateGas", [{ from: address, to: contract, data: await transferData(this.wallets.hot, units) }]));
  }
}
