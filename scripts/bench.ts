/**
 * `npm run bench`: request throughput of the service against physical baselines (docs/performance.md "HTTP:
 * `npm run bench`"; not part of `npm test`). Prints one table — scenario | req/s | p50 ms | p99 ms |
 * baseline req/s | ratio | target | ok? — and footnotes. Exit status 0 whatever the targets say (it
 * is a report); 1 when the run is broken: a setup step failed, a baseline does not answer what the
 * service answers, a response had an unexpected status (or a connection error or timeout) during
 * the load, or the ledger is inconsistent after the withdrawals or the transfers (the bench's own
 * check, and `npm run ledger:check` on its database after the load).
 *
 * What it does:
 * 1. A fresh database: `bench_<random>` on the server of `DATABASE_URL` when set, else on one
 *    embedded PostgreSQL started for the run (scripts/bench/database.ts); dropped at the end.
 * 2. The service as a child process on a free loopback port: `node dist/main.js` when built, else
 *    `node --import tsx src/main.ts`, with the Node running this script (24), on that database with
 *    fresh `SECRETS_KEY` and `MASTER_API_KEY`, `ROLE=api` (no background jobs competing),
 *    `LOG_LEVEL=silent` and the four rate limits on as in production (memory-first, default
 *    `RATE_LIMIT_SYNC_MS`) with quotas out of reach (scripts/bench/processes.ts `rateLimitEnv`: the
 *    default per-address bucket would hold one client to 100 req/s). A first start applies the
 *    migrations; then three timed starts on the migrated database (spawn → first `/healthz` 200;
 *    the median is reported); the third one stays up for the load: its VmRSS (/proc) right when
 *    ready and after all the load, and the number of processes in its tree. With
 *    `BENCH_ONLY=transfers`, one start, untimed.
 * 3. Seeds through the real API (scripts/bench/seed.ts, the docs/walkthrough.md steps): operator session,
 *    customer, owner credential, 32 VERIFIED users with a token and a wallet holding a 1 BTC sandbox
 *    deposit each, three credit products, and 32 pairs of further users (a token and a btc wallet
 *    holding 1 BTC each) for the transfer lanes. With `BENCH_ONLY=transfers`: one user, no product, the pairs.
 * 4. The baselines, child processes of the same Node: scripts/bench/baseline-server.ts (bare
 *    `node:http` + a raw `pg.Pool` of 10, the service's pool size; its docstring gives every
 *    statement) and scripts/bench/express-server.ts (bare express 5, `/healthz` only). Before any
 *    load, each scenario's answer of the service and of its baseline are compared (`data`, status);
 *    one withdrawal pair on each must write the same rows, and one transfer on each must answer the
 *    same `Transfer` (ids and times aside) and write the same rows.
 * 5. Each scenario with autocannon (programmatic, loopback, 32 connections): a warm-up of each side,
 *    then rounds alternating service, baseline(s), service, baseline(s)…; the table gives medians.
 *    - currencies (owner key), balance (owner key), balance (user token), `GET /v2/credit-products`
 *      (owner key; the credit core's access rule: owner key for listing, master key for writes);
 *      currencies also on two more services, rate limits off and exact (scripts/bench/limits.ts);
 *      currencies and the withdrawals at 16 in flight also on a service through PgBouncer in
 *      transaction mode (scripts/bench/pgbouncer.ts);
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
 *    - transfers with 4, 16 and 32 in flight (scripts/bench/transfers.ts): `POST /api/v1/transfers`
 *      with the sender's user token, each request in flight within a pair of users of its own, so
 *      they share no lock and no ledger row; the levels interleaved as for withdrawals; the baseline
 *      runs the service's 18 statements (scripts/bench/baseline-transfers.ts); transfers per second,
 *      "rising" as for withdrawals; the ledger's invariants checked after them, then
 *      `npm run ledger:check` run on the database.
 *    Footnotes: the CPU each side used (client = this process, and the server), and a cross-check
 *    of /healthz and the 401 with wrk (C, one thread), where autocannon's own CPU can cap the bare
 *    baselines. The authenticated reads (currencies, both balance rows) also run with wrk, 32
 *    connections, 2 alternating runs of 6 s per side, in a second table with both ratios per row
 *    (scripts/bench/wrk.ts; skipped, with how to install wrk, when it is missing).
 * 6. The hostile-neighbour rows (scripts/bench/hostile.ts), on a service of their own started
 *    after the table with a shorter `REQUEST_TIMEOUT_S`: another tenant's paced reads while
 *    anonymous clients post 1 MiB bodies, the service's RSS while 300 sockets stall half-way
 *    through 1 MiB bodies, another tenant's reads while one tenant drives its sandbox clock ten
 *    years at a time, another tenant's card authorizations while one key stalls 64 bodies, and a
 *    partner's reads while wrong keys come from its address; each figure next to the same figure
 *    without the attack, in a second table.
 *
 * Reproduce: `npm run bench` (about 7.7 minutes: 29 sides × (1 + 3 × 3) s of load, 8 wrk runs of
 * 2 s and 12 of 6 s, the starts and the seeding, then about 2 minutes of hostile-neighbour rows). Quick runs and overrides:
 *   BENCH_SECONDS=2 BENCH_ROUNDS=1 npm run bench
 *   - `BENCH_SECONDS` (3): seconds of each measured run;
 *   - `BENCH_ROUNDS` (3): measured runs of each side of each scenario;
 *   - `BENCH_WARMUP` (1): seconds of the warm-up of each side of each scenario;
 *   - `BENCH_ONLY` (unset: both): `main` for the table against the baselines alone, `hostile` for the
 *     hostile-neighbour rows alone, `transfers` for the transfer rows alone (about 1.5 minutes),
 *     `authorizations` for the card-authorization rows alone (scripts/bench/authorizations-run.ts, about 1.5 minutes),
 *     `trading` for the quote + order rows alone (scripts/bench/trading-run.ts, about 1.2 minutes),
 *     `cards` for the Authorize Card rows alone (scripts/bench/cards-run.ts: 10 000 cards seeded, 200/s
 *     open loop for `BENCH_CARDS_RATE_SECONDS` (30) on each side, then 4 / 16 / 32 in flight; about 4 minutes),
 *     `scan` for the chain scan rows alone (scripts/bench/scan-run.ts: the live ethereum follower over a pre-built
 *     Anvil chain against a bare JSON-RPC loop; sizes `BENCH_SCAN_BLOCKS`, `BENCH_SCAN_TRANSFERS`, `BENCH_SCAN_DEPOSITS`),
 *     `replication` for the withdrawal pair and the transfer at 16 in flight through HAProxy to the three-node Patroni
 *     cluster against one PostgreSQL (scripts/bench/replication.ts; about 1.5 minutes);
 *   - `DATABASE_URL`: use this PostgreSQL server (a throw-away database is created and dropped on it).
 * The figures depend on the machine and on what else runs on it (the load average is printed).
 */
