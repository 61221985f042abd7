/**
 * The wrk column of the read rows (docs/performance.md "What an authenticated read costs"): each
 * authenticated read (currencies, balance with the owner key and with a user token) also runs with
 * wrk (C, one thread, `connections` connections), `WRK_READ_ROUNDS` alternating runs of
 * `WRK_READ_SECONDS` per side, service then the bare node:http + pg baseline; the table prints both
 * ratios per row, autocannon's and wrk's. autocannon's own CPU (it runs in the bench's process on the
 * same cores) caps the faster side more than the slower, so its ratios read higher than wrk's.
 * Without wrk on the PATH the column is skipped with {@link WRK_MISSING}.
 */
import { spawnSync } from "node:child_process";
import { runWrk, type Target } from "./load.js";
import { fmt, median } from "./report.js";

/** Runs per side, and seconds per run, of the read rows' wrk column. */
export const WRK_READ_ROUNDS = 2;
export const WRK_READ_SECONDS = 6;

/** The wrk ratio each authenticated read must reach (service / bare node:http + pg). */
export const WRK_READ_TARGET = 0.6;

/** What the bench prints when wrk is not installed. */
export const WRK_MISSING =
  "wrk is not installed: the wrk column of the read rows (and the wrk cross-check) is skipped. Install it with `sudo apt-get install -y wrk` (Debian/Ubuntu package wrk; `brew install wrk` on macOS) and rerun.";

/** Whether `wrk` runs here. */
export function wrkInstalled(): boolean {
  const probe = spawnSync("wrk", ["-v"], { encoding: "utf8" });
  return !(probe.error && (probe.error as NodeJS.ErrnoException).code === "ENOENT");
}

/** One read row's two ratios. */
export interface WrkReadLine {
  label: string;
  /** service / baseline req/s with autocannon (the main table's ratio). */
  autocannonRatio: number;
  /** Medians of the wrk runs, req/s. */
  wrkService: number;
  wrkBaseline: number;
  target: number | null;
  /** Unexpected answers seen by wrk on either side (non-2xx, socket errors). */
  unexpected: number;
}

/**
 * Runs the wrk column of one read row: `rounds` × (service, baseline) runs of `seconds`, alternating.
 * `afterRun` is called after each run (the bench checks its children are alive).
 * @returns undefined when wrk is not installed.
 */
export function wrkReadRatios(
  read: { label: string; path: string; headers: Record<string, string>; expected: number },
  autocannonRatio: number,
  sides: { service: Target; baseline: Target },
  options: { connections: number; rounds?: number; seconds?: number; afterRun?: () => void },
): WrkReadLine | undefined {
  const rates: [number[], number[]] = [[], []];
  let unexpected = 0;
  for (let round = 0; round < (options.rounds ?? WRK_READ_ROUNDS); round++) {
    for (const [i, target] of [sides.service, sides.baseline].entries()) {
      const run = runWrk(target, read.path, read.expected, options.seconds ?? WRK_READ_SECONDS, options.connections, read.headers);
      options.afterRun?.();
      if (!run) return undefined;
      unexpected += run.unexpected;
      rates[i]?.push(run.rate);
    }
  }
  return { label: read.label, autocannonRatio, wrkService: median(rates[0]), wrkBaseline: median(rates[1]), target: WRK_READ_TARGET, unexpected };
}

/** Prints the read rows with both ratios as a Markdown table on stdout, or why the wrk column is missing. */
export function printWrkReads(lines: WrkReadLine[], connections: number): void {
  if (!wrkInstalled()) {
    console.log(WRK_MISSING);
    return;
  }
  if (lines.length === 0) return;
  console.log(`Authenticated reads, both clients (wrk -t1 -c${connections}: medians of ${WRK_READ_ROUNDS} alternating runs of ${WRK_READ_SECONDS} s per side; baseline: bare node:http + pg):`);
  console.log("| read | autocannon ratio | wrk service req/s | wrk baseline req/s | wrk ratio | target | ok? |");
  console.log("|:--|--:|--:|--:|--:|--:|:--|");
  for (const l of lines) {
    const ratio = l.wrkService / l.wrkBaseline;
    const target = l.target === null ? "—" : `≥ ${l.target.toFixed(2)}`;
    const verdict = l.unexpected > 0 ? `BROKEN (${l.unexpected} unexpected answers): not trusted` : l.target === null ? "—" : ratio >= l.target ? "yes" : "NO";
    console.log(`| ${l.label} | ${fmt(l.autocannonRatio, 2)} | ${fmt(l.wrkService)} | ${fmt(l.wrkBaseline)} | ${fmt(ratio, 2)} | ${target} | ${verdict} |`);
  }
}
