/**
 * The tenant's sandbox test clock for the credit core (spec/credit/sandbox-clock.tsp; docs/walkthrough.md
 * "The credit core: the golden vector on the sandbox clock"): read, set (any instant while the tenant
 * has no credit wallet, past included; afterwards only forward) and advance (`days` or `to`),
 * running every daily close, grace end and cut that falls due with the same set-based batches as
 * real time (../cycles/service.ts `runDueSteps`, tenant scope).
 *
 * A tenant without a `credit_clock` row follows real time; the first Set or Advance creates the row
 * at the real time (the clock "starts at the real time"), then moves it.
 *
 * Bounds (docs/security.md "The sandbox clock"):
 * - a call moves the clock at most {@link MAX_MOVE_DAYS} days forward, whichever form it takes
 *   (`days`, `to`, Set `now`); beyond that 422 `VALIDATION_ERROR` on the field;
 * - the calls of one tenant queue in this process, without a database connection each, one after the
 *   other ({@link MAX_QUEUED_MOVES} waiting at most, then 429); across processes the lock on the
 *   tenant's clock row (`select … for update`) keeps them apart;
 * - a move runs in chunks, each one transaction that locks the clock row, runs the due steps up to
 *   a chunk end and moves the clock row there, with a `statement_timeout` local to it as a backstop; so
 *   the clock never shows an instant whose due steps have not run, and nothing shared by other
 *   tenants is locked. It stops when its time budget (`CLOCK_MOVE_BUDGET_S`) is spent or
 *   {@link MAX_ADVANCE_NOTIFICATIONS} notifications have been emitted, and answers where the clock
 *   stopped (`complete: false`, `target`): the client calls again with `to` = `target`.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Db } from "../../../db/sql.js";
import type { components } from "../../../../generated/types/credit.js";
import { DAY_MS } from "../../../domain/credit/schedule.js";
import { DomainError, ValidationFailed } from "../../../domain/errors.js";
import { runDueSteps, type EmittedNotification } from "../cycles/service.js";
import { reportSetAside, type SetAsideLogger, type SetAsideWallet } from "../set-aside.js";
import { tenantHasWallets } from "../accounts/repository/wallets.js";
import { limitStatementTime, lockClock, setClock, tenantNow } from "./repository.js";

type Schemas = components["schemas"];
/** Schema `CreditSandboxClock`. */
export type CreditSandboxClockView = Schemas["CreditSandboxClock"];
/** Schema `CreditSandboxClockMove` (the answer of Set Sandbox Clock). */
export type CreditSandboxClockMoveView = Schemas["CreditSandboxClockMove"];
/** Schema `CreditSandboxAdvance`. */
export type CreditSandboxAdvanceView = Schemas["CreditSandboxAdvance"];
/** Schema `CreditNotification`. */
export type CreditNotificationView = Schemas["CreditNotification"];
/** Schema `AdvanceSandboxClockRequest`. */
export type AdvanceSandboxClockInput = Schemas["AdvanceSandboxClockRequest"];

/** Days one call may move the clock forward, whichever form it takes (docs/security.md "The sandbox clock"). */
export const MAX_MOVE_DAYS = 3660;
/** Notifications one Advance answer lists; the move stops at the end of the instant that reaches it. */
export const MAX_ADVANCE_NOTIFICATIONS = 1000;
/** Calls of one tenant that may wait behind its running move in this process; one more answers 429. */
export const MAX_QUEUED_MOVES = 16;
/** Default time budget of one move, milliseconds (`CLOCK_MOVE_BUDGET_S`). */
export const DEFAULT_MOVE_BUDGET_MS = 5000;
/** Longest chunk of a move, milliseconds: how long one chunk may keep the tenant's wallet rows locked. */
const CHUNK_MS = 500;
/** PostgreSQL's SQLSTATE of a statement cancelled by `statement_timeout`. */
const QUERY_CANCELED = "57014";
/** PostgreSQL's SQLSTATE of a transaction chosen as a deadlock victim (`deadlock_detected`). */
const DEADLOCK = "40P01";

