/**
 * `npx tsx scripts/bench/capture-trading.ts`: prints every SQL statement the service runs for one
 * quote + order pair of the trading rows of `npm run bench` (BENCH_ONLY=trading; docs/performance.md
 * "Trading"), then the baseline's (scripts/bench/baseline-trading.ts), and checks that the baseline
 * runs the service's statements: same sequence once literals, bound parameters and numbers are
 * masked (as scripts/bench/capture-authorizations.ts does). Exit status 1 when they differ. It
 * builds the real app in this process (createApp, `ROLE=api`, rate limits off) on a throw-away
 * embedded PostgreSQL, wraps `pg.Client.prototype.query`, seeds the tenant as the benchmark does
 * (scripts/bench/seed.ts, then scripts/bench/trading-load.ts `seedTradingLanes`), sends a first pair to the service (it creates
 * the liquidity and fees accounts, once per installation; not compared), then a buy pair and a sell
 * pair to each side.
 */
import { createServer } from "node:http";
import pg from "pg";
import { tradingBaselineListener } from "./baseline-trading.js";
import { CAPTURE_MASTER, CAPTURE_SECRETS_KEY, captureAgainstApp, compareStatements, listening, showCall } from "./capture.js";
import { seed } from "./seed.js";
import { quoteBody, seedTradingLanes, type TradingLane } from "./trading-load.js";

/** One quote + order of `side` through `base`; prints and records the statements of each call under `<side> quote|order`. */
async function pair(who: string, base: string, lane: TradingLane, ownerKey: string, side: "buy" | "sell", into: Map<string, string[]>): Promise<void> {
  const post = (body: string): RequestInit => ({ method: "POST", headers: { "x-api-key": ownerKey, "content-type": "application/json" }, body });
  const q = await showCall(into, who, `${side} quote`, base, `/api/v1/users/${lane.userId}/quotes`, post(quoteBody(lane, side)));
  const quoteId = (q.data as { quote_id: string }).quote_id;
  await showCall(into, who, `${side} order`, base, `/api/v1/users/${lane.userId}/orders`, post(JSON.stringify({ quote_id: quoteId })));
}

await captureAgainstApp("bench-capture-trading-", async ({ base, databaseUrl }) => {
  const seeded = await seed(base, CAPTURE_MASTER, { users: 1, products: 0 });
  const ownerKey = seeded.ownerKey;
  const lanes = await seedTradingLanes(base, seeded);
  const lane = lanes[0] as TradingLane;
  // A first pair creates the liquidity and fees accounts (once per installation): not compared.
  await pair("service (first pair, creates the liquidity and fees accounts)", base, lane, ownerKey, "buy", new Map());
  const ofService = new Map<string, string[]>();
  for (const side of ["buy", "sell"] as const) await pair("service", base, lane, ownerKey, side, ofService);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const baselineServer = createServer(tradingBaselineListener(pool, CAPTURE_SECRETS_KEY)).listen(0, "127.0.0.1");
  const baselineBase = await listening(baselineServer);
  const ofBaseline = new Map<string, string[]>();
  for (const side of ["buy", "sell"] as const) await pair("baseline", baselineBase, lane, ownerKey, side, ofBaseline);
  const differences = compareStatements("quote and order", ["buy quote", "buy order", "sell quote", "sell order"], ofService, ofBaseline);
  await new Promise<void>((r) => baselineServer.close(() => r()));
  await pool.end();
  return differences;
});
