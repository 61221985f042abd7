/**
 * Database down (docs/decisions/requests-and-validation.md "When the database cannot be reached"): while PostgreSQL is stopped under load, every
 * answer of both surfaces is a 2xx (List Credit Products for the credit core) or a 503 `SERVICE_UNAVAILABLE` in the
 * surface's envelope with `Retry-After: 2`, never another 5xx; `/readyz` answers 503 without
 * connection details; once PostgreSQL is back the service recovers by itself, and nothing that
 * answered 2xx is lost (the ledger checks itself, balances add up). The app runs on an embedded
 * PostgreSQL of its own (tests/support/pg-process.ts), which this test stops and starts again on
 * the same port.
 */
import type { Server } from "node:http";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Decimal } from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createApp, type App } from "../../src/app.js";
import { freePort } from "../../src/db/embedded.js";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY } from "../support/app.js";
import { BTC_DESTINATION, Walk, fundedBtcUser } from "../support/fixtures.js";
import { startPgProcess, type PgProcess } from "../support/pg-process.js";
import { waitFor } from "../support/wait.js";

const dir = mkdtempSync(join(tmpdir(), "database-outage-"));
chmodSync(dir, 0o755);
let pgPort: number;
let pgServer: PgProcess;
let app: App;
let server: Server;
let base: string;