/** Options of {@link SandboxClockService}. */
export interface SandboxClockOptions {
  /** Time budget of one move, milliseconds (default {@link DEFAULT_MOVE_BUDGET_MS}); at least one chunk always runs. */
  moveBudgetMs?: number;
  /** Where wallets set aside by a move are reported (one error each, after the chunk commits). */
  logger?: SetAsideLogger;
}

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

/** What a move did: where the clock is, what was asked, whether it got there, the notifications listed and how many more were emitted. */
interface Moved {
  now: Date;
  target: Date;
  complete: boolean;
  notifications: EmittedNotification[];
  omitted: number;
}

/** One committed chunk of a move. */
interface Chunk {
  now: Date;
  target: Date;
  complete: boolean;
  notifications: EmittedNotification[];
  events: number;
  setAside: SetAsideWallet[];
}

/** Whether `error` is the driver's error of SQLSTATE `code`. */
function hasCode(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}

/**
 * The sandbox clocks of the tenants, read and moved through `db` (src/db/sql.ts: each chunk of a
 * move is one `db.transaction`). `realNow` is injectable for tests; `onEventsWritten(count)` is
 * called after each commit that wrote notifications, to start their delivery.
 */
export class SandboxClockService {
  /** Per tenant: the tail of its queue of moves in this process, and how many calls wait in it. */
  private readonly queues = new Map<string, { tail: Promise<void>; waiting: number }>();
  private readonly budgetMs: number;
  private readonly logger: SetAsideLogger | undefined;

  constructor(
    private readonly db: Db,
    private readonly realNow: () => Date = () => new Date(),
    private readonly onEventsWritten: (count: number) => void = () => {},
    options: SandboxClockOptions = {},
  ) {
    this.budgetMs = options.moveBudgetMs ?? DEFAULT_MOVE_BUDGET_MS;
    this.logger = options.logger;
  }

  /**
   * Get Sandbox Clock: the tenant's credit core instant (its clock row, else the real time), ISO 8601 UTC. Not queued.
   * `_em` is not used (the clock is read through the service's `Db`); it keeps the handlers' call shape.
   */
  async get(_em: EntityManager, customerId: string): Promise<CreditSandboxClockView> {
    return { now: (await tenantNow(this.db, customerId, this.realNow())).toISOString() };
  }

  /**
   * Set Sandbox Clock to `now` (UTC). While the tenant has no credit wallet: any earlier instant,
   * past included. With wallets: only forward (the same instant is a no-op), running what falls due
   * exactly like {@link advance}, in chunks within the time budget.
   * @returns `CreditSandboxClockMove`: the clock after the call, `target` = `now` asked, `complete`.
   * @throws DomainError RESOURCE_CONFLICT (409 `CONFLICT`) when the tenant has a credit wallet and
   *   `now` is before its clock; ValidationFailed (422 on `now`) when `now` is more than
   *   {@link MAX_MOVE_DAYS} days after the clock; DomainError RATE_LIMIT_EXCEEDED (429) when
   *   {@link MAX_QUEUED_MOVES} calls of the tenant already wait.
   * `_em` is not used (the move runs through the service's `Db`); it keeps the handlers' call shape.
   */
  async set(_em: EntityManager, customerId: string, now: Date): Promise<CreditSandboxClockMoveView> {
    if (Number.isNaN(now.getTime())) throw new ValidationFailed([{ field: "now", message: "now must be a real instant (ISO 8601 UTC)." }]);
    const moved = await this.move(customerId, (current, hasWallets) => {
      if (hasWallets && now.getTime() < current.getTime()) {
        throw new DomainError("RESOURCE_CONFLICT", `The tenant has credit wallets: its clock only moves forward (it is ${current.toISOString()}).`, "now");
      }
      checkSpan(current, now, "now");
      return now;
    });
    return { now: moved.now.toISOString(), target: moved.target.toISOString(), complete: moved.complete };
  }

