/**
 * No request waits on the database longer than `DATABASE_WAIT_S` (docs/operations.md "Database
 * waits"; docs/decisions/requests-and-validation.md "When the database cannot be reached"), here 2 s:
 * a request blocked by a lock another session holds answers 503 with `Retry-After` within the bound
 * (PostgreSQL's `lock_timeout`), a server that answers nothing (a frozen relay, as a SIGSTOP'd
 * primary) answers 503 within it too (the driver's `query_timeout`), and afterwards the same app
 * serves again; a write retried with its `Idempotency-Key` after the 503 is booked once. Background
 * work given a longer bound (`Db.withStatementBound`) is not cut at `DATABASE_WAIT_S`.
 */
import pg from "pg";
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { isDatabaseUnavailable } from "../../src/db/unavailable.js";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY, createTestDatabase, useTestApp } from "../support/app.js";
import { BASE, Walk, fundedBtcUser } from "../support/fixtures.js";
import { TcpRelay } from "../support/tcp-relay.js";

const WAIT_S = 2;
/** What a 503 may take beyond `DATABASE_WAIT_S`: the request's other round trips and the answer. */
const MARGIN_MS = 1_500;

const app = useTestApp({ DATABASE_WAIT_S: String(WAIT_S) });

/** `send()` and how long it took to answer, ms. */
async function timed<T>(send: () => Promise<T>): Promise<{ res: T; ms: number }> {
  const started = Date.now();
  const res = await send();
  return { res, ms: Date.now() - started };
}

describe("a request blocked by a lock another session holds", () => {
  it("answers 503 with Retry-After within DATABASE_WAIT_S, and the app serves again once the lock is gone", { timeout: 30_000 }, async () => {
    const walk = new Walk(app.express);
    const { key } = await walk.tenant("waits-lock");
    const { userId, walletId } = await fundedBtcUser(app.express, key, 1);
    const list = () => request(app.express).get(`${BASE}/users/${userId}/wallets`).set("x-api-key", key);
    expect((await list()).status).toBe(200);

    const holder = new pg.Client({ connectionString: app.databaseUrl });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("lock table wallet in access exclusive mode");
      const read = await timed(() => list());
      expect(read.res.status, JSON.stringify(read.res.body)).toBe(503);
      expect(read.res.body.errors[0].code).toBe("SERVICE_UNAVAILABLE");
      expect(Number(read.res.headers["retry-after"])).toBeGreaterThan(0);
      expect(read.ms).toBeLessThan(WAIT_S * 1000 + MARGIN_MS);

      const body = { wallet_id: walletId, network: "networks/bitcoin", currency: "btc", amount: 0.5 };
      const deposit = () => request(app.express).post(`${BASE}/sandbox/deposits`).set("x-api-key", key).set("Idempotency-Key", "after-503").send(body);
      const write = await timed(() => deposit());
      expect(write.res.status, JSON.stringify(write.res.body)).toBe(503);
      expect(write.ms).toBeLessThan(WAIT_S * 1000 + MARGIN_MS);
      await holder.query("rollback");

      expect((await list()).status).toBe(200);
      const retried = await deposit();
      expect(retried.status, JSON.stringify(retried.body)).toBe(201);
      expect(retried.body.data.is_duplicate).toBe(false);
      expect((await deposit()).body.data.is_duplicate).toBe(true);
      const balance = await request(app.express).get(`${BASE}/wallets/${walletId}/balance`).set("x-api-key", key);
      expect(balance.body.data.balance.find((b: { currency: string }) => b.currency === "btc").available).toBe("1.50000000");
    } finally {
      await holder.end();
    }
  });
});

describe("background work with a longer bound", () => {
  it("runs a statement past DATABASE_WAIT_S, which a request's statement may not", { timeout: 20_000 }, async () => {
    const sleep = { name: "test_waits_sleep", text: "select pg_sleep($1::float8) as slept" };
    const long = app.db.withStatementBound(10_000);
    await expect(long.rows(sleep, [WAIT_S + 0.5])).resolves.toHaveLength(1);
    await expect(long.transaction((tx) => tx.rows(sleep, [WAIT_S + 0.5]))).resolves.toHaveLength(1);
    const cut = await app.db.rows(sleep, [WAIT_S + 0.5]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((cut as { code?: string }).code).toBe("57014");
    expect(isDatabaseUnavailable(cut)).toBe(true);
  });
});

describe("a server that answers nothing (frozen)", () => {
  const started: { app?: App; relay?: TcpRelay; drop?: () => Promise<void> } = {};
  afterAll(async () => {
    started.relay?.thaw();
    await started.app?.close();
    await started.relay?.close();
    await started.drop?.();
  });

  it("answers 503 within DATABASE_WAIT_S while frozen, and serves again once thawed, without a restart", { timeout: 40_000 }, async () => {
    const db = await createTestDatabase();
    started.drop = db.drop;
    const relay = TcpRelay.to(db.url);
    started.relay = relay;
    await relay.open();
    const config = loadConfig({
      DATABASE_URL: relay.url(db.url),
      DATABASE_WAIT_S: String(WAIT_S),
      MASTER_API_KEY: TEST_MASTER_KEY,
      SECRETS_KEY: TEST_SECRETS_KEY,
      LOG_LEVEL: "silent",
      RATE_LIMIT_IP: "off",
      RATE_LIMIT_CREDENTIAL: "off",
      RATE_LIMIT_AUTH_FAILURES: "off",
      RATE_LIMIT_CODES: "off",
    });
    const frozenApp = await createApp(config);
    started.app = frozenApp;
    const walk = new Walk(frozenApp.express);
    const { key } = await walk.tenant("waits-frozen");
    const { userId } = await fundedBtcUser(frozenApp.express, key, 1);
    const list = () => request(frozenApp.express).get(`${BASE}/users/${userId}/wallets`).set("x-api-key", key);
    expect((await list()).status).toBe(200);

    relay.freeze();
    for (let i = 0; i < 2; i++) {
      const { res, ms } = await timed(() => list());
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
      expect(ms).toBeLessThan(WAIT_S * 1000 + MARGIN_MS);
    }
    relay.thaw();
    const after = await list();
    expect(after.status, JSON.stringify(after.body)).toBe(200);
  });
});