import { randomBytes } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { ActivitySampler } from "./bench/activity.js";
import { ledgerProblems, rowsWrittenBy, runLedgerCheck } from "./bench/checks.js";
import { createBenchDatabase, type BenchDatabase } from "./bench/database.js";
import { runRequests, runWithdrawals, runWrk, type Target } from "./bench/load.js";
import { HOSTILE_REQUEST_TIMEOUT_S, printHostileTable, runHostile } from "./bench/hostile.js";
import { LimitVariants, LIMITS_SAID } from "./bench/limits.js";
import { BOUNCER_LEVEL, BOUNCER_SAID, BouncerVariant } from "./bench/pgbouncer.js";
import { BENCH_RATE_LIMITS_SAID, BENCH_TRANSFER_CAPS, benchServiceEnv, processTree, serviceCommand, startServer, statusKb, type ServerProcess } from "./bench/processes.js";
import { alternator, assertAlive, compareRow, fmt, median, printTable, Side, type Row } from "./bench/report.js";
import { printWrkReads, WRK_MISSING, wrkInstalled, wrkReadRatios, type WrkReadLine } from "./bench/wrk.js";
import { seed, TRANSFER_BTC, WITHDRAWAL_ADDRESS, WITHDRAWAL_BTC, type Seed, type SeededUser } from "./bench/seed.js";
import { checkTransferPair, runTransferScenario, TRANSFER_LEVELS } from "./bench/transfers.js";
import { runAuthorizationBench } from "./bench/authorizations-run.js";
import { AUTH_LEVELS } from "./bench/authorizations.js";
import { runTradingBench } from "./bench/trading-run.js";
import { TRADING_LEVELS } from "./bench/trading.js";
import { runCardBench } from "./bench/cards-run.js";
import { CARD_LEVELS } from "./bench/cards.js";
import { runScanBench } from "./bench/scan-run.js";
import { runReplicationBench } from "./bench/replication.js";

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
/** What `BENCH_ONLY` runs: `main` the table against the baselines, `hostile` the hostile-neighbour rows, `transfers` the transfer rows alone. */
const ONLY_SAYS = {
  main: "the hostile-neighbour rows are skipped",
  hostile: "only the hostile-neighbour rows (about 2 min)",
  transfers: "only the transfer rows against their baseline (about 1.5 min with the seeding), then npm run ledger:check",
  authorizations: "only the card-authorization rows against their baseline (scripts/bench/authorizations-run.ts; about 1.5 min), then the credit invariants and npm run ledger:check",
  trading: "only the quote + order rows against their baseline (scripts/bench/trading-run.ts; about 1.2 min), then the ledger's invariants and npm run ledger:check",
  cards: "only the Authorize Card rows against their baseline (scripts/bench/cards-run.ts; about 4 min with the seeding), then the wallet and card invariants and npm run ledger:check",
  scan: "only the chain scan rows: the live ethereum follower over a pre-built Anvil chain against a bare JSON-RPC loop (scripts/bench/scan-run.ts; about 4 min, most of it building the chain), then npm run ledger:check",
  replication: "only the replication rows: the withdrawal pair and the transfer at 16 in flight, three Patroni nodes behind HAProxy against one PostgreSQL (scripts/bench/replication.ts; about 1.5 min), then npm run ledger:check on both",
} as const;
/** `BENCH_ONLY` ({@link ONLY_SAYS}); unset: the table and the hostile rows. */
const ONLY = ((): keyof typeof ONLY_SAYS | "all" => {
  const raw = process.env.BENCH_ONLY ?? "";
  if (raw === "") return "all";
  if (raw in ONLY_SAYS) return raw as keyof typeof ONLY_SAYS;
  throw new Error(`BENCH_ONLY must be one of ${Object.keys(ONLY_SAYS).join(", ")}, got "${raw}"`);
})();
const MASTER_KEY = `bench-master-${randomBytes(24).toString("hex")}`;
const SECRETS_KEY = `bench-secrets-${randomBytes(24).toString("hex")}`;

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const alternate = alternator({ warmup: WARMUP, rounds: ROUNDS, seconds: SECONDS }, log);

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

