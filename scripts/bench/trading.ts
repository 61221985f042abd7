/**
 * The trading rows of `npm run bench` (`BENCH_ONLY=trading`; docs/performance.md "Trading"): quote
 * + order pairs over HTTP with the owner key at {@link TRADING_LEVELS} in flight
 * (scripts/bench/trading-load.ts), against the baseline's same statements on bare node:http + raw
 * pg (scripts/bench/baseline-trading.ts; `npx tsx scripts/bench/capture-trading.ts` compares them
 * with the service's).
 *
 * The tenant: the benchmark's customer with {@link TRADING_WALLETS} VERIFIED users, one wallet each
 * holding btc and usdt (11 BTC and 1 000 250 USDT): one wallet per pair in flight at the highest
 * level. An order locks its wallet's two available accounts `FOR UPDATE` for its whole transaction
 * (docs/decisions/trading.md "The ledger"), so pairs on one wallet queue on those rows by design;
 * with a wallet each, pairs in flight share only the append-only liquidity and fees accounts
 * (never locked) and what limits them is CPU. Each wallet alternates buy and sell, so its balances
 * stay near where they started (a buy and a sell of 0.001 BTC cost it 0.26 USDT of spread and fees).
 *
 * Before the load: a first pair on the service creates the liquidity and fees accounts (once per
 * installation); then one buy pair on each side must answer the same (ids, keys and times aside)
 * and write the same rows. After it, the ledger's invariants must hold (scripts/bench/checks.ts `ledgerProblems`,
 * the queries of `LedgerService.verify`); scripts/bench/trading-run.ts then runs `npm run ledger:check`.
 */
import { ActivitySampler } from "./activity.js";
import { ledgerProblems, rowsWrittenBy } from "./checks.js";
import type { Target } from "./load.js";
import type { ServerProcess } from "./processes.js";
import { compareRow, fmt, Side, type Row, type SideRun } from "./report.js";
import { quoteBody, runTradingPairs, type TradingLane } from "./trading-load.js";

/** Pairs in flight of the three rows, interleaved in each round. */
export const TRADING_LEVELS = [4, 16, 32] as const;
/** The level that carries the target. */
export const TRADING_TARGET_LEVEL = 16;
/** Target ratio (service / same SQL) at {@link TRADING_TARGET_LEVEL}. */
export const TRADING_TARGET = 0.5;
/** Wallets (and users) seeded: one per pair in flight at the highest level. */
export const TRADING_WALLETS = Math.max(...TRADING_LEVELS);
/** The tables a pair may write. */
const TABLES = ["trade_quote", "trade_order", "idempotency_key", "journal_entry", "ledger_posting", "ledger_account", "wallet_transaction"];

/** One pair of `side` through `base`: the two answers (status and `data`, ids, keys and times masked) as JSON. */
export async function tradingPair(base: string, lane: TradingLane, ownerKey: string, side: "buy" | "sell"): Promise<string> {
  const headers = { "x-api-key": ownerKey, "content-type": "application/json" };
  const mask = (d: Record<string, unknown>, keys: string[]): Record<string, unknown> => ({ ...d, ...Object.fromEntries(keys.filter((k) => k in d).map((k) => [k, "…"])) });
  const q = await fetch(`${base}/api/v1/users/${lane.userId}/quotes`, { method: "POST", headers, body: quoteBody(lane, side) });
  const qb = (await q.json()) as { data?: Record<string, unknown>; errors?: unknown };
  const o = await fetch(`${base}/api/v1/users/${lane.userId}/orders`, { method: "POST", headers, body: JSON.stringify({ quote_id: qb.data?.quote_id }) });
  const ob = (await o.json()) as { data?: Record<string, unknown>; errors?: unknown };
  return JSON.stringify([
    q.status,
    qb.data ? mask(qb.data, ["quote_id", "expires_at", "created_at"]) : qb.errors,
    o.status,
    ob.data ? mask(ob.data, ["order_id", "quote_id", "trade_id", "idempotency_key", "created_at"]) : ob.errors,
  ]);
}

/**
 * A first pair through the service (it creates the liquidity and fees accounts), then one buy pair
 * through the service and one through the baseline, on the same wallet.
 * @returns the rows one pair writes per table.
 * @throws when an answer is not 201, the answers differ, or the sides write different rows.
 */
