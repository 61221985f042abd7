/**
 * The tenant's sandbox test clock for the credit core (decisions.md §3; spec/credit/sandbox-clock.tsp):
 * read, set (any instant while the tenant has no credit wallet, past included; afterwards only
 * forward) and advance (`days` or `to`), running every daily close, grace end and cut that falls due
 * with the same set-based batches as real time (./cycles.ts `runDueSteps`, tenant scope).
 *
 * A tenant without a `credit_clock` row follows real time; the first Set or Advance creates the row
 * at the real time (the clock "starts at the real time"), then moves it. A move runs in one
 * transaction that first locks the tenant's own clock row, so two moves of one tenant never interleave
 * and the clock never shows an instant whose due steps have not run; nothing shared by other tenants
 * is locked.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { components } from "../../../generated/types/credit.js";
import { DAY_MS } from "../../domain/credit/schedule.js";
import { DomainError, ValidationFailed } from "../../domain/errors.js";
import { runDueSteps, type EmittedNotification } from "./cycles.js";
import { tenantNow } from "./clock.js";

type Schemas = components["schemas"];
/** Schema `CreditSandboxClock`. */
export type CreditSandboxClockView = Schemas["CreditSandboxClock"];
/** Schema `CreditSandboxAdvance`. */
export type CreditSandboxAdvanceView = Schemas["CreditSandboxAdvance"];
/** Schema `CreditNotification`. */
export type CreditNotificationView = Schemas["CreditNotification"];
/** Schema `AdvanceSandboxClockRequest`. */
export type AdvanceSandboxClockInput = Schemas["AdvanceSandboxClockRequest"];

/** A notification as the spec's `CreditNotification` (the batch's instant dropped). */
export function notificationView(n: EmittedNotification): CreditNotificationView {
  return {
    walletId: n.walletId,
    type: n.type,
    amount: n.amount,
    direction: n.direction,
    affectsBalance: n.affectsBalance,
    walletDetails_after: n.walletDetails_after,
    sequence: n.sequence,
  };
}

/**
 * The sandbox clocks of the tenants. `realNow` is injectable for tests; `onEventsWritten(count)` is
 * called after a commit that wrote notifications, to start their delivery.
 */
export class SandboxClockService {
  constructor(
    private readonly realNow: () => Date = () => new Date(),
    private readonly onEventsWritten: (count: number) => void = () => {},
  ) {}

  /** Get Sandbox Clock: the tenant's credit core instant (its clock row, else the real time), ISO 8601 UTC. */
  async get(em: EntityManager, customerId: string): Promise<CreditSandboxClockView> {
    return { now: (await tenantNow(em, customerId, this.realNow())).toISOString() };
  }

  /**
   * Set Sandbox Clock to `now` (UTC). While the tenant has no credit wallet: any instant, past
   * included. With wallets: only forward (the same instant is a no-op), running what falls due
   * exactly like {@link advance}.
   * @throws DomainError RESOURCE_CONFLICT (409 `CONFLICT`) when the tenant has a credit wallet and
   *   `now` is before its clock.
   */
  async set(em: EntityManager, customerId: string, now: Date): Promise<CreditSandboxClockView> {
    const moved = await this.move(em, customerId, (current, hasWallets) => {
      if (hasWallets && now.getTime() < current.getTime()) {
        throw new DomainError("RESOURCE_CONFLICT", `The tenant has credit wallets: its clock only moves forward (it is ${current.toISOString()}).`, "now");
      }
      return now;
    });
    return { now: moved.now.toISOString() };
  }

  /**
   * Advance Sandbox Clock by `days` (whole days of 86 400 s) or to `to` (UTC, not before the clock),
   * running in order every daily close, grace end and cut due up to the new instant.
   * @returns the new instant and the notifications emitted, in emission order (instant, step,
   *   wallet, per-wallet `sequence`), shaped as `CreditNotification`.
   * @throws ValidationFailed (422 `VALIDATION_ERROR`) when neither or both of `days` and `to` are
   *   given (field `days`), or `to` is before the clock (field `to`).
   */
  async advance(em: EntityManager, customerId: string, input: AdvanceSandboxClockInput): Promise<CreditSandboxAdvanceView> {
    const hasDays = input.days !== undefined && input.days !== null;
    const hasTo = input.to !== undefined && input.to !== null;
    if (hasDays === hasTo) throw new ValidationFailed([{ field: "days", message: "Give exactly one of days and to." }]);
    const moved = await this.move(em, customerId, (current) => {
      if (hasDays) return new Date(current.getTime() + Number(input.days) * DAY_MS);
      const to = new Date(String(input.to));
      if (to.getTime() < current.getTime()) throw new ValidationFailed([{ field: "to", message: `to must not be before the clock (${current.toISOString()}).` }]);
      return to;
    });
    return { now: moved.now.toISOString(), notifications: moved.notifications.map(notificationView) };
  }

  /**
   * Moves the tenant's clock in one transaction: creates the row at the real time when missing, locks
   * it, asks `target` for the new instant (given the current one and whether the tenant has a wallet),
   * runs the due steps up to it when it is later, and stores it.
   */
  private async move(em: EntityManager, customerId: string, target: (current: Date, hasWallets: boolean) => Date): Promise<{ now: Date; notifications: EmittedNotification[] }> {
    const moved = await em.fork().transactional(async (tx) => {
      const real = this.realNow();
      await tx.execute(`insert into credit_clock (customer_id, "now", updated_at) values (?, ?, ?) on conflict (customer_id) do nothing`, [customerId, real, real]);
      const [row] = await tx.execute<{ now: Date | string }[]>(`select "now" from credit_clock where customer_id = ? for update`, [customerId]);
      const current = new Date(row?.now ?? real);
      const [w] = await tx.execute<{ any: boolean }[]>(`select exists (select 1 from credit_wallet where customer_id = ?) as any`, [customerId]);
      const next = target(current, w?.any === true);
      let notifications: EmittedNotification[] = [];
      if (next.getTime() > current.getTime()) {
        notifications = (await runDueSteps(tx, { kind: "tenant", customerId }, next, { collect: true })).notifications;
      }
      await tx.execute(`update credit_clock set "now" = ?, updated_at = ? where customer_id = ?`, [next, real, customerId]);
      return { now: next, notifications };
    });
    if (moved.notifications.length > 0) this.onEventsWritten(moved.notifications.length);
    return moved;
  }
}
