/**
 * Starts one real PostgreSQL for the whole test run: the embedded one (under a temporary
 * DATA_DIR), or the server of `TEST_DATABASE_URL` when set. Each test file then creates its own
 * database on it (tests/support/app.ts), so files run in parallel without sharing state.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/db/embedded.js";

let embedded: EmbeddedDatabase | undefined;
let dataDir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  let serverUrl = process.env.TEST_DATABASE_URL?.replace(/\/[^/]*$/, "");
  if (!serverUrl) {
    dataDir = mkdtempSync(join(tmpdir(), "platform-test-pg-"));
    // initdb runs as the unprivileged "postgres" user when the tests run as root: it must reach the folder.
    chmodSync(dataDir, 0o755);
    embedded = await startEmbeddedPostgres(dataDir, "postgres", { persistent: false });
    serverUrl = embedded.serverUrl;
  }
  project.provide("pgServerUrl", serverUrl);
}

export async function teardown(): Promise<void> {
  await embedded?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}

declare module "vitest" {
  export interface ProvidedContext {
    pgServerUrl: string;
  }
}
