/**
 * Starts one real PostgreSQL for the whole test run: the embedded one, in a child process
 * (tests/support/pg-server.ts explains why), or the server of `TEST_DATABASE_URL` when set. Each
 * test file then creates its own database on it (tests/support/app.ts), so files run in parallel
 * without sharing state.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import type { TestProject } from "vitest/node";

let server: ChildProcess | undefined;

export async function setup(project: TestProject): Promise<void> {
  let serverUrl = process.env.TEST_DATABASE_URL?.replace(/\/[^/]*$/, "");
  if (!serverUrl) {
    const root = resolve(import.meta.dirname, "../..");
    // node itself with tsx as a loader (not the tsx wrapper, which exits before its script has
    // stopped PostgreSQL), so that waiting for this process waits for PostgreSQL to stop.
    server = spawn(process.execPath, ["--import", "tsx", resolve(root, "tests/support/pg-server.ts")], {
      cwd: root,
      stdio: ["pipe", "pipe", "inherit"],
    });
    const lines = createInterface({ input: server.stdout as NodeJS.ReadableStream });
    const first = await Promise.race([
      once(lines, "line").then(([line]) => String(line)),
      once(server, "exit").then(([code]) => {
        throw new Error(`the test PostgreSQL exited early (code ${String(code)})`);
      }),
    ]);
    serverUrl = (JSON.parse(first) as { serverUrl: string }).serverUrl;
  }
  project.provide("pgServerUrl", serverUrl);
}

export async function teardown(): Promise<void> {
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
