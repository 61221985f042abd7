/**
 * `BENCH_ONLY=trading npm run bench` (scripts/bench.ts dispatches here; docs/performance.md
 * "Trading"), run by scripts/bench/pair-run.ts: the tenant seeded with {@link TRADING_WALLETS}
 * VERIFIED users, then scripts/bench/trading-load.ts `seedTradingLanes` (a btc + usdt wallet each);
 * the baseline scripts/bench/baseline-trading-server.ts; the load of scripts/bench/trading.ts,
 * then the ledger's invariants.
 */
import { runPairBench, type PairRun } from "./pair-run.js";
import { checkTradingPair, runTradingScenario, TRADING_LEVELS, TRADING_WALLETS } from "./trading.js";
import { seedTradingLanes, TOP_UP, TRADE_BTC } from "./trading-load.js";

/** What the run needs from scripts/bench.ts. */
export type TradingRun = PairRun;

/** @returns what broke the run (empty: a trusted run). */
export function runTradingBench(r: TradingRun): Promise<string[]> {
  return runPairBench(r, {
    seed: { users: TRADING_WALLETS, products: 0 },
    lanes: seedTradingLanes,
    baselineScript: "scripts/bench/baseline-trading-server.ts",
    laneName: "trading wallet",
    checkPair: checkTradingPair,
    scenario: runTradingScenario,
    problemsLabel: "ledger after the trading load",
    levels: TRADING_LEVELS,
    pairsNote: (writes) =>
      `Pairs: POST /api/v1/users/{u}/quotes (owner key, BTCUSDT, ${TRADE_BTC} BTC, buy and sell alternating per wallet) → 201, then POST /api/v1/users/{u}/orders {quote_id} → 201 FILLED; ` +
      `a pair in flight holds one of ${TRADING_WALLETS} wallets, one user each (one per pair in flight at ${Math.max(...TRADING_LEVELS)}: an order locks its wallet's two available accounts, so pairs on one wallet would queue on them), each topped up with ${TOP_UP.btc} BTC and ${TOP_UP.usdt} USDT; pairs/s counts filled orders, latency is of the whole pair. ` +
      `The baseline runs the service's own 4 + 12 statements in the same transactions and order (scripts/bench/baseline-trading.ts; npx tsx scripts/bench/capture-trading.ts compares them); one pair answers the same and writes the same rows on both sides (${JSON.stringify(writes)}).`,
  });
}
