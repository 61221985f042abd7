/**
 * The service behind a real PgBouncer in transaction pooling mode (docs/operations.md
 * `DATABASE_POOL_MODE`, `DATABASE_SESSION_URL`; src/db/sql.ts): `DATABASE_URL` points at
 * PgBouncer (`pool_mode = transaction`, tests/support/pgbouncer.ts), `DATABASE_SESSION_URL` at the
 * database itself (the migrations' advisory lock, the job scheduler's LISTEN/NOTIFY, the shutdown's
 * cancellations), `DATABASE_POOL_MODE=transaction`. A money workload over HTTP — users, wallets,
 * sandbox deposits, a transfer, a withdrawal confirmed with its emailed code, parallel balance
 * reads and wallet lists (the hot path's statements), a credit wallet with a charge and a payment —
 * leaves a clean ledger, and the jobs deliver the withdrawal's PIN webhook and the credit
 * notifications to a real receiver. PgBouncer's admin console shows the traffic went through it.
 * The negative control: the same app with `DATABASE_POOL_MODE=session` (named prepared statements)
 * behind a transaction pooler is refused at start (src/db/pool-mode.ts `checkNamedStatementsSurvive`),
 * with an error naming `DATABASE_POOL_MODE=transaction`, whatever the pooler's size, while the
 * transaction-mode app behind that same pooler serves; and `session` behind a pooler in session
 * mode starts and serves (the check refuses only what would fail).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY, apiOf, createTestDatabase, type TestApp } from "../support/app.js";
import { BASE, Walk } from "../support/fixtures.js";
import { startPgBouncer, type PgBouncer } from "../support/pgbouncer.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";
import { goldenProductBody } from "../support/credit-golden.js";
import { Api, BTC, CLEAN, TO, apiKey, type Scene } from "../support/withdrawals-scene.js";

/** Loopback receivers allowed, delivery rounds every second, short attempts. */
const FAST = { ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "1", WEBHOOK_RETRY_BASE_S: "1", WEBHOOK_TIMEOUT_S: "2" };

let db: { url: string; drop(): Promise<void> };
let bouncer: PgBouncer;
let receiver: Receiver;
let t: TestApp;
let dbname: string;

/** The app on `databaseUrl` (through a pooler) with `sessionUrl` as its direct connection. */
async function appThrough(databaseUrl: string, poolMode: "session" | "transaction"): Promise<TestApp> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    DATABASE_SESSION_URL: db.url,
    DATABASE_POOL_MODE: poolMode,
    MASTER_API_KEY: TEST_MASTER_KEY,
    SECRETS_KEY: TEST_SECRETS_KEY,
    LOG_LEVEL: "silent",
    ROLE: "all",
    WITHDRAWAL_CODE_RESEND_INTERVAL_S: "0",
    RATE_LIMIT_IP: "off",
    RATE_LIMIT_CREDENTIAL: "off",
    RATE_LIMIT_AUTH_FAILURES: "off",
    RATE_LIMIT_CODES: "off",
    ...FAST,
  });
  const app = await createApp(config, { validateResponses: true });
  return { ...app, config, dispose: () => app.close() };
}

/** The row of `SHOW <what>` of the test database on `pooler`'s admin console. */
async function statsOf(pooler: PgBouncer, what: "POOLS" | "STATS"): Promise<Record<string, unknown>> {
  const rows = await pooler.show(what);
  const row = rows.find((r) => r.database === dbname);
  expect(row, JSON.stringify(rows)).toBeDefined();
  return row as Record<string, unknown>;
}

beforeAll(async () => {
  [db, receiver] = await Promise.all([createTestDatabase(), startReceiver()]);
  dbname = new URL(db.url).pathname.slice(1);
  bouncer = await startPgBouncer(db.url);
  t = await appThrough(bouncer.url, "transaction");
});
afterAll(async () => {
  await t?.dispose();
  await bouncer?.stop();
  await receiver?.close();
  await db?.drop();
});