/** What the table's scenarios share: the database, the servers under load, the seed, what broke the run. */
interface Bench {
  db: BenchDatabase;
  service: ServerProcess;
  baseline: ServerProcess;
  seeded: Seed;
  /** Every child server (an exit during the load breaks the run). */
  children: ServerProcess[];
  brokenBy: string[];
}

/** The footnotes of the table, by kind. */
interface Notes {
  cpu: string[];
  steps: string[];
  wrk: string[];
  /** The authenticated reads' two ratios (autocannon, wrk): scripts/bench/wrk.ts. */
  wrkReads: WrkReadLine[];
  locks: string[];
  /** PostgreSQL's lock waits during the transfers, per level. */
  transferLocks: string[];
  spread: string[];
}

/** The read scenarios on the owner key, user 0's token and no credentials. */
function readScenarios(data: Seed): { label: string; path: string; headers: Record<string, string>; expected: number; target: number | null }[] {
  const user = data.users[0];
  if (!user) throw new Error("no user seeded");
  const owner = { "x-api-key": data.ownerKey };
  const bearer = { authorization: `Bearer ${user.token}` };
  return [
    { label: "currencies, owner key", path: "/api/v1/currencies", headers: owner, expected: 200, target: 0.5 },
    { label: "balance, owner key", path: `/api/v1/wallets/${user.walletId}/balance`, headers: owner, expected: 200, target: 0.5 },
    { label: "balance, user token", path: `/api/v1/wallets/${user.walletId}/balance`, headers: bearer, expected: 200, target: 0.45 },
    { label: "/healthz", path: "/healthz", headers: {}, expected: 200, target: 0.35 },
    { label: "framework only: 401, no credentials", path: "/api/v1/currencies", headers: {}, expected: 401, target: 0.35 },
    { label: "GET /v2/credit-products, owner key", path: "/v2/credit-products", headers: owner, expected: 200, target: 0.5 },
  ];
}

/**
 * Before any load: each read of the baseline answers what the service answers, and one withdrawal
 * pair on each side writes the same rows. @returns those rows per table. @throws on a difference.
 */
async function checkReadsAndWithdrawals(b: Bench): Promise<Record<string, number>> {
  log("checking that each baseline answers what the service answers…");
  for (const s of readScenarios(b.seeded)) {
    const [a, c] = [await getJson(b.service.base, s.path, s.headers), await getJson(b.baseline.base, s.path, s.headers)];
    if (a.status !== s.expected || comparable(a) !== comparable(c)) {
      throw new Error(`${s.label}: the baseline answers differently:\n  service  ${comparable(a).slice(0, 800)}\n  baseline ${comparable(c).slice(0, 800)}`);
    }
  }
  const user = b.seeded.users[0] as SeededUser;
  const tables = ["withdrawal", "journal_entry", "ledger_posting", "outbox_email", "wallet_transaction", "webhook_delivery"];
  const pairWrites: Record<string, number>[] = [];
  for (const target of [b.service, b.baseline]) pairWrites.push((await rowsWrittenBy(b.db.url, tables, () => onePair(target.base, user, b.seeded.ownerKey))).rows);
  if (JSON.stringify(pairWrites[0]) !== JSON.stringify(pairWrites[1])) {
    throw new Error(`a withdrawal pair writes different rows: service ${JSON.stringify(pairWrites[0])}, baseline ${JSON.stringify(pairWrites[1])}`);
  }
  return pairWrites[0] as Record<string, number>;
}

