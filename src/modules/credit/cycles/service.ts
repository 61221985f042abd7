/**
 * Set-based cycle batches of the credit core (docs/credit-engine.md "The SQL twin
 * (`src/modules/credit/cycles/`)"; docs/decisions/credit.md "Batches and clocks"): the daily closes, hold expiries, grace ends and cuts of every due wallet of a scope, one SQL statement per
 * step over all due wallets (never one query per wallet), with the formulas and the order of the pure
 * engine (src/domain/credit/index.ts lists the SQL of each step, simulate.ts the order at one instant:
 * daily close, then the expiry of the holds due (docs/decisions/credit.md "Authorizations"), then
 * grace ends, then the cut).
 *
 * A scope is either the real-time tenants (wallets of tenants without a `credit_clock` row; the
 * recurring `credit-cycles` job) or one tenant on its sandbox clock (Set and Advance Sandbox Clock).
 * The same code runs both.
 *
 * Idempotency and crashes: each step is one statement, so it commits whole or not at all; every step
 * is guarded by the state it changes (close: `as_of` < T; expiry: the authorization `approved`; grace end: `interest_applied_at is null`; cut:
 * `next_cut_at` = T and no statement at (wallet, T), backed by the unique (wallet_id, cut_date)), so a
 * rerun or a run resumed after a crash between steps books nothing twice. Rows are locked by the
 * UPDATE of the step itself (no shared lock row); a deadlock with a concurrent operation is retried.
 *
 * The SQL: the statements of ./repository/ (docs/architecture.md "Reaching the database"), each
 * built once at module load with the instant and the tenant as bound parameters: fragments.ts
 * (building blocks, cut schedule, half-even division), close-grace.ts, expiry.ts, cut.ts,
 * set-aside.ts (the steps), schedule.ts (the next due instant, the settle, the reschedule of a
 * product's wallets), run.ts (the deadlock retry).
 *
 * Money stays exact (docs/security.md "Money stays exact"): every amount a step writes stays within
 * ±(2^53 − 1) cents (../set-aside.ts `MAX_CENTS`), the integers a JSON reader holds exactly. Before the
 * steps of an instant, one UPDATE (./repository/set-aside.ts) computes in `numeric` what they would write for each
 * due wallet and sets aside every wallet for which any amount would leave that range (`set_aside_at`,
 * `set_aside_reason`); every step, `nextInstant` and the settle skip set-aside wallets, so one wallet
 * never fails a batch of the others and its own stored amounts stay as they were.
 */
import type { Db, Sql } from "../../../db/sql.js";
import type { CreditEventType, WalletDetails } from "../../../domain/credit/events.js";
import { reportSetAside } from "../set-aside.js";
import { closeWallets, graceEnds } from "./repository/close-grace.js";
import { cutWallets } from "./repository/cut.js";
import { expireHolds } from "./repository/expiry.js";
import type { EventRow } from "./repository/run.js";
import { nextInstant, settleWallets } from "./repository/schedule.js";
import { setAsideRunaways } from "./repository/set-aside.js";
import { REAL_TIME, type CycleScope, type DueStepsOptions, type DueStepsResult, type EmittedNotification } from "./types.js";
import type { JobSpec } from "../../../jobs/port.js";
import type { SetAsideLogger } from "../set-aside.js";

/**
 * Name of the recurring credit cycle job: runs every daily close, grace end and cut due for the
 * real-time tenants ({@link runDueSteps}), every {@link CREDIT_CYCLES_INTERVAL_S} seconds and once
 * at start. Tenants with a sandbox clock are skipped (their clock runs their steps). A wallet whose
 * next step would take an amount beyond ±(2^53 − 1) cents is set aside, logged once and skipped;
 * the others' steps run as usual (docs/security.md "Money stays exact").
 */
export const CREDIT_CYCLES_JOB = "credit-cycles";
/** Interval of {@link CREDIT_CYCLES_JOB}, seconds. */
export const CREDIT_CYCLES_INTERVAL_S = 60;

/**
 * The cycle job as the registry takes it (src/jobs/registry.ts): one run at a time per worker.
 * @param db where a run's statements run, each on its own (src/db/sql.ts; a step lost to a deadlock is retried).
 * @param eventsWritten told how many notifications a run wrote (the delivery kicks a round).
 */
export function creditCyclesJob(db: Db, logger: SetAsideLogger, eventsWritten: (count: number) => void): JobSpec {
  return {
    name: CREDIT_CYCLES_JOB,
    concurrency: 1,
    everyS: CREDIT_CYCLES_INTERVAL_S,
    run: async () => {
      const ran = await runDueSteps(db, REAL_TIME, new Date(), { logger });
      eventsWritten(ran.events);
    },
  };
}