describe("DATABASE_POOL_MODE=transaction behind PgBouncer (pool_mode = transaction)", () => {
  it("runs the money workload over HTTP with a clean ledger, delivers the PIN webhook and the credit notifications, and the traffic went through PgBouncer", async () => {
    const api = new Api(t);
    const walk = new Walk(t.express);
    const { customerId, key } = await walk.tenant(`pgb-${Date.now().toString(36)}`);

    // a webhook target for the tenant (the withdrawal's PIN notification goes out through the job)
    const operator = await walk.operatorToken();
    const hook = await apiOf(t).post(`${BASE}/customers/${customerId}/webhooks`).set("Authorization", `Bearer ${operator}`).send({ url: receiver.url, headers: [] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    receiver.trust(hook.body.data.signing_secret as string);

    // users, wallets (creation and listing answered 500 through PgBouncer before DATABASE_POOL_MODE), deposits
    const alice = await api.user(key);
    const bob = await api.user(key);
    const aliceWallet = await api.wallet(apiKey(key), alice.userId, [BTC]);
    const bobWallet = await api.wallet(apiKey(key), bob.userId, [BTC]);
    await api.deposit(key, aliceWallet, BTC, 1);
    await api.deposit(key, bobWallet, BTC, 0.5);
    const listed = await apiOf(t).get(`${BASE}/users/${alice.userId}/wallets`).set("x-api-key", key);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect((listed.body.data as { wallet_id: string }[]).map((w) => w.wallet_id)).toEqual([aliceWallet]);

    // a transfer
    const transfer = await apiOf(t).post(`${BASE}/transfers`).set("x-api-key", key).send({ from_wallet_id: aliceWallet, to_wallet_id: bobWallet, currency: "BTC", amount: 0.1, memo: "pgbouncer" });
    expect(transfer.status, JSON.stringify(transfer.body)).toBe(201);
    expect(transfer.body.data.status).toBe("COMPLETED");

    // a withdrawal, confirmed with the code of the sandbox mail; its PIN webhook reaches the receiver
    const scene: Scene = { app: t, customerId, key, ...alice, walletId: aliceWallet };
    const { id, code } = await api.started(scene, { currency: "btc", amount: 0.2, address: TO.btc });
    const confirmed = await api.confirm(apiKey(key), alice.userId, id, code);
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    const pins = await waitFor("the withdrawal.pin webhook", () => {
      const found = receiver.received.filter((r) => r.json.type === "withdrawal.pin" && r.json.data.withdrawal_id === id);
      return found.length > 0 ? found : undefined;
    }, 15_000);
    expect(pins[0]!.verifiedBy[hook.body.data.signing_secret as string]).toBe(true);

    // 20 parallel balance reads and wallet lists with the owner key: the hot path's statements
    const reads = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? apiOf(t).get(`${BASE}/wallets/${aliceWallet}/balance`).set("x-api-key", key)
          : apiOf(t).get(`${BASE}/users/${bob.userId}/wallets`).set("x-api-key", key),
      ),
    );
    expect(reads.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 200));
    for (const r of reads.filter((_, i) => i % 2 === 0)) {
      const btc = (r.body.data.balance as { currency: string; balance: string }[]).find((b) => b.currency === "btc");
      expect(btc?.balance).toBe("0.70000000"); // 1 − 0.1 transferred − 0.2 withdrawn
    }
    expect((await api.btc({ ...scene, walletId: bobWallet }))?.balance).toBe("0.60000000");

    // a credit wallet with a charge and a payment; its notifications are delivered by the job
    expect((await apiOf(t).post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody(customerId))).status).toBe(201);
    const enlisted = await apiOf(t).put("/v2/notifications").set("x-api-key", key).send({ creditNotificationsURL: receiver.url });
    expect(enlisted.status, JSON.stringify(enlisted.body)).toBe(200);
    const creditSecret = enlisted.body.data.signingSecret as string;
    receiver.trust(creditSecret);
    const created = await apiOf(t).post("/v2/wallet/credits").set("x-api-key", key)
      .send({ userId: alice.userId, currency: "USD", limit: 100000, firstCutDate: new Date(Date.now() + 20 * 86_400_000).toISOString(), creditProductCode: "001" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const creditWallet = created.body.data.walletId as string;
    const charged = await apiOf(t).post(`/v2/wallet/credits/${creditWallet}/charges`).set("x-api-key", key).send({ amount: 30000, description: "pgbouncer" });
    expect(charged.status, JSON.stringify(charged.body)).toBe(201);
    const paid = await apiOf(t).post(`/v2/wallet/credits/${creditWallet}/payments`).set("x-api-key", key).send({ amount: 5000 });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    const payment = await waitFor("the payment's credit notification", () =>
      receiver.received.find((h) => {
        const n = JSON.parse(h.body) as { walletId?: string; type?: string };
        return n.walletId === creditWallet && n.type === "Reporte de Pago";
      }), 15_000);
    expect(payment.verifiedBy[creditSecret]).toBe(true);
    expect((JSON.parse(payment.body) as { amount: number }).amount).toBe(5000);

    // the ledger is clean
    expect(await t.services.ledger.verify(t.db)).toEqual(CLEAN);

    // PgBouncer carried the traffic: its pool of the test database has clients and server
    // connections, and its counters show the transactions and queries of the workload
    const pool = await statsOf(bouncer, "POOLS");
    expect(Number(pool.cl_active) + Number(pool.cl_idle ?? 0) + Number(pool.cl_waiting)).toBeGreaterThan(0);
    expect(Number(pool.sv_active) + Number(pool.sv_idle) + Number(pool.sv_used)).toBeGreaterThan(0);
    const stats = await statsOf(bouncer, "STATS");
    expect(Number(stats.total_xact_count)).toBeGreaterThan(100);
    expect(Number(stats.total_query_count)).toBeGreaterThan(100);
  });
});

