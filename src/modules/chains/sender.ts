/**
 * The sender of one live network (docs/decisions/live-chains.md "Sends"): the recurring job
 * `chain-send-<net>` takes the network's open sends oldest first and moves each one step (the
 * nonces of each sending address given in that order):
 * - not signed: fees from the latest block (EIP-1559, under `CHAIN_<NET>_MAX_FEE_GWEI`), the
 *   node's gas estimate, then ONE transaction that locks the sender's next nonce, signs with it and
 *   stores the signed bytes and the next nonce; only after its commit are the bytes broadcast. A
 *   crash before the commit leaves nothing signed; after it, the same bytes are broadcast again.
 *   Fees above the cap: the send waits; past `CHAIN_<NET>_GIVE_UP_S` it fails (no nonce was used).
 *   An estimate the chain reverts fails it at once (no nonce used, no fee paid);
 * - signed, not taken: the same bytes are broadcast again;
 * - broadcast: every attempt's receipt is asked. Mined with success and the network's
 *   confirmations: `confirmed`; reverted, at the confirmations: `failed`. Not mined: the same bytes
 *   again when the node forgot them, and after {@link REPLACE_AFTER_BLOCKS} blocks a replacement
 *   with the same nonce and higher fees. A signed send never gives up: its nonce is spent, and
 *   whichever attempt is mined pays the destination once.
 * A failed send's withdrawal is reversed by {@link SendOutcomes.failed} in the transaction that
 * ends the send. The fee a withdrawal's transaction made the hot wallet pay is given back by a
 * refill from the gas wallet, queued in that same transaction and sent by the same steps (the gas
 * wallet signs it and pays its own fee; docs/decisions/live-chains.md "Funds and fees"). A node that does not answer stops the run; the next run starts over from the
 * database.
 */
import type { HDNodeWallet, TransactionRequest } from "ethers";
import type { Db } from "../../db/sql.js";
import { DomainError } from "../../domain/errors.js";
import { loadEthers, rpcError, type EvmRpc } from "../../providers/evm/rpc.js";
import { balanceOfData, balanceOfResult, transferData } from "./erc20.js";
import { chainAmount } from "./follow.js";
import type { FollowerLogger } from "./follower.js";
import { feesFor, gasLimitOf, GWEI, replacementDue, replacementFees, type Fees } from "./send-rules.js";
import { releaseDeposits } from "./repository/sweeps.js";
import { feeWait, finishSend, insertRefill, lockNextNonce, lockSend, markBroadcast, markMined, openSends, sendError, storeReplacement, storeSigned, type SendRow, type SendView } from "./repository/sends.js";
import type { Tx } from "../../db/sql.js";

/** Most sends one run looks at. */
const RUN_LIMIT = 100;

/** What becomes of a withdrawal whose send failed for good (src/modules/withdrawals/: its reversal). */
export interface SendOutcomes {
  /** Reverses withdrawal `withdrawalId` of `customerId` in `tx` (the transaction that ends its send): `FAILED`, amount back, `withdrawal.failed`. */
  failed(tx: Tx, failure: { withdrawalId: string; customerId: string; chain: SendView; reason: string }): Promise<void>;
}

/** A live network's settings as the sender reads them. */
export interface SenderSettings {
  network: string;
  /** The native coin's currency code (`eth`, `pol`): what a refill gives back. */
  nativeCurrency: string;
  confirmations: number;
  /** `CHAIN_<NET>_MAX_FEE_GWEI`. */
  maxFeeGwei: number;
  /** `CHAIN_<NET>_GIVE_UP_S`. */
  giveUpS: number;
}

/** A node's receipt, as JSON-RPC answers it (hex quantities). */
interface Receipt {
  status: string;
  blockNumber: string;
  gasUsed: string;
  effectiveGasPrice: string;
}

/** Who pays a send of each kind, as `last_error` names it. */
const WHO: Record<SendRow["kind"], string> = { withdrawal: "the hot wallet", refill: "the gas wallet", topup: "the gas wallet", sweep: "the deposit address (its fee top-up)" };

/** Node refusals that mean the node already has these bytes, or a transaction with their nonce was mined: the receipts decide. */
const ALREADY_SENT = /already known|known transaction|already imported|nonce too low|replacement transaction underpriced|nonce has already been used/i;

/** The sends of one live network, from its hot wallet. */
export class ChainSender {
  constructor(
    private readonly settings: SenderSettings,
    private readonly rpc: EvmRpc,
    private readonly db: Db,
    /**
     * The keys (no provider): the hot wallet's signs the withdrawals, the gas wallet's the refills
     * and top-ups, and `deposit(path, address)` gives a deposit address's key for its sweeps
     * (src/providers/evm/keys.ts `depositWallet`; it throws when the key is not that address's).
     */
    private readonly keys: { hot: HDNodeWallet; gas: HDNodeWallet; deposit(path: string, address: string): HDNodeWallet },
    private readonly outcomes: SendOutcomes,
    private readonly logger: FollowerLogger,
  ) {}

