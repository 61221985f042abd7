/**
 * `BENCH_ONLY=trading npm run bench` (scripts/bench.ts dispatches here; docs/performance.md
 * "Trading"): one start of the service (untimed) on the migrated database, the tenant seeded
 * through the API (scripts/bench/seed.ts: customer, owner key, {@link TRADING_WALLETS} VERIFIED
 * users with a btc + usdt wallet each; then scripts/bench/trading-load.ts `seedTradingLanes`), the
 * baseline (scripts/bench/baseline-trading-server.ts), one pair on each side compared, the load
 * (scripts/bench/trading.ts), the ledger's invariants and `npm run ledger:check`, then the table
 * and its footnotes on stdout.
 */
import { cpus, loadavg } from "node:os";
import { runLedgerCheck } from "./checks.js";
import type { BenchDatabase } from "./database.js";
import { BENCH_RATE_LIMITS_SAID, benchServiceEnv, startServer, type ServerProcess } from "./processes.js";
import { fmt, printTable, type SideRun, type Timing } from "./report.js";
import { seed } from "./seed.js";
import { checkTradingPair, runTradingScenario, TRADING_LEVELS, TRADING_WALLETS } from "./trading.js";
import { seedTradingLanes, TOP_UP, TRADE_BTC } from "./trading-load.js";

/** What the run needs from scripts/bench.ts. */
export interface TradingRun {
  db: BenchDatabase;
  cmd: { args: string[]; label: string };
  masterKey: string;
  secretsKey: string;
  timing: Timing;
  alternate: (label: string, sides: SideRun[], servers: ServerProcess[]) => Promise<void>;
  log: (line: string) => void;
  /** The children started here are pushed here (the caller stops them). */
  children: ServerProcess[];
  began: { at: number; load0: number[] };
}

/** @returns what broke the run (empty: a trusted run). */
export async function runTradingBench(r: TradingRun): Promise<string[]> {
  const broken: string[] = [];
  const serviceEnv = benchServiceEnv(r.db.url, r.secretsKey, r.masterKey);
  const service = await startServer("service", r.cmd.args, serviceEnv);
  r.children.push(service);
  r.log("seeding through the API…");
  const seeded = await seed(service.base, r.masterKey, { users: TRADING_WALLETS, products: 0 });
  const lanes = await seedTradingLanes(service.base, seeded);
  const baseline = await startServer("baseline", ["--import", "tsx", "scripts/bench/baseline-trading-server.ts"], { DATABASE_URL: r.db.url, SECRETS_KEY: r.secretsKey });
  r.children.push(baseline);
  const first = lanes[0];
  if (!first) throw new Error("no trading wallet seeded");
  r.log("checking that a pair on each side answers the same and writes the same rows…");
  const writes = await checkTradingPair(r.db.url, service.base, baseline.base, first, seeded.ownerKey);
  r.log("load (pairs/s, latency, CPU % of one core of the client = this process, of the server and of PostgreSQL):");
  const report = await runTradingScenario({
    service: { base: service.base, pid: service.pid, dbPid: r.db.serverPid },
    baseline: { base: baseline.base, pid: baseline.pid, dbPid: r.db.serverPid },
    lanes,
    ownerKey: seeded.ownerKey,
    databaseUrl: r.db.url,
    servers: r.children,
    alternate: r.alternate,
  });
  if (report.problems.length > 0) broken.push(`ledger after the trading load: ${report.problems.join(", ")}`);
  const ledger = await runLedgerCheck(serviceEnv);
  if (!ledger.clean) broken.push(`npm run ledger:check after the load: ${ledger.verdict}`);
  for (const row of report.rows) if (row.ok.startsWith("BROKEN")) broken.push(`${row.scenario}: ${row.ok}`);

  const t = r.timing;
  const load1 = loadavg();
  console.log("");
  printTable(report.rows);
  console.log("");
  console.log(
    `Ratio = service / baseline (pairs/s). Medians of ${t.rounds} runs of ${t.seconds} s per side after ${t.warmup} s of warm-up, sides and levels alternating; autocannon on loopback, ${TRADING_LEVELS.join(", ")} connections = pairs in flight.`,
  );
  console.log(
    `Pairs: POST /api/v1/users/{u}/quotes (owner key, BTCUSDT, ${TRADE_BTC} BTC, buy and sell alternating per wallet) → 201, then POST /api/v1/users/{u}/orders {quote_id} → 201 FILLED; ` +
      `a pair in flight holds one of ${TRADING_WALLETS} wallets, one user each (one per pair in flight at ${Math.max(...TRADING_LEVELS)}: an order locks its wallet's two available accounts, so pairs on one wallet would queue on them), each topped up with ${TOP_UP.btc} BTC and ${TOP_UP.usdt} USDT; pairs/s counts filled orders, latency is of the whole pair. ` +
      `The baseline runs the service's own 4 + 12 statements in the same transactions and order (scripts/bench/baseline-trading.ts; npx tsx scripts/bench/capture-trading.ts compares them); one pair answers the same and writes the same rows on both sides (${JSON.stringify(writes)}).`,
  );
  console.log(`Service: ${r.cmd.label}, Node ${process.version}, ROLE=api, LOG_LEVEL=silent, ${BENCH_RATE_LIMITS_SAID}; its ORM pool 10. Baseline: bare node:http + pg.Pool(10), same Node, same database.`);
  console.log(`Database: ${r.db.description}. Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}; load average ${r.began.load0.map((l) => l.toFixed(2)).join(" ")} before, ${load1.map((l) => l.toFixed(2)).join(" ")} after (other work on the machine shifts the figures).`);
  for (const note of report.notes) console.log(`- ${note}`);
  console.log(`Ledger: npm run ledger:check on the benchmark's database after the load: ${ledger.verdict}`);
  console.log(`Run: ${fmt((performance.now() - r.began.at) / 1000)} s in all.`);
  return broken;
}
