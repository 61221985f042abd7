/**
 * `BENCH_ONLY=replication` (scripts/bench.ts dispatches here; docs/performance.md "Replication"):
 * what synchronous replication costs the writes. The withdrawal pair (initiate → code from the
 * sandbox outbox → confirm) and the transfer, each at {@link REPLICATION_LEVEL} in flight, on a
 * service whose DATABASE_URL goes through HAProxy to the three-node Patroni cluster of production
 * (synchronous_mode_strict: each COMMIT waits for a synchronous standby; tests/support/ha-cluster.ts,
 * the templates of ops/ha/), against the same runs on a service on one PostgreSQL of the same
 * binaries (Debian's PostgreSQL 15, initialised and configured as Patroni does: data checksums,
 * wal_log_hints, wal_level replica, max_connections 200), with no standby and no proxy. Both
 * services run at once, each on its own database, seeded alike; the sides alternate. Ratio = three
 * nodes / one node; target ≥ {@link REPLICATION_TARGET}. Then the ledger's invariants and `npm run
 * ledger:check` on both databases.
 *
 * Needs the Debian packages `patroni`, `etcd-server`, `haproxy` and `postgresql-15` (.ci/run
 * installs them); as root, PostgreSQL runs as the user `postgres`.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../../src/db/embedded.js";
import { HaCluster, HA_TIMING } from "../../tests/support/ha-cluster.js";
import { ledgerProblems, runLedgerCheck } from "./checks.js";
import { runTransfers, runWithdrawals, type Target } from "./load.js";
import { BENCH_RATE_LIMITS_SAID, benchServiceEnv, startServer, type ServerProcess } from "./processes.js";
import { compareRow, fmt, printTable, Side, type Row } from "./report.js";
import type { PairRun } from "./pair-run.js";
import { seed, type Seed } from "./seed.js";

/** Pairs (or transfers) in flight. */
export const REPLICATION_LEVEL = 16;
/** The target ratio, three nodes / one node. */
export const REPLICATION_TARGET = 0.6;
const PG_BIN_DIR = "/usr/lib/postgresql/15/bin";
const DATABASE = "bench";

/** What the run needs from scripts/bench.ts: a pair run's needs but its database (it starts its own servers). */
export type ReplicationRun = Omit<PairRun, "db">;

/** One PostgreSQL 15 of Debian's binaries, as Patroni would configure a node, with no standby. */
interface SinglePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  /** The postmaster's pid (for its CPU time). */
  pid: number;
  stop(): Promise<void>;
}

/** The uid and gid of `postgres` when this process is root (PostgreSQL refuses to run as root); undefined otherwise. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return {
    uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim()),
    gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim()),
  };
}

/** Initialises and starts {@link SinglePostgres} in a temporary folder. @throws with its output when it does not start. */
async function startSinglePostgres(): Promise<SinglePostgres> {
  const user = postgresUser();
  const dir = mkdtempSync(join(tmpdir(), "bench-single-pg-"));
  chmodSync(dir, 0o755);
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, "data");
  const as = user ? { uid: user.uid, gid: user.gid } : {};
  execFileSync(join(PG_BIN_DIR, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--data-checksums"], { ...as, stdio: "ignore" });
  const port = await freePort();
  const child: ChildProcess = spawn(join(PG_BIN_DIR, "postgres"), [
    "-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200",
    "-c", "wal_level=replica", "-c", "wal_log_hints=on", "-c", "hot_standby=on", "-c", "max_wal_senders=10", "-c", "wal_keep_size=256MB",
  ], { ...as, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (output += c.toString()));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`PostgreSQL 15 exited (${child.exitCode}):\n${output}`);
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => {});
    const up = await client.connect().then(() => true, () => false);
    await client.end().catch(() => {});
    if (up) break;
    if (Date.now() > deadline) throw new Error(`PostgreSQL 15 did not accept connections within 30 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid as number,
    async stop() {
      if (child.exitCode === null) {
        const exited = once(child, "exit");
        child.kill("SIGINT"); // fast shutdown
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates {@link DATABASE} on the server of `adminUrl`. @returns its URL. */
async function createDatabase(adminUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create database ${DATABASE}`);
  } finally {
    await client.end().catch(() => {});
  }
  const url = new URL(adminUrl);
  url.pathname = `/${DATABASE}`;
  return url.toString();
}

/** One side of the comparison: its database, its service and its seed. */
interface Deployment {
  name: string;
  url: string;
  service: ServerProcess;
  target: Target;
  seeded: Seed;
  env: Record<string, string>;
}

/** Starts a service on `url` (a first start applies the migrations) and seeds it through the API. */
async function deploy(r: ReplicationRun, name: string, url: string, dbPid: number | undefined): Promise<Deployment> {
  const env = benchServiceEnv(url, r.secretsKey, r.masterKey);
  const service = await startServer(`service (${name})`, r.cmd.args, env);
  r.children.push(service);
  r.log(`seeding ${name} through the API…`);
  const seeded = await seed(service.base, r.masterKey, { users: REPLICATION_LEVEL, products: 0, transferPairs: REPLICATION_LEVEL });
  return { name, url, service, target: { base: service.base, pid: service.pid, dbPid }, seeded, env };
}

