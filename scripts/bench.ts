/**
 * `npm run bench`: request throughput of the service against physical baselines (docs/performance.md "HTTP:
 * `npm run bench`"; not part of `npm test`). Prints one table — scenario | req/s | p50 ms | p99 ms |
 * baseline req/s | ratio | target | ok? — and footnotes. Exit status 0 whatever the targets say (it
 * is a report); 1 when the run is broken: a setup step failed, a baseline does not answer what the
 * service answers, a response had an unexpected status (or a connection error or timeout) during
 * the load, or the ledger is inconsistent after the withdrawals.
 *
 * What it does:
 * 1. A fresh database: `bench_<random>` on the server of `DATABASE_URL` when set, else on one
 *    embedded PostgreSQL started for the run (scripts/bench/database.ts); dropped at the end.
 * 2. The service as a child process on a free loopback port: `node dist/main.js` when built, else
 *    `node --import tsx src/main.ts`, with the Node running this script (24), on that database with
 *    fresh `SECRETS_KEY` and `MASTER_API_KEY`, `ROLE=api` (no background jobs competing),
 *    `LOG_LEVEL=silent` and the four rate limits off (`RATE_LIMIT_IP`, `RATE_LIMIT_CREDENTIAL`,
 *    `RATE_LIMIT_AUTH_FAILURES`, `RATE_LIMIT_CODES`: the per-address bucket alone would hold one
 *    client to 100 req/s). A first start applies the migrations; then three timed starts on the
 *    migrated database (spawn → first `/healthz` 200; the median is reported); the third one stays
 *    up for the load: its VmRSS (/proc) right when ready and after all the load, and the number of
 *    processes in its tree.
 * 3. Seeds through the real API (scripts/bench/seed.ts, the docs/walkthrough.md steps): operator session,
 *    customer, owner credential, 32 VERIFIED users with a token and a wallet holding a 1 BTC sandbox
 *    deposit each, three credit products.
 * 4. The baselines, child processes of the same Node: scripts/bench/baseline-server.ts (bare
 *    `node:http` + a raw `pg.Pool` of 10, the service's pool size; its docstring gives every
 *    statement) and scripts/bench/express-server.ts (bare express 5, `/healthz` only). Before any
 *    load, each scenario's answer of the service and of its baseline are compared (`data`, status);
 *    one withdrawal pair on each must write the same rows.
 * 5. Each scenario with autocannon (programmatic, loopback, 32 connections): a warm-up of each side,
 *    then rounds alternating service, baseline(s), service, baseline(s)…; the table gives medians.
 *    - currencies (owner key), balance (owner key), balance (user token), `GET /v2/credit-products`
 *      (owner key; the credit core's access rule: owner key for listing, master key for writes);
 *    - `/healthz` against bare node:http, and against bare express 5 (informative);
 *    - `GET /api/v1/currencies` without credentials: the service's 401 runs the whole framework
 *      (express, openapi-backend routing and security) and no query: framework cost alone;
 *    - withdrawals with 4, 16 and 32 in flight: initiate → code from the sandbox outbox (docs/walkthrough.md
 *      step 11) → confirm, one user per pair in flight; confirmed pairs per second, pair latency.
 *      The levels are interleaved in each round (service 4, baseline 4, service 16, … service 4…),
 *      so that each level meets the tables at about the same size (the outbox read grows with them).
 *      The baseline runs the very statements the service runs (captured with
 *      scripts/bench/capture-sql.ts; listed in the baseline's docstring), one transaction per call.
 *      "Rising" means each level's pairs/s at least 5 % above the previous level's. The footnotes give each
 *      call's median latency and what PostgreSQL's backends did (pg_stat_activity sampled every
 *      50 ms: busy, waiting on a lock, and in which statement); the ledger's invariants are
 *      checked after the withdrawals.
 *    Footnotes: the CPU each side used (client = this process, and the server), and a cross-check
 *    of /healthz and the 401 with wrk (C, one thread), where autocannon's own CPU can cap the bare
 *    baselines.
 * 6. The hostile-neighbour rows (scripts/bench/hostile.ts), on a service of their own started
 *    after the table with a shorter `REQUEST_TIMEOUT_S`: another tenant's paced reads while
 *    anonymous clients post 1 MiB bodies, the service's RSS while 300 sockets stall half-way
 *    through 1 MiB bodies, and another tenant's reads while one tenant drives its sandbox clock
 *    ten years at a time; each figure next to the same figure without the attack, in a second table.
 *
 * Reproduce: `npm run bench` (about 5.5 minutes: 19 sides × (1 + 3 × 3) s of load, 8 wrk runs of
 * 2 s, the starts and the seeding, then about 1.5 minutes of hostile-neighbour rows). Quick runs and overrides:
 *   BENCH_SECONDS=2 BENCH_ROUNDS=1 npm run bench
 *   - `BENCH_SECONDS` (3): seconds of each measured run;
 *   - `BENCH_ROUNDS` (3): measured runs of each side of each scenario;
 *   - `BENCH_WARMUP` (1): seconds of the warm-up of each side of each scenario;
 *   - `BENCH_ONLY` (unset: both): `main` for the table against the baselines alone, `hostile` for the
 *     hostile-neighbour rows alone;
 *   - `DATABASE_URL`: use this PostgreSQL server (a throw-away database is created and dropped on it).
 * The figures depend on the machine and on what else runs on it (the load average is printed).
 */