  /** One run: every open send one step, oldest first. @throws DomainError GATEWAY_TIMEOUT, BAD_GATEWAY when the node fails (the run stops). */
  async run(now: () => Date = () => new Date()): Promise<void> {
    const sends = await openSends(this.db, this.settings.network, RUN_LIMIT);
    if (sends.length === 0) return;
    const head = Number(await this.rpc.call<string>("eth_blockNumber", []));
    let market: Promise<Fees | null> | undefined;
    const fees = (): Promise<Fees | null> => (market ??= this.marketFees());
    const waiting = new Set<string>(); // sends are signed in order per sender: once one waits for fees, its later ones wait too
    for (const send of sends) {
      if (send.nonce === null) {
        if (send.dependsOn !== null && send.dependsState !== "confirmed") {
          // a sweep waits for its top-up to be confirmed; a top-up that failed fails the sweep, whose deposits are swept again later
          if (send.dependsState === "failed") await this.fail(send, "its fee top-up failed", 0n, true);
          continue;
        }
        if (!waiting.has(send.fromAddress) && !(await this.sign(send, head, fees, now()))) waiting.add(send.fromAddress);
      } else if (send.state === "queued") {
        await this.broadcast(send, head);
      } else {
        await this.follow(send, head, fees);
      }
    }
  }

  /** Signs and stores `send`, then broadcasts it. @returns false when it waits for fees (the later sends wait too). */
  private async sign(send: SendRow, head: number, fees: () => Promise<Fees | null>, now: Date): Promise<boolean> {
    const market = await fees();
    if (market === null) {
      const since = send.feeWaitSince ?? now;
      if (now.getTime() - since.getTime() >= this.settings.giveUpS * 1000) {
        await this.fail(send, `the network's base fee stayed above CHAIN_${this.net()}_MAX_FEE_GWEI (${this.settings.maxFeeGwei} gwei) for ${this.settings.giveUpS} s`, 0n, true);
        return true;
      }
      await feeWait(this.db, send.id, since, `waiting: the base fee is above CHAIN_${this.net()}_MAX_FEE_GWEI (${this.settings.maxFeeGwei} gwei)`);
      return false;
    }
    const request = await this.request(send);
    const signer = this.signerOf(send);
    let estimate: bigint;
    try {
      estimate = await (await this.rpc.provider()).estimateGas({ ...request, from: signer.address });
    } catch (error) {
      if (isRevert(error)) {
        await this.fail(send, `the chain rejects the transfer: ${message(error)}`);
        return true;
      }
      await sendError(this.db, send.id, `gas estimate: ${message(error)}`);
      if (isNodeDown(error)) throw rpcError(this.settings.network, "eth_estimateGas", error);
      return true;
    }
    const short = await this.shortfall(send, signer.address, gasLimitOf(estimate) * market.maxFeePerGas);
    if (short !== null) {
      await sendError(this.db, send.id, short);
      this.logger.warn({ network: this.settings.network, sendId: send.id, from: signer.address }, `chain send waits: ${short}`);
      return true;
    }
    const pending = Number(await this.rpc.call<string>("eth_getTransactionCount", [signer.address, "pending"]));
    const chainId = await this.rpc.chainId();
    const signed = await this.db.transaction(async (tx) => {
      const current = await lockSend(tx, send.id);
      if (current === null || current.nonce !== null || current.state !== "queued") return null; // another run got there first
      const nonce = await lockNextNonce(tx, this.settings.network, signer.address.toLowerCase(), pending);
      const gasLimit = gasLimitOf(estimate);
      const rawTx = await signer.signTransaction({ ...request, type: 2, chainId, nonce, gasLimit, ...market });
      const txHash = (await loadEthers()).keccak256(rawTx);
      await storeSigned(tx, send.id, { nonce, rawTx, txHash, gasLimit, ...market }, new Date());
      return { ...current, nonce, rawTx, txHash };
    });
    if (signed !== null) await this.broadcast(signed, head);
    return true;
  }

  /** Sends `send`'s stored bytes to the node; taken (or already known): `broadcast`. */
  private async broadcast(send: SendRow, head: number): Promise<void> {
    try {
      await this.rpc.call<string>("eth_sendRawTransaction", [send.rawTx]);
    } catch (error) {
      if (error instanceof DomainError && error.code === "GATEWAY_TIMEOUT") throw error;
      if (!ALREADY_SENT.test(message(error))) {
        await sendError(this.db, send.id, `broadcast refused: ${message(error)}`);
        this.logger.warn({ network: this.settings.network, sendId: send.id, err: message(error) }, "chain send: the node refused the transaction; it is sent again on the next run");
        return;
      }
    }
    await markBroadcast(this.db, send.id, head);
  }

