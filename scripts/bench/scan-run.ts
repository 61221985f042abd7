/**
 * `BENCH_ONLY=scan npm run bench` (scripts/bench.ts dispatches here; docs/performance.md "Chains:
 * the scan row"; the follower is docs/decisions/live-chains.md "Deposits"): the live ethereum
 * follower scanning a pre-built chain from block 0, against a bare loop making the same JSON-RPC
 * calls (scripts/bench/baseline-scan.ts).
 *
 * 1. Anvil with the test token (scripts/bench/scan-chain.ts); the service started with `ROLE=api`
 *    (no follower yet) and the chain's variables (`CHAIN_ETHEREUM_RPC_URL`, `_TOKENS=usdt=…:6`,
 *    `_CONFIRMATIONS` {@link CONFIRMATIONS}, `_START_BLOCK=0`, `_SWEEP_MIN` out of reach (no sweeps),
 *    `DATA_DIR` a temporary folder for the custody mnemonic); `BENCH_SCAN_WALLETS` wallets created through the API, their deposit
 *    addresses kept; the service stopped.
 * 2. The chain built: `BENCH_SCAN_BLOCKS` blocks holding `BENCH_SCAN_TRANSFERS` transfers, native
 *    and token alternately, `BENCH_SCAN_DEPOSITS` of them to the deposit addresses.
 * 3. The bare loop over the whole chain; then the service started with `ROLE=all` (its follower
 *    runs every 2 s), watched until its cursor is at the head and every deposit is credited: blocks/s
 *    from its cursor's creation (its first run) to the last credit; VmRSS sampled every 250 ms; then
 *    the bare loop again (the baseline is the faster of the two).
 * 4. The live phase: `BENCH_SCAN_LIVE` blocks one every {@link LIVE_INTERVAL_MS} ms with one deposit
 *    each, then empty ones until all are credited: the delay from the threshold block's mining to
 *    `credited_at`, p50 and p99.
 * 5. `npm run ledger:check` with the chain's variables: the ledger against what the deposit
 *    addresses hold on the chain.
 * `BENCH_SCAN_CPU_PROF=<folder>`: the follower's service runs with `--cpu-prof` into that folder (open the `.cpuprofile` in Chrome DevTools).
 * Broken run: a setup step fails, the bare loop does not find the deposits the chain holds, the
 * follower records other deposits than those or does not credit them all in time, or the ledger check fails.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { bareScan, BARE_BATCH, type BareScan } from "./baseline-scan.js";
import { runLedgerCheck } from "./checks.js";
import type { BenchDatabase } from "./database.js";
import { benchServiceEnv, startServer, type ServerProcess } from "./processes.js";
import { fmt, printTable, type Row } from "./report.js";
import { buildScanChain, SENDERS, startScanChain, STRANGERS, TOKEN_DECIMALS } from "./scan-chain.js";
import { FLAT_RULE, liveDelays, rssVerdict, seedScanWallets, watchScan } from "./scan-service.js";

/** A positive integer from `name`, else `fallback`. @throws Error on anything else. */
const sizeEnv = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
};

/** The chain's size: the head's height, transfers, of which deposits; wallets receiving them; live-phase deposits. */
export const SCAN_BLOCKS = sizeEnv("BENCH_SCAN_BLOCKS", 5_000);
export const SCAN_TRANSFERS = sizeEnv("BENCH_SCAN_TRANSFERS", 20_000);
export const SCAN_DEPOSITS = sizeEnv("BENCH_SCAN_DEPOSITS", 2_000);
export const SCAN_WALLETS = sizeEnv("BENCH_SCAN_WALLETS", 100);
export const SCAN_LIVE = sizeEnv("BENCH_SCAN_LIVE", 100);
/** `CHAIN_ETHEREUM_CONFIRMATIONS` of the row (ethereum's default). */
export const CONFIRMATIONS = 12;
/** The live phase's pace: a block every this many ms. */
export const LIVE_INTERVAL_MS = 250;
/** The row's target: the service's blocks/s at least this share of the bare loop's. */
export const SCAN_TARGET = 0.5;
/** `CHAIN_ETHEREUM_SWEEP_MIN` of both currencies: far above what any deposit address receives here, so nothing is swept. */
const NO_SWEEP = "999999999999";
/** Seconds the scan, and the live phase, may take before the run is broken. */
const TIMEOUT_S = 240;