import { randomBytes } from "node:crypto";
import { cpus, loadavg } from "node:os";
import pg from "pg";
import { ActivitySampler } from "./bench/activity.js";
import { createBenchDatabase, type BenchDatabase } from "./bench/database.js";
import { runRequests, runWithdrawals, runWrk, type RunResult, type Target } from "./bench/load.js";
import { HOSTILE_REQUEST_TIMEOUT_S, printHostileTable, runHostile } from "./bench/hostile.js";
import { benchServiceEnv, processTree, serviceCommand, startServer, statusKb, type ServerProcess } from "./bench/processes.js";
import { seed, WITHDRAWAL_ADDRESS, WITHDRAWAL_BTC, type Seed, type SeededUser } from "./bench/seed.js";

const numberEnv = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
};

const SECONDS = numberEnv("BENCH_SECONDS", 3);
const ROUNDS = Math.round(numberEnv("BENCH_ROUNDS", 3));
const WARMUP = numberEnv("BENCH_WARMUP", 1);
const CONNECTIONS = 32;
const LEVELS = [4, 16, 32] as const;
const TARGET_LEVEL = 16;
/** "Rising": each level's pairs/s at least 5 % above the previous level's (less is within the noise of 3 s runs). */
const RISING = 1.05;
const WRK_ROUNDS = 2;
const WRK_SECONDS = 2;
/** `BENCH_ONLY`: `main` (the table against the baselines), `hostile` (the hostile-neighbour rows), unset: both. */
const ONLY = ((): "main" | "hostile" | "all" => {
  const raw = process.env.BENCH_ONLY ?? "";
  if (raw === "") return "all";
  if (raw === "main" || raw === "hostile") return raw;
  throw new Error(`BENCH_ONLY must be "main" or "hostile", got "${raw}"`);
})();
const MASTER_KEY = `bench-master-${randomBytes(24).toString("hex")}`;
const SECRETS_KEY = `bench-secrets-${randomBytes(24).toString("hex")}`;

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const median = (values: number[]): number => {
  const sorted = [...values].filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** The measured runs of one side of a scenario, with every unexpected answer of its runs (warm-up included). */
class Side {
  runs: RunResult[] = [];
  unexpected: Record<string, number> = {};
  constructor(readonly name: string) {}
  add(run: RunResult, measured: boolean): void {
    if (measured) this.runs.push(run);
    for (const [k, v] of Object.entries(run.unexpected)) this.unexpected[k] = (this.unexpected[k] ?? 0) + v;
  }
  get rate(): number {
    return median(this.runs.map((r) => r.rate));
  }
  get p50(): number {
    return median(this.runs.map((r) => r.p50));
  }
  get p99(): number {
    return median(this.runs.map((r) => r.p99));
  }
  /** Withdrawals: median ms of each call of a pair, over the measured runs. */
  get steps(): string {
    const of = (k: "initiate" | "mail" | "confirm"): string => median(this.runs.map((r) => r.steps?.[k] ?? Number.NaN)).toFixed(1);
    return `initiate ${of("initiate")}, mail ${of("mail")}, confirm ${of("confirm")}`;
  }
  /** Withdrawals: PostgreSQL backends busy and waiting on a lock (medians), and the statement most often waiting. */
  get locks(): string {
    const of = (k: "busy" | "lockWaits"): string => median(this.runs.map((r) => r.activity?.[k] ?? Number.NaN)).toFixed(1);
    const tops = new Map<string, number>();
    for (const r of this.runs) if (r.activity?.topLockWait) tops.set(r.activity.topLockWait.statement, (tops.get(r.activity.topLockWait.statement) ?? 0) + 1);
    const [top] = [...tops.entries()].sort((a, b) => b[1] - a[1]);
    return `${of("lockWaits")} of ${of("busy")} busy backends waiting on a lock${top ? `, mostly in "${top[0].slice(0, 100)}…"` : ""}`;
  }
  /** Server CPU time per request (or pair), ms: less sensitive to other work on the machine than the rate. */
  get cpuMs(): number {
    return median(this.runs.map((r) => (10 * r.serverCpu) / r.rate));
  }
  get cpu(): string {
    const pct = (k: "clientCpu" | "serverCpu" | "dbCpu"): string => {
      const m = median(this.runs.map((r) => r[k]));
      return Number.isNaN(m) ? "?" : String(Math.round(m));
    };
    return `${pct("clientCpu")}/${pct("serverCpu")}/${pct("dbCpu")} % (${this.cpuMs.toFixed(2)} ms)`;
  }
  /** The measured runs' rates, lowest–highest. */
  get spread(): string {
    const rates = this.runs.map((r) => r.rate);
    return rates.length === 0 ? "—" : `${fmt(Math.min(...rates))}–${fmt(Math.max(...rates))}`;
  }
  get broken(): string | null {
    const entries = Object.entries(this.unexpected);
    return entries.length === 0 ? null : `${this.name}: ${entries.map(([k, v]) => `${k}×${v}`).join(", ")}`;
  }
}

/** Throws when one of the servers under load has exited, with its output. */
function assertAlive(servers: ServerProcess[]): void {
  for (const server of servers) {
    const exited = server.exited();
    if (exited !== null) throw new Error(`the ${server.name} exited (${exited}) during the load:\n${server.output().slice(-4000)}`);
  }
}

/** Runs `run` on each side: a warm-up each, then ROUNDS rounds alternating the sides. */
async function alternate(label: string, sides: { side: Side; run: (seconds: number) => Promise<RunResult> }[], servers: ServerProcess[]): Promise<void> {
  log(`- ${label}`);
  for (const { side, run } of sides) {
    side.add(await run(WARMUP), false);
    assertAlive(servers);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const { side, run } of sides) {
      const result = await run(SECONDS);
      assertAlive(servers);
      side.add(result, true);
      log(
        `    ${side.name.padEnd(11)} ${result.rate.toFixed(0).padStart(6)}/s  p50 ${result.p50.toFixed(1)} ms  p99 ${result.p99.toFixed(1)} ms  ` +
          `cpu client/server/postgres ${result.clientCpu.toFixed(0)}/${result.serverCpu.toFixed(0)}/${result.dbCpu.toFixed(0)} %`,
      );
    }
  }
}