describe("the negative control: DATABASE_POOL_MODE=session behind a transaction pooler", () => {
  let narrow: PgBouncer;
  let sessionPooler: PgBouncer;
  let transactionMode: TestApp | undefined;
  let sessionMode: TestApp | undefined;
  beforeAll(async () => {
    // one server connection: every client connection of an app's pool shares it
    narrow = await startPgBouncer(db.url, { defaultPoolSize: 1 });
    sessionPooler = await startPgBouncer(db.url, { poolMode: "session" });
  });
  afterAll(async () => {
    await transactionMode?.dispose();
    await sessionMode?.dispose();
    await narrow?.stop();
    await sessionPooler?.stop();
  });

  /** A fresh funded user (set up through the transaction-mode app `t`, same database). */
  async function funded(): Promise<{ key: string; userId: string; walletId: string }> {
    const api = new Api(t);
    const { key } = await api.walk.tenant(`pgb-ctl-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`);
    const { userId } = await api.user(key);
    const walletId = await api.wallet(apiKey(key), userId, [BTC]);
    await api.deposit(key, walletId, BTC, 1);
    return { key, userId, walletId };
  }

  /** 20 parallel balance reads and wallet lists of `user` on `app`: their statuses. */
  const burst = (app: TestApp, user: { key: string; userId: string; walletId: string }) =>
    Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? apiOf(app).get(`${BASE}/wallets/${user.walletId}/balance`).set("x-api-key", user.key)
          : apiOf(app).get(`${BASE}/users/${user.userId}/wallets`).set("x-api-key", user.key),
      ),
    ).then((all) => all.map((r) => r.status));

  it("session mode is refused at start behind a transaction pooler (one server connection or ten), naming DATABASE_POOL_MODE=transaction; transaction mode behind the same pooler serves", async () => {
    const user = await funded();
    transactionMode = await appThrough(narrow.url, "transaction");
    expect(await burst(transactionMode, user)).toEqual(Array.from({ length: 20 }, () => 200));

    for (const pooler of [narrow, bouncer]) {
      const refused = await appThrough(pooler.url, "session").then(
        async (app) => {
          await app.dispose();
          return undefined;
        },
        (error: unknown) => error as Error,
      );
      expect(refused?.name, String(refused)).toBe("PoolModeError");
      expect(refused?.message).toContain("set DATABASE_POOL_MODE=transaction");
      // the driver's error behind it, quoted (SQLSTATE 42P05 or 26000)
      expect(refused?.message).toMatch(/prepared statement "[^"]+" (does not exist|already exists)/);
    }
  });

  it("session mode behind a pooler in session mode starts and serves: the check refuses only what would fail", async () => {
    const user = await funded();
    sessionMode = await appThrough(sessionPooler.url, "session");
    expect(await burst(sessionMode, user)).toEqual(Array.from({ length: 20 }, () => 200));
  });
});
