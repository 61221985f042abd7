/**
 * A real PgBouncer in front of a test database (docs/testing.md, docs/operations.md on
 * `DATABASE_POOL_MODE`): Debian's `pgbouncer` (package `pgbouncer`, installed by `.ci/run`),
 * started as a child process in the foreground (not daemonized)
 * with its own ini and userlist in a temporary directory, listening on 127.0.0.1 on a free port,
 * no Unix socket, `pool_mode = transaction` unless told otherwise. PgBouncer refuses to run as
 * root: as root it runs as the Debian user `postgres` (the one the embedded PostgreSQL's initdb
 * runs as, src/db/embedded.ts `createPostgresUser`).
 */
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { accessSync, chmodSync, chownSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../../src/db/embedded.js";
import { waitFor } from "./wait.js";

/** Debian's PgBouncer binary. */
export const PGBOUNCER = "/usr/sbin/pgbouncer";

/** A running PgBouncer. */
export interface PgBouncer {
  /** `postgresql://user:password@127.0.0.1:<port>/<dbname>`: the test database through PgBouncer. */
  url: string;
  /** The admin console (database `pgbouncer`, the database's user is in `admin_users`). */
  adminUrl: string;
  port: number;
  /** Runs `SHOW <what>` (POOLS, STATS, SERVERS, CLIENTS…) on the admin console; its rows. */
  show(what: string): Promise<Record<string, unknown>[]>;
  /** The last 4000 characters PgBouncer wrote (its log goes to stderr). */
  output(): string;
  /** Stops PgBouncer (SIGTERM, SIGKILL after 5 s), waits for it to exit and removes its directory. */
  stop(): Promise<void>;
}

/** Options of {@link startPgBouncer}. */
export interface PgBouncerOptions {
  /** `pool_mode` (default `transaction`). */
  poolMode?: "session" | "transaction" | "statement";
  /** `default_pool_size` (default 10). */
  defaultPoolSize?: number;
}

/** The uid and gid of Debian's `postgres` user, when this process is root and the user exists. */
function unprivilegedUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch {
    throw new Error("PgBouncer refuses to run as root, and there is no user `postgres` to run it as");
  }
}

/** A value of the userlist (`"…"`, a double quote doubled). */
const quoted = (value: string) => `"${value.replaceAll('"', '""')}"`;

/**
 * Starts PgBouncer in front of the database of `databaseUrl` (a `postgres(ql)://user:password@host:port/dbname`
 * URL, as tests/support/app.ts `createTestDatabase` returns). Clients authenticate with the same
 * user and password (`auth_type = scram-sha-256` against a userlist holding the clear password,
 * which PgBouncer also uses to log in to the server). `extra_float_digits` (sent by some drivers)
 * is accepted and ignored.
 * @throws Error naming the install command when PgBouncer is not installed; Error with its output
 *   when it exits early or does not answer within 10 s.
 */
export async function startPgBouncer(databaseUrl: string, options: PgBouncerOptions = {}): Promise<PgBouncer> {
  try {
    accessSync(PGBOUNCER, constants.X_OK);
  } catch {
    throw new Error(`The PgBouncer test needs ${PGBOUNCER}, which is not installed. Run: sudo apt-get install -y pgbouncer`);
  }
  const target = new URL(databaseUrl);
  const user = decodeURIComponent(target.username);
  const password = decodeURIComponent(target.password);
  const dbname = decodeURIComponent(target.pathname.slice(1));
  const host = target.hostname;
  const serverPort = target.port || "5432";
  if (!user || !dbname) throw new Error(`startPgBouncer needs a URL with a user and a database: ${target.protocol}//…@${host}:${serverPort}/${dbname}`);

  const dir = mkdtempSync(join(tmpdir(), "pgbouncer-"));
  const port = await freePort();
  const ini = join(dir, "pgbouncer.ini");
  const userlist = join(dir, "userlist.txt");
  writeFileSync(userlist, `${quoted(user)} ${quoted(password)}\n`, { mode: 0o600 });
  writeFileSync(
    ini,
    `[databases]
${dbname} = host=${host} port=${serverPort} dbname=${dbname}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = scram-sha-256
auth_file = ${userlist}
admin_users = ${user}
stats_users = ${user}
pool_mode = ${options.poolMode ?? "transaction"}
max_client_conn = 200
default_pool_size = ${options.defaultPoolSize ?? 10}
ignore_startup_parameters = extra_float_digits
logfile =
pidfile =
`,
    { mode: 0o600 },
  );
  const runAs = unprivilegedUser();
  if (runAs) {
    for (const path of [dir, ini, userlist]) chownSync(path, runAs.uid, runAs.gid);
    chmodSync(dir, 0o700);
  }

  const child = spawn(PGBOUNCER, [ini], { stdio: ["ignore", "pipe", "pipe"], ...(runAs ?? {}) });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = once(child, "exit");
  let gone = false;
  void exited.then(() => (gone = true));

  const adminUrl = `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/pgbouncer`;
  const show = async (what: string): Promise<Record<string, unknown>[]> => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      return (await client.query<Record<string, unknown>>(`SHOW ${what}`)).rows;
    } finally {
      await client.end().catch(() => {});
    }
  };
  const stop = async () => {
    if (!gone) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await waitFor(`PgBouncer to answer on 127.0.0.1:${port}`, async () => {
      if (gone) throw new Error(`PgBouncer exited early (code ${String(child.exitCode)}): ${output}`);
      return show("VERSION").then(
        () => true,
        () => undefined,
      );
    }, 10_000);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${output}`, { cause: error });
  }

  return {
    url: `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(dbname)}`,
    adminUrl,
    port,
    show,
    output: () => output,
    stop,
  };
}