interface Row {
  scenario: string;
  rate: string;
  p50: string;
  p99: string;
  baseline: string;
  ratio: string;
  target: string;
  ok: string;
}

const fmt = (n: number, digits = 0): string => (Number.isNaN(n) ? "—" : n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }));

/** A comparison row: the service's side against a baseline's; `target` null is informative. */
function compareRow(scenario: string, service: Side, baseline: Side, target: number | null): Row {
  const ratio = service.rate / baseline.rate;
  const broken = [service.broken, baseline.broken].filter((b) => b !== null);
  return {
    scenario,
    rate: fmt(service.rate),
    p50: fmt(service.p50, 1),
    p99: fmt(service.p99, 1),
    baseline: fmt(baseline.rate),
    ratio: fmt(ratio, 2),
    target: target === null ? "—" : `≥ ${target.toFixed(2)}`,
    ok: broken.length > 0 ? `BROKEN (${broken.join("; ")}): numbers not trusted` : target === null ? "—" : ratio >= target ? "yes" : "NO",
  };
}

function printTable(rows: Row[]): void {
  const header: Row = { scenario: "scenario", rate: "req/s", p50: "p50 ms", p99: "p99 ms", baseline: "baseline req/s", ratio: "ratio", target: "target", ok: "ok?" };
  const keys = Object.keys(header) as (keyof Row)[];
  const widths = keys.map((k) => Math.max(...[header, ...rows].map((r) => r[k].length)));
  const line = (r: Row): string => `| ${keys.map((k, i) => (i === 0 || k === "ok" || k === "target" ? r[k].padEnd(widths[i] as number) : r[k].padStart(widths[i] as number))).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`);
  for (const r of rows) console.log(line(r));
}