/** The batches' scope, options and results (./types.ts), for callers of {@link runDueSteps}. */
export { REAL_TIME, type CycleScope, type DueStepsOptions, type DueStepsResult, type EmittedNotification } from "./types.js";

/** The notification of an event row a step returned. */
function toNotification(r: EventRow): EmittedNotification {
  return {
    walletId: r.wallet_id,
    ...(r.card_id ? { cardId: r.card_id } : {}),
    type: r.type as CreditEventType,
    amount: Number(r.amount),
    direction: r.direction,
    affectsBalance: r.affects_balance,
    walletDetails_after: (typeof r.wallet_details_after === "string" ? JSON.parse(r.wallet_details_after) : r.wallet_details_after) as WalletDetails,
    sequence: Number(r.sequence),
    at: new Date(r.created_at),
  };
}

/**
 * Runs, in time order, every scheduled step of the scope's wallets due at or before `until` (UTC):
 * at each instant the daily close (00:00 UTC) and the expiry of the holds due then
 * (./repository/expiry.ts; docs/decisions/credit.md "Authorizations"), then the grace ends, then the cuts, each step one SQL
 * statement over all due wallets of the scope (engine order of simulate.ts; formulas of
 * src/domain/credit/index.ts). Dissolved wallets are skipped. Before the steps of each instant, the
 * due wallets whose steps would take an amount beyond ±(2^53 − 1) cents are set aside
 * (./repository/set-aside.ts; docs/security.md "Money stays exact") and skipped from then on; the others run as
 * usual. With `settle` (default for a tenant scope), every wallet of the scope behind the instant
 * reached (`until` when complete) then gets `as_of` = that instant, as the engine's `advance` does.
 *
 * Rerunning, or resuming after a crash between (or inside) steps, books nothing twice (module note).
 * @param on where the statements run: the pool (each step on its own, retried after a deadlock:
 *   the real-time job) or an open transaction (the sandbox clock's chunk, which retries as a whole).
 * @returns counts of what ran, the wallets set aside, whether every step due by `until` ran
 *   (`complete`) and the instant reached; with `collect`, the notifications written in emission order.
 * @throws Error when a due instant does not move forward (a wallet whose `next_cut_at` already has a
 *   statement: an inconsistent row, never produced by these batches); database errors as thrown.
 */
export async function runDueSteps(on: Sql, scope: CycleScope, until: Date, options: DueStepsOptions = {}): Promise<DueStepsResult> {
  const collect = options.collect ?? false;
  const settle = options.settle ?? scope.kind === "tenant";
  const result: DueStepsResult = { instants: 0, closes: 0, expiries: 0, graceEnds: 0, cuts: 0, events: 0, notifications: [], setAside: [], complete: false, reached: null };
  let previous = -Infinity;
  for (;;) {
    if (options.maxInstants !== undefined && result.instants >= options.maxInstants) break;
    if (result.instants > 0 && options.deadline !== undefined && Date.now() >= options.deadline) break;
    if (result.instants > 0 && options.maxEvents !== undefined && result.events >= options.maxEvents) break;
    const t = await nextInstant(on, scope);
    if (t === null || t.getTime() > until.getTime()) {
      result.complete = true;
      break;
    }
    if (t.getTime() <= previous) throw new Error(`credit cycles: the due instant ${t.toISOString()} did not move forward (inconsistent wallet row)`);
    previous = t.getTime();
    result.instants += 1;
    const aside = await setAsideRunaways(on, scope, t);
    const wallets = aside.map((row) => ({ walletId: row.wallet_id, customerId: row.customer_id, reason: row.set_aside_reason, at: t }));
    result.setAside.push(...wallets);
    if (options.logger) reportSetAside(options.logger, wallets);
    const midnight = t.getTime() % 86_400_000 === 0;
    if (midnight) result.closes += await closeWallets(on, scope, t);
    const steps = [["grace", graceEnds], ["cut", cutWallets]] as const;
    for (const [kind, step] of midnight ? ([["expiry", expireHolds], ...steps] as const) : steps) {
      const rows = await step(on, scope, t, collect);
      const counted = (type: CreditEventType): number => rows.filter((r) => r.type === type).reduce((n, r) => n + Number(r.n), 0);
      result.events += rows.reduce((n, r) => n + Number(r.n), 0);
      if (kind === "expiry") result.expiries += counted("Autorizacion Liberada");
      else if (kind === "grace") result.graceEnds += counted("Interes Nominal Aplicado");
      else result.cuts += counted("Interes Nominal Calculado");
      if (collect) result.notifications.push(...rows.map(toNotification).sort((a, b) => a.walletId.localeCompare(b.walletId) || a.sequence - b.sequence));
    }
    result.reached = t;
  }
  if (result.complete) result.reached = until;
  if (settle && result.reached !== null) await settleWallets(on, scope, result.reached);
  return result;
}
