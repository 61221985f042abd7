/**
 * Test-app builder: the real app on a fresh database of the run's PostgreSQL, with every response
 * validated against the contract (a mismatch answers 500, so any test touching it fails).
 * `useTestApp()` is the usual set-up of a test file (docs/testing.md); `startTestApp()` builds
 * further apps inside a test.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import request from "supertest";
import { afterAll, beforeAll, inject } from "vitest";
import { guardTransactions } from "./tx-guard.js";
import { loadConfig, type Config } from "../../src/config.js";
import { createApp, type App } from "../../src/app.js";

/** Master key and secrets key every test app uses. */
export const TEST_MASTER_KEY = "test-master-key-0123456789abcdefghijklmnop";
export const TEST_SECRETS_KEY = "test-secrets-key-0123456789abcdefghijklmnop";

/** Creates an empty database on the run's server and returns its URL. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = inject("pgServerUrl");
  const name = `t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: `${serverUrl}/postgres` });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  return {
    url: `${serverUrl}/${name}`,
    async drop() {
      const c = new pg.Client({ connectionString: `${serverUrl}/postgres` });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}

/** A started test app and how to dispose of it. */
export interface TestApp extends App {
  config: Config;
  dispose(): Promise<void>;
}

/**
 * Builds the app on a fresh database. `env` overrides configuration variables. Test apps space
 * resends by 0 s and run without rate limits unless told otherwise: the spacing and each bucket
 * have their own tests (withdrawals-codes.test.ts "code limits", rate-limits.test.ts), while other
 * tests send bursts from one address on purpose. `validateResponses: false` builds the app as
 * production does (no response validation, request validators compiled on first use). Every test
 * app runs under ./tx-guard.ts: a pool call from inside a transaction fails its request.
 */
export async function startTestApp(env: Record<string, string> = {}, options: { validateResponses?: boolean } = {}): Promise<TestApp> {
  guardTransactions();
  const db = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: db.url,
    MASTER_API_KEY: TEST_MASTER_KEY,
    SECRETS_KEY: TEST_SECRETS_KEY,
    LOG_LEVEL: "silent",
    WITHDRAWAL_CODE_RESEND_INTERVAL_S: "0",
    RATE_LIMIT_IP: "off",
    RATE_LIMIT_CREDENTIAL: "off",
    RATE_LIMIT_AUTH_FAILURES: "off",
    RATE_LIMIT_CODES: "off",
    ...env,
  });
  const app = await createApp(config, { validateResponses: options.validateResponses ?? true });
  return {
    ...app,
    config,
    async dispose() {
      await app.close();
      await db.drop();
    },
  };
}

/** What `api()` and `apiOf()` return: a supertest agent whose requests run against the app in this process. */
export type ApiAgent = ReturnType<typeof request>;

/**
 * A request builder on `app`'s express app, `apiOf(app).get(path)` (no server, no port): for
 * the further apps a test builds with `startTestApp()`; the file's own app has `t.api()`.
 */
export function apiOf(app: Pick<App, "express">): ApiAgent {
  return request(app.express);
}

/** The test app of one test file, as `useTestApp()` hands it out: the app's fields and `api()`. */
export type TestAppHandle = TestApp & {
  /** A request builder on the app, `api().post(path)`; may be taken out of the handle. */
  api(): ApiAgent;
};

/**
 * Starts a test app for the calling test file: registers a `beforeAll` that builds it (as
 * `startTestApp(env, options)`) and copies its fields into the returned handle, and an `afterAll`
 * that disposes of it. The handle's app fields are unset until that `beforeAll` ran, so read them
 * inside tests and hooks only. Call it at the top of the file, before the file's own hooks: those
 * then run with the app started, and it is disposed of after them (vitest runs `afterAll` hooks in
 * reverse order).
 */
export function useTestApp(env: Record<string, string> = {}, options: { validateResponses?: boolean } = {}): TestAppHandle {
  const handle = {
    api: () => {
      if (!handle.express) throw new Error("the test app is not started: call api() inside a test or a hook");
      return apiOf(handle);
    },
  } as TestAppHandle;
  let started: TestApp | undefined;
  beforeAll(async () => {
    started = await startTestApp(env, options);
    Object.assign(handle, started);
  });
  afterAll(async () => {
    await started?.dispose();
  });
  return handle;
}
