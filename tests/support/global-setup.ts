/**
 * Starts one real PostgreSQL for the whole test run: the embedded one, in a child process
 * (tests/support/pg-server.ts explains why), or the server of `TEST_DATABASE_URL` when set. Each
 * test file then creates its own database on it (tests/support/app.ts), so files run in parallel
 * without sharing state. The `integration` and `process` projects (vitest.config.ts) both list
 * this file; vitest runs it once per project (each project loads its own copy of the module, all
 * in vitest's main process), so the server is kept on `globalThis` and shared: the first setup
 * starts it, the last teardown stops it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import type { TestProject } from "vitest/node";

/** The run's server, shared by the projects that list this file. */
interface SharedServer {
  /** How many projects' setups hold it (their teardowns not run yet). */
  users: number;
  /** `postgresql://user:password@host:port` (no database). */
  serverUrl: Promise<string>;
  /** The embedded server's process; absent with `TEST_DATABASE_URL`. */
  child?: ChildProcess;
}

const KEY = Symbol.for("custody-tests.pg-server");
const holder = globalThis as { [KEY]?: SharedServer };

export async function setup(project: TestProject): Promise<void> {
  let shared = holder[KEY];
  if (!shared) {
    shared = { users: 0, serverUrl: Promise.resolve("") };
    shared.serverUrl = startServer(shared);
    holder[KEY] = shared;
  }
  shared.users += 1;
  project.provide("pgServerUrl", await shared.serverUrl);
}

/** Starts the embedded server (unless `TEST_DATABASE_URL` names one) and resolves with its URL. */
async function startServer(shared: SharedServer): Promise<string> {
  let serverUrl = process.env.TEST_DATABASE_URL?.replace(/\/[^/]*$/, "");
  if (!serverUrl) {
    const root = resolve(import.meta.dirname, "../..");
    // node itself with tsx as a loader (not the tsx wrapper, which exits before its script has
    // stopped PostgreSQL), so that waiting for this process waits for PostgreSQL to stop.
    const server = (shared.child = spawn(process.execPath, ["--import", "tsx", resolve(root, "tests/support/pg-server.ts")], {
      cwd: root,
      stdio: ["pipe", "pipe", "inherit"],
    }));
    const lines = createInterface({ input: server.stdout as NodeJS.ReadableStream });
    const first = await Promise.race([
      once(lines, "line").then(([line]) => String(line)),
      once(server, "exit").then(([code]) => {
        throw new Error(`the test PostgreSQL exited early (code ${String(code)})`);
      }),
    ]);
    serverUrl = (JSON.parse(first) as { serverUrl: string }).serverUrl;
  }
  return serverUrl;
}

export async function teardown(): Promise<void> {
  const shared = holder[KEY];
  if (!shared) return;
  shared.users -= 1;
  if (shared.users > 0) return;
  delete holder[KEY];
  const server = shared.child;
  if (!server || server.exitCode !== null) return;
  const exited = once(server, "exit");
  server.stdin?.end();
  await exited;
}

declare module "vitest" {
  export interface ProvidedContext {
    pgServerUrl: string;
  }
}