beforeAll(async () => {
  pgPort = await freePort();
  pgServer = await startPgProcess(dir, pgPort);
  const config = loadConfig({
    DATABASE_URL: `${pgServer.serverUrl}/postgres`,
    MASTER_API_KEY: TEST_MASTER_KEY,
    SECRETS_KEY: TEST_SECRETS_KEY,
    LOG_LEVEL: "silent",
    // the rate limits stay on, with sizes this load stays under: their PostgreSQL store goes down too
    RATE_LIMIT_IP: "100000/60",
    RATE_LIMIT_CREDENTIAL: "100000/60",
    WITHDRAWAL_CAPS: JSON.stringify({ btc: { perWithdrawal: "2", daily: "1000", monthly: "1000" } }),
  });
  app = await createApp(config, { validateResponses: true });
  server = app.express.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}, 120_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await app?.close().catch(() => {});
  await pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Outcome {
  kind: "balance" | "transactions" | "deposit" | "withdrawal" | "credit";
  status?: number;
  body?: { success?: boolean; data?: { id?: number | string }; errors?: { code: string; message: string }[]; meta?: Record<string, unknown> };
  text?: string;
  retryAfter?: string | null;
  error?: string;
  at: number;
}

describe("the database goes down under load and comes back", () => {
  it("answers 2xx or 503 in each envelope with Retry-After, /readyz 503 without details, then recovers with nothing lost", async () => {
    const walk = new Walk(base);
    const tenant = await walk.tenant("outage-corp");
    const funded = await fundedBtcUser(base, tenant.key, 1);
    const headers = { "x-api-key": tenant.key, "content-type": "application/json" };
    const outcomes: Outcome[] = [];
    let running = true;
    let sequence = 0;

    const call = async (kind: Outcome["kind"]): Promise<void> => {
      const n = ++sequence;
      const request: [string, RequestInit] =
        kind === "balance" ? [`${base}/api/v1/wallets/${funded.walletId}/balance`, { headers }] :
        kind === "transactions" ? [`${base}/api/v1/wallets/${funded.walletId}/transactions`, { headers }] :
        kind === "deposit" ? [`${base}/api/v1/sandbox/deposits`, { method: "POST", headers, body: JSON.stringify({ wallet_id: funded.walletId, network: "networks/bitcoin", currency: "btc", amount: 0.001 }) }] :
        kind === "withdrawal" ? [`${base}/api/v1/users/${funded.userId}/accounts/crypto/withdrawals`, { method: "POST", headers: { ...headers, "idempotency-key": `outage-${n}` }, body: JSON.stringify({ currency: "btc", amount: 0.0001, address: BTC_DESTINATION }) }] :
        [`${base}/v2/credit-products`, { headers: { "x-api-key": tenant.key } }];
      try {
        const res = await fetch(...request);
        const text = await res.text();
        outcomes.push({ kind, status: res.status, text, body: JSON.parse(text) as Outcome["body"], retryAfter: res.headers.get("retry-after"), at: Date.now() });
      } catch (error) {
        outcomes.push({ kind, error: (error as { cause?: { code?: string } }).cause?.code ?? String(error), at: Date.now() });
      }
    };
    const kinds: Outcome["kind"][] = ["balance", "deposit", "transactions", "withdrawal", "credit", "deposit"];
    const client = async (offset: number): Promise<void> => {
      for (let i = offset; running; i++) await call(kinds[i % kinds.length] as Outcome["kind"]);
    };
    const clients = Array.from({ length: 8 }, (_, i) => client(i));

    // load first: wait for enough answers (not a fixed time, so a busy machine cannot starve the check)
    await waitFor("answers before the outage", () => (outcomes.length > 20 ? true : undefined), 30_000);
    const beforeStop = outcomes.length;
    await pgServer.stop();
    const stoppedAt = Date.now();
    // requests keep coming while the database is down
    await waitFor("503 answers while the database is down", () => (outcomes.filter((o) => o.at > stoppedAt && o.status === 503).length >= 20 ? true : undefined), 20_000);
    const ready = await fetch(`${base}/readyz`);
    const readyText = await ready.text();
    expect(ready.status).toBe(503);
    expect(JSON.parse(readyText)).toEqual({ status: "unavailable", reason: "database unreachable" });
    for (const detail of ["127.0.0.1", "localhost", String(pgPort), "ECONNREFUSED", "connect"]) expect(readyText).not.toContain(detail);

    pgServer = await startPgProcess(dir, pgPort);
    const restartedAt = Date.now();
    // the service recovers by itself: reads and writes succeed again within a bounded wait
    await waitFor("answers 2xx again after the restart", () => {
      const after = outcomes.filter((o) => o.at > restartedAt);
      return after.some((o) => o.kind === "balance" && o.status === 200) && after.some((o) => o.kind === "deposit" && o.status === 201) ? true : undefined;
    }, 30_000);
    const recoveredAt = Date.now();
    // and the load goes on after the recovery: enough further answers (not a fixed time)
    await waitFor("answers after the recovery", () => (outcomes.filter((o) => o.at > recoveredAt).length >= 20 ? true : undefined), 30_000);
    running = false;
    await Promise.all(clients);

    expect(beforeStop, "requests served before the outage").toBeGreaterThan(20);
    expect(recoveredAt - restartedAt, "recovery time, ms").toBeLessThan(30_000);
    // the process answered every request: no connection was dropped
    expect(outcomes.filter((o) => o.error !== undefined).map((o) => o.error)).toEqual([]);
    const normal = (o: Outcome): boolean => o.status === 200 || o.status === 201;
    const others = outcomes.filter((o) => !normal(o) && o.status !== 503);
    expect(others.map((o) => `${o.kind} ${o.status} ${o.text}`), "answers other than 2xx/503").toEqual([]);
    const unavailable = outcomes.filter((o) => o.status === 503);
    expect(unavailable.length).toBeGreaterThanOrEqual(20);
    expect(new Set(unavailable.map((o) => o.kind)), "every kind of request met the outage").toEqual(new Set(["balance", "transactions", "deposit", "withdrawal", "credit"]));
    for (const o of unavailable) {
      expect(o.retryAfter).toBe("2");
      expect(o.body?.success).toBe(false);
      expect(o.body?.errors?.[0]?.code).toBe("SERVICE_UNAVAILABLE");
      if (o.kind === "credit") {
        expect(o.body?.meta).toMatchObject({ version: "v2", traceId: expect.any(String) });
      } else {
        expect(o.body?.meta).toMatchObject({ version: "v1", trace_id: expect.any(String) });
      }
      // the answer without its meta (a random trace id may contain the port's digits)
      const shown = JSON.stringify({ ...o.body, meta: undefined });
      for (const detail of ["127.0.0.1", String(pgPort), "ECONNREFUSED", "terminat"]) expect(shown).not.toContain(detail);
    }
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    // connections that died mid-transaction were destroyed, not kept checked out (else the pool
    // would run dry after a few outages, and closing it would wait for them forever)
    const pool = (await app.orm.em.getConnection().getNativeClient()) as unknown as { totalCount: number; idleCount: number };
    await waitFor("every pooled connection back and idle", () => (pool.totalCount === pool.idleCount ? true : undefined), 10_000);

    // nothing that answered 2xx is lost, and the ledger adds up
    const deposited = outcomes.filter((o) => o.kind === "deposit" && o.status === 201).map((o) => o.body?.data?.id as number);
    const withdrawn = outcomes.filter((o) => o.kind === "withdrawal" && o.status === 201).map((o) => o.body?.data?.id as string);
    expect(deposited.length).toBeGreaterThan(0);
    expect(withdrawn.length).toBeGreaterThan(0);
    const booked: { id: number; transaction: { action: string } }[] = [];
    for (let skip = 0; ; skip += 100) {
      const page = await fetch(`${base}/api/v1/wallets/${funded.walletId}/transactions?filter[limit]=100&filter[skip]=${skip}`, { headers });
      expect(page.status).toBe(200);
      const rows = ((await page.json()) as { data: typeof booked }).data;
      booked.push(...rows);
      if (rows.length < 100) break;
    }
    const bookedDeposits = new Set(booked.filter((t) => t.transaction.action === "deposit").map((t) => t.id));
    for (const id of deposited) expect(bookedDeposits.has(id), `deposit ${id} answered 201`).toBe(true);
    for (const id of withdrawn) {
      const res = await fetch(`${base}/api/v1/users/${funded.userId}/accounts/crypto/withdrawals/${id}`, { headers });
      expect(res.status, `withdrawal ${id} answered 201`).toBe(200);
    }
    const check = await app.services.ledger.verify(app.db);
    for (const list of Object.values(check)) expect(list).toEqual([]);
    // the balance is the first deposit plus every deposit booked (pending withdrawals only hold)
    const balance = ((await (await fetch(`${base}/api/v1/wallets/${funded.walletId}/balance`, { headers })).json()) as {
      data: { balance: { currency: string; balance: string; held: string }[] };
    }).data.balance.find((b) => b.currency === "btc");
    expect(new Decimal(balance?.balance ?? "0").toFixed(8)).toBe(new Decimal(0.001).times(bookedDeposits.size - 1).plus(1).toFixed(8));
    expect(new Decimal(balance?.held ?? "0").greaterThanOrEqualTo(new Decimal(0.0001).times(withdrawn.length))).toBe(true);
  }, 120_000);
});