export async function checkTradingPair(databaseUrl: string, service: string, baseline: string, lane: TradingLane, ownerKey: string): Promise<Record<string, number>> {
  const opening = await tradingPair(service, lane, ownerKey, "sell");
  if (!opening.startsWith("[201,") || !opening.includes(",201,")) throw new Error(`the first quote + order pair failed: ${opening}`);
  const sides = [];
  for (const base of [service, baseline]) sides.push(await rowsWrittenBy(databaseUrl, TABLES, () => tradingPair(base, lane, ownerKey, "buy")));
  const [a, b] = sides as [{ rows: Record<string, number>; value: string }, { rows: Record<string, number>; value: string }];
  if (!a.value.startsWith("[201,") || !a.value.includes(",201,") || a.value !== b.value) throw new Error(`a quote + order pair answers differently:\n  service  ${a.value}\n  baseline ${b.value}`);
  if (JSON.stringify(a.rows) !== JSON.stringify(b.rows)) throw new Error(`a pair writes different rows: service ${JSON.stringify(a.rows)}, baseline ${JSON.stringify(b.rows)}`);
  lane.next = "sell";
  return a.rows;
}

/** What the scenario needs from the benchmark. */
export interface TradingScenario {
  service: Target;
  baseline: Target;
  lanes: readonly TradingLane[];
  ownerKey: string;
  databaseUrl: string;
  servers: ServerProcess[];
  /** scripts/bench/report.ts `alternator`'s runner. */
  alternate: (label: string, sides: SideRun[], servers: ServerProcess[]) => Promise<void>;
}

/** The rows and their footnotes. */
export interface TradingReport {
  rows: Row[];
  notes: string[];
  /** The ledger's problems after the load (empty: consistent). */
  problems: string[];
}

/**
 * Runs the levels interleaved in each round (service 4, same SQL 4, service 16, …), sampling
 * PostgreSQL's activity during each run, then checks the ledger's invariants.
 */
export async function runTradingScenario(s: TradingScenario): Promise<TradingReport> {
  const levels = TRADING_LEVELS.map((level) => ({ level, service: new Side(`service ${level}`), baseline: new Side(`same SQL ${level}`) }));
  const run = (t: Target, level: number) => async (seconds: number) => {
    const sampler = new ActivitySampler(s.databaseUrl);
    await sampler.start();
    const result = await runTradingPairs(t, s.lanes, s.ownerKey, seconds, level);
    return { ...result, activity: await sampler.stop() };
  };
  await s.alternate(
    `quote + order pairs, ${TRADING_LEVELS.join(", ")} in flight, interleaved`,
    levels.flatMap((l) => [
      { side: l.service, run: run(s.service, l.level) },
      { side: l.baseline, run: run(s.baseline, l.level) },
    ]),
    s.servers,
  );
  const report: TradingReport = { rows: [], notes: [], problems: [] };
  for (const { level, service, baseline } of levels) {
    report.rows.push(compareRow(`quote + order, ${level} in flight (pairs/s, pair latency)`, service, baseline, level === TRADING_TARGET_LEVEL ? TRADING_TARGET : null));
    const steps = (side: Side): string => side.steps.replace("initiate", "quote").replace(/, mail [^,]*/, "").replace("confirm", "order");
    report.notes.push(
      `${level} in flight: CPU client/server/postgres service ${service.cpu}, same SQL ${baseline.cpu}, CPU/pair ratio ${fmt(baseline.cpuMs / service.cpuMs, 2)}; ` +
        `calls (median ms) service ${steps(service)}, same SQL ${steps(baseline)}; PostgreSQL: service ${service.locks}; same SQL ${baseline.locks}; ` +
        `spread service ${service.spread}, same SQL ${baseline.spread}`,
    );
  }
  report.problems = await ledgerProblems(s.databaseUrl);
  report.notes.push(`ledger invariants after the load (LedgerService.verify's queries: balanced per entry and per currency, caches right, nothing negative): ${report.problems.length === 0 ? "hold" : report.problems.join("; ")}`);
  return report;
}