/** The read rows (autocannon, then the wrk cross-check of the cheapest routes); `variants` join their scenario's rounds. */
async function readRows(b: Bench, express: ServerProcess, variants: LimitVariants, bouncer: BouncerVariant, notes: Notes): Promise<Row[]> {
  const svc: Target = { base: b.service.base, pid: b.service.pid, dbPid: b.db.serverPid };
  const base: Target = { base: b.baseline.base, pid: b.baseline.pid, dbPid: b.db.serverPid };
  const exp: Target = { base: express.base, pid: express.pid, dbPid: b.db.serverPid };
  const rows: Row[] = [];
  const reads = readScenarios(b.seeded);
  for (const s of reads) {
    const sideService = new Side("service");
    const sideBaseline = new Side("node:http");
    const sideExpress = new Side("express");
    const run = (t: Target) => (seconds: number) => runRequests(t, s.path, s.headers, s.expected, seconds, CONNECTIONS);
    const runs = [
      { side: sideService, run: run(svc) },
      { side: sideBaseline, run: run(base) },
      ...(s.path === "/healthz" ? [{ side: sideExpress, run: run(exp) }] : []),
      ...variants.sides(s.label, run),
      ...bouncer.readSides(s.label, run),
    ];
    await alternate(s.label, runs, b.children);
    rows.push(compareRow(s.label, sideService, sideBaseline, s.target), ...variants.rows(s.label, sideService, sideBaseline), ...bouncer.readRows(s.label, sideService, sideBaseline));
    if (s.path === "/healthz") rows.push(compareRow("/healthz vs bare express 5 (informative)", sideService, sideExpress, null));
    notes.cpu.push(`${s.label}: ${runs.map((r) => `${r.side.name} ${r.side.cpu}`).join(", ")}, CPU/req ratio ${fmt(sideBaseline.cpuMs / sideService.cpuMs, 2)}`);
    notes.spread.push(`${s.label}: ${runs.map((r) => `${r.side.name} ${r.side.spread}`).join(", ")}`);
    // the authenticated reads (currencies, balance) also with wrk, printed with both ratios (scripts/bench/wrk.ts)
    if (s.path.startsWith("/api/v1/") && s.expected === 200 && wrkInstalled()) {
      log(`  ${s.label}: wrk column…`);
      const line = wrkReadRatios(s, sideService.rate / sideBaseline.rate, { service: svc, baseline: base }, { connections: CONNECTIONS, afterRun: () => assertAlive(b.children) });
      if (line) notes.wrkReads.push(line);
      if (line && line.unexpected > 0) b.brokenBy.push(`wrk column of ${s.label}: ${line.unexpected} unexpected answers`);
    }
  }
  if (!wrkInstalled()) log(WRK_MISSING);
  // wrk (C, one thread) on the cheapest routes, where autocannon's own CPU may cap the bare baselines:
  // WRK_ROUNDS runs of WRK_SECONDS per side, alternating, medians
  wrk: for (const s of reads.filter((r) => r.path === "/healthz" || r.expected === 401)) {
    const rates: [number[], number[]] = [[], []];
    for (let round = 0; round < WRK_ROUNDS; round++) {
      for (const [i, target] of [svc, base].entries()) {
        const run = runWrk(target, s.path, s.expected, WRK_SECONDS, CONNECTIONS);
        assertAlive(b.children);
        if (!run) break wrk;
        if (run.unexpected > 0) b.brokenBy.push(`wrk cross-check of ${s.label}: ${run.unexpected} unexpected answers`);
        rates[i]?.push(run.rate);
      }
    }
    const [a, c] = [median(rates[0]), median(rates[1])];
    notes.wrk.push(`${s.label}: service ${fmt(a)}/s, node:http ${fmt(c)}/s, ratio ${fmt(a / c, 2)}`);
  }
  return rows;
}