/** GET on `base` → status and parsed body. */
async function getJson(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The part of an answer both sides must agree on: status, and `data` (or `errors`, or the whole body without an envelope). */
const comparable = (answer: { status: number; body: Record<string, unknown> }): string =>
  JSON.stringify([answer.status, answer.body.data ?? answer.body.errors ?? answer.body]);

/** One withdrawal pair through `base` (initiate, code from the sandbox outbox, confirm). @throws on any other status. */
async function onePair(base: string, user: SeededUser, ownerKey: string): Promise<void> {
  const bearer = { authorization: `Bearer ${user.token}`, "content-type": "application/json" };
  const initiated = await fetch(`${base}/api/v1/users/${user.userId}/accounts/crypto/withdrawals`, {
    method: "POST",
    headers: { ...bearer, "idempotency-key": `bench-check-${randomBytes(8).toString("hex")}` },
    body: JSON.stringify({ currency: "btc", amount: Number(WITHDRAWAL_BTC), address: WITHDRAWAL_ADDRESS }),
  });
  if (initiated.status !== 201) throw new Error(`${base}: initiate answered ${initiated.status}: ${await initiated.text()}`);
  const id = ((await initiated.json()) as { data: { id: string } }).data.id;
  const mail = await getJson(base, `/api/v1/sandbox/mail?to=${encodeURIComponent(user.email)}`, { "x-api-key": ownerKey });
  const text = (mail.body.data as { text: string }[] | undefined)?.find((m) => m.text.includes(id))?.text ?? "";
  const code = /Confirmation code: (\d{6})/.exec(text)?.[1];
  if (mail.status !== 200 || !code) throw new Error(`${base}: no code for withdrawal ${id} in the sandbox outbox (${mail.status})`);
  const confirmed = await fetch(`${base}/api/v1/users/${user.userId}/accounts/crypto/withdrawals/${id}/confirm`, {
    method: "POST",
    headers: bearer,
    body: JSON.stringify({ code }),
  });
  if (confirmed.status !== 200) throw new Error(`${base}: confirm answered ${confirmed.status}: ${await confirmed.text()}`);
}

/** Rows written per table: a withdrawal pair of the service and of the baseline must write the same. */
async function tableCounts(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = ["withdrawal", "journal_entry", "ledger_posting", "outbox_email", "wallet_transaction", "webhook_delivery"];
    const out: Record<string, number> = {};
    for (const t of tables) out[t] = Number((await client.query<{ n: string }>(`select count(*) as n from ${t}`)).rows[0]?.n);
    return out;
  } finally {
    await client.end();
  }
}

/** The ledger's invariants (LedgerService.verify): unbalanced entries, wallet balance caches that differ from their postings, negative wallet buckets. */
async function ledgerProblems(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const count = async (sql: string): Promise<number> => Number((await client.query<{ n: string }>(`select count(*) as n from (${sql}) x`)).rows[0]?.n);
    const problems: string[] = [];
    const unbalanced = await count(`select entry_id from ledger_posting group by entry_id, currency having sum(amount) <> 0`);
    const mismatched = await count(
      `select a.id from ledger_account a left join (select account_id, sum(amount) as total from ledger_posting group by account_id) s on s.account_id = a.id
        where a.bucket <> 'external' and a.balance is distinct from coalesce(s.total, 0)`,
    );
    const negative = await count(`select id from ledger_account where bucket <> 'external' and balance < 0`);
    if (unbalanced > 0) problems.push(`${unbalanced} unbalanced journal entries`);
    if (mismatched > 0) problems.push(`${mismatched} cached balances differ from their postings`);
    if (negative > 0) problems.push(`${negative} negative wallet buckets`);
    return problems;
  } finally {
    await client.end();
  }
}