  /**
   * Advance Sandbox Clock by `days` (whole days of 86 400 s) or to `to` (UTC, not before the clock,
   * at most {@link MAX_MOVE_DAYS} days after it), running in order every daily close, grace end and
   * cut due up to the new instant, in chunks within the time budget.
   * @returns the clock reached, the `target` asked, `complete`, the notifications emitted in emission
   *   order (instant, step, wallet, per-wallet `sequence`; at most {@link MAX_ADVANCE_NOTIFICATIONS},
   *   shaped as `CreditNotification`) and how many more were emitted (`notificationsOmitted`).
   * @throws ValidationFailed (422 `VALIDATION_ERROR`) when neither or both of `days` and `to` are
   *   given (field `days`), or `to` is before the clock or more than {@link MAX_MOVE_DAYS} days after
   *   it (field `to`); DomainError RATE_LIMIT_EXCEEDED (429) when {@link MAX_QUEUED_MOVES} calls wait.
   * `_em` is not used (the move runs through the service's `Db`); it keeps the handlers' call shape.
   */
  async advance(_em: EntityManager, customerId: string, input: AdvanceSandboxClockInput): Promise<CreditSandboxAdvanceView> {
    const hasDays = input.days !== undefined && input.days !== null;
    const hasTo = input.to !== undefined && input.to !== null;
    if (hasDays === hasTo) throw new ValidationFailed([{ field: "days", message: "Give exactly one of days and to." }]);
    const moved = await this.move(customerId, (current) => {
      if (hasDays) {
        const days = Number(input.days);
        if (!Number.isInteger(days) || days < 1 || days > MAX_MOVE_DAYS) throw new ValidationFailed([{ field: "days", message: `days must be a whole number from 1 to ${MAX_MOVE_DAYS}.` }]);
        return new Date(current.getTime() + days * DAY_MS);
      }
      const to = new Date(String(input.to));
      if (Number.isNaN(to.getTime())) throw new ValidationFailed([{ field: "to", message: "to must be a real instant (ISO 8601 UTC)." }]);
      if (to.getTime() < current.getTime()) throw new ValidationFailed([{ field: "to", message: `to must not be before the clock (${current.toISOString()}).` }]);
      checkSpan(current, to, "to");
      return to;
    });
    return {
      now: moved.now.toISOString(),
      target: moved.target.toISOString(),
      complete: moved.complete,
      notifications: moved.notifications.map(notificationView),
      notificationsOmitted: moved.omitted,
    };
  }

  /**
   * Runs `fn` after every earlier move of the tenant in this process has settled, so queued calls
   * hold no database connection while they wait.
   * @throws DomainError RATE_LIMIT_EXCEEDED (429) when {@link MAX_QUEUED_MOVES} calls already wait.
   */
  private async queued<T>(customerId: string, fn: () => Promise<T>): Promise<T> {
    const queue = this.queues.get(customerId) ?? { tail: Promise.resolve(), waiting: 0 };
    if (queue.waiting >= MAX_QUEUED_MOVES) {
      throw new DomainError("RATE_LIMIT_EXCEEDED", `${MAX_QUEUED_MOVES} sandbox clock calls of this tenant are already waiting; retry when they have finished.`, undefined, Math.ceil(this.budgetMs / 1000));
    }
    queue.waiting += 1;
    const run = queue.tail.then(() => {
      queue.waiting -= 1;
      return fn();
    });
    const tail = run.then(() => undefined, () => undefined);
    queue.tail = tail;
    this.queues.set(customerId, queue);
    void tail.then(() => {
      if (queue.tail === tail && queue.waiting === 0) this.queues.delete(customerId);
    });
    return run;
  }

