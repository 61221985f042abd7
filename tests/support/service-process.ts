/**
 * The real service as a child process, for tests of start, stop and crashes: `node --import tsx
 * src/main.ts` (not through npm or the tsx wrapper, so signals reach the service itself), on a
 * database of the test run's PostgreSQL, with the test keys and any configuration overrides.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { resolve } from "node:path";
import { freePort } from "../../src/db/embedded.js";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY } from "./app.js";
import { waitFor } from "./wait.js";

const ROOT = resolve(import.meta.dirname, "../..");

export { freePort };

/** Whether process `pid` exists (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether process `pid` holds the server side of the TCP connection from client port `clientPort`
 * to its port `serverPort`, established: the service has accepted that connection (a request
 * written on it is the service's to answer). Read from /proc (Linux): the socket's inode in
 * /proc/net/tcp and tcp6, among the process's open files.
 */
export function hasAccepted(pid: number, serverPort: number, clientPort: number): boolean {
  const hexPort = (port: number) => port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const [, local, remote, state, , , , , , inode] = line.trim().split(/\s+/);
      const established = state === "01";
      if (established && local?.endsWith(`:${hexPort(serverPort)}`) && remote?.endsWith(`:${hexPort(clientPort)}`) && inode) inodes.add(inode);
    }
  }
  if (inodes.size === 0) return false;
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? "");
      } catch {
        return false; // closed meanwhile
      }
    });
  } catch {
    return false; // the process is gone
  }
}

/** A running service process. */
export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  /** `http://127.0.0.1:<port>`. */
  base: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal) once it has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns the service. `wait`: `http` waits for `/healthz` to answer 200, `worker` for the log line
 * of started background jobs, `none` returns at once.
 * @throws when it exits or is not ready within 60 s (with its output).
 */
export async function startService(env: Record<string, string>, wait: "http" | "worker" | "none" = "http"): Promise<ServiceProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  let output = "";
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, HOST: "127.0.0.1", MASTER_API_KEY: TEST_MASTER_KEY, SECRETS_KEY: TEST_SECRETS_KEY, LOG_LEVEL: "info", ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once("exit", (code, signal) => done({ code, signal })));
  const base = `http://127.0.0.1:${port}`;
  const service: ServiceProcess = {
    child,
    port,
    base,
    output: () => output,
    exited,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  if (wait === "none") return service;
  try {
    await waitFor(`the service to be ready (${wait})`, async () => {
      if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}:\n${output}`);
      if (wait === "worker") return output.includes("background jobs started") ? true : undefined;
      return (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) ? true : undefined;
    }, 60_000);
  } catch (error) {
    // a service that did not get ready is not left running behind the failed test
    await service.stop("SIGKILL");
    throw error;
  }
  return service;
}
