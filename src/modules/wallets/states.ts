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
import { format8 } from "../../domain/money.js";
import { assertMovable, nextState, type MovementDirection, type StateCall, type WalletState } from "../../domain/wallet-states.js";
import type { Db, Sql, Tx } from "../../db/sql.js";
import { walletDeficits } from "../ledger/deficits.js";
import type { LedgerService } from "../ledger/service.js";
import type { WebhookEvent } from "../webhooks/service.js";
import { Wallet } from "./entities.js";
import { lockWalletState, shareWalletStates, updateWalletState, type WalletStateRow } from "./repository.js";
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

/** Where a state change's `wallet.status_changed` goes: the customer's webhook (src/modules/webhooks/service.ts). */
export interface StatusNotifier {
  /** Writes the event in `tx` when the customer has an enabled webhook. @returns whether it wrote one. */
  enqueueEvent(tx: Sql, event: WebhookEvent): Promise<boolean>;
  /** Starts a delivery round, after commit. */
  kick(): void;
}

/**
 * The `status_reason` of a wallet the service locked because it owes a deficit after a reorg
 * reversal (docs/decisions/live-chains.md "Reorgs"): that lock, and only that one, is lifted by
 * the credit that covers the last deficit.
 */
export const DEFICIT_REASON = "deficit: a reorg took back a credited deposit";

/**
 * Writes wallet `current`'s new state `next` in `tx` and, when its status changes, its
 * `wallet.status_changed` event (`reason`: the one given to Lock or Suspend, else null), delivered
 * after commit (docs/decisions/customers-users-and-wallets.md "Wallet states").
 */
async function changeState(tx: Tx, notifier: StatusNotifier, current: WalletStateRow, next: WalletState, reason: string | null): Promise<void> {
  const now = new Date();
  await updateWalletState(tx, current.walletId, next, now);
  if (next.status === current.status) return;
  const data = {
    event: WALLET_STATUS_CHANGED,
    wallet_id: current.walletId,
    user_id: current.userId,
    previous_status: current.status,
    status: next.status,
    reason,
    changed_at: now.toISOString(),
  };
  const pushed = await notifier.enqueueEvent(tx, { customerId: current.customerId, type: WALLET_STATUS_CHANGED, data, reference: `wallet:${current.walletId}` });
  if (pushed) tx.afterCommit(() => notifier.kick());
}

/**
 * A reversal left wallet `current` (its row locked `FOR UPDATE` in `tx`) owing a deficit
 * (docs/decisions/live-chains.md "Reorgs"): an `ACTIVE` wallet turns `LOCKED` with
 * {@link DEFICIT_REASON} and its `wallet.status_changed` (reason {@link DEFICIT_REASON}); a
 * `SUSPENDED` one that was `ACTIVE` will be reinstated `LOCKED`; a `LOCKED` or `INACTIVE` one stays
 * as it is (Unlock is refused while it owes). @returns the wallet's state after it.
 */
export async function lockForDeficit(tx: Tx, notifier: StatusNotifier, current: WalletStateRow): Promise<WalletStateRow> {
  let next: WalletState | null = null;
  if (current.status === "ACTIVE") next = { status: "LOCKED", statusReason: DEFICIT_REASON, suspendedStatus: null, suspendedReason: null };
  else if (current.status === "SUSPENDED" && current.suspendedStatus === "ACTIVE") next = { ...stateOf(current), suspendedStatus: "LOCKED", suspendedReason: DEFICIT_REASON };
  if (!next) return current;
  await changeState(tx, notifier, current, next, DEFICIT_REASON);
  return { ...current, ...next };
}

/**
 * Wallet `current` (locked in `tx`) owes nothing any more: the service's own deficit lock
 * ({@link DEFICIT_REASON}) is lifted, back to `ACTIVE` with `wallet.status_changed` (reason null);
 * on a `SUSPENDED` wallet the state to reinstate turns `ACTIVE`. A lock the customer set stays.
 * @returns the wallet's state after it.
 */
export async function releaseDeficitLock(tx: Tx, notifier: StatusNotifier, current: WalletStateRow): Promise<WalletStateRow> {
  let next: WalletState | null = null;
  if (current.status === "LOCKED" && current.statusReason === DEFICIT_REASON) next = { status: "ACTIVE", statusReason: null, suspendedStatus: null, suspendedReason: null };
  else if (current.status === "SUSPENDED" && current.suspendedStatus === "LOCKED" && current.suspendedReason === DEFICIT_REASON) next = { ...stateOf(current), suspendedStatus: "ACTIVE", suspendedReason: null };
  if (!next) return current;
  await changeState(tx, notifier, current, next, null);
  return { ...current, ...next };
}

/** The stored state of `row`. */
const stateOf = (row: WalletStateRow): WalletState => ({ status: row.status, statusReason: row.statusReason, suspendedStatus: row.suspendedStatus, suspendedReason: row.suspendedReason });

/**
 * Unlock and Deactivate wait until the wallet owes nothing (docs/decisions/live-chains.md "Reorgs").
 * @throws DomainError WALLET_LOCKED (unlock), BAD_REQUEST (deactivate), 400, naming the first
 *   currency owed and its amount.
 */
async function assertNoDeficit(tx: Sql, walletId: string, call: "unlock" | "deactivate"): Promise<void> {
  const [owed] = await walletDeficits(tx, walletId);
  if (!owed) return;
  const [currency, amount] = owed;
  const owes = `Wallet ${walletId} owes a deficit of ${format8(amount)} ${currency} after a reorg took back a credited deposit`;
  if (call === "unlock") throw new DomainError("WALLET_LOCKED", `${owes}: it stays locked until later credits cover it.`);
  throw new DomainError("BAD_REQUEST", `${owes}; it cannot be deactivated until later credits cover it.`);
}

/** The state calls of wallets. */
export class WalletStates {
  constructor(
    private readonly db: Db,
    private readonly ledger: Pick<LedgerService, "walletBalances">,
    /** The customer's webhook (src/modules/webhooks/service.ts): the event in the change's transaction, the delivery after commit. */
    private readonly notifier: StatusNotifier,
  ) {}

  /**
   * Applies state call `call` to wallet `walletId` in one transaction: the wallet's row locked, the
   * rule of src/domain/wallet-states.ts `nextState`, for `deactivate` the balances, the new state
   * and its `wallet.status_changed` event. A call to the state the wallet already has changes
   * nothing and sends nothing. Unlock and Deactivate of a wallet that owes a deficit after a reorg
   * reversal are refused (docs/decisions/live-chains.md "Reorgs").
   * @param reason `lock` and `suspend`: 1–255 characters.
   * @returns the wallet as it is after the call.
   * @throws DomainError INVALID_WALLET_ID (400, not a UUID); WALLET_NOT_FOUND (404, none, or
   *   another customer's for an owner key); WALLET_INACTIVE, WALLET_SUSPENDED, BAD_REQUEST (400;
   *   `deactivate` with a balance, a held amount or a deficit left names the currency);
   *   WALLET_LOCKED (400, `unlock` while the wallet owes a deficit, naming it).
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
      if (call === "unlock" || call === "deactivate") await assertNoDeficit(tx, id, call);
      await changeState(tx, this.notifier, current, next, call === "lock" || call === "suspend" ? (reason ?? null) : null);
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
