/**
 * The service through PgBouncer, side by side (docs/performance.md "Through PgBouncer";
 * docs/operations.md "PgBouncer"): one more service of the same build on the same database, with
 * `DATABASE_URL` through a PgBouncer in transaction mode (`default_pool_size = 10`, the service's own
 * pool size), `DATABASE_SESSION_URL` direct and `DATABASE_POOL_MODE=transaction`, everything else as
 * the table's service (rate limits on: scripts/bench/processes.ts `benchServiceEnv`; its rate-limit
 * pool goes through PgBouncer too). It joins the alternating rounds of two scenarios,
 * {@link BOUNCER_READ} and the withdrawal pairs at {@link BOUNCER_LEVEL} in flight, and each gets a
 * row against the baseline and one against the direct service. PgBouncer is Debian's
 * /usr/sbin/pgbouncer started by tests/support/pgbouncer.ts `startPgBouncer` (the same ini as the
 * integration test: scripts/ may import tests/support, eslint.config.js's layers cover src/ only).
 * Started just before the reads and stopped after the withdrawals.
 */
import { readFileSync } from "node:fs";
import { startPgBouncer, type PgBouncer } from "../../tests/support/pgbouncer.js";
import type { RunResult, Target } from "./load.js";
import { cpuSeconds, processTree, startServer, type ServerProcess } from "./processes.js";
import { compareRow, fmt, median, Side, type Row, type SideRun } from "./report.js";

/** The read scenario (scripts/bench.ts `readScenarios` label) measured also through PgBouncer. */
export const BOUNCER_READ = "currencies, owner key";
/** The withdrawal level (pairs in flight) measured also through PgBouncer. */
export const BOUNCER_LEVEL = 16;
/** PgBouncer's `default_pool_size`: server connections per database and user. */
export const BOUNCER_POOL_SIZE = 10;

/** The footnotes' words for the PgBouncer service. */
export const BOUNCER_SAID = `"${BOUNCER_READ}" and the withdrawals at ${BOUNCER_LEVEL} in flight also ran on one more service of the same build, in the same rounds, with DATABASE_URL through PgBouncer (/usr/sbin/pgbouncer, pool_mode = transaction, default_pool_size = ${BOUNCER_POOL_SIZE}), DATABASE_SESSION_URL direct, DATABASE_POOL_MODE=transaction (scripts/bench/pgbouncer.ts)`;

/** The pid of the PgBouncer this process started (a child of this process's tree named `pgbouncer`). */
function bouncerPid(): number | undefined {
  return processTree(process.pid).find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "pgbouncer";
    } catch {
      return false;
    }
  });
}

/** PgBouncer's counters of the bench database (SHOW STATS): transactions, queries, client wait (µs). */
interface Counters {
  xacts: number;
  queries: number;
  waitUs: number;
}

/** What PgBouncer did during one run of a side. */
interface RunStats {
  /** % of one core the pgbouncer process used. */
  cpu: number;
  /** Server transactions and queries per request (or pair). */
  xactsPerUnit: number;
  queriesPerUnit: number;
  /** Mean time a client waited for a server connection, per transaction, ms. */
  waitMs: number;
}

/** A side through PgBouncer, with what PgBouncer did in each of its runs (the first is the warm-up). */
interface BouncerSide {
  side: Side;
  stats: RunStats[];
}

/** The service through PgBouncer, for {@link BOUNCER_READ} and the withdrawals at {@link BOUNCER_LEVEL}. */
export class BouncerVariant {
  private readonly read: BouncerSide = { side: new Side("pgbouncer"), stats: [] };
  private readonly pairs: BouncerSide = { side: new Side(`pgbouncer ${BOUNCER_LEVEL}`), stats: [] };

  private constructor(
    private readonly bouncer: PgBouncer,
    private readonly server: ServerProcess,
    private readonly target: Target,
    private readonly pid: number | undefined,
    private readonly dbname: string,
    private readonly children: ServerProcess[],
  ) {}

  /**
   * Starts PgBouncer in front of `databaseUrl` and the service (`node args`) with `env` (the
   * table's service environment) but `DATABASE_URL` through it; the service is pushed on
   * `children`. `dbPid`: the embedded PostgreSQL's pid, for its CPU.
   */
  static async start(args: string[], env: Record<string, string>, databaseUrl: string, dbPid: number | undefined, children: ServerProcess[]): Promise<BouncerVariant> {
    const bouncer = await startPgBouncer(databaseUrl, { poolMode: "transaction", defaultPoolSize: BOUNCER_POOL_SIZE });
    try {
      const server = await startServer("service, through PgBouncer", args, {
        ...env,
        DATABASE_URL: bouncer.url,
        DATABASE_SESSION_URL: databaseUrl,
        DATABASE_POOL_MODE: "transaction",
      });
      children.push(server);
      const dbname = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
      return new BouncerVariant(bouncer, server, { base: server.base, pid: server.pid, dbPid }, bouncerPid(), dbname, children);
    } catch (error) {
      await bouncer.stop();
      throw error;
    }
  }

