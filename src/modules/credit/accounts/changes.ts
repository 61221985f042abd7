/**
 * How a change of one credit wallet runs (docs/decisions/credit.md "Wallets",
 * "Batches and clocks"): one transaction that locks
 * only the wallet's own row (`select … for update`), loads it with its open statements into the
 * engine's `WalletState` (./repository/lock.ts), takes the tenant's instant (read with the wallet: its sandbox clock,
 * else real time), runs the pure engine operation (src/domain/credit/simulate.ts) — which first runs
 * every daily close, cut and grace end due before that instant that the batches have not run yet —
 * and persists everything it returns: the wallet, the touched statements and every event as a
 * `credit_event` row (the notification outbox).
 *
 * A refused operation (engine `Refusal`, outcome.ts) still commits the catch-up steps due before its
 * instant (so the state a 409 names, e.g. a default, is the one a read shows) and books nothing else.
 *
 * Money stays exact (docs/security.md "Money stays exact"): a wallet set aside by the cycle batches
 * refuses every change with 409 `CONFLICT` naming the reason, before any catch-up step runs; a change
 * whose catch-up steps would take an amount beyond ±(2^53 − 1) cents (the engine's RangeError) books
 * nothing, sets the wallet aside and is refused the same way.
 */
import { advance, type Outcome } from "../../../domain/credit/index.js";
import { DomainError, quote } from "../../../domain/errors.js";
import { tenantNow } from "../clock/repository.js";
import { MAX_CENTS, type SetAsideLogger } from "../set-aside.js";
import { refusalError, setAsideRefusal } from "./refusals.js";
import type { Db, Tx } from "../../../db/sql.js";
import { eventsOf } from "./events-written.js";
import { lockWallet, type LockedWallet } from "./repository/lock.js";
import { setWalletAside } from "./repository/wallets.js";
import { persistStep } from "./repository/write.js";

/** DomainError NOT_FOUND (404) for wallet `walletId` (also when it is another tenant's). */
export function walletNotFound(walletId: string): DomainError {
  return new DomainError("NOT_FOUND", `Credit wallet ${quote(walletId)} not found.`);
}

/** After a refusal: persists the steps due up to `now` (engine `advance`), if any ran. */
export async function commitCatchUp(tx: Tx, locked: LockedWallet, now: Date): Promise<void> {
  const moved = advance(locked.state, locked.product, now);
  if (!moved.ok) return;
  const changed = moved.value.events.length > 0 || moved.value.state.sumOfDailyBalance !== locked.state.sumOfDailyBalance;
  await persistStep(tx, locked, moved.value, changed ? now : locked.row.updatedAt);
}

/** The tenant's credit core instant of a locked wallet: its sandbox clock read with the wallet, else real time (../clock/repository.ts `tenantNow`). */
export function nowOf(locked: LockedWallet): Date {
  return locked.clock ?? new Date();
}

/** Runs the changes of the credit wallets: the transaction of each, the delivery start of its events, and the set-aside guard. */
export class WalletChanges {
  /**
   * @param onEventsWritten called after a commit that wrote `count` > 0 credit_event rows (catch-up
   *   steps included), to start their delivery (src/modules/credit/delivery.ts `notifyCreditEventsWritten`).
   * @param logger where a wallet set aside by a change is reported (one error).
   */
  constructor(
    /** Where the changes run (src/db/sql.ts). */
    readonly db: Db,
    readonly onEventsWritten: (count: number) => void = () => {},
    private readonly logger?: SetAsideLogger,
  ) {}

  /**
   * One change of one wallet in one transaction: locks the wallet row, takes the tenant's instant,
   * runs `op`; on a refusal commits the catch-up steps only (`commitCatchUp`) and throws its error.
   */
  async mutate<T>(customerId: string, walletId: string, op: (tx: Tx, locked: LockedWallet, now: Date) => Promise<Outcome<T>>): Promise<T> {
    let written = 0;
    const outcome = await this.exact(customerId, walletId, () => this.db.transaction(async (tx) => {
      const locked = await lockWallet(tx, customerId, walletId);
      if (!locked) throw walletNotFound(walletId);
      if (locked.row.setAsideAt) return setAsideRefusal(locked.row.setAsideReason ?? "");
      const now = nowOf(locked);
      const done = await op(tx, locked, now);
      if (!done.ok) await commitCatchUp(tx, locked, now);
      written = eventsOf(tx);
      return done;
    }));
    if (written > 0) this.onEventsWritten(written);
    if (!outcome.ok) throw refusalError(outcome);
    return outcome.value;
  }

  /**
   * Runs `change` (one transaction on wallet `walletId`). When the engine raises its RangeError for
   * an amount that is not a safe integer of cents (of the change or of its catch-up steps), the
   * transaction has rolled back; the wallet is then set aside in a transaction of its own (at the
   * tenant's instant, with the reason) and the change is refused (docs/security.md "Money stays exact").
   * @throws DomainError RESOURCE_CONFLICT (409) naming the reason in that case; anything else as thrown.
   */
  async exact<R>(customerId: string, walletId: string, change: () => Promise<R>): Promise<R> {
    try {
      return await change();
    } catch (error) {
      // the engine's `cents` and event checks: "… must be a (non-negative) safe integer …"
      if (!(error instanceof RangeError) || !/safe integer/.test(error.message)) throw error;
      const reason = `The cycle steps or the change would take an amount beyond ${MAX_CENTS} cents (2^53 - 1), the largest amount the service keeps exact (${error.message.slice(0, 200)}): the wallet is set aside and its cycle steps stop.`;
      const wallet = walletId.toLowerCase();
      const { marked, stored } = await this.db.transaction(async (tx) => setWalletAside(tx, customerId, wallet, await tenantNow(tx, customerId), reason));
      if (marked) this.logger?.error({ walletId: wallet, customerId, reason: stored }, "credit wallet set aside: a change would leave the exact range of amounts");
      throw refusalError(setAsideRefusal(stored));
    }
  }
}
