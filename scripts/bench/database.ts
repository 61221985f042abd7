/**
 * The benchmark's throw-away database: `bench_<random>` created on the server of `DATABASE_URL`
 * when it is set, else on one embedded PostgreSQL started for the run (scripts/bench/pg-server.ts,
 * a child process with a temporary data directory). The service and the baselines all use it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";

const ROOT = resolve(import.meta.dirname, "../..");

/** A fresh database and how to get rid of it. */
export interface BenchDatabase {
  /** Connection URL of the fresh database. */
  url: string;
  /** `embedded PostgreSQL 18.x` or `DATABASE_URL server (PostgreSQL 17.x)`, for the report. */
  description: string;
  /** The pid whose process tree holds the embedded PostgreSQL (for its CPU time); undefined with `DATABASE_URL`. */
  serverPid: number | undefined;
  /** Drops the database and stops the embedded server, if one was started. Never throws. */
  dispose(): Promise<void>;
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Starts the embedded server in its child process. @throws when it exits before it is ready. */
async function startEmbedded(): Promise<{ serverUrl: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--import", "tsx", resolve(ROOT, "scripts/bench/pg-server.ts")], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let errors = "";
  child.stderr?.on("data", (c: Buffer) => (errors += c.toString()));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const first = await Promise.race([
    once(lines, "line").then(([line]) => String(line)),
    once(child, "exit").then(([code]) => {
      throw new Error(`the embedded PostgreSQL exited early (code ${String(code)}): ${errors}`);
    }),
  ]);
  return { serverUrl: (JSON.parse(first) as { serverUrl: string }).serverUrl, child };
}

/**
 * Creates the benchmark's database: on `DATABASE_URL`'s server when set, else on a new embedded
 * PostgreSQL. The caller must `dispose()` it on every path.
 */
export async function createBenchDatabase(databaseUrl = process.env.DATABASE_URL): Promise<BenchDatabase> {
  const name = `bench_${randomBytes(6).toString("hex")}`;
  let adminUrl: string;
  let embedded: ChildProcess | undefined;
  if (databaseUrl) {
    adminUrl = databaseUrl;
  } else {
    const started = await startEmbedded();
    embedded = started.child;
    adminUrl = `${started.serverUrl}/postgres`;
  }
  const stopEmbedded = async (): Promise<void> => {
    if (!embedded || embedded.exitCode !== null) return;
    const exited = once(embedded, "exit");
    embedded.stdin?.end();
    await exited;
  };
  let version: string;
  try {
    version = await withClient(adminUrl, async (c) => {
      await c.query(`create database "${name}"`);
      return String((await c.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]?.v ?? "?");
    });
  } catch (error) {
    await stopEmbedded();
    throw error;
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    description: embedded ? `embedded PostgreSQL ${version}` : `PostgreSQL ${version} of DATABASE_URL (database ${name})`,
    serverPid: embedded?.pid,
    async dispose() {
      await withClient(adminUrl, (c) => c.query(`drop database if exists "${name}" with (force)`)).catch((error: unknown) => {
        process.stderr.write(`could not drop ${name}: ${(error as Error).message}\n`);
      });
      await stopEmbedded();
    },
  };
}