  /**
   * Moves the tenant's clock, queued behind its other moves: chunk after chunk, each one committed
   * transaction (`chunk`), until the target is reached, the time budget (counted from the call's
   * arrival; at least one chunk runs) is spent or
   * {@link MAX_ADVANCE_NOTIFICATIONS} notifications have been emitted. `target` is asked once, in the
   * first chunk, given the clock and whether the tenant has a wallet; what it throws rolls that chunk
   * back (the clock row it may have created included).
   * @throws DomainError SERVICE_UNAVAILABLE (503) when the first chunk's statements exceed the
   *   statement timeout (nothing moved); database errors as thrown.
   */
  private async move(customerId: string, target: (current: Date, hasWallets: boolean) => Date): Promise<Moved> {
    // the budget counts from the call's arrival, so calls queued behind a long move answer soon after it
    const deadline = Date.now() + this.budgetMs;
    return this.queued(customerId, async () => {
      const moved: Moved = { now: new Date(0), target: new Date(0), complete: false, notifications: [], omitted: 0 };
      let goal: Date | undefined;
      let chunks = 0;
      for (;;) {
        let done: Chunk;
        try {
          done = await this.chunk(customerId, goal, target, deadline, MAX_ADVANCE_NOTIFICATIONS - moved.notifications.length);
        } catch (error) {
          if (!hasCode(error, QUERY_CANCELED)) throw error;
          if (chunks === 0) {
            throw new DomainError("SERVICE_UNAVAILABLE", "Moving the sandbox clock took longer than the service allows for one call; retry with a shorter move.", undefined, 1);
          }
          break;
        }
        chunks += 1;
        goal = done.target;
        moved.now = done.now;
        moved.target = done.target;
        moved.complete = done.complete;
        const room = MAX_ADVANCE_NOTIFICATIONS - moved.notifications.length;
        moved.notifications.push(...done.notifications.slice(0, room));
        moved.omitted += Math.max(0, done.notifications.length - room);
        if (done.events > 0) this.onEventsWritten(done.events);
        if (this.logger) reportSetAside(this.logger, done.setAside);
        if (done.complete || Date.now() >= deadline || moved.notifications.length + moved.omitted >= MAX_ADVANCE_NOTIFICATIONS) break;
      }
      return moved;
    });
  }

  /**
   * One chunk of a move, in one `db.transaction` (retried on a deadlock: it is all-or-nothing): creates
   * the clock row at the real time when missing, locks it, takes the target (first chunk), runs the
   * due steps up to it until the chunk's time is spent (at least one instant) or `maxEvents` events
   * are written, and moves the clock row to the last instant whose steps all ran (the target when
   * none is left). `statement_timeout` = the move's budget (at least 1 s), local to the transaction,
   * is the backstop for a single statement.
   */
  private async chunk(
    customerId: string,
    goal: Date | undefined,
    target: (current: Date, hasWallets: boolean) => Date,
    deadline: number,
    maxEvents: number,
  ): Promise<Chunk> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction(async (tx) => {
          await limitStatementTime(tx, Math.max(1000, Math.ceil(this.budgetMs)));
          const real = this.realNow();
          const current = await lockClock(tx, customerId, real);
          const next = goal ?? target(current, await tenantHasWallets(tx, customerId));
          if (next.getTime() <= current.getTime()) {
            // the same instant, or (no wallet yet) an earlier one: nothing falls due
            if (next.getTime() < current.getTime()) await setClock(tx, customerId, next, real);
            return { now: next, target: next, complete: true, notifications: [], events: 0, setAside: [] };
          }
          const ran = await runDueSteps(tx, { kind: "tenant", customerId }, next, {
            collect: true,
            deadline: Math.min(deadline, Date.now() + CHUNK_MS),
            maxEvents: Math.max(1, maxEvents),
          });
          const reached = ran.complete ? next : (ran.reached ?? current);
          await setClock(tx, customerId, reached, real);
          return { now: reached, target: next, complete: ran.complete, notifications: ran.notifications, events: ran.events, setAside: ran.setAside };
        });
      } catch (error) {
        if (attempt >= 3 || !hasCode(error, DEADLOCK)) throw error;
      }
    }
  }
}

/** 422 on `field` when `to` is more than {@link MAX_MOVE_DAYS} days after `current`. */
function checkSpan(current: Date, to: Date, field: "to" | "now"): void {
  if (to.getTime() - current.getTime() > MAX_MOVE_DAYS * DAY_MS) {
    const latest = new Date(current.getTime() + MAX_MOVE_DAYS * DAY_MS).toISOString();
    throw new ValidationFailed([{ field, message: `The clock moves at most ${MAX_MOVE_DAYS} days per call: ${field} must not be after ${latest}.` }]);
  }
}