  /** SHOW STATS of the bench database, summed over its rows. */
  private async counters(): Promise<Counters> {
    const rows = (await this.bouncer.show("STATS")).filter((r) => r.database === this.dbname);
    const sum = (k: string): number => rows.reduce((s, r) => s + Number(r[k] ?? 0), 0);
    return { xacts: sum("total_xact_count"), queries: sum("total_query_count"), waitUs: sum("total_wait_time") };
  }

  /** `run` on this service, recording what PgBouncer did during it in `into`. */
  private measured(into: BouncerSide, run: (target: Target) => (seconds: number) => Promise<RunResult>): SideRun {
    const go = run(this.target);
    return {
      side: into.side,
      run: async (seconds) => {
        const before = await this.counters();
        const cpu0 = this.pid === undefined ? Number.NaN : cpuSeconds(this.pid);
        const wall = performance.now();
        const result = await go(seconds);
        const elapsed = (performance.now() - wall) / 1000;
        const cpu = this.pid === undefined ? Number.NaN : (100 * (cpuSeconds(this.pid) - cpu0)) / elapsed;
        const after = await this.counters();
        const units = result.rate * seconds;
        const xacts = after.xacts - before.xacts;
        into.stats.push({
          cpu,
          xactsPerUnit: xacts / units,
          queriesPerUnit: (after.queries - before.queries) / units,
          waitMs: xacts > 0 ? (after.waitUs - before.waitUs) / xacts / 1000 : Number.NaN,
        });
        return result;
      },
    };
  }

  /** This service's side of read scenario `label` (none for another scenario), run by `run(target)`. */
  readSides(label: string, run: (target: Target) => (seconds: number) => Promise<RunResult>): SideRun[] {
    return label === BOUNCER_READ ? [this.measured(this.read, run)] : [];
  }

  /** This service's side of the withdrawals at `level` in flight (none at another level), run by `run(target)`. */
  withdrawalSides(level: number, run: (target: Target) => (seconds: number) => Promise<RunResult>): SideRun[] {
    return level === BOUNCER_LEVEL ? [this.measured(this.pairs, run)] : [];
  }

  /** The rows after read scenario `label`'s own: through PgBouncer against `baseline`, then against `direct` (the table's service). */
  readRows(label: string, direct: Side, baseline: Side): Row[] {
    return label === BOUNCER_READ ? this.rowsOf(label, this.read.side, direct, baseline) : [];
  }

  /** The rows of the withdrawals at {@link BOUNCER_LEVEL} through PgBouncer, against `baseline` and `direct`. */
  withdrawalRows(direct: Side, baseline: Side): Row[] {
    return this.rowsOf(`withdrawals, ${BOUNCER_LEVEL} in flight (pairs/s, pair latency)`, this.pairs.side, direct, baseline);
  }

  private rowsOf(label: string, side: Side, direct: Side, baseline: Side): Row[] {
    return [
      compareRow(`${label}, through PgBouncer (informative)`, side, baseline, null),
      compareRow(`${label}: through PgBouncer vs direct (informative)`, side, direct, null),
    ];
  }

  /** Footnotes: what PgBouncer did per request or pair (medians of the measured runs), its CPU, its pools. */
  async notes(): Promise<string[]> {
    const of = (s: BouncerSide, unit: string): string => {
      const m = (k: keyof RunStats, digits: number): string => fmt(median(s.stats.slice(1).map((r) => r[k])), digits);
      return `${s.side.name}: client/server/postgres ${s.side.cpu}, the pgbouncer process ${m("cpu", 0)} % of a core, ${m("xactsPerUnit", 1)} transactions and ${m("queriesPerUnit", 1)} queries per ${unit}, client wait for a server connection ${m("waitMs", 3)} ms per transaction`;
    };
    const pools = (await this.bouncer.show("POOLS")).filter((r) => r.database === this.dbname);
    const servers = pools.reduce((s, r) => s + Number(r.sv_active ?? 0) + Number(r.sv_idle ?? 0) + Number(r.sv_used ?? 0), 0);
    return [`through PgBouncer (medians of the measured runs): ${of(this.read, "request")}; ${of(this.pairs, "pair")}; ${servers} server connections open at the end`];
  }

  /** Stops the service and PgBouncer, and takes the service off `children`. */
  async stop(): Promise<void> {
    const at = this.children.indexOf(this.server);
    if (at >= 0) this.children.splice(at, 1);
    await this.server.stop();
    await this.bouncer.stop();
  }
}
