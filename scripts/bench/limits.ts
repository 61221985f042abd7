/**
 * The rate limits' cost, side by side (docs/performance.md "Rate limits on"): every row of
 * `npm run bench` runs the service with its four rate limits on, memory-first as in production
 * (scripts/bench/processes.ts `rateLimitEnv("on")`, quotas out of reach). For one scenario,
 * {@link LIMITS_SCENARIO}, two more services of the same build on the same database join its
 * alternating rounds: one with the rate limits off, one with them exact (`RATE_LIMIT_SYNC_MS=0`:
 * every request counted in PostgreSQL, what the limits cost before they were memory-first;
 * src/http/rate-limits.ts). Started just before the reads and stopped after them, so they sit idle
 * through no other row.
 */
import type { RunResult, Target } from "./load.js";
import { rateLimitEnv, startServer, type RateLimitMode, type ServerProcess } from "./processes.js";
import { compareRow, Side, type Row, type SideRun } from "./report.js";

/** The read scenario (scripts/bench.ts `readScenarios` label) measured also with the limits off and exact. */
export const LIMITS_SCENARIO = "currencies, owner key";

/** The footnotes' words for the variants. */
export const LIMITS_SAID = `"${LIMITS_SCENARIO}" also ran on two more services of the same build on the same database, in the same rounds: rate limits off, and exact (RATE_LIMIT_SYNC_MS=0: every request counted in PostgreSQL; scripts/bench/limits.ts)`;

/** The variants besides the table's own service (limits on), in their order in the rounds and the table. */
const VARIANTS = [
  { mode: "off", side: "limits off", row: "limits off" },
  { mode: "exact", side: "exact", row: "exact limits (RATE_LIMIT_SYNC_MS=0)" },
] as const satisfies readonly { mode: RateLimitMode; side: string; row: string }[];

/** A started variant of the service and its side of the scenario. */
interface Variant {
  server: ServerProcess;
  target: Target;
  side: Side;
  row: string;
}

/** The services with the rate limits off and exact, for {@link LIMITS_SCENARIO}. */
export class LimitVariants {
  private constructor(
    private readonly variants: Variant[],
    private readonly children: ServerProcess[],
  ) {}

  /**
   * Starts one service per variant: `node args` with `env` (the table's service environment) and
   * that variant's rate-limit variables; each is pushed on `children` (a server exiting during the
   * load breaks the run). `dbPid`: the embedded PostgreSQL's pid, for its CPU.
   */
  static async start(args: string[], env: Record<string, string>, dbPid: number | undefined, children: ServerProcess[]): Promise<LimitVariants> {
    const variants: Variant[] = [];
    for (const v of VARIANTS) {
      const server = await startServer(`service, ${v.side}`, args, { ...env, ...rateLimitEnv(v.mode) });
      children.push(server);
      variants.push({ server, target: { base: server.base, pid: server.pid, dbPid }, side: new Side(v.side), row: v.row });
    }
    return new LimitVariants(variants, children);
  }

  /** The variants' sides of scenario `label` (none for another scenario), run by `run(target)`. */
  sides(label: string, run: (target: Target) => (seconds: number) => Promise<RunResult>): SideRun[] {
    if (label !== LIMITS_SCENARIO) return [];
    return this.variants.map((v) => ({ side: v.side, run: run(v.target) }));
  }

  /**
   * The rows after scenario `label`'s own (none for another scenario): each variant against the
   * same `baseline` (informative), then the limits on (`on`, the table's service) against the
   * limits off: their ratio is what the limits cost this route.
   */
  rows(label: string, on: Side, baseline: Side): Row[] {
    if (label !== LIMITS_SCENARIO) return [];
    const rows = this.variants.map((v) => compareRow(`${label}, ${v.row} (informative)`, v.side, baseline, null));
    const off = this.variants.find((v) => v.side.name === "limits off");
    if (off) rows.push(compareRow(`${label}: limits on vs limits off (informative)`, on, off.side, null));
    return rows;
  }

  /** Stops the variants' services and takes them off `children`. */
  async stop(): Promise<void> {
    for (const { server } of this.variants) {
      const at = this.children.indexOf(server);
      if (at >= 0) this.children.splice(at, 1);
      await server.stop();
    }
  }
}
