/**
 * Wallet states (docs/decisions/customers-users-and-wallets.md "Wallet states"): the state calls
 * (lock, unlock, suspend, reinstate, deactivate) and the guard every movement by request passes
 * through. The rules are src/domain/wallet-states.ts; the statements ./repository.ts.
 *
 * Concurrency: a state call locks the wallet's row (`FOR UPDATE`); a movement's transaction takes
 * the same row's share lock ({@link guardMovements}) before it touches the ledger. A movement that
 * holds the share lock completes before the call changes the state; a movement that comes after
 * the change reads the new state and is refused. Shares do not wait for each other, so movements
 * of one wallet still meet only on the ledger's account locks.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError, quote } from "../../domain/errors.js";
import { walletIdOf } from "../../domain/ids.js";
import { assertMovable, nextState, type MovementDirection, type StateCall } from "../../domain/wallet-states.js";
import type { Db, Sql } from "../../db/sql.js";
import type { LedgerService } from "../ledger/service.js";
import type { WebhookEvent } from "../webhooks/service.js";
import { Wallet } from "./entities.js";
import { lockWalletState, shareWalletStates, updateWalletState } from "./repository.js";
import { walletView, type WalletView } from "./views.js";

/** The webhook event of a state change. */
export const WALLET_STATUS_CHANGED = "wallet.status_changed";

/** Who calls a state operation: the owner API key of a customer, or the operator (any customer's wallet). */
export type StateCaller = { customerId: string } | { operator: true };

/** One wallet of a movement, and which way the money goes for it. */
export interface GuardedMove {
  /** A lower-case UUID. */
  walletId: string;
  direction: MovementDirection;
  /** The body field that named the wallet, for the refusal. */
  field?: string;
}

/**
 * The guard of every movement by request (withdrawals, transfers in and out, quotes, orders,
 * sandbox deposits), in the movement's transaction `tx` before its ledger entry: share-locks the
 * wallets' rows until `tx` ends and refuses what their states do not allow
 * (src/domain/wallet-states.ts `assertMovable`). One statement.
 * @throws DomainError WALLET_LOCKED, WALLET_SUSPENDED, WALLET_INACTIVE (400).
 */
export async function guardMovements(tx: Sql, moves: readonly GuardedMove[]): Promise<void> {
  const states = await shareWalletStates(tx, [...new Set(moves.map((m) => m.walletId))]);
  for (const move of moves) {
    const state = states.get(move.walletId);
    if (state) assertMovable(state, move.direction, move.field);
  }
}

/** The state calls of wallets. */
export class WalletStates {
  constructor(
    private readonly db: Db,
    private readonly ledger: Pick<LedgerService, "walletBalances">,
    /** The customer's webhook (src/modules/webhooks/service.ts): the event in the change's transaction, the delivery after commit. */
    private readonly notifier: { enqueueEvent(tx: Sql, event: WebhookEvent): Promise<boolean>; kick(): void },
  ) {}

  /**
   * Applies state call `call` to wallet `walletId` in one transaction: the wallet's row locked, the
   * rule of src/domain/wallet-states.ts `nextState`, for `deactivate` the balances, the new state
   * and its `wallet.status_changed` event. A call to the state the wallet already has changes
   * nothing and sends nothing.
   * @param reason `lock` and `suspend`: 1–255 characters.
   * @returns the wallet as it is after the call.
   * @throws DomainError INVALID_WALLET_ID (400, not a UUID); WALLET_NOT_FOUND (404, none, or
   *   another customer's for an owner key); WALLET_INACTIVE, WALLET_SUSPENDED, BAD_REQUEST (400;
   *   `deactivate` with a balance or a held amount left names the currency).
   */
  async change(em: EntityManager, caller: StateCaller, walletId: string, call: StateCall, reason?: string): Promise<WalletView> {
    const id = walletIdOf(walletId);
    await this.db.transaction(async (tx) => {
      const current = await lockWalletState(tx, id);
      if (!current || ("customerId" in caller && current.customerId !== caller.customerId)) {
        throw new DomainError("WALLET_NOT_FOUND", `Wallet ${quote(walletId)} not found.`);
      }
      const next = nextState(id, current, call, reason);
      if (next === null) return;
      if (call === "deactivate") await this.assertEmpty(tx, id);
      const now = new Date();
      await updateWalletState(tx, id, next, now);
      const data = {
        event: WALLET_STATUS_CHANGED,
        wallet_id: id,
        user_id: current.userId,
        previous_status: current.status,
        status: next.status,
        reason: call === "lock" || call === "suspend" ? (reason ?? null) : null,
        changed_at: now.toISOString(),
      };
      const pushed = await this.notifier.enqueueEvent(tx, { customerId: current.customerId, type: WALLET_STATUS_CHANGED, data, reference: `wallet:${id}` });
      if (pushed) tx.afterCommit(() => this.notifier.kick());
    });
    return walletView(em, await em.fork().findOneOrFail(Wallet, { walletId: id }));
  }

  /**
   * A wallet can be deactivated only with nothing in it: every currency's available and held
   * balance zero (a `PENDING` withdrawal always holds its amount). @throws DomainError BAD_REQUEST
   * (400) naming the first currency with money left.
   */
  private async assertEmpty(tx: Sql, walletId: string): Promise<void> {
    for (const b of await this.ledger.walletBalances(tx, walletId)) {
      if (!b.held.isZero()) throw new DomainError("BAD_REQUEST", `Wallet ${walletId} still holds ${b.held.toFixed()} ${b.currency} for pending withdrawals; it cannot be deactivated.`);
      if (!b.available.isZero()) throw new DomainError("BAD_REQUEST", `Wallet ${walletId} still has ${b.available.toFixed()} ${b.currency}; move it out before deactivating.`);
    }
  }
}