/** The withdrawal rows at each level, then the ledger's check. */
async function withdrawalRows(b: Bench, bouncer: BouncerVariant, notes: Notes): Promise<Row[]> {
  const svc: Target = { base: b.service.base, pid: b.service.pid, dbPid: b.db.serverPid };
  const base: Target = { base: b.baseline.base, pid: b.baseline.pid, dbPid: b.db.serverPid };
  const rows: Row[] = [];
  const pairRates: number[] = [];
  const basePairRates: number[] = [];
  // The levels interleaved in each round (4, 16, 32, 4, 16, 32…), so that each level meets the tables
  // (withdrawals, outbox) at about the same size: the sandbox outbox read grows with the customer's emails.
  const levels = LEVELS.map((level) => ({ level, service: new Side(`service ${level}`), baseline: new Side(`same SQL ${level}`) }));
  const run = (t: Target, level: number) => async (seconds: number) => {
    const sampler = new ActivitySampler(b.db.url);
    await sampler.start();
    const result = await runWithdrawals(t, b.seeded.users, b.seeded.ownerKey, seconds, level);
    return { ...result, activity: await sampler.stop() };
  };
  await alternate(
    `withdrawals, ${LEVELS.join(", ")} in flight, interleaved`,
    levels.flatMap((l) => [
      { side: l.service, run: run(svc, l.level) },
      { side: l.baseline, run: run(base, l.level) },
      ...bouncer.withdrawalSides(l.level, (t) => run(t, l.level)),
    ]),
    b.children,
  );
  for (const { level, service: sideService, baseline: sideBaseline } of levels) {
    rows.push(compareRow(`withdrawals, ${level} in flight (pairs/s, pair latency)`, sideService, sideBaseline, level === TARGET_LEVEL ? 0.7 : null));
    if (level === BOUNCER_LEVEL) rows.push(...bouncer.withdrawalRows(sideService, sideBaseline));
    pairRates.push(sideService.rate);
    basePairRates.push(sideBaseline.rate);
    notes.cpu.push(`withdrawals ${level} in flight: service ${sideService.cpu}, same SQL ${sideBaseline.cpu}, CPU/pair ratio ${fmt(sideBaseline.cpuMs / sideService.cpuMs, 2)}`);
    notes.steps.push(`${level} in flight: service ${sideService.steps}; same SQL ${sideBaseline.steps}`);
    notes.locks.push(`${level} in flight: service ${sideService.locks}; same SQL ${sideBaseline.locks}`);
    notes.spread.push(`withdrawals ${level} in flight: service ${sideService.spread}, same SQL ${sideBaseline.spread}`);
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
  const ledger = await ledgerProblems(b.db.url);
  if (ledger.length > 0) b.brokenBy.push(`ledger after the withdrawals: ${ledger.join(", ")}`);
  return rows;
}

/** The rows of the service's start and memory; `startsMs` the timed starts, `tree` its processes when ready. */
function processRows(service: ServerProcess, startsMs: number[], rssReadyKb: number, tree: number[]): Row[] {
  const rssAfterKb = statusKb(service.pid, "VmRSS");
  const startMs = median(startsMs);
  const mb = (kb: number): number => kb / 1024;
  const row = (scenario: string, rate: string, target: string, ok: string): Row => ({ scenario, rate, p50: "—", p99: "—", baseline: "—", ratio: "—", target, ok });
  return [
    row(`start to first /healthz 200 (median of ${startsMs.length})`, `${fmt(startMs)} ms`, "≤ 1500 ms", startMs <= 1500 ? "yes" : "NO"),
    row(
      `RSS ready (${tree.length} process${tree.length === 1 ? "" : "es"} in the service's tree)`,
      `${fmt(mb(rssReadyKb))} MB`,
      "≤ 150 MB",
      tree.length !== 1 ? "NO (not one process)" : mb(rssReadyKb) <= 150 ? "yes" : "NO",
    ),
    row("RSS after the load", `${fmt(mb(rssAfterKb))} MB`, "≤ 250 MB", mb(rssAfterKb) <= 250 ? "yes" : "NO"),
  ];
}

/** The transfer rows (scripts/bench/transfers.ts), with their footnotes and the ledger's check. */
async function transferRows(b: Bench, notes: Notes): Promise<Row[]> {
  const report = await runTransferScenario({
    service: { base: b.service.base, pid: b.service.pid, dbPid: b.db.serverPid },
    baseline: { base: b.baseline.base, pid: b.baseline.pid, dbPid: b.db.serverPid },
    pairs: b.seeded.transferPairs,
    databaseUrl: b.db.url,
    servers: b.children,
    alternate,
  });
  notes.cpu.push(...report.cpu);
  notes.spread.push(...report.spread);
  notes.transferLocks.push(...report.locks);
  if (report.ledger.length > 0) b.brokenBy.push(`ledger after the transfers: ${report.ledger.join(", ")}`);
  return report.rows;
}

/**
 * The table against the baselines: the service started (3 timed starts; 1 with BENCH_ONLY=transfers),
 * seeded, the baselines started, the answers checked, the load, the table and its footnotes.
 * @returns the seed (the hostile rows reuse it).
 */
async function table(db: BenchDatabase, cmd: ReturnType<typeof serviceCommand>, children: ServerProcess[], brokenBy: string[], began: { at: number; load0: number[] }): Promise<Seed> {
  const main = ONLY !== "transfers";
  const serviceEnv = benchServiceEnv(db.url, SECRETS_KEY, MASTER_KEY);
  const startsMs: number[] = [];
  let service: ServerProcess | undefined;
  const starts = main ? 3 : 1;
  for (let i = 0; i < starts; i++) {
    const started = await startServer("service", cmd.args, serviceEnv);
    startsMs.push(started.startMs);
    log(`  start ${i + 1} on the migrated database: ${started.startMs.toFixed(0)} ms`);
    if (i < starts - 1) await started.stop();
    else service = started;
  }
  if (!service) throw new Error("the service did not start");
  children.push(service);
  const rssReadyKb = statusKb(service.pid, "VmRSS");
  const tree = processTree(service.pid);

  log("seeding through the API…");
  const seeded = await seed(service.base, MASTER_KEY, { users: main ? Math.max(...LEVELS) : 1, products: main ? 3 : 0, transferPairs: Math.max(...TRANSFER_LEVELS) });
  const currencies = await getJson(service.base, "/api/v1/currencies", { "x-api-key": seeded.ownerKey });
  if (currencies.status !== 200) throw new Error(`the service's currencies answered ${currencies.status}`);
  const baseline = await startServer("baseline", ["--import", "tsx", "scripts/bench/baseline-server.ts"], {
    DATABASE_URL: db.url,
    SECRETS_KEY,
    BENCH_CURRENCIES: JSON.stringify(currencies.body.data),
  });
  children.push(baseline);
  const b: Bench = { db, service, baseline, seeded, children, brokenBy };
  const pairWrites = main ? await checkReadsAndWithdrawals(b) : undefined;
  const firstPair = seeded.transferPairs[0];
  if (!firstPair) throw new Error("no transfer pair seeded");
  log("checking that a transfer on each side answers the same and writes the same rows…");
  const transferWrites = await checkTransferPair(db.url, service.base, baseline.base, firstPair);

  const notes: Notes = { cpu: [], steps: [], wrk: [], wrkReads: [], locks: [], transferLocks: [], spread: [] };
  const rows: Row[] = [];
  log("load (req/s, latency, CPU % of one core of the client = this process, of the server and of PostgreSQL):");
  if (main) {
    const express = await startServer("express", ["--import", "tsx", "scripts/bench/express-server.ts"], {});
    children.push(express);
    const variants = await LimitVariants.start(cmd.args, serviceEnv, db.serverPid, children);
    const bouncer = await BouncerVariant.start(cmd.args, serviceEnv, db.url, db.serverPid, children);
    try {
      rows.push(...(await readRows(b, express, variants, bouncer, notes)));
      await variants.stop();
      rows.push(...(await withdrawalRows(b, bouncer, notes)));
      notes.cpu.push(...(await bouncer.notes()));
    } finally {
      await bouncer.stop(); // PgBouncer is a child of this process: it would outlive an error
    }
  }
  rows.push(...(await transferRows(b, notes)));
  const ledgerCheck = await runLedgerCheck(serviceEnv);
  if (!ledgerCheck.clean) brokenBy.push(`npm run ledger:check after the load: ${ledgerCheck.verdict}`);
  if (main) rows.push(...processRows(service, startsMs, rssReadyKb, tree));
  for (const r of rows) if (r.ok.startsWith("BROKEN")) brokenBy.push(`${r.scenario}: ${r.ok}`);

  console.log("");
  printTable(rows);
  console.log("");
  if (main) {
    printWrkReads(notes.wrkReads, CONNECTIONS);
    console.log("");
  }
  printFootnotes({ db, cmd, began, startsMs, service, notes, pairWrites, transferWrites, ledgerVerdict: ledgerCheck.verdict, main });
  return seeded;
}

/** The table's footnotes: how it was measured, on what, and what each side's CPU and PostgreSQL did. */
function printFootnotes(f: {
  db: BenchDatabase;
  cmd: ReturnType<typeof serviceCommand>;
  began: { at: number; load0: number[] };
  startsMs: number[];
  service: ServerProcess;
  notes: Notes;
  pairWrites: Record<string, number> | undefined;
  transferWrites: Record<string, number>;
  ledgerVerdict: string;
  main: boolean;
}): void {
  const { notes } = f;
  const load1 = loadavg();
  const perSide = WARMUP + ROUNDS * SECONDS;
  console.log(`Ratio = service / baseline (req/s, pairs/s or transfers/s). Medians of ${ROUNDS} runs of ${SECONDS} s per side after ${WARMUP} s of warm-up, sides alternating; autocannon, ${CONNECTIONS} connections on loopback (withdrawals and transfers: ${LEVELS.join(", ")} in flight).`);
  console.log(`Service: ${f.cmd.label}, Node ${process.version}, ROLE=api (no background jobs), LOG_LEVEL=silent, ${BENCH_RATE_LIMITS_SAID} (the default per-address bucket, 6000/60 s, would hold this one client to 100 req/s${f.main ? `; ${LIMITS_SAID}; ${BOUNCER_SAID}` : ""}), TRANSFER_CAPS=${BENCH_TRANSFER_CAPS} (out of reach: the caps check still runs); its ORM pool 10 connections. Baselines: bare node:http + pg.Pool(10) (scripts/bench/baseline-server.ts)${f.main ? ", bare express 5 (scripts/bench/express-server.ts)" : ""}, same Node, same database.`);
  console.log(`Database: ${f.db.description}. Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}; load average ${f.began.load0.map((l) => l.toFixed(2)).join(" ")} before, ${load1.map((l) => l.toFixed(2)).join(" ")} after (other work on the machine shifts the figures).`);
  if (f.pairWrites) {
    console.log(`Withdrawals: initiate (user token) → GET /api/v1/sandbox/mail (owner key; the baseline runs the same outbox query) → confirm; one of the 32 seeded users per pair in flight; pairs/s counts confirmed pairs, latency is of the whole pair. The baseline runs the service's own statements (scripts/bench/capture-sql.ts prints them), so that ratio is the cost of everything but SQL; one pair writes the same rows on both sides (${JSON.stringify(f.pairWrites)}). "rising": each level's pairs/s at least ${Math.round((RISING - 1) * 100)} % above the previous level's.`);
  }
  console.log(`Transfers: POST /api/v1/transfers (the sender's user token, a fresh Idempotency-Key, ${TRANSFER_BTC} BTC), each request in flight within a pair of users of its own (back and forth), so no two share a lock or a ledger row; transfers/s counts 201s, latency is of each request. The baseline runs the service's own 13 statements in the same transaction and order (scripts/bench/baseline-transfers.ts; scripts/bench/capture-sql.ts compares them); one transfer answers the same and writes the same rows on both sides (${JSON.stringify(f.transferWrites)}). "rising" as for withdrawals.`);
  console.log(`Spread of the ${ROUNDS} measured runs (lowest–highest): ${notes.spread.join("; ")}.`);
  console.log(`Run: ${fmt((performance.now() - f.began.at) / 1000)} s in all (about ${fmt(sideCount() * perSide)} s of load). Latencies of the reads at autocannon's 1 ms resolution.`);
  if (notes.steps.length > 0) console.log(`Withdrawal calls, median ms (initiate includes its transaction; mail is the outbox read): ${notes.steps.join("; ")}.`);
  if (notes.locks.length > 0) console.log(`PostgreSQL during the withdrawals (pg_stat_activity every 50 ms, medians; busy = active or in a transaction, at most the pool's 10): ${notes.locks.join("; ")}.`);
  console.log(`PostgreSQL during the transfers (the same sampling): ${notes.transferLocks.join("; ")}.`);
  if (notes.wrk.length > 0) {
    console.log(`Cross-check with wrk -t1 -c${CONNECTIONS}, medians of ${WRK_ROUNDS} alternating runs of ${WRK_SECONDS} s per side (a C client leaves more CPU to the server than autocannon): ${notes.wrk.join("; ")}.`);
  }
  if (f.main) console.log(`Start: spawn to the first /healthz 200 of starts on the migrated database (${f.startsMs.map((m) => fmt(m)).join(", ")} ms). RSS: VmRSS of /proc/<pid>/status (peak VmHWM ${fmt(statusKb(f.service.pid, "VmHWM") / 1024)} MB).`);
  console.log(
    `CPU, medians: % of one core of the client (autocannon, this process) / the server process / PostgreSQL's processes (? with DATABASE_URL), and (the server's CPU time per request, pair or transfer); ` +
      `"CPU/req ratio" = baseline's / service's server CPU per request, steadier than the rates when other work shares the cores: ${notes.cpu.join("; ")}. ` +
      `A client near 100 % caps what that side can show (2 cores: client, server and PostgreSQL share them).`,
  );
  console.log(`Ledger: npm run ledger:check on the benchmark's database after the load: ${f.ledgerVerdict}`);
}

/** Sides of load the run drives (each `BENCH_WARMUP + BENCH_ROUNDS × BENCH_SECONDS` seconds). */
function sideCount(): number {
  if (ONLY === "hostile") return 0;
  if (ONLY === "authorizations") return AUTH_LEVELS.length * 2;
  if (ONLY === "trading") return TRADING_LEVELS.length * 2;
  if (ONLY === "cards") return CARD_LEVELS.length * 2;
  if (ONLY === "scan") return 0;
  if (ONLY === "replication") return 4;
  const transfers = TRANSFER_LEVELS.length * 2;
  return ONLY === "transfers" ? transfers : 6 * 2 + 1 + 2 + 2 + LEVELS.length * 2 + transfers;
}

async function main(): Promise<number> {
  const nodeMajor = Number(process.versions.node.split(".")[0]);
  if (nodeMajor < 24) throw new Error(`run with Node 24 (npm run bench), not ${process.version}`);
  const began = { at: performance.now(), load0: loadavg() };
  const perSide = WARMUP + ROUNDS * SECONDS;
  if (ONLY !== "all") log(`BENCH_ONLY=${ONLY}: ${ONLY_SAYS[ONLY]}`);
  log(`npm run bench: ${ROUNDS} rounds of ${SECONDS} s after ${WARMUP} s of warm-up per side, ${CONNECTIONS} connections; about ${Math.round(((sideCount() * perSide) / 60) * 10) / 10} min of load`);
  const cmd = serviceCommand();
  const staleWarning = cmd.stale ? "WARNING: a file under src/ is newer than dist/main.js: this measured the last build, which may not be src/ (npm run build)." : null;
  if (staleWarning) log(staleWarning);
  const db: BenchDatabase = await createBenchDatabase();
  log(`database: ${db.description}`);
  const children: ServerProcess[] = [];
  const brokenBy: string[] = [];
  try {
    log(`service: ${cmd.label}; a first start applies the migrations`);
    const migrating = await startServer("service", cmd.args, benchServiceEnv(db.url, SECRETS_KEY, MASTER_KEY));
    log(`  first start (migrations): ${migrating.startMs.toFixed(0)} ms`);
    await migrating.stop();
    let data: Seed | undefined;
    if (ONLY === "authorizations") {
      const timing = { warmup: WARMUP, rounds: ROUNDS, seconds: SECONDS };
      brokenBy.push(...(await runAuthorizationBench({ db, cmd, masterKey: MASTER_KEY, secretsKey: SECRETS_KEY, timing, alternate, log, children, began })));
    } else if (ONLY === "trading") {
      const timing = { warmup: WARMUP, rounds: ROUNDS, seconds: SECONDS };
      brokenBy.push(...(await runTradingBench({ db, cmd, masterKey: MASTER_KEY, secretsKey: SECRETS_KEY, timing, alternate, log, children, began })));
    } else if (ONLY === "cards") {
      const timing = { warmup: WARMUP, rounds: ROUNDS, seconds: SECONDS };
      brokenBy.push(...(await runCardBench({ db, cmd, masterKey: MASTER_KEY, secretsKey: SECRETS_KEY, timing, alternate, log, children, began })));
    } else if (ONLY === "replication") {
      const timing = { warmup: WARMUP, rounds: ROUNDS, seconds: SECONDS };
      brokenBy.push(...(await runReplicationBench({ cmd, masterKey: MASTER_KEY, secretsKey: SECRETS_KEY, timing, alternate, log, children, began })));
    } else if (ONLY === "scan") {
      brokenBy.push(...(await runScanBench({ db, cmd, masterKey: MASTER_KEY, secretsKey: SECRETS_KEY, log, children, began })));
    } else if (ONLY !== "hostile") {
      data = await table(db, cmd, children, brokenBy, began);
      // the hostile rows run on a service of their own: these are idle from here
      for (const child of children.splice(0).reverse()) await child.stop();
    }
    if (ONLY === "all" || ONLY === "hostile") {
      const hostileService = await startServer("service (hostile rows)", cmd.args, {
        ...benchServiceEnv(db.url, SECRETS_KEY, MASTER_KEY),
        HEADERS_TIMEOUT_S: String(Math.min(10, HOSTILE_REQUEST_TIMEOUT_S)),
        REQUEST_TIMEOUT_S: String(HOSTILE_REQUEST_TIMEOUT_S),
        ALLOW_PRIVATE_NETWORK_TARGETS: "true",
        // the default: the wrong-keys row shows a partner's working key is not locked out by it
        RATE_LIMIT_AUTH_FAILURES: "20/300",
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
        `Hostile neighbour rows: a service of their own (${cmd.label}, same environment as above: ROLE=api, the rate limits' quotas out of reach but RATE_LIMIT_AUTH_FAILURES at its default 20/300, so nothing but the request path's own order and bounds protects the victim) ` +
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
