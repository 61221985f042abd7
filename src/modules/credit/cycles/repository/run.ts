/**
 * How the cycle batches run their statements (../service.ts `runDueSteps`): each step is one
 * statement, retried when PostgreSQL chose it as a deadlock victim (or its lock wait timed out)
 * while it runs on its own on the pool (a {@link Db}); inside a caller's transaction (a {@link Tx},
 * the sandbox clock's chunk) the caller retries the whole transaction instead.
 */
import { Db, type PreparedStatement, type Sql } from "../../../../db/sql.js";
import type { WalletDetails } from "../../../../domain/credit/events.js";

/** SQLSTATEs of a statement PostgreSQL gave up on for its locks: `deadlock_detected`, `lock_not_available`. */
const RETRIED = new Set(["40P01", "55P03"]);

/** Attempts of one step statement, and the pause before each retry (× the attempt), milliseconds. */
const ATTEMPTS = 5;
const PAUSE_MS = 20;

function retried(error: unknown): boolean {
  return typeof error === "object" && error !== null && RETRIED.has(String((error as { code?: unknown }).code));
}

/**
 * The rows of step `statement` run with `values` on `on`, retried up to 5 times (it is idempotent)
 * after a deadlock or lock timeout when `on` is the pool; on a transaction, the error as thrown.
 * @throws the driver's error.
 */
export async function stepRows<Row extends object>(on: Sql, statement: PreparedStatement, values: readonly unknown[]): Promise<Row[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await on.rows<Row>(statement, values);
    } catch (error) {
      if (attempt >= ATTEMPTS || !(on instanceof Db) || !retried(error)) throw error;
      await new Promise((r) => setTimeout(r, PAUSE_MS * attempt));
    }
  }
}

/** Runs step `statement` (no rows returned) with the retry of {@link stepRows}. @returns the rows it changed. */
export async function stepRun(on: Sql, statement: PreparedStatement, values: readonly unknown[]): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await on.run(statement, values);
    } catch (error) {
      if (attempt >= ATTEMPTS || !(on instanceof Db) || !retried(error)) throw error;
      await new Promise((r) => setTimeout(r, PAUSE_MS * attempt));
    }
  }
}

/** A row an event-writing step returns: an event written (`collect`), or a count `n` per event `type`. */
export interface EventRow {
  n: string | number;
  wallet_id: string;
  /** The card of an expired hold's `Autorizacion Liberada`; null for every other event. */
  card_id: string | null;
  sequence: string | number;
  type: string;
  amount: string | number;
  direction: "debit" | "credit";
  affects_balance: boolean;
  wallet_details_after: WalletDetails | string;
  created_at: Date | string;
}