/** What the run needs from scripts/bench.ts. */
export interface ScanRun {
  db: BenchDatabase;
  cmd: { args: string[]; label: string };
  masterKey: string;
  secretsKey: string;
  log: (line: string) => void;
  /** The children started here are pushed here (the caller stops them). */
  children: ServerProcess[];
  began: { at: number; load0: number[] };
}

/** p-th percentile (0–100) of `values`, nearest rank; NaN when empty. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/** Runs the scan row. @returns what broke the run (empty: a trusted run). */
export async function runScanBench(r: ScanRun): Promise<string[]> {
  const broken: string[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), "bench-scan-"));
  r.log(`chain: Anvil, the test token, ${SENDERS} funded senders…`);
  const chain = await startScanChain();
  const anvilPid = chain.anvil.process.pid as number;
  try {
    const env = {
      ...benchServiceEnv(r.db.url, r.secretsKey, r.masterKey),
      DATA_DIR: dataDir,
      CHAIN_ETHEREUM_RPC_URL: chain.anvil.url,
      CHAIN_ETHEREUM_TOKENS: `usdt=${chain.token}:${TOKEN_DECIMALS}`,
      CHAIN_ETHEREUM_CONFIRMATIONS: String(CONFIRMATIONS),
      CHAIN_ETHEREUM_START_BLOCK: "0",
      // no sweeps (docs/decisions/live-chains.md "Sweeps"): the row measures the follower, and the
      // live phase's blocks hold only the transfers it mines
      CHAIN_ETHEREUM_SWEEP_MIN: `eth=${NO_SWEEP},usdt=${NO_SWEEP}`,
    };
    const api = await startServer("service (ROLE=api, seeding)", r.cmd.args, env);
    r.children.push(api);
    r.log(`seeding ${SCAN_WALLETS} ethereum wallets (eth, usdt) through the API…`);
    const addresses = await seedScanWallets(api.base, r.masterKey, SCAN_WALLETS);
    await api.stop();
    r.children.splice(r.children.indexOf(api), 1);

    r.log(`building the chain: ${fmt(SCAN_BLOCKS)} blocks, ${fmt(SCAN_TRANSFERS)} transfers, ${fmt(SCAN_DEPOSITS)} to the deposit addresses…`);
    const built = await buildScanChain(chain, { blocks: SCAN_BLOCKS, transfers: SCAN_TRANSFERS, deposits: SCAN_DEPOSITS, tail: CONFIRMATIONS - 1 }, addresses, r.log);
    r.log(`  built in ${fmt(built.seconds, 1)} s: head ${built.head}, ${built.native} native and ${built.tokenTransfers} token transfers`);

    const range = { from: 0, to: built.head };
    const addressSet = new Set(addresses);
    const bare: BareScan[] = [await bareScan(chain.anvil.url, range, [chain.token], addressSet)];
    r.log(`  bare loop: ${fmt(bare[0]!.rate)} blocks/s (${fmt(bare[0]!.seconds, 2)} s, ${bare[0]!.deposits} deposits found)`);

    r.log("the service (ROLE=all) started, its follower scanning from block 0…");
    const scan = await watchScan(
      r.db.url,
      r.db.serverPid,
      async () => {
        const profile = process.env.BENCH_SCAN_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_SCAN_CPU_PROF}`] : [];
        const started = await startServer("service (ROLE=all, follower)", [...profile, ...r.cmd.args], { ...env, ROLE: "all" });
        r.children.push(started);
        return started;
      },
      anvilPid,
      built.head,
      built.deposits,
      TIMEOUT_S,
    );
    const service = scan.service;
    const rate = (built.head + 1) / scan.seconds;
    r.log(`  service: ${fmt(rate)} blocks/s (${fmt(scan.seconds, 2)} s from its first run; head reached at ${fmt((scan.headAt - scan.cursorAt) / 1000, 2)} s)`);
    if (scan.seen !== built.deposits) broken.push(`the follower recorded ${scan.seen} deposits, the chain holds ${built.deposits}`);

    bare.push(await bareScan(chain.anvil.url, range, [chain.token], addressSet));
    r.log(`  bare loop again: ${fmt(bare[1]!.rate)} blocks/s`);
    for (const b of bare) if (b.deposits !== built.deposits) broken.push(`the bare loop found ${b.deposits} deposits, the chain holds ${built.deposits}`);
    const best = bare.reduce((a, b) => (b.rate > a.rate ? b : a));

    r.log(`live phase: ${SCAN_LIVE} blocks with a deposit each, one every ${LIVE_INTERVAL_MS} ms, then empty ones until all are credited…`);
    const live = await liveDelays({ chain, databaseUrl: r.db.url, service, addresses, firstIndex: built.deposits, count: SCAN_LIVE, intervalMs: LIVE_INTERVAL_MS, confirmations: CONFIRMATIONS, timeoutS: TIMEOUT_S });
    await service.stop();
    r.children.splice(r.children.indexOf(service), 1);
    const ledger = await runLedgerCheck(env);
    if (!ledger.clean) broken.push(`npm run ledger:check after the scan: ${ledger.verdict}`);

    const rss = rssVerdict(scan.rssMb);
    const ratio = rate / best.rate;
    const rows: Row[] = [
      {
        scenario: `Chain scan from block 0: ${fmt(built.head + 1)} blocks, ${fmt(built.transfers)} transfers, ${fmt(built.deposits)} deposits credited (blocks/s)`,
        rate: fmt(rate),
        p50: "—",
        p99: "—",
        baseline: fmt(best.rate),
        ratio: fmt(ratio, 2),
        target: `≥ ${SCAN_TARGET.toFixed(2)}`,
        ok: ratio >= SCAN_TARGET ? "yes" : "NO",
      },
      {
        scenario: `Chain scan: service RSS MB start ${fmt(rss.start)} → peak ${fmt(rss.peak)} → end ${fmt(rss.end)}`,
        rate: "—",
        p50: "—",
        p99: "—",
        baseline: "—",
        ratio: "—",
        target: "flat",
        ok: rss.flat ? "yes" : "NO",
      },
      {
        scenario: `Live deposits: threshold block mined → credited (ms; ${live.delaysMs.length} deposits, ${CONFIRMATIONS} confirmations)`,
        rate: "—",
        p50: fmt(percentile(live.delaysMs, 50)),
        p99: fmt(percentile(live.delaysMs, 99)),
        baseline: "—",
        ratio: "—",
        target: "report",
        ok: "—",
      },
    ];
    const load1 = loadavg();
    console.log("");
    printTable(rows);
    console.log("");
    console.log(
      `Chain: Anvil (--accounts ${SENDERS + 1}), automine off, each block one JSON-RPC batch of eth_sendTransaction from ${SENDERS} funded accounts (nonces, gas and fees given) then evm_mine; blocks 1–${built.firstTransferBlock - 1} ` +
        `the token's deploy and mints, then ${fmt(built.transfers)} transfers (${fmt(built.native)} native, ${fmt(built.tokenTransfers)} of the ERC-20 usdt, 6 decimals) spread over the blocks up to ${built.head - (CONFIRMATIONS - 1)}, the last ${CONFIRMATIONS - 1} empty; ` +
        `every ${fmt(built.transfers / built.deposits)}th transfer pays one of ${SCAN_WALLETS} wallets' deposit addresses (created through the API, native and token alternately), the others ${STRANGERS} addresses nobody holds, in turn. Built in ${fmt(built.seconds, 1)} s.`,
    );
    console.log(
      `Service: ${r.cmd.label}, ROLE=all (the follower job every 2 s, rounds of at most 25 batches of ${BARE_BATCH} blocks, the next batch read while one is written, and up to 200 credits a round, 20 per transaction, beside the next round), CHAIN_ETHEREUM_START_BLOCK=0, CHAIN_ETHEREUM_CONFIRMATIONS=${CONFIRMATIONS}, CHAIN_ETHEREUM_SWEEP_MIN out of reach (no sweeps), LOG_LEVEL=silent. ` +
        `Its rate: ${fmt(built.head + 1)} blocks / the seconds from its first run (its cursor appearing, ${fmt((scan.cursorAt - scan.spawnedAt) / 1000, 2)} s after the spawn; /healthz answered at ${fmt((scan.readyAt - scan.spawnedAt) / 1000, 2)} s) to the last of the ${fmt(built.deposits)} credits (${fmt(scan.seconds, 2)} s; the cursor reached the head at ${fmt((scan.headAt - scan.cursorAt) / 1000, 2)} s). ` +
        `Of that, about ${fmt(scan.scanS, 2)} s storing batches (stretches ended by the cursor moving), ${fmt(scan.creditS, 2)} s crediting (ended by a credit) and ${fmt(scan.stalledS, 2)} s waiting between the follower's runs (over 0.6 s with nothing moving; the database looked at every 25 ms). CPU over the scan: service ${fmt(scan.serviceCpu, 2)} s, PostgreSQL ${fmt(scan.dbCpu, 2)} s, Anvil ${fmt(scan.anvilCpu, 2)} s.`,
    );
    console.log(
      `Bare loop (scripts/bench/baseline-scan.ts, in this process, fetch, no database): per ${BARE_BATCH} blocks one JSON-RPC batch of ${BARE_BATCH} eth_getBlockByNumber(full) + 1 eth_getLogs, then one batch of the receipts of native transfers to deposit addresses; ` +
        `${fmt(bare[0]!.requests)} requests, ${fmt(bare[0]!.receipts)} receipts, ${bare[0]!.deposits} deposits found. Runs: ${bare.map((b) => `${fmt(b.rate)} blocks/s (${fmt(b.seconds, 2)} s)`).join(" before the service, ")} after; the baseline is the faster.`,
    );
    console.log(`RSS: VmRSS of /proc/<pid>/status every 250 ms from the first run to the last credit (${scan.rssMb.length} samples); flat = ${FLAT_RULE} (here ${fmt(rss.end - rss.start, 1)} MB and ${fmt(rss.climb, 1)} MB).`);
    console.log(
      `Live phase: after the scan, ${SCAN_LIVE} blocks one every ${LIVE_INTERVAL_MS} ms each with one deposit (native and token alternately) and 3 other transfers, then empty blocks at the same pace (${live.blocks} blocks in all); ` +
        `delay = chain_deposit.credited_at (PostgreSQL's now() at the credit) − the moment evm_mine of the deposit's block + ${CONFIRMATIONS - 1} answered (this machine's clock). The follower's 2 s interval dominates it.`,
    );
    console.log(`Database: ${r.db.description}. Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}; load average ${r.began.load0.map((l) => l.toFixed(2)).join(" ")} before, ${load1.map((l) => l.toFixed(2)).join(" ")} after.`);
    console.log(`Ledger: npm run ledger:check with the chain's variables after the live phase: ${ledger.verdict}`);
    console.log(`Run: ${fmt((performance.now() - r.began.at) / 1000)} s in all.`);
    return broken;
  } finally {
    await chain.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
