/**
 * Child processes of the benchmark: the service (`node dist/main.js` when built, else
 * `node --import tsx src/main.ts`, with the Node running the benchmark) and the baseline servers,
 * each on a free loopback port; how long a start takes to its first `/healthz` 200; and what
 * /proc says about a process (VmRSS, VmHWM, CPU time, its process tree).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { request } from "node:http";
import { resolve } from "node:path";
import { freePort } from "../../src/db/embedded.js";

export const ROOT = resolve(import.meta.dirname, "../..");

/** A running child server. */
export interface ServerProcess {
  name: string;
  pid: number;
  port: number;
  base: string;
  /** Milliseconds from spawn to the first `/healthz` 200. */
  startMs: number;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
  /** How it exited (`code 1`, `signal SIGKILL`), or null while it runs. */
  exited(): string | null;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** The newest modification time (ms) of the files under `dir`, recursively. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = resolve(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Node's flags of `npm start` (package.json `scripts.start`: the words between `node` and
 * `dist/main.js`, e.g. the heap sizes), so the benchmark measures the service as it is started.
 */
export function startFlags(): string[] {
  const start = (JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.start ?? "";
  return (/\bnode\s+(.*?)\s*dist\/main\.js/.exec(start)?.[1] ?? "").split(/\s+/).filter((w) => w !== "");
}

/**
 * How the service is started: the built entry point with `npm start`'s Node flags
 * ({@link startFlags}) when there is one, else through tsx. `stale` says when a file under src/ is
 * newer than every file under dist/ (the build may not be the code of src/: run `npm run build`;
 * an incremental build rewrites only the outputs that changed, so dist/main.js alone can be older).
 */
export function serviceCommand(): { args: string[]; label: string; stale: boolean } {
  const built = resolve(ROOT, "dist/main.js");
  if (!existsSync(built)) return { args: ["--import", "tsx", "src/main.ts"], label: "node --import tsx src/main.ts (no dist/main.js)", stale: false };
  const flags = startFlags();
  return { args: [...flags, "dist/main.js"], label: ["node", ...flags, "dist/main.js"].join(" "), stale: newestMtime(resolve(ROOT, "src")) > newestMtime(resolve(ROOT, "dist")) };
}

/** One GET of `/healthz` on 127.0.0.1:`port`; resolves with the status, or 0 when the connection fails. */
function probe(port: number): Promise<number> {
  return new Promise((done) => {
    const req = request({ host: "127.0.0.1", port, path: "/healthz", agent: false }, (res) => {
      res.resume();
      res.on("end", () => done(res.statusCode ?? 0));
    });
    req.on("error", () => done(0));
    req.end();
  });
}

/**
 * The transfer caps of the benchmark's service (`TRANSFER_CAPS`): btc's raised so far that the
 * transfer lanes never reach them (the default daily 5 BTC per sender would stop a long run), while
 * the caps check still runs in full: lock, the customer's own caps, the sender's sums.
 */
export const BENCH_TRANSFER_CAPS = JSON.stringify({ btc: { perTransaction: "1000", daily: "1000000000", monthly: "1000000000" } });

/**
 * The quota of each of the four rate limits in the benchmark (`RATE_LIMIT_IP`, `RATE_LIMIT_CREDENTIAL`,
 * `RATE_LIMIT_AUTH_FAILURES`, `RATE_LIMIT_CODES`; src/config.ts: `<requests>/<window seconds>`, at most
 * 9 and 6 digits): 10⁸ per 60 s, out of reach of one load generator (the default `ip` bucket,
 * 6000/60, would hold it to 100 req/s), while every request is still counted in every bucket it
 * meets (docs/performance.md "Rate limits on").
 */
export const BENCH_RATE_QUOTA = "100000000/60";

/**
 * How the benchmark's service runs its rate limits (src/http/rate-limits.ts): `on` as in production,
 * memory-first with `RATE_LIMIT_SYNC_MS` at its default (1000); `exact` with `RATE_LIMIT_SYNC_MS=0`
 * (every request counted in PostgreSQL); `off` without them. `on` and `exact` with the quotas of
 * {@link BENCH_RATE_QUOTA}.
 */
export type RateLimitMode = "on" | "exact" | "off";

/** The rate-limit variables of the service's environment in `mode` ({@link RateLimitMode}). */
export function rateLimitEnv(mode: RateLimitMode): Record<string, string> {
  const quota = mode === "off" ? "off" : BENCH_RATE_QUOTA;
  return {
    RATE_LIMIT_IP: quota,
    RATE_LIMIT_CREDENTIAL: quota,
    RATE_LIMIT_AUTH_FAILURES: quota,
    RATE_LIMIT_CODES: quota,
    ...(mode === "exact" ? { RATE_LIMIT_SYNC_MS: "0" } : {}),
  };
}

/** The footnotes' words for {@link rateLimitEnv} "on". */
export const BENCH_RATE_LIMITS_SAID = `the four rate limits on (memory-first, RATE_LIMIT_SYNC_MS at its default 1000) with quotas of ${BENCH_RATE_QUOTA} each, out of reach (every request still counted)`;

/**
 * The service's environment for a benchmark load on `databaseUrl`: `ROLE=api` (no background jobs
 * competing), logging silent, the four rate limits on as in production but with quotas out of
 * reach ({@link rateLimitEnv} "on"), user tokens valid for a day, btc transfer caps out of reach
 * ({@link BENCH_TRANSFER_CAPS}).
 */
export function benchServiceEnv(databaseUrl: string, secretsKey: string, masterKey: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    SECRETS_KEY: secretsKey,
    MASTER_API_KEY: masterKey,
    ROLE: "api",
    LOG_LEVEL: "silent",
    ...rateLimitEnv("on"),
    USER_TOKEN_TTL_S: "86400",
    TRANSFER_CAPS: BENCH_TRANSFER_CAPS,
  };
}

/**
 * Spawns `process.execPath args` in the project folder with `env` (plus PORT) and waits for
 * `/healthz` to answer 200 (polled every 5 ms).
 * @throws when it exits first or is not ready within `timeoutMs`, with its output.
 */
export async function startServer(name: string, args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<ServerProcess> {
  const port = await freePort();
  let output = "";
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", TMPDIR: process.env.TMPDIR ?? "/tmp", ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const stop = async (graceMs = 30_000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  };
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before answering /healthz:\n${output}`);
    }
    if ((await probe(port)) === 200) break;
    if (performance.now() - started > timeoutMs) {
      await stop(1000);
      throw new Error(`${name} did not answer /healthz within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return {
    name,
    pid: child.pid as number,
    port,
    base: `http://127.0.0.1:${port}`,
    startMs: performance.now() - started,
    output: () => output,
    exited: () => (child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode !== null ? `signal ${child.signalCode}` : null),
    stop,
  };
}

/** A field of /proc/<pid>/status in kB (VmRSS, VmHWM); NaN when unreadable. */
export function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** CPU time (user + system) of a process so far, in seconds, from /proc/<pid>/stat; NaN when unreadable. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // after the command: state(0) ppid(1) … utime(11) stime(12), in clock ticks (100 per second on Linux)
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** `pid` and every process descending from it, from /proc. */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  }
  return tree;
}
