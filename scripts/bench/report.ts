/**
 * The report of `npm run bench` (scripts/bench.ts): each side's measured runs and their medians
 * ({@link Side}), the rounds alternating the sides of a scenario ({@link alternator}), and the
 * table's rows (service against baseline, ratio, target).
 */
import type { RunResult } from "./load.js";
import type { ServerProcess } from "./processes.js";

/** The median of the numbers that are not NaN (NaN when none). */
export const median = (values: number[]): number => {
  const sorted = [...values].filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** The measured runs of one side of a scenario, with every unexpected answer of its runs (warm-up included). */
export class Side {
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
export function assertAlive(servers: ServerProcess[]): void {
  for (const server of servers) {
    const exited = server.exited();
    if (exited !== null) throw new Error(`the ${server.name} exited (${exited}) during the load:\n${server.output().slice(-4000)}`);
  }
}

/** Seconds of each measured run, measured runs per side, seconds of each side's warm-up. */
export interface Timing {
  seconds: number;
  rounds: number;
  warmup: number;
}

/** One side of a scenario and how to run it for some seconds. */
export interface SideRun {
  side: Side;
  run: (seconds: number) => Promise<RunResult>;
}

/**
 * `alternate(label, sides, servers)`: runs each side's warm-up, then `timing.rounds` rounds
 * alternating the sides, logging each measured run; throws when one of `servers` has exited.
 */
export function alternator(timing: Timing, log: (line: string) => void): (label: string, sides: SideRun[], servers: ServerProcess[]) => Promise<void> {
  return async (label, sides, servers) => {
    log(`- ${label}`);
    for (const { side, run } of sides) {
      side.add(await run(timing.warmup), false);
      assertAlive(servers);
    }
    for (let round = 0; round < timing.rounds; round++) {
      for (const { side, run } of sides) {
        const result = await run(timing.seconds);
        assertAlive(servers);
        side.add(result, true);
        log(
          `    ${side.name.padEnd(11)} ${result.rate.toFixed(0).padStart(6)}/s  p50 ${result.p50.toFixed(1)} ms  p99 ${result.p99.toFixed(1)} ms  ` +
            `cpu client/server/postgres ${result.clientCpu.toFixed(0)}/${result.serverCpu.toFixed(0)}/${result.dbCpu.toFixed(0)} %`,
        );
      }
    }
  };
}

/** One line of the table, every cell already formatted. */
export interface Row {
  scenario: string;
  rate: string;
  p50: string;
  p99: string;
  baseline: string;
  ratio: string;
  target: string;
  ok: string;
}

/** `n` with thousands separators and `digits` decimals; — for NaN. */
export const fmt = (n: number, digits = 0): string => (Number.isNaN(n) ? "—" : n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }));

/** A comparison row: the service's side against a baseline's; `target` null is informative. */
export function compareRow(scenario: string, service: Side, baseline: Side, target: number | null): Row {
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

/** Prints `rows` as a Markdown table on stdout. */
export function printTable(rows: Row[]): void {
  const header: Row = { scenario: "scenario", rate: "req/s", p50: "p50 ms", p99: "p99 ms", baseline: "baseline req/s", ratio: "ratio", target: "target", ok: "ok?" };
  const keys = Object.keys(header) as (keyof Row)[];
  const widths = keys.map((k) => Math.max(...[header, ...rows].map((r) => r[k].length)));
  const line = (r: Row): string => `| ${keys.map((k, i) => (i === 0 || k === "ok" || k === "target" ? r[k].padEnd(widths[i] as number) : r[k].padStart(widths[i] as number))).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`);
  for (const r of rows) console.log(line(r));
}

