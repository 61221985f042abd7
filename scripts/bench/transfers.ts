/**
 * The transfer rows of `npm run bench` (scripts/bench.ts; docs/performance.md "HTTP: `npm run
 * bench`"): `POST /api/v1/transfers` with user tokens, as the withdrawal rows use them, at
 * {@link TRANSFER_LEVELS} in flight, against the baseline's same statements
 * (scripts/bench/baseline-transfers.ts). Each request in flight moves {@link TRANSFER_BTC} BTC
 * within a pair of users of its own (scripts/bench/seed.ts), so the requests share no advisory
 * lock, no wallet and no ledger row: what limits them is the service's and PostgreSQL's CPU.
 *
 * Before the load, one transfer on each side between the same two wallets must answer the same
 * `Transfer` (ids and times aside) and write the same rows per table; after it, the ledger's
 * invariants must hold.
 */
import { ActivitySampler } from "./activity.js";
import { ledgerProblems, rowsWrittenBy } from "./checks.js";
import { runTransfers, type Target } from "./load.js";
import type { ServerProcess } from "./processes.js";
import { compareRow, fmt, Side, type Row, type SideRun } from "./report.js";
import { TRANSFER_BTC, type TransferPair } from "./seed.js";

/** Transfers in flight of the three rows, interleaved in each round. */
export const TRANSFER_LEVELS = [4, 16, 32] as const;
/** The level that carries the target. */
export const TRANSFER_TARGET_LEVEL = 16;
/** Target ratio (service / same SQL) at {@link TRANSFER_TARGET_LEVEL}. */
export const TRANSFER_TARGET = 0.5;
/** "Rising": each level's transfers/s at least 5 % above the previous level's. */
const RISING = 1.05;
/** The tables a transfer may write (the withdrawal-only ones included: a transfer must write none of them). */
const TABLES = ["transfer", "journal_entry", "ledger_posting", "wallet_transaction", "idempotency_key", "withdrawal", "outbox_email", "webhook_delivery"];

/**
 * One transfer of {@link TRANSFER_BTC} BTC from `pair.a` to `pair.b` through `base` (a's token).
 * @returns the answer's status and `data` with `transfer_id`, `idempotency_key` and `created_at` masked, as JSON.
 */
async function oneTransfer(base: string, pair: TransferPair, key: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/transfers`, {
    method: "POST",
    headers: { authorization: `Bearer ${pair.a.token}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ from_wallet_id: pair.a.walletId, to_wallet_id: pair.b.walletId, currency: "btc", amount: Number(TRANSFER_BTC) }),
  });
  const body = (await res.json()) as { data?: Record<string, unknown>; errors?: unknown };
  const data = body.data ? { ...body.data, transfer_id: "…", idempotency_key: "…", created_at: "…" } : body.errors;
  return JSON.stringify([res.status, data]);
}

/**
 * One transfer through the service, then one through the baseline, between the same wallets.
 * @returns the rows one transfer writes per table.
 * @throws when an answer is not a 201, the answers differ, or the sides write different rows.
 */
export async function checkTransferPair(databaseUrl: string, service: string, baseline: string, pair: TransferPair): Promise<Record<string, number>> {
  const sides = [];
  for (const [name, base] of [["service", service], ["baseline", baseline]] as const) {
    const key = `bench-transfer-check-${name}-${Date.now()}`;
    sides.push(await rowsWrittenBy(databaseUrl, TABLES, () => oneTransfer(base, pair, key)));
  }
  const [a, b] = sides as [{ rows: Record<string, number>; value: string }, { rows: Record<string, number>; value: string }];
  if (!a.value.startsWith("[201,") || a.value !== b.value) throw new Error(`a transfer answers differently:\n  service  ${a.value}\n  baseline ${b.value}`);
  if (JSON.stringify(a.rows) !== JSON.stringify(b.rows)) throw new Error(`a transfer writes different rows: service ${JSON.stringify(a.rows)}, baseline ${JSON.stringify(b.rows)}`);
  return a.rows;
}

/** What the transfer scenario needs from the benchmark. */
export interface TransferScenario {
  service: Target;
  baseline: Target;
  pairs: readonly TransferPair[];
  databaseUrl: string;
  /** The children whose exit breaks the run. */
  servers: ServerProcess[];
  /** scripts/bench/report.ts `alternator`'s runner. */
  alternate: (label: string, sides: SideRun[], servers: ServerProcess[]) => Promise<void>;
}

/** The transfer rows and their footnotes. */
export interface TransferReport {
  rows: Row[];
  /** Per level: CPU of each side, PostgreSQL's lock waits, spread of the runs. */
  cpu: string[];
  locks: string[];
  spread: string[];
  /** The ledger's problems after the load (empty: consistent). */
  ledger: string[];
}

/**
 * Runs the levels interleaved in each round (service 4, same SQL 4, service 16, …), sampling
 * PostgreSQL's activity during each run, then checks the ledger.
 * @returns the rows (one per level, the one of {@link TRANSFER_TARGET_LEVEL} with its target, and "rising").
 */
export async function runTransferScenario(s: TransferScenario): Promise<TransferReport> {
  const levels = TRANSFER_LEVELS.map((level) => ({ level, service: new Side(`service ${level}`), baseline: new Side(`same SQL ${level}`) }));
  const run = (t: Target, level: number) => async (seconds: number) => {
    const sampler = new ActivitySampler(s.databaseUrl);
    await sampler.start();
    const result = await runTransfers(t, s.pairs, seconds, level);
    return { ...result, activity: await sampler.stop() };
  };
  await s.alternate(
    `transfers, ${TRANSFER_LEVELS.join(", ")} in flight, interleaved`,
    levels.flatMap((l) => [
      { side: l.service, run: run(s.service, l.level) },
      { side: l.baseline, run: run(s.baseline, l.level) },
    ]),
    s.servers,
  );
  const report: TransferReport = { rows: [], cpu: [], locks: [], spread: [], ledger: [] };
  for (const { level, service, baseline } of levels) {
    report.rows.push(compareRow(`transfers, ${level} in flight (transfers/s, latency)`, service, baseline, level === TRANSFER_TARGET_LEVEL ? TRANSFER_TARGET : null));
    report.cpu.push(`transfers ${level} in flight: service ${service.cpu}, same SQL ${baseline.cpu}, CPU/transfer ratio ${fmt(baseline.cpuMs / service.cpuMs, 2)}`);
    report.locks.push(`${level} in flight: service ${service.locks}; same SQL ${baseline.locks}`);
    report.spread.push(`transfers ${level} in flight: service ${service.spread}, same SQL ${baseline.spread}`);
  }
  const rates = levels.map((l) => l.service.rate);
  report.rows.push({
    scenario: `transfers rising with concurrency (${TRANSFER_LEVELS.join(" → ")})`,
    rate: rates.map((r) => fmt(r)).join(" → "),
    p50: "—",
    p99: "—",
    baseline: levels.map((l) => fmt(l.baseline.rate)).join(" → "),
    ratio: "—",
    target: "rising",
    ok: rates.every((r, i) => i === 0 || r >= RISING * (rates[i - 1] as number)) ? "yes" : "NO",
  });
  report.ledger = await ledgerProblems(s.databaseUrl);
  return report;
}