/** Runs the replication rows. @returns what broke the run (empty: a trusted run). */
export async function runReplicationBench(r: ReplicationRun): Promise<string[]> {
  const broken: string[] = [];
  r.log("one PostgreSQL 15, and the three-node Patroni cluster behind HAProxy…");
  const single = await startSinglePostgres();
  let cluster: HaCluster | undefined;
  try {
    cluster = await HaCluster.start();
    const one = await deploy(r, "one node", await createDatabase(single.url), single.pid);
    const three = await deploy(r, "three nodes", await createDatabase(cluster.url()), undefined);
    const sides = {
      pairsOne: new Side(`one node pairs ${REPLICATION_LEVEL}`),
      pairsThree: new Side(`three nodes pairs ${REPLICATION_LEVEL}`),
      transfersOne: new Side(`one node transfers ${REPLICATION_LEVEL}`),
      transfersThree: new Side(`three nodes transfers ${REPLICATION_LEVEL}`),
    };
    r.log(`load (pairs/s or transfers/s, latency, CPU % of one core of the client = this process, of the server and of PostgreSQL (one node only)):`);
    await r.alternate(
      `withdrawal pairs and transfers, ${REPLICATION_LEVEL} in flight, one node and three nodes alternating`,
      [
        { side: sides.pairsOne, run: (s) => runWithdrawals(one.target, one.seeded.users, one.seeded.ownerKey, s, REPLICATION_LEVEL) },
        { side: sides.pairsThree, run: (s) => runWithdrawals(three.target, three.seeded.users, three.seeded.ownerKey, s, REPLICATION_LEVEL) },
        { side: sides.transfersOne, run: (s) => runTransfers(one.target, one.seeded.transferPairs, s, REPLICATION_LEVEL) },
        { side: sides.transfersThree, run: (s) => runTransfers(three.target, three.seeded.transferPairs, s, REPLICATION_LEVEL) },
      ],
      r.children,
    );
    const rows: Row[] = [
      compareRow(`withdrawal pairs, ${REPLICATION_LEVEL} in flight: three nodes / one (pairs/s, latency)`, sides.pairsThree, sides.pairsOne, REPLICATION_TARGET),
      compareRow(`transfers, ${REPLICATION_LEVEL} in flight: three nodes / one (transfers/s, latency)`, sides.transfersThree, sides.transfersOne, REPLICATION_TARGET),
    ];
    for (const row of rows) if (row.ok.startsWith("BROKEN")) broken.push(`${row.scenario}: ${row.ok}`);
    const ledgers: string[] = [];
    for (const d of [one, three]) {
      const problems = await ledgerProblems(d.url);
      if (problems.length > 0) broken.push(`the ledger's invariants on ${d.name}: ${problems.join(", ")}`);
      const ledger = await runLedgerCheck(d.env);
      if (!ledger.clean) broken.push(`npm run ledger:check on ${d.name}: ${ledger.verdict}`);
      ledgers.push(`${d.name}: ${ledger.verdict}`);
    }
    const members = (await cluster.members()) ?? [];
    const t = r.timing;
    const load1 = loadavg();
    console.log("");
    printTable(rows);
    console.log("");
    console.log(
      `Ratio = three nodes / one node ("baseline" = one node). Medians of ${t.rounds} runs of ${t.seconds} s per side after ${t.warmup} s of warm-up, the four sides alternating; autocannon on loopback, ${REPLICATION_LEVEL} connections = pairs (or transfers) in flight.`,
    );
    console.log(
      `Three nodes: Patroni ${HA_TIMING.ttl}/${HA_TIMING.loopWait}/${HA_TIMING.retryTimeout} (ttl/loop_wait/retry_timeout), synchronous_mode_strict, members ${members.map((m) => `${m.name} ${m.role}`).join(", ")}, ` +
        `all on this machine; DATABASE_URL through HAProxy (ops/ha/haproxy.cfg.template). One node: the same PostgreSQL 15 binaries and settings, no standby, no proxy.`,
    );
    console.log(`Services: ${r.cmd.label}, Node ${process.version}, ROLE=api, LOG_LEVEL=silent, ${BENCH_RATE_LIMITS_SAID}; ORM pool 10 each; both up for the whole run.`);
    console.log(`Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}; load average ${r.began.load0.map((l) => l.toFixed(2)).join(" ")} before, ${load1.map((l) => l.toFixed(2)).join(" ")} after (other work on the machine shifts the figures).`);
    console.log(`- withdrawal pair calls (median ms): one node ${sides.pairsOne.steps}; three nodes ${sides.pairsThree.steps}`);
    for (const s of Object.values(sides)) console.log(`- ${s.name}: ${s.spread}/s over the runs; CPU client/server/postgres ${s.cpu}`);
    console.log(`Ledger: npm run ledger:check after the load: ${ledgers.join("; ")}`);
    console.log(`Run: ${fmt((performance.now() - r.began.at) / 1000)} s in all.`);
  } finally {
    for (const child of r.children.splice(0).reverse()) await child.stop().catch(() => {});
    await cluster?.stop();
    await single.stop();
  }
  return broken;
}
