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
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";
import { loadConfig } from "../../src/config.js";
import { createApp } from "../../src/app.js";
import { tradingBaselineListener } from "./baseline-trading.js";
import { BENCH_TRANSFER_CAPS } from "./processes.js";
import { seed } from "./seed.js";
import { quoteBody, seedTradingLanes, type TradingLane } from "./trading-load.js";

const MASTER = "bench-master-key-0123456789abcdefghijklmnop";
const SECRETS_KEY = "bench-secrets-key-0123456789abcdefghijklmnop";
let log: string[] | undefined;
const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
  if (log) {
    const [first, second] = args;
    const text = typeof first === "string" ? first : (first as { text?: string }).text;
    const values = Array.isArray(second) ? second : (first as { values?: unknown[] }).values;
    log.push(`${String(text).replace(/\s+/g, " ")}${values && values.length > 0 ? `   -- ${JSON.stringify(values)}` : ""}`);
  }
  return original.apply(this, args);
};

/** A statement's shape: whitespace collapsed, string literals, `$n` parameters, numbers and `null` masked as `?`. */
const shape = (statement: string): string =>
  statement
    .replace(/ {3}-- \[.*$/, "")
    .replace(/\s+/g, " ")
    .replace(/'(?:[^']|'')*'/g, "?")
    .replace(/\$\d+/g, "?")
    .replace(/\b\d+(\.\d+)?\b/g, "?")
    .replace(/\bnull\b/g, "?")
    .trim()
    .toLowerCase();

/** One quote + order of `side` through `base`; prints and records the statements of each call under `<side> quote|order`. */
async function pair(who: string, base: string, lane: TradingLane, ownerKey: string, side: "buy" | "sell", into: Map<string, string[]>): Promise<void> {
  const show = async (label: string, path: string, body: string): Promise<Record<string, unknown>> => {
    log = [];
    const res = await fetch(`${base}${path}`, { method: "POST", headers: { "x-api-key": ownerKey, "content-type": "application/json" }, body });
    const answer = (await res.json()) as Record<string, unknown>;
    await new Promise((r) => setTimeout(r, 50));
    console.log(`\n## ${who}, ${label}: POST ${path} → ${res.status}`);
    for (const line of log) console.log(`  ${line}`);
    into.set(label, log);
    log = undefined;
    return answer;
  };
  const q = await show(`${side} quote`, `/api/v1/users/${lane.userId}/quotes`, quoteBody(lane, side));
  const quoteId = (q.data as { quote_id: string }).quote_id;
  await show(`${side} order`, `/api/v1/users/${lane.userId}/orders`, JSON.stringify({ quote_id: quoteId }));
}

const listening = async (server: Server): Promise<string> => {
  await new Promise((r) => server.once("listening", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

const dir = mkdtempSync(join(tmpdir(), "bench-capture-trading-"));
chmodSync(dir, 0o755);
const db = await startEmbeddedPostgres(dir, "capture", { persistent: false });
let differences = 0;
try {
  const config = loadConfig({
    DATABASE_URL: db.url,
    MASTER_API_KEY: MASTER,
    SECRETS_KEY,
    LOG_LEVEL: "silent",
    ROLE: "api",
    RATE_LIMIT_IP: "off",
    RATE_LIMIT_CREDENTIAL: "off",
    RATE_LIMIT_AUTH_FAILURES: "off",
    RATE_LIMIT_CODES: "off",
    TRANSFER_CAPS: BENCH_TRANSFER_CAPS,
  });
  const app = await createApp(config);
  const server = app.express.listen(0, "127.0.0.1");
  const base = await listening(server);
  const seeded = await seed(base, MASTER, { users: 1, products: 0 });
  const ownerKey = seeded.ownerKey;
  const lanes = await seedTradingLanes(base, seeded);
  const lane = lanes[0] as TradingLane;
  // A first pair creates the liquidity and fees accounts (once per installation): not compared.
  await pair("service (first pair, creates the liquidity and fees accounts)", base, lane, ownerKey, "buy", new Map());
  const ofService = new Map<string, string[]>();
  for (const side of ["buy", "sell"] as const) await pair("service", base, lane, ownerKey, side, ofService);
  const pool = new pg.Pool({ connectionString: db.url, max: 10 });
  const baselineServer = createServer(tradingBaselineListener(pool, SECRETS_KEY)).listen(0, "127.0.0.1");
  const baselineBase = await listening(baselineServer);
  const ofBaseline = new Map<string, string[]>();
  for (const side of ["buy", "sell"] as const) await pair("baseline", baselineBase, lane, ownerKey, side, ofBaseline);
  console.log("\n# quote and order: the baseline's statements against the service's");
  for (const label of ["buy quote", "buy order", "sell quote", "sell order"]) {
    const a = (ofService.get(label) ?? []).map(shape);
    const b = (ofBaseline.get(label) ?? []).map(shape);
    const wrong = Array.from({ length: Math.max(a.length, b.length) }, (_, i) => i).filter((i) => a[i] !== b[i]);
    differences += wrong.length;
    console.log(`${label}: ${wrong.length === 0 ? `the same ${a.length} statements` : `${wrong.length} differences`}`);
    for (const i of wrong) console.log(`  #${i + 1}\n    service  ${a[i] ?? "(none)"}\n    baseline ${b[i] ?? "(none)"}`);
  }
  await new Promise<void>((r) => baselineServer.close(() => r()));
  await pool.end();
  await new Promise<void>((r) => server.close(() => r()));
  await app.close();
} finally {
  await db.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(differences === 0 ? 0 : 1);