  /** A broadcast send: its receipts, then confirmed, failed, broadcast again or replaced. */
  private async follow(send: SendRow, head: number, fees: () => Promise<Fees | null>): Promise<void> {
    const receipts = await Promise.all(send.txHashes.map((hash) => this.rpc.call<Receipt | null>("eth_getTransactionReceipt", [hash])));
    const receipt = receipts.find((r): r is Receipt => r !== null);
    if (receipt) {
      const height = Number(receipt.blockNumber);
      const feeWei = BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice);
      const fee = chainAmount(feeWei, 18).toFixed(8);
      if (head - height + 1 < this.settings.confirmations) {
        if (send.minedHeight !== height || send.fee !== fee) await markMined(this.db, send.id, height, fee);
        return;
      }
      if (Number(receipt.status) === 1) {
        await this.db.transaction(async (tx) => {
          await markMined(tx, send.id, height, fee);
          if (await finishSend(tx, send.id, "confirmed", null)) await this.refill(tx, send, feeWei);
        });
        return;
      }
      await markMined(this.db, send.id, height, fee);
      await this.fail({ ...send, minedHeight: height, fee }, "the transaction reverted on chain", feeWei);
      return;
    }
    if (send.minedHeight !== null) await markMined(this.db, send.id, null, null); // its block left the chain
    if (send.broadcastHeight !== null && replacementDue(head, send.broadcastHeight)) {
      await this.replace(send, head, fees);
      return;
    }
    const known = await this.rpc.call<unknown>("eth_getTransactionByHash", [send.txHash]);
    if (known === null) await this.broadcast(send, head); // dropped by the node: the same bytes again
  }

  /** Replaces `send` with the same nonce and higher fees, or broadcasts it again when the raise would pass the cap. */
  private async replace(send: SendRow, head: number, fees: () => Promise<Fees | null>): Promise<void> {
    const previous = { maxFeePerGas: send.maxFeePerGas ?? 0n, maxPriorityFeePerGas: send.maxPriorityFeePerGas ?? 0n };
    const raised = replacementFees(previous, await fees(), this.cap());
    if (raised === null || send.nonce === null) {
      await sendError(this.db, send.id, `not mined after 20 blocks; a replacement would pass CHAIN_${this.net()}_MAX_FEE_GWEI: sent again as it is`);
      await this.broadcast(send, head);
      return;
    }
    const request = await this.request(send);
    const nonce = send.nonce;
    const chainId = await this.rpc.chainId();
    const replaced = await this.db.transaction(async (tx) => {
      const current = await lockSend(tx, send.id);
      if (current === null || current.state !== "broadcast" || current.nonce !== nonce || current.txHash !== send.txHash) return null;
      const gasLimit = gasLimitOf(await this.gasOf(send));
      const rawTx = await this.signerOf(send).signTransaction({ ...request, type: 2, chainId, nonce, gasLimit, ...raised });
      const txHash = (await loadEthers()).keccak256(rawTx);
      await storeReplacement(tx, send.id, { rawTx, txHash, ...raised }, new Date());
      return { ...current, rawTx, txHash };
    });
    if (replaced !== null) {
      this.logger.info({ network: this.settings.network, sendId: send.id, nonce, txHash: replaced.txHash }, "chain send: replaced with higher fees after 20 blocks");
      await this.broadcast(replaced, head);
    }
  }

  /**
   * Ends `send` as failed, in one transaction (nothing when it had ended): a withdrawal's send
   * reverses its withdrawal and, when its mined transaction paid `feeWei` of fees, queues their
   * refill. A sweep that failed for a passing reason (`sweepAgain`: fees above the cap, its top-up
   * failed) gives its deposits back to be swept again; one the chain refuses keeps them, for an
   * operator (docs/decisions/live-chains.md "Sweeps").
   */
  private async fail(send: SendRow, reason: string, feeWei = 0n, sweepAgain = false): Promise<void> {
    await this.db.transaction(async (tx) => {
      const ended = await finishSend(tx, send.id, "failed", reason);
      if (ended === null) return;
      await this.refill(tx, send, feeWei);
      if (send.kind === "sweep" && sweepAgain) await releaseDeposits(tx, send.id); // swept again by a later sweep
      if (ended.withdrawalId === null || ended.customerId === null) return;
      const chain: SendView = { tx_hash: send.txHash, state: "failed", confirmations: 0, nonce: send.nonce, fee: send.fee };
      await this.outcomes.failed(tx, { withdrawalId: ended.withdrawalId, customerId: ended.customerId, chain, reason });
    });
    const level = send.kind === "sweep" && !sweepAgain ? "error" : "warn"; // a refused sweep's deposits stay at their address until an operator looks
    this.logger[level]({ network: this.settings.network, sendId: send.id, kind: send.kind, withdrawalId: send.withdrawalId, reason }, "chain send failed");
  }

  /**
   * Queues in `tx` the gas wallet's refill of the `feeWei` wei a withdrawal's send made the hot
   * wallet pay (docs/decisions/live-chains.md "Funds and fees"); nothing for the other kinds (the
   * gas wallet pays its refills' and top-ups' own fees, a sweep's fee comes from its top-up) or a
   * send that paid none.
   */
  private async refill(tx: Tx, send: SendRow, feeWei: bigint): Promise<void> {
    if (send.kind !== "withdrawal" || feeWei <= 0n) return;
    const gas = this.keys.gas.address.toLowerCase();
    await insertRefill(tx, { network: this.settings.network, gas, hot: send.fromAddress, wei: feeWei, currency: this.settings.nativeCurrency, at: new Date() });
  }

  /** The key that signs `send`: the gas wallet's for a refill or a top-up, the deposit address's for a sweep, the hot wallet's for a withdrawal. */
  private signerOf(send: SendRow): HDNodeWallet {
    switch (send.kind) {
      case "refill":
      case "topup":
        return this.keys.gas;
      case "sweep":
        if (send.keyPath === null) throw new Error(`sweep ${send.id} has no key path`);
        return this.keys.deposit(send.keyPath, send.fromAddress);
      case "withdrawal":
        return this.keys.hot;
    }
  }

  /**
   * What sending address `from` lacks to pay `send` with at most `maxGasCost` wei of fees (the amount
   * and the fees in the native coin; for a token, the token amount and the fees), or null when it holds enough.
   */
  private async shortfall(send: SendRow, from: string, maxGasCost: bigint): Promise<string | null> {
    const who = WHO[send.kind];
    const native = BigInt(await this.rpc.call<string>("eth_getBalance", [from, "latest"]));
    const nativeNeeded = maxGasCost + (send.contract === null ? send.amountUnits : 0n);
    if (native < nativeNeeded) return `${who} holds ${native} wei of the native coin and needs ${nativeNeeded} (amount and fees): fund it`;
    if (send.contract === null) return null;
    const answer = await this.rpc.call<string>("eth_call", [{ to: send.contract, data: await balanceOfData(from) }, "latest"]);
    const tokens = await balanceOfResult(answer);
    return tokens < send.amountUnits ? `${who} holds ${tokens} units of ${send.currency} and needs ${send.amountUnits}: fund it` : null;
  }

  /** The transfer of `send`: native value to the destination, or the token's `transfer(to, amount)`. */
  private async request(send: SendRow): Promise<TransactionRequest> {
    if (send.contract === null) return { to: send.toAddress, value: send.amountUnits };
    return { to: send.contract, value: 0n, data: await transferData(send.toAddress, send.amountUnits) };
  }

  /** The gas a replacement of `send` needs (the node's estimate; 21 000 for a native transfer it cannot estimate any more). */
  private async gasOf(send: SendRow): Promise<bigint> {
    try {
      return await (await this.rpc.provider()).estimateGas({ ...(await this.request(send)), from: this.signerOf(send).address });
    } catch (error) {
      if (send.contract === null) return 21_000n;
      throw rpcError(this.settings.network, "eth_estimateGas", error);
    }
  }

  /** The fees a new transaction pays now (latest base fee, the node's tip), or null above the cap. */
  private async marketFees(): Promise<Fees | null> {
    const [block, tip] = await Promise.all([
      this.rpc.call<{ baseFeePerGas?: string } | null>("eth_getBlockByNumber", ["latest", false]),
      this.rpc.call<string>("eth_maxPriorityFeePerGas", []),
    ]);
    return feesFor(BigInt(block?.baseFeePerGas ?? "0x0"), BigInt(tip), this.cap());
  }

  private cap(): bigint {
    return BigInt(this.settings.maxFeeGwei) * GWEI;
  }

  private net(): string {
    return this.settings.network.replace(/^networks\//, "").toUpperCase();
  }
}

/** The text of an error, short. */
function message(error: unknown): string {
  const text = error instanceof Error ? ((error as { shortMessage?: string }).shortMessage ?? error.message) : String(error);
  return text.slice(0, 300);
}

/** Whether ethers says the chain reverted the call (an estimate that cannot succeed as the chain is). */
function isRevert(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "CALL_EXCEPTION" || /execution reverted|revert/i.test(message(error));
}

/** Whether the node did not answer (rather than refused the call). */
function isNodeDown(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "TIMEOUT" || code === "NETWORK_ERROR" || code === "SERVER_ERROR";
}
