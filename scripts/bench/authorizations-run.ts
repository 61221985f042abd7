/**
 * `BENCH_ONLY=authorizations npm run bench` (scripts/bench.ts dispatches here; docs/performance.md
 * "HTTP: `npm run bench`"): one start of the service (untimed) on the migrated database, the tenant
 * seeded through the API (scripts/bench/seed.ts: customer, owner key, one VERIFIED user, the golden
 * product; then scripts/bench/authorizations.ts `seedCreditWallets`), the baseline
 * (scripts/bench/baseline-authorizations-server.ts), one pair on each side compared, the load
 * (scripts/bench/authorizations.ts), the credit invariants and `npm run ledger:check`, then the
 * table and its footnotes on stdout.
 */
import { cpus, loadavg } from "node:os";
import { AUTH_AMOUNT, AUTH_LEVELS, AUTH_WALLETS, checkAuthorizationPair, runAuthorizationScenario, seedCreditWallets } from "./authorizations.js";
import { runLedgerCheck } from "./checks.js";
import type { BenchDatabase } from "./database.js";
import { BENCH_RATE_LIMITS_SAID, benchServiceEnv, startServer, type ServerProcess } from "./processes.js";
import { fmt, printTable, type SideRun, type Timing } from "./report.js";
import { seed } from "./seed.js";

/** What the run needs from scripts/bench.ts. */
export interface AuthorizationRun {
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
export async function runAuthorizationBench(r: AuthorizationRun): Promise<string[]> {
  const broken: string[] = [];
  const serviceEnv = benchServiceEnv(r.db.url, r.secretsKey, r.masterKey);
  const service = await startServer("service", r.cmd.args, serviceEnv);
  r.children.push(service);
  r.log("seeding through the API…");
  const seeded = await seed(service.base, r.masterKey, { users: 1, products: 1 });
  const lanes = await seedCreditWallets(service.base, seeded, AUTH_WALLETS);
  const baseline = await startServer("baseline", ["--import", "tsx", "scripts/bench/baseline-authorizations-server.ts"], { DATABASE_URL: r.db.url, SECRETS_KEY: r.secretsKey });
  r.children.push(baseline);
  const first = lanes[0];
  if (!first) throw new Error("no credit wallet seeded");
  r.log("checking that a pair on each side answers the same and writes the same rows…");
  const writes = await checkAuthorizationPair(r.db.url, service.base, baseline.base, first, seeded.ownerKey);
  r.log("load (pairs/s, latency, CPU % of one core of the client = this process, of the server and of PostgreSQL):");
  const report = await runAuthorizationScenario({
    service: { base: service.base, pid: service.pid, dbPid: r.db.serverPid },
    baseline: { base: baseline.base, pid: baseline.pid, dbPid: r.db.serverPid },
    lanes,
    ownerKey: seeded.ownerKey,
    databaseUrl: r.db.url,
    servers: r.children,
    alternate: r.alternate,
  });
  if (report.problems.length > 0) broken.push(`credit invariants after the authorizations: ${report.problems.join(", ")}`);
  const ledger = await runLedgerCheck(serviceEnv);
  if (!ledger.clean) broken.push(`npm run ledger:check after the load: ${ledger.verdict}`);
  for (const row of report.rows) if (row.ok.startsWith("BROKEN")) broken.push(`${row.scenario}: ${row.ok}`);

  const t = r.timing;
  const load1 = loadavg();
  console.log("");
  printTable(report.rows);
  console.log("");
  console.log(
    `Ratio = service / baseline (pairs/s). Medians of ${t.rounds} runs of ${t.seconds} s per side after ${t.warmup} s of warm-up, sides and levels alternating; autocannon on loopback, ${AUTH_LEVELS.join(", ")} connections = pairs in flight.`,
  );
  console.log(
    `Pairs: POST /v2/wallet/credits/{w}/authorizations (owner key, a fresh Idempotency-Key, ${AUTH_AMOUNT} cents) → 201 approved, then POST …/{id}/capture (whole) → 200; ` +
      `a pair in flight holds one of ${AUTH_WALLETS} wallets of the golden product (one per pair in flight at ${Math.max(...AUTH_LEVELS)}: an authorization and a capture lock their wallet's row, so pairs on one wallet would queue on it); pairs/s counts captures, latency is of the whole pair. ` +
      `The baseline runs the service's own 8 + 7 statements in the same transactions and order (scripts/bench/baseline-authorizations.ts; npx tsx scripts/bench/capture-authorizations.ts compares them); one pair answers the same and writes the same rows on both sides (${JSON.stringify(writes)}).`,
  );
  console.log(`Service: ${r.cmd.label}, Node ${process.version}, ROLE=api, LOG_LEVEL=silent, ${BENCH_RATE_LIMITS_SAID}; its ORM pool 10. Baseline: bare node:http + pg.Pool(10), same Node, same database.`);
  console.log(`Database: ${r.db.description}. Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}; load average ${r.began.load0.map((l) => l.toFixed(2)).join(" ")} before, ${load1.map((l) => l.toFixed(2)).join(" ")} after (other work on the machine shifts the figures).`);
  for (const note of report.notes) console.log(`- ${note}`);
  console.log(`Ledger: npm run ledger:check on the benchmark's database after the load: ${ledger.verdict}`);
  console.log(`Run: ${fmt((performance.now() - r.began.at) / 1000)} s in all.`);
  return broken;
}
