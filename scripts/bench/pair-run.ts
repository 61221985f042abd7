/**
 * The run of a `BENCH_ONLY` pair bench (authorizations, trading; scripts/bench.ts dispatches here
 * through scripts/bench/authorizations-run.ts and trading-run.ts; docs/performance.md "HTTP: `npm
 * run bench`"): one start of the service (untimed) on the migrated database, the tenant seeded
 * through the API (scripts/bench/seed.ts, then the bench's own lanes), its baseline server, one
 * pair on each side compared, the load, the invariants the bench checks and `npm run
 * ledger:check`, then the table and its footnotes on stdout.
 */
import { cpus, loadavg } from "node:os";
import { runLedgerCheck } from "./checks.js";
import type { BenchDatabase } from "./database.js";
import type { Target } from "./load.js";
import { BENCH_RATE_LIMITS_SAID, benchServiceEnv, startServer, type ServerProcess } from "./processes.js";
import { fmt, printTable, type Row, type SideRun, type Timing } from "./report.js";
import { seed, type Seed } from "./seed.js";

/** What the run needs from scripts/bench.ts. */
export interface PairRun {
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

/** What one pair bench brings: its seed, baseline, check, load and footnotes. */
export interface PairBench<Lane> {
  /** What the tenant is seeded with (scripts/bench/seed.ts). */
  seed: { users: number; products: number };
  /** The bench's lanes (one per pair in flight), seeded through the API. */
  lanes(base: string, seeded: Seed): Promise<Lane[]>;
  /** The baseline's server script. */
  baselineScript: string;
  /** What the missing first lane is called in the error. */
  laneName: string;
  /** One pair on each side: the same answers and the same rows written. @returns the rows by table. */
  checkPair(databaseUrl: string, service: string, baseline: string, lane: Lane, ownerKey: string): Promise<Record<string, number>>;
  /** The load on both sides. */
  scenario(s: { service: Target; baseline: Target; lanes: readonly Lane[]; ownerKey: string; databaseUrl: string; servers: ServerProcess[]; alternate: PairRun["alternate"] }): Promise<{
    rows: Row[];
    notes: string[];
    problems: string[];
  }>;
  /** How the broken-run line names the invariants' problems. */
  problemsLabel: string;
  /** The pairs in flight of each level. */
  levels: readonly number[];
  /** What the rates count (default `pairs`). */
  unit?: string;
  /** The footnote that says what a pair is, given the rows one pair writes. */
  pairsNote(writes: Record<string, number>): string;
}

/** Runs `bench`. @returns what broke the run (empty: a trusted run). */
export async function runPairBench<Lane>(r: PairRun, bench: PairBench<Lane>): Promise<string[]> {
  const broken: string[] = [];
  const serviceEnv = benchServiceEnv(r.db.url, r.secretsKey, r.masterKey);
  const service = await startServer("service", r.cmd.args, serviceEnv);
  r.children.push(service);
  r.log("seeding through the API…");
  const seeded = await seed(service.base, r.masterKey, bench.seed);
  const lanes = await bench.lanes(service.base, seeded);
  const baseline = await startServer("baseline", ["--import", "tsx", bench.baselineScript], { DATABASE_URL: r.db.url, SECRETS_KEY: r.secretsKey });
  r.children.push(baseline);
  const first = lanes[0];
  if (first === undefined) throw new Error(`no ${bench.laneName} seeded`);
  r.log("checking that a pair on each side answers the same and writes the same rows…");
  const writes = await bench.checkPair(r.db.url, service.base, baseline.base, first, seeded.ownerKey);
  const unit = bench.unit ?? "pairs";
  r.log(`load (${unit}/s, latency, CPU % of one core of the client = this process, of the server and of PostgreSQL):`);
  const report = await bench.scenario({
    service: { base: service.base, pid: service.pid, dbPid: r.db.serverPid },
    baseline: { base: baseline.base, pid: baseline.pid, dbPid: r.db.serverPid },
    lanes,
    ownerKey: seeded.ownerKey,
    databaseUrl: r.db.url,
    servers: r.children,
    alternate: r.alternate,
  });
  if (report.problems.length > 0) broken.push(`${bench.problemsLabel}: ${report.problems.join(", ")}`);
  const ledger = await runLedgerCheck(serviceEnv);
  if (!ledger.clean) broken.push(`npm run ledger:check after the load: ${ledger.verdict}`);
  for (const row of report.rows) if (row.ok.startsWith("BROKEN")) broken.push(`${row.scenario}: ${row.ok}`);

  const t = r.timing;
  const load1 = loadavg();
  console.log("");
  printTable(report.rows);
  console.log("");
  console.log(
    `Ratio = service / baseline (${unit}/s). Medians of ${t.rounds} runs of ${t.seconds} s per side after ${t.warmup} s of warm-up, sides and levels alternating; autocannon on loopback, ${bench.levels.join(", ")} connections = ${unit} in flight.`,
  );
  console.log(bench.pairsNote(writes));
  console.log(`Service: ${r.cmd.label}, Node ${process.version}, ROLE=api, LOG_LEVEL=silent, ${BENCH_RATE_LIMITS_SAID}; its ORM pool 10. Baseline: bare node:http + pg.Pool(10), same Node, same database.`);
  console.log(`Database: ${r.db.description}. Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}; load average ${r.began.load0.map((l) => l.toFixed(2)).join(" ")} before, ${load1.map((l) => l.toFixed(2)).join(" ")} after (other work on the machine shifts the figures).`);
  for (const note of report.notes) console.log(`- ${note}`);
  console.log(`Ledger: npm run ledger:check on the benchmark's database after the load: ${ledger.verdict}`);
  console.log(`Run: ${fmt((performance.now() - r.began.at) / 1000)} s in all.`);
  return broken;
}
