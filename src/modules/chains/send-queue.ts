/**
 * Queues a confirmed withdrawal's send on a live network (docs/decisions/live-chains.md "Sends"),
 * in the confirm's transaction, without asking the node: the amount in the chain's units, from the
 * hot wallet, native or the configured token's contract. The sender job (./sender.ts) does the rest.
 */
import type { Sql } from "../../db/sql.js";
import { DomainError } from "../../domain/errors.js";
import { format8 } from "../../domain/money.js";
import { money } from "../../domain/money.js";
import { insertSend } from "./repository/sends.js";
import { unitsOf } from "./send-rules.js";
import type { LiveChains } from "./service.js";

/** Decimals of the live networks' native coins (eth, pol): wei. */
export const NATIVE_DECIMALS = 18;

/** A confirmed crypto withdrawal to send (decimal `amount` in the currency's units; `address` as the user gave it). */
export interface WithdrawalToSend {
  id: string;
  customerId: string;
  network: string;
  currency: string;
  amount: string;
  address: string;
}

/** The queue of sends on the live networks. */
export class SendQueue {
  constructor(private readonly chains: LiveChains) {}

  /** Whether `network` is live: its withdrawals are sent by the service itself. */
  isLive(network: string): boolean {
    return this.chains.network(network) !== undefined;
  }

  /**
   * Queues the send of withdrawal `w` in `tx` at `at`.
   * @throws DomainError UNSUPPORTED_CURRENCY (400: the currency is neither the network's native
   *   coin nor one of its configured tokens), INVALID_AMOUNT (400: finer than the token's decimals).
   * @throws Error when the network is not live or no custody key exists (callers check {@link isLive}).
   */
  async queue(tx: Sql, w: WithdrawalToSend, at: Date): Promise<void> {
    const live = this.chains.network(w.network);
    const hot = this.chains.hotAddress();
    if (live === undefined || hot === undefined) throw new Error(`${w.network} is not live`);
    const token = live.settings.tokens.find((t) => t.currency === w.currency);
    const native = live.settings.nativeCurrency === w.currency;
    if (!native && token === undefined) throw new DomainError("UNSUPPORTED_CURRENCY", `${w.currency} is not held on ${w.network}: only its native coin and configured tokens are.`, "currency");
    const units = unitsOf(w.amount, native ? NATIVE_DECIMALS : (token?.decimals ?? 0));
    if (units === null) throw new DomainError("INVALID_AMOUNT", `${format8(money(w.amount))} ${w.currency} is finer than the ${token?.decimals ?? NATIVE_DECIMALS} decimals of its token on ${w.network}.`, "amount");
    await insertSend(tx, {
      withdrawalId: w.id,
      customerId: w.customerId,
      network: w.network,
      fromAddress: hot,
      toAddress: w.address.toLowerCase(),
      currency: w.currency,
      contract: native ? null : (token?.contract ?? null),
      amountUnits: units,
      at,
    });
  }
}