async function main(): Promise<number> {
  const nodeMajor = Number(process.versions.node.split(".")[0]);
  if (nodeMajor < 24) throw new Error(`run with Node 24 (npm run bench), not ${process.version}`);
  const load0 = loadavg();
  const began = performance.now();
  const perSide = WARMUP + ROUNDS * SECONDS;
  const sides = ONLY === "hostile" ? 0 : 6 * 2 + 1 + LEVELS.length * 2;
  if (ONLY !== "all") log(`BENCH_ONLY=${ONLY}: ${ONLY === "main" ? "the hostile-neighbour rows are skipped" : "only the hostile-neighbour rows (about 1.5 min)"}`);
  log(`npm run bench: ${ROUNDS} rounds of ${SECONDS} s after ${WARMUP} s of warm-up per side, ${CONNECTIONS} connections; about ${Math.round((sides * perSide) / 60 * 10) / 10} min of load`);
  const cmd = serviceCommand();
  const staleWarning = cmd.stale ? "WARNING: a file under src/ is newer than dist/main.js: this measured the last build, which may not be src/ (npm run build)." : null;
  if (staleWarning) log(staleWarning);
  const db: BenchDatabase = await createBenchDatabase();
  log(`database: ${db.description}`);
  const children: ServerProcess[] = [];
  const brokenBy: string[] = [];
  try {
    const serviceEnv = benchServiceEnv(db.url, SECRETS_KEY, MASTER_KEY);
    log(`service: ${cmd.label}; a first start applies the migrations`);
    const migrating = await startServer("service", cmd.args, serviceEnv);
    log(`  first start (migrations): ${migrating.startMs.toFixed(0)} ms`);
    await migrating.stop();
    let data: Seed | undefined;
    if (ONLY !== "hostile") {
      const startsMs: number[] = [];
      let service: ServerProcess | undefined;
      for (let i = 0; i < 3; i++) {
        const started = await startServer("service", cmd.args, serviceEnv);
        startsMs.push(started.startMs);
        log(`  start ${i + 1} on the migrated database: ${started.startMs.toFixed(0)} ms`);
        if (i < 2) await started.stop();
        else service = started;
      }
      if (!service) throw new Error("the service did not start");
      children.push(service);
      const rssReadyKb = statusKb(service.pid, "VmRSS");
      const tree = processTree(service.pid);

      log("seeding through the API…");
      const seeded: Seed = await seed(service.base, MASTER_KEY, { users: Math.max(...LEVELS), products: 3 });
      data = seeded;
      const user = data.users[0];
      if (!user) throw new Error("no user seeded");
      const owner = { "x-api-key": data.ownerKey };
      const bearer = { authorization: `Bearer ${user.token}` };
      const currencies = await getJson(service.base, "/api/v1/currencies", owner);
      if (currencies.status !== 200) throw new Error(`the service's currencies answered ${currencies.status}`);

      const baseline = await startServer("baseline", ["--import", "tsx", "scripts/bench/baseline-server.ts"], {
        DATABASE_URL: db.url,
        SECRETS_KEY,
        BENCH_CURRENCIES: JSON.stringify(currencies.body.data),
      });
      children.push(baseline);
      const express = await startServer("express", ["--import", "tsx", "scripts/bench/express-server.ts"], {});
      children.push(express);

      const reads = [
        { label: "currencies, owner key", path: "/api/v1/currencies", headers: owner, expected: 200, target: 0.35 },
        { label: "balance, owner key", path: `/api/v1/wallets/${user.walletId}/balance`, headers: owner, expected: 200, target: 0.35 },
        { label: "balance, user token", path: `/api/v1/wallets/${user.walletId}/balance`, headers: bearer, expected: 200, target: 0.3 },
        { label: "/healthz", path: "/healthz", headers: {}, expected: 200, target: 0.35 },
        { label: "framework only: 401, no credentials", path: "/api/v1/currencies", headers: {}, expected: 401, target: null },
        { label: "GET /v2/credit-products, owner key", path: "/v2/credit-products", headers: owner, expected: 200, target: 0.35 },
      ];
      log("checking that each baseline answers what the service answers…");
      for (const s of reads) {
        const [a, b] = [await getJson(service.base, s.path, s.headers), await getJson(baseline.base, s.path, s.headers)];
        if (a.status !== s.expected || comparable(a) !== comparable(b)) {
          throw new Error(`${s.label}: the baseline answers differently:\n  service  ${comparable(a).slice(0, 800)}\n  baseline ${comparable(b).slice(0, 800)}`);
        }
      }
      const pairWrites: Record<string, number>[] = [];
      for (const target of [service, baseline]) {
        const before = await tableCounts(db.url);
        await onePair(target.base, user, data.ownerKey);
        const after = await tableCounts(db.url);
        pairWrites.push(Object.fromEntries(Object.keys(after).map((t) => [t, (after[t] ?? 0) - (before[t] ?? 0)])));
      }
      if (JSON.stringify(pairWrites[0]) !== JSON.stringify(pairWrites[1])) {
        throw new Error(`a withdrawal pair writes different rows: service ${JSON.stringify(pairWrites[0])}, baseline ${JSON.stringify(pairWrites[1])}`);
      }

      const svc: Target = { base: service.base, pid: service.pid, dbPid: db.serverPid };
      const base: Target = { base: baseline.base, pid: baseline.pid, dbPid: db.serverPid };
      const exp: Target = { base: express.base, pid: express.pid, dbPid: db.serverPid };
      const rows: Row[] = [];
      const cpuNotes: string[] = [];
      const stepNotes: string[] = [];
      const wrkNotes: string[] = [];
      const lockNotes: string[] = [];
      const spreadNotes: string[] = [];
      log("load (req/s, latency, CPU % of one core of the client = this process, of the server and of PostgreSQL):");
      for (const s of reads) {
        const sideService = new Side("service");
        const sideBaseline = new Side("node:http");
        const sideExpress = new Side("express");
        const run = (t: Target) => (seconds: number) => runRequests(t, s.path, s.headers, s.expected, seconds, CONNECTIONS);
        const runs = [
          { side: sideService, run: run(svc) },
          { side: sideBaseline, run: run(base) },
          ...(s.path === "/healthz" ? [{ side: sideExpress, run: run(exp) }] : []),
        ];
        await alternate(s.label, runs, children);
        rows.push(compareRow(s.label, sideService, sideBaseline, s.target));
        if (s.path === "/healthz") rows.push(compareRow("/healthz vs bare express 5 (informative)", sideService, sideExpress, null));
        cpuNotes.push(`${s.label}: ${runs.map((r) => `${r.side.name} ${r.side.cpu}`).join(", ")}, CPU/req ratio ${fmt(sideBaseline.cpuMs / sideService.cpuMs, 2)}`);
        spreadNotes.push(`${s.label}: ${runs.map((r) => `${r.side.name} ${r.side.spread}`).join(", ")}`);
      }
      // wrk (C, one thread) on the cheapest routes, where autocannon's own CPU may cap the bare baselines:
      // WRK_ROUNDS runs of WRK_SECONDS per side, alternating, medians
      wrk: for (const s of reads.filter((r) => r.path === "/healthz" || r.expected === 401)) {
        const rates: [number[], number[]] = [[], []];
        for (let round = 0; round < WRK_ROUNDS; round++) {
          for (const [i, target] of [svc, base].entries()) {
            const run = runWrk(target, s.path, s.expected, WRK_SECONDS, CONNECTIONS);
            assertAlive(children);
            if (!run) break wrk;
            if (run.unexpected > 0) brokenBy.push(`wrk cross-check of ${s.label}: ${run.unexpected} unexpected answers`);
            rates[i]?.push(run.rate);
          }
        }
        const [a, b] = [median(rates[0]), median(rates[1])];
        wrkNotes.push(`${s.label}: service ${fmt(a)}/s, node:http ${fmt(b)}/s, ratio ${fmt(a / b, 2)}`);
      }
      const pairRates: number[] = [];
      const basePairRates: number[] = [];
      // The levels interleaved in each round (4, 16, 32, 4, 16, 32…), so that each level meets the tables
      // (withdrawals, outbox) at about the same size: the sandbox outbox read grows with the customer's emails.
      const levels = LEVELS.map((level) => ({ level, service: new Side(`service ${level}`), baseline: new Side(`same SQL ${level}`) }));
      const run = (t: Target, level: number) => async (seconds: number) => {
        const sampler = new ActivitySampler(db.url);
        await sampler.start();
        const result = await runWithdrawals(t, seeded.users, seeded.ownerKey, seconds, level);
        return { ...result, activity: await sampler.stop() };
      };
      await alternate(
        `withdrawals, ${LEVELS.join(", ")} in flight, interleaved`,
        levels.flatMap((l) => [
          { side: l.service, run: run(svc, l.level) },
          { side: l.baseline, run: run(base, l.level) },
        ]),
        children,
      );
      for (const { level, service: sideService, baseline: sideBaseline } of levels) {
        rows.push(compareRow(`withdrawals, ${level} in flight (pairs/s, pair latency)`, sideService, sideBaseline, level === TARGET_LEVEL ? 0.5 : null));
        pairRates.push(sideService.rate);
        basePairRates.push(sideBaseline.rate);
        cpuNotes.push(`withdrawals ${level} in flight: service ${sideService.cpu}, same SQL ${sideBaseline.cpu}, CPU/pair ratio ${fmt(sideBaseline.cpuMs / sideService.cpuMs, 2)}`);
        stepNotes.push(`${level} in flight: service ${sideService.steps}; same SQL ${sideBaseline.steps}`);
        lockNotes.push(`${level} in flight: service ${sideService.locks}; same SQL ${sideBaseline.locks}`);
        spreadNotes.push(`withdrawals ${level} in flight: service ${sideService.spread}, same SQL ${sideBaseline.spread}`);
      }
      const rising = pairRates.every((r, i) => i === 0 || r >= RISING * (pairRates[i - 1] as number));
      rows.push({
        scenario: `withdrawals rising with concurrency (${LEVELS.join(" → ")})`,
        rate: pairRates.map((r) => fmt(r)).join(" → "),
        p50: "—",
        p99: "—",
        baseline: basePairRates.map((r) => fmt(r)).join(" → "),
        ratio: "—",
        target: "rising",
        ok: rising ? "yes" : "NO",
      });
      const ledger = await ledgerProblems(db.url);
      if (ledger.length > 0) brokenBy.push(`ledger after the withdrawals: ${ledger.join(", ")}`);

      const rssAfterKb = statusKb(service.pid, "VmRSS");
      const hwmKb = statusKb(service.pid, "VmHWM");
      const startMs = median(startsMs);
      rows.push({
        scenario: "start to first /healthz 200 (median of 3)",
        rate: `${fmt(startMs)} ms`,
        p50: "—",
        p99: "—",
        baseline: "—",
        ratio: "—",
        target: "≤ 1500 ms",
        ok: startMs <= 1500 ? "yes" : "NO",
      });
      const mb = (kb: number): number => kb / 1024;
      rows.push({
        scenario: `RSS ready (${tree.length} process${tree.length === 1 ? "" : "es"} in the service's tree)`,
        rate: `${fmt(mb(rssReadyKb))} MB`,
        p50: "—",
        p99: "—",
        baseline: "—",
        ratio: "—",
        target: "≤ 150 MB",
        ok: tree.length !== 1 ? "NO (not one process)" : mb(rssReadyKb) <= 150 ? "yes" : "NO",
      });
      rows.push({
        scenario: "RSS after the load",
        rate: `${fmt(mb(rssAfterKb))} MB`,
        p50: "—",
        p99: "—",
        baseline: "—",
        ratio: "—",
        target: "≤ 250 MB",
        ok: mb(rssAfterKb) <= 250 ? "yes" : "NO",
      });
      for (const r of rows) if (r.ok.startsWith("BROKEN")) brokenBy.push(`${r.scenario}: ${r.ok}`);

      console.log("");
      printTable(rows);
      const load1 = loadavg();
      console.log("");
      console.log(`Ratio = service / baseline (req/s, or pairs/s). Medians of ${ROUNDS} runs of ${SECONDS} s per side after ${WARMUP} s of warm-up, sides alternating; autocannon, ${CONNECTIONS} connections on loopback (withdrawals: 4, 16, 32).`);
      console.log(`Service: ${cmd.label}, Node ${process.version}, ROLE=api (no background jobs), LOG_LEVEL=silent, RATE_LIMIT_IP, RATE_LIMIT_CREDENTIAL, RATE_LIMIT_AUTH_FAILURES and RATE_LIMIT_CODES off (the per-address bucket, 6000/60 s, would hold this one client to 100 req/s); its ORM pool 10 connections. Baselines: bare node:http + pg.Pool(10) (scripts/bench/baseline-server.ts), bare express 5 (scripts/bench/express-server.ts), same Node, same database.`);
      console.log(`Database: ${db.description}. Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}; load average ${load0.map((l) => l.toFixed(2)).join(" ")} before, ${load1.map((l) => l.toFixed(2)).join(" ")} after (other work on the machine shifts the figures).`);
      console.log(`Withdrawals: initiate (user token) → GET /api/v1/sandbox/mail (owner key; the baseline runs the same outbox query) → confirm; one of the 32 seeded users per pair in flight; pairs/s counts confirmed pairs, latency is of the whole pair. The baseline runs the service's own statements (scripts/bench/capture-sql.ts prints them), so that ratio is the cost of everything but SQL; one pair writes the same rows on both sides (${JSON.stringify(pairWrites[0])}). "rising": each level's pairs/s at least ${Math.round((RISING - 1) * 100)} % above the previous level's.`);
      console.log(`Spread of the ${ROUNDS} measured runs (req/s or pairs/s, lowest–highest): ${spreadNotes.join("; ")}.`);
      console.log(`Run: ${fmt((performance.now() - began) / 1000)} s in all (${fmt(sides * perSide)} s of load). Latencies at autocannon's 1 ms resolution.`);
      console.log(`Withdrawal calls, median ms (initiate includes its transaction; mail is the outbox read): ${stepNotes.join("; ")}.`);
      console.log(`PostgreSQL during the withdrawals (pg_stat_activity every 50 ms, medians; busy = active or in a transaction, at most the pool's 10): ${lockNotes.join("; ")}.`);
      if (wrkNotes.length > 0) {
        console.log(`Cross-check with wrk -t1 -c${CONNECTIONS}, medians of ${WRK_ROUNDS} alternating runs of ${WRK_SECONDS} s per side (a C client leaves more CPU to the server than autocannon): ${wrkNotes.join("; ")}.`);
      }
      console.log(`Start: spawn to the first /healthz 200 of starts on the migrated database (${startsMs.map((m) => fmt(m)).join(", ")} ms). RSS: VmRSS of /proc/<pid>/status (peak VmHWM ${fmt(mb(hwmKb))} MB).`);
      console.log(
        `CPU, medians: % of one core of the client (autocannon, this process) / the server process / PostgreSQL's processes (? with DATABASE_URL), and (the server's CPU time per request, or per pair); ` +
          `"CPU/req ratio" = baseline's / service's server CPU per request, steadier than the rates when other work shares the cores: ${cpuNotes.join("; ")}. ` +
          `A client near 100 % caps what that side can show (2 cores: client, server and PostgreSQL share them).`,
      );
      // the hostile rows run on a service of their own: these are idle from here
      for (const child of children.splice(0).reverse()) await child.stop();
    }
    if (ONLY !== "main") {
      const hostileService = await startServer("service (hostile rows)", cmd.args, {
        ...benchServiceEnv(db.url, SECRETS_KEY, MASTER_KEY),
        HEADERS_TIMEOUT_S: String(Math.min(10, HOSTILE_REQUEST_TIMEOUT_S)),
        REQUEST_TIMEOUT_S: String(HOSTILE_REQUEST_TIMEOUT_S),
        ALLOW_PRIVATE_NETWORK_TARGETS: "true",
      });
      children.push(hostileService);
      if (!data) {
        log("seeding through the API…");
        data = await seed(hostileService.base, MASTER_KEY, { users: 1, products: 1 });
      }
      const victim = data.users[0];
      const productCode = data.productCodes[0];
      if (!victim || !productCode) throw new Error("no user or credit product seeded");
      const report = await runHostile({
        base: hostileService.base,
        pid: hostileService.pid,
        masterKey: MASTER_KEY,
        ownerKey: data.ownerKey,
        userId: victim.userId,
        productCode,
        requestTimeoutS: HOSTILE_REQUEST_TIMEOUT_S,
        assertAlive: () => assertAlive(children),
        log,
      });
      console.log("");
      printHostileTable(report.rows, (line) => console.log(line));
      console.log("");
      console.log(
        `Hostile neighbour rows: a service of their own (${cmd.label}, same environment as above: ROLE=api, the four rate limits off, so nothing but the request path's own order and bounds protects the victim) ` +
          `with ALLOW_PRIVATE_NETWORK_TARGETS=true (the credit notification URL is on loopback; nothing is delivered with ROLE=api), REQUEST_TIMEOUT_S=${HOSTILE_REQUEST_TIMEOUT_S} and HEADERS_TIMEOUT_S=${Math.min(10, HOSTILE_REQUEST_TIMEOUT_S)} (defaults 30 and 10: shorter to keep the run short), MAX_CONNECTIONS_PER_ADDRESS and BODY_LIMIT_BYTES at their defaults, started after the main table's services have stopped (with BENCH_ONLY=hostile: alone), on the same database. ` +
          `"quiet" = the same figure measured just before, without the attack. Latencies of a paced reader (open loop), ms. ${report.notes.join(" ")}`,
      );
      brokenBy.push(...report.broken);
    }
    if (staleWarning) console.log(staleWarning);
    if (brokenBy.length > 0) {
      console.log("");
      console.log(`BROKEN RUN: ${brokenBy.join("; ")}`);
      return 1;
    }
    return 0;
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => {});
    await db.dispose();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`npm run bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
