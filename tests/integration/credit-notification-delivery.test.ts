/**
 * Delivery of the credit notifications (docs/decisions/notifications.md, docs/decisions/credit.md, docs/outbox.md;
 * spec/credit/notifications.tsp) on a real PostgreSQL with real HTTP receivers on loopback whose
 * signatures are checked by the independent `standardwebhooks` package. `credit_event` rows are
 * inserted directly (as the writers do, without the delivery columns), then the
 * `credit-notification-delivery` job or a round runs: the exact `CreditNotification` body and
 * Standard Webhooks headers, `sequence` order per wallet under a failing receiver, wallets in
 * parallel, retries with the same `webhook-id`, giving up after the last attempt, HTTP 410 and
 * NotificationsEnlist, a tenant without a target, the SSRF guard at connect time, the lease of a
 * crashed round, and the after-commit trigger.
 */
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { CREDIT_DELIVERY_JOB, PARKED_AT, WAITING_AT, type CreditNotificationBody, type CreditNotificationDelivery } from "../../src/modules/credit/notifications/delivery.js";
import { CreditEvent, CreditWallet } from "../../src/modules/credit/accounts/entities.js";
import { TEST_MASTER_KEY, apiOf, startTestApp, type TestApp } from "../support/app.js";
import { Walk } from "../support/fixtures.js";
import { startReceiver, type ReceivedHook, type Receiver } from "../support/webhook-receiver.js";
import { sleep, waitFor } from "../support/wait.js";
import { goldenProductBody } from "../support/credit-golden.js";

/** Rounds every second, retries from 1 s, 2 s attempts (lease 11 s), loopback receivers allowed. */
const FAST = { ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "1", WEBHOOK_RETRY_BASE_S: "1", WEBHOOK_TIMEOUT_S: "2" };

let t: TestApp;
let receiver: Receiver;
let seq = 0;

beforeAll(async () => {
  [t, receiver] = await Promise.all([startTestApp(FAST), startReceiver()]);
});
afterAll(async () => {
  await t?.dispose();
  await receiver?.close();
});
afterEach(() => {
  receiver.answers.length = 0;
  receiver.respond(undefined);
});

/** Wallet state after an event (spec `CreditWalletDetails`), keys deliberately out of the spec's order. */
const DETAILS = {
  minimumPaymentSpecs: { fixedMinimumPayment: 1000, minimumPaymentRate: 10 },
  interestSpecs: { fixedInterestMoroso: 500, fixedInterestNominal: 0, interestRateMoroso: 12, interestRateNominal: 36 },
  limit: 100000,
  amountOverdraft: 0,
  totalDebt: 30900,
  interest_accrued: 900,
  principal_outstanding: 30000,
};

/** A tenant with a user and a credit product, on app `app`. */
interface Scene {
  app: TestApp;
  customerId: string;
  key: string;
  userId: string;
  productId: string;
}

async function scene(app: TestApp = t): Promise<Scene> {
  const walk = new Walk(app.express);
  const { customerId, key } = await walk.tenant(`cnd-${++seq}-${Date.now().toString(36)}`);
  const { userId } = await walk.activeUserWithToken(key);
  const product = await apiOf(app).post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody(customerId));
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  const [row] = await app.orm.em.fork().execute<{ id: string }[]>(`select id from credit_product where customer_id = ? and code = '001'`, [customerId]);
  return { app, customerId, key, userId, productId: row!.id };
}

/** NotificationsEnlist over HTTP; the receiver trusts the new secret. @returns the secret. */
async function enlist(s: Scene, url = receiver.url, into: Receiver = receiver): Promise<string> {
  const res = await apiOf(s.app).put("/v2/notifications").set("x-api-key", s.key).send({ creditNotificationsURL: url });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const secret = res.body.data.signingSecret as string;
  into.trust(secret);
  return secret;
}

/** A minimal valid credit wallet row (golden product, limit 100000, 30000 charged) with `events` sequences used. */
async function wallet(s: Scene, events: number): Promise<string> {
  const walletId = randomUUID();
  const now = new Date();
  await s.app.orm.em.fork().insert(CreditWallet, {
    walletId, customerId: s.customerId, userId: s.userId, productId: s.productId, currency: "USD", description: null,
    status: "active", statusBeforeDefault: null, limit: 100000, availableAmount: 70000, principalOutstanding: 30000,
    interestOutstanding: 0, firstCutDate: new Date("2026-01-31T00:00:00Z"), time: null, expiresAt: null,
    cycleStart: new Date("2026-01-01T00:00:00Z"), sumOfDailyBalance: 0, lastCloseAt: null, nextCutAt: new Date("2026-01-31T00:00:00Z"),
    interestRateNominal: "36.0000", interestRateMoroso: "12.0000", fixedInterestNominal: 0, fixedInterestMoroso: 500,
    minimumPaymentRate: "10.0000", fixedMinimumPayment: 1000, specsOverridden: false, pendingSpecs: null,
    sequence: events, asOf: now, createdAt: now, updatedAt: now,
  });
  return walletId;
}

/**
 * Inserts events `from`…`to` of a wallet in one statement naming only the event columns (as the
 * set-based cycle batches do). @returns their ids, by sequence.
 */
async function insertEvents(s: Scene, walletId: string, from: number, to: number): Promise<string[]> {
  const ids: string[] = [];
  const values: unknown[] = [];
  for (let n = from; n <= to; n++) {
    const id = randomUUID();
    ids.push(id);
    values.push(id, walletId, s.customerId, n, "Reporte de Pago", 100 * n, "credit", true, JSON.stringify(DETAILS), new Date("2026-02-10T00:00:00Z"));
  }
  const rows = ids.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)").join(", ");
  await s.app.orm.em.fork().execute(
    `insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at) values ${rows}`,
    values,
  );
  return ids;
}

/** The body the receiver got, as a credit notification. */
const bodyOf = (hook: ReceivedHook) => JSON.parse(hook.body) as CreditNotificationBody;
/** What `into` received for wallet `walletId`, in arrival order. */
const hooksOf = (walletId: string, into: Receiver = receiver) => into.received.filter((h) => bodyOf(h).walletId === walletId);
const sequencesOf = (walletId: string, into: Receiver = receiver) => hooksOf(walletId, into).map((h) => bodyOf(h).sequence);

/** Delivery state and attempts of an event. */
async function stateOf(app: TestApp, eventId: string): Promise<{ status: string; attemptCount: number; nextAttemptAt: Date | null; attempts: { http_status: number | null; error: string | null; duration_ms: number }[] }> {
  const em = app.orm.em.fork();
  const [row] = await em.execute<{ delivery_status: string; attempt_count: number; next_attempt_at: string | Date | null }[]>(
    `select delivery_status, attempt_count, next_attempt_at from credit_event where id = ?`, [eventId]);
  const attempts = await em.execute<{ http_status: number | null; error: string | null; duration_ms: number }[]>(
    `select http_status, error, duration_ms from delivery_attempt where channel = 'credit' and message_id = ? order by attempted_at, id`, [eventId]);
  return { status: row!.delivery_status, attemptCount: row!.attempt_count, nextAttemptAt: row!.next_attempt_at === null ? null : new Date(row!.next_attempt_at), attempts };
}

/**
 * Records every delivery round `delivery` starts from now on (the job's body calls `deliverDue`),
 * so a test can wait for a round to end instead of sleeping. Call `restore()` once done.
 */
function trackRounds(delivery: CreditNotificationDelivery): { rounds: Promise<number>[]; restore(): void } {
  const rounds: Promise<number>[] = [];
  const original = delivery.deliverDue.bind(delivery);
  const spy = vi.spyOn(delivery, "deliverDue").mockImplementation((options) => {
    const round = original(options);
    rounds.push(round);
    return round;
  });
  return { rounds, restore: () => spy.mockRestore() };
}

/** NotificationsEnlist, then waits for the delivery round it started (releasing the tenant's parked events) to end. */
async function enlistAndSettle(s: Scene): Promise<string> {
  const tracked = trackRounds(s.app.services.creditDelivery);
  try {
    const secret = await enlist(s);
    await waitFor("the round the enlist started", () => (tracked.rounds.length > 0 ? true : undefined));
    await Promise.all(tracked.rounds);
    return secret;
  } finally {
    tracked.restore();
  }
}

const waitForStatus = (app: TestApp, eventId: string, status: string, timeoutMs = 10_000) =>
  waitFor(`event ${eventId} ${status}`, async () => {
    const state = await stateOf(app, eventId);
    return state.status === status ? state : undefined;
  }, timeoutMs);

describe("the notification sent", () => {
  it("is the spec's CreditNotification body, exactly, with Standard Webhooks headers: webhook-id = the event id, verified by standardwebhooks", async () => {
    const s = await scene();
    const secret = await enlist(s);
    const walletId = await wallet(s, 1);
    // the ORM path of the writers: an event created without any delivery field
    const eventId = randomUUID();
    await t.orm.em.fork().insert(CreditEvent, {
      id: eventId, walletId, customerId: s.customerId, sequence: 1, type: "Interes Nominal Aplicado", amount: 900,
      direction: "debit", affectsBalance: true, walletDetailsAfter: DETAILS, createdAt: new Date("2026-02-10T00:00:00Z"),
    });
    t.services.creditDelivery.notifyCreditEventsWritten(1);
    const [hook, ...more] = await waitFor("the notification", () => (hooksOf(walletId).length > 0 ? hooksOf(walletId) : undefined));
    expect(more).toEqual([]);
    const expected = {
      walletId,
      type: "Interes Nominal Aplicado",
      amount: 900,
      direction: "debit",
      affectsBalance: true,
      walletDetails_after: {
        principal_outstanding: 30000,
        interest_accrued: 900,
        totalDebt: 30900,
        limit: 100000,
        amountOverdraft: 0,
        // the stored details predate authorizations (no `amountHeld`): the body says 0, no hold was open
        amountHeld: 0,
        interestSpecs: { interestRateNominal: 36, interestRateMoroso: 12, fixedInterestNominal: 0, fixedInterestMoroso: 500 },
        minimumPaymentSpecs: { minimumPaymentRate: 10, fixedMinimumPayment: 1000 },
      },
      sequence: 1,
    };
    expect(hook!.body).toBe(JSON.stringify(expected));
    expect(hook!.verifiedBy[secret]).toBe(true);
    expect(hook!.headers["webhook-id"]).toBe(eventId);
    expect(Math.abs(Number(hook!.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(10);
    expect(String(hook!.headers["webhook-signature"])).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(hook!.headers["content-type"]).toBe("application/json");
    expect(hook!.headers["user-agent"]).toBe("custody-platform-webhooks/1");

    const state = await waitForStatus(t, eventId, "succeeded");
    expect(state).toMatchObject({ attemptCount: 1, nextAttemptAt: null });
    expect(state.attempts).toEqual([{ http_status: 200, error: null, duration_ms: expect.any(Number) }]);
  });
});

describe("order and retries", () => {
  it("holds a wallet's event 2 and 3 until event 1 succeeds: event 1 fails twice and is retried with backoff, the same webhook-id and the same body", async () => {
    const s = await scene();
    const secret = await enlist(s);
    const walletId = await wallet(s, 3);
    let firstTries = 0;
    receiver.respond((hook) => {
      const body = bodyOf(hook);
      if (body.walletId !== walletId || body.sequence !== 1) return undefined;
      firstTries++;
      return firstTries === 1 ? { status: 503 } : firstTries === 2 ? { status: 500, body: "boom" } : undefined;
    });
    const [e1, e2, e3] = await insertEvents(s, walletId, 1, 3);
    t.services.creditDelivery.notifyCreditEventsWritten(3);
    await waitForStatus(t, e3!, "succeeded", 20_000);

    expect(sequencesOf(walletId)).toEqual([1, 1, 1, 2, 3]);
    const hooks = hooksOf(walletId);
    expect(hooks.map((h) => h.headers["webhook-id"])).toEqual([e1, e1, e1, e2, e3]);
    expect(new Set(hooks.slice(0, 3).map((h) => h.body)).size).toBe(1);
    expect(hooks.every((h) => h.verifiedBy[secret])).toBe(true);
    // backoff: about 1 s (±20 %), then about 3 s (±20 %); event 2 only after event 1's success
    expect(hooks[1]!.receivedAt - hooks[0]!.receivedAt).toBeGreaterThanOrEqual(700);
    expect(hooks[2]!.receivedAt - hooks[1]!.receivedAt).toBeGreaterThanOrEqual(2_300);
    expect(hooks[3]!.receivedAt).toBeGreaterThanOrEqual(hooks[2]!.receivedAt);

    const first = await stateOf(t, e1!);
    expect(first).toMatchObject({ status: "succeeded", attemptCount: 3, nextAttemptAt: null });
    expect(first.attempts.map((a) => [a.http_status, a.error])).toEqual([[503, "HTTP 503"], [500, "HTTP 500"], [200, null]]);
    expect((await stateOf(t, e2!)).attempts.map((a) => a.http_status)).toEqual([200]);
  });

  it("sends different wallets in parallel: a receiver holding wallet A's event 1 does not delay wallet B", async () => {
    const s = await scene();
    await enlist(s);
    const [a, b] = [await wallet(s, 2), await wallet(s, 3)];
    let held = false;
    receiver.respond((hook) => {
      const body = bodyOf(hook);
      if (body.walletId === a && body.sequence === 1 && !held) {
        held = true;
        return "hang"; // no answer: the attempt times out after WEBHOOK_TIMEOUT_S (2 s)
      }
      return undefined;
    });
    const aIds = await insertEvents(s, a, 1, 2);
    const bIds = await insertEvents(s, b, 1, 3);
    t.services.creditDelivery.notifyCreditEventsWritten(5);
    await waitForStatus(t, bIds[2]!, "succeeded");
    await waitForStatus(t, aIds[1]!, "succeeded", 15_000);

    const [aFirst] = hooksOf(a);
    const bHooks = hooksOf(b);
    expect(bHooks.map((h) => bodyOf(h).sequence)).toEqual([1, 2, 3]);
    // all of B went out while A's first attempt was still waiting for its answer
    expect(bHooks.every((h) => h.receivedAt < aFirst!.receivedAt + 2_000)).toBe(true);
    expect(sequencesOf(a)).toEqual([1, 1, 2]);
    expect(hooksOf(a).map((h) => h.headers["webhook-id"])).toEqual([aIds[0], aIds[0], aIds[1]]);
    const timedOut = (await stateOf(t, aIds[0]!)).attempts[0]!;
    expect(timedOut).toMatchObject({ http_status: null, error: expect.stringMatching(/no answer within 2000 ms/) });
    expect(timedOut.duration_ms).toBeGreaterThanOrEqual(1_900);
  });

  it("gives an event up as failed after its last attempt (17), and the wallet's next event then goes", async () => {
    const s = await scene();
    await enlist(s);
    const walletId = await wallet(s, 2);
    receiver.respond((hook) => (bodyOf(hook).walletId === walletId && bodyOf(hook).sequence === 1 ? { status: 502 } : undefined));
    const [e1, e2] = await insertEvents(s, walletId, 1, 2);
    // sixteen attempts already spent (as three days of failures would leave it)
    await t.orm.em.fork().execute(`update credit_event set attempt_count = 16 where id = ?`, [e1]);
    t.services.creditDelivery.notifyCreditEventsWritten(2);
    await waitForStatus(t, e2!, "succeeded");
    expect(sequencesOf(walletId)).toEqual([1, 2]);
    const first = await stateOf(t, e1!);
    expect(first).toMatchObject({ status: "failed", attemptCount: 17, nextAttemptAt: null });
    expect(first.attempts.map((a) => a.error)).toEqual(["HTTP 502"]);
  });
});

describe("the target", () => {
  it("HTTP 410 disables it: the wallet's events wait; NotificationsEnlist enables it and they go in order, to the new URL with the new secret", async () => {
    const s = await scene();
    const old = await enlist(s);
    const walletId = await wallet(s, 2);
    receiver.respond((hook) => (bodyOf(hook).walletId === walletId && hook.verifiedBy[old] ? { status: 410 } : undefined));
    const [e1, e2] = await insertEvents(s, walletId, 1, 2);
    t.services.creditDelivery.notifyCreditEventsWritten(2);
    const settings = await waitFor("the target to be disabled", async () => {
      const res = await apiOf(t).get("/v2/notifications").set("x-api-key", s.key);
      return res.body.data?.enabled === false ? res.body.data : undefined;
    });
    expect(settings).toMatchObject({ creditNotificationsURL: receiver.url, enabled: false });
    const [row] = await t.orm.em.fork().execute<{ disabled_reason: string }[]>(`select disabled_reason from credit_notification_target where customer_id = ?`, [s.customerId]);
    expect(row!.disabled_reason).toMatch(/410/);
    await sleep(2_000); // two recurring rounds: nothing more goes out
    expect(sequencesOf(walletId)).toEqual([1]);
    // both wait out of the claims' way: event 1 parked by its 410, event 2 behind event 1 since it was written
    expect(await stateOf(t, e1!)).toMatchObject({ status: "pending", attemptCount: 1, nextAttemptAt: PARKED_AT });
    expect((await stateOf(t, e1!)).attempts.map((a) => [a.http_status, a.error])).toEqual([[410, "HTTP 410"]]);
    expect(await stateOf(t, e2!)).toMatchObject({ status: "pending", attemptCount: 0, attempts: [], nextAttemptAt: WAITING_AT });

    const fresh = await enlist(s, `${receiver.url}/again`);
    await waitForStatus(t, e2!, "succeeded");
    const hooks = hooksOf(walletId);
    expect(hooks.map((h) => bodyOf(h).sequence)).toEqual([1, 1, 2]);
    expect(hooks.map((h) => h.headers["webhook-id"])).toEqual([e1, e1, e2]);
    expect(hooks.slice(1).every((h) => h.verifiedBy[fresh] && !h.verifiedBy[old])).toBe(true);
    expect((await apiOf(t).get("/v2/notifications").set("x-api-key", s.key)).body.data).toMatchObject({ enabled: true });
  });

  it("a tenant without a target: its events wait, unattempted, and go in order once it enlists", async () => {
    const s = await scene();
    const walletId = await wallet(s, 2);
    const [e1, e2] = await insertEvents(s, walletId, 1, 2);
    t.services.creditDelivery.notifyCreditEventsWritten(2);
    await sleep(2_000);
    expect(hooksOf(walletId)).toEqual([]);
    const parked = await waitFor("event 1 parked by a sweep", async () => {
      const state = await stateOf(t, e1!);
      return state.nextAttemptAt?.getTime() === PARKED_AT.getTime() ? state : undefined;
    });
    expect(parked).toMatchObject({ status: "pending", attemptCount: 0, attempts: [] });
    const secret = await enlist(s);
    await waitForStatus(t, e2!, "succeeded");
    expect(hooksOf(walletId).map((h) => [h.headers["webhook-id"], h.verifiedBy[secret]])).toEqual([[e1, true], [e2, true]]);
  });

  it("a deleted tenant's pending events become disabled, nothing is sent", async () => {
    const s = await scene();
    await enlist(s);
    const walletId = await wallet(s, 1);
    const op = await new Walk(t.express).operatorToken();
    expect((await apiOf(t).delete(`/api/v1/customers/${s.customerId}`).set("Authorization", `Bearer ${op}`)).status).toBe(204);
    const [e1] = await insertEvents(s, walletId, 1, 1);
    t.services.creditDelivery.notifyCreditEventsWritten(1);
    expect(await waitForStatus(t, e1!, "disabled")).toMatchObject({ attemptCount: 0, attempts: [] });
    expect(hooksOf(walletId)).toEqual([]);
  });
});

describe("the job", () => {
  let kickApp: TestApp;
  beforeAll(async () => {
    // the recurring round only once an hour: what sends is the after-commit trigger
    kickApp = await startTestApp({ ...FAST, OUTBOX_INTERVAL_S: "3600" });
  });
  afterAll(async () => {
    await kickApp?.dispose();
  });

  it("notifyCreditEventsWritten starts the credit-notification-delivery job at once; with 0 events it starts nothing", async () => {
    const s = await scene(kickApp);
    await enlistAndSettle(s);
    const walletId = await wallet(s, 1);
    const [e1] = await insertEvents(s, walletId, 1, 1);
    const kick = vi.spyOn(kickApp.scheduler, "kick");
    try {
      kickApp.services.creditDelivery.notifyCreditEventsWritten(0);
      expect(kick).not.toHaveBeenCalled();
      await sleep(1_500);
      expect(hooksOf(walletId)).toEqual([]);
      kickApp.services.creditDelivery.notifyCreditEventsWritten(1);
      expect(kick).toHaveBeenCalledWith(CREDIT_DELIVERY_JOB);
      await waitForStatus(kickApp, e1!, "succeeded", 4_000);
      expect(sequencesOf(walletId)).toEqual([1]);
    } finally {
      kick.mockRestore();
    }
  });

  it("the writers trigger it after their commit: ChangeWalletLimit, a charge and a payment through the API arrive in sequence order, equal to List Credit Wallet Events", async () => {
    const s = await scene(kickApp);
    const secret = await enlistAndSettle(s);
    const api = () => apiOf(kickApp);
    const created = await api().post("/v2/wallet/credits").set("x-api-key", s.key).send({ userId: s.userId, currency: "USD", limit: 100000, creditProductCode: "001" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const walletId = created.body.data.walletId as string;
    const path = `/v2/wallet/credits/${walletId}`;
    expect((await api().post(`${path}/limit`).set("x-api-key", s.key).send({ limit: 150000 })).status).toBe(200);
    expect((await api().post(`${path}/charges`).set("x-api-key", s.key).set("Idempotency-Key", "c-1").send({ amount: 30000, description: "Hardware store" })).status).toBe(201);
    expect((await api().post(`${path}/payments`).set("x-api-key", s.key).set("Idempotency-Key", "p-1").send({ amount: 5000 })).status).toBe(201);
    // no recurring round within the hour: only the writers' trigger can have sent them
    const hooks = await waitFor("the notifications", () => (hooksOf(walletId).length >= 2 ? hooksOf(walletId) : undefined), 5_000);
    const events = await api().get(`${path}/events`).set("x-api-key", s.key);
    expect(events.status).toBe(200);
    const listed = events.body.data.items as (CreditNotificationBody & { id: string; createdAt: string })[];
    expect(listed.map((e) => e.type)).toEqual(["Cambio de Limite", "Reporte de Pago"]);
    expect(hooks.map((h) => h.headers["webhook-id"])).toEqual(listed.map((e) => e.id));
    expect(hooks.map((h) => bodyOf(h))).toEqual(listed.map(({ id: _id, createdAt: _at, ...body }) => body));
    expect(hooks.every((h) => h.verifiedBy[secret])).toBe(true);
  });
});

describe("rounds run by hand (no worker in the process)", () => {
  let idle: TestApp;
  let strict: TestApp;
  beforeAll(async () => {
    // ROLE=api: this process runs no job, so only the test's rounds claim events
    [idle, strict] = await Promise.all([
      startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true", ROLE: "api", OUTBOX_INTERVAL_S: "3600", WEBHOOK_TIMEOUT_S: "1" }),
      startTestApp({ ROLE: "api", OUTBOX_INTERVAL_S: "3600", WEBHOOK_TIMEOUT_S: "1" }),
    ]);
  });
  afterAll(async () => {
    await idle?.dispose();
    await strict?.dispose();
  });

  it("a round that claimed an event and crashed holds it for the lease; after the lease expires the next round sends it with the same webhook-id", async () => {
    const s = await scene(idle);
    const secret = await enlist(s);
    const walletId = await wallet(s, 2);
    const [e1, e2] = await insertEvents(s, walletId, 1, 2);
    const claimed = await idle.services.creditDelivery.claimDue();
    expect(claimed).toMatchObject({ id: e1, walletId, sequence: 1, attemptCount: 0 });
    const leased = await stateOf(idle, e1!);
    // lease = 3 × WEBHOOK_TIMEOUT_S + 5 s = 8 s
    expect(leased.nextAttemptAt!.getTime() - Date.now()).toBeGreaterThan(6_000);
    expect(leased.nextAttemptAt!.getTime() - Date.now()).toBeLessThanOrEqual(8_000);
    // the claiming round dies here. Meanwhile another round takes neither event 1 (leased) nor event 2 (not the head)
    expect(await idle.services.creditDelivery.deliverDue()).toBe(0);
    expect(hooksOf(walletId)).toEqual([]);

    await waitFor("the lease to expire and a round to send event 1", async () => {
      await idle.services.creditDelivery.deliverDue();
      return hooksOf(walletId).length >= 2 ? true : undefined;
    }, 12_000);
    expect(hooksOf(walletId).map((h) => [h.headers["webhook-id"], bodyOf(h).sequence, h.verifiedBy[secret]])).toEqual([[e1, 1, true], [e2, 2, true]]);
    expect(await stateOf(idle, e1!)).toMatchObject({ status: "succeeded", attemptCount: 1 });
    expect((await stateOf(idle, e1!)).attempts.map((a) => a.http_status)).toEqual([200]);
  });

  it("a sweep releases parked events of a tenant whose target is enabled (a release that raced a park) and parks due ones of a tenant without one", async () => {
    const withTarget = await scene(idle);
    await enlist(withTarget);
    const a = await wallet(withTarget, 1);
    const [a1] = await insertEvents(withTarget, a, 1, 1);
    await idle.orm.em.fork().execute(`update credit_event set next_attempt_at = ? where id = ?`, [PARKED_AT, a1]);
    const without = await scene(idle);
    const b = await wallet(without, 1);
    const [b1] = await insertEvents(without, b, 1, 1);
    expect(await idle.services.creditDelivery.deliverDue()).toBe(0);
    await idle.services.creditDelivery.sweepWaiting();
    expect(await stateOf(idle, a1!)).toMatchObject({ nextAttemptAt: null });
    expect(await stateOf(idle, b1!)).toMatchObject({ nextAttemptAt: PARKED_AT });
    expect(await idle.services.creditDelivery.deliverDue()).toBe(1);
    expect(sequencesOf(a)).toEqual([1]);
    expect(await stateOf(idle, a1!)).toMatchObject({ status: "succeeded" });
  });

  it("SSRF guard at connect time: a target that became private after its registration gets no connection; the attempt fails and is retried later", async () => {
    const s = await scene(strict);
    // registered with a public address, then the target moves to loopback (as a DNS answer that
    // changes after registration would make it)
    await enlist(s, "http://93.184.215.14/credit-hooks");
    await strict.orm.em.fork().execute(`update credit_notification_target set url = ? where customer_id = ?`, [receiver.url, s.customerId]);
    const walletId = await wallet(s, 1);
    const [e1] = await insertEvents(s, walletId, 1, 1);
    expect(await strict.services.creditDelivery.deliverDue()).toBe(1);
    const state = await stateOf(strict, e1!);
    expect(state).toMatchObject({ status: "pending", attemptCount: 1 });
    expect(state.attempts).toEqual([{ http_status: null, error: expect.stringMatching(/not allowed/i), duration_ms: expect.any(Number) }]);
    expect(state.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now());
    expect(hooksOf(walletId)).toEqual([]);
  });

  it("SSRF guard at connect time: a stored IPv4-compatible IPv6 target ([::127.0.0.1]) gets no connection; the attempt says it is not allowed", async () => {
    const s = await scene(strict);
    await enlist(s, "http://93.184.215.14/credit-hooks");
    const port = new URL(receiver.url).port;
    await strict.orm.em.fork().execute(`update credit_notification_target set url = ? where customer_id = ?`, [`http://[::127.0.0.1]:${port}/hooks`, s.customerId]);
    const walletId = await wallet(s, 1);
    const [e1] = await insertEvents(s, walletId, 1, 1);
    expect(await strict.services.creditDelivery.deliverDue()).toBe(1);
    const state = await stateOf(strict, e1!);
    expect(state).toMatchObject({ status: "pending", attemptCount: 1 });
    expect(state.attempts).toEqual([{ http_status: null, error: expect.stringMatching(/127\.0\.0\.1\).*is not allowed/), duration_ms: expect.any(Number) }]);
    expect(hooksOf(walletId)).toEqual([]);
  });

  it("a stored URL that cannot be built into a request (port 0, stored before the rule) fails the event at once with an attempt that says why", async () => {
    const s = await scene(idle);
    await enlist(s);
    await idle.orm.em.fork().execute(`update credit_notification_target set url = ? where customer_id = ?`, ["http://127.0.0.1:0/hooks", s.customerId]);
    const walletId = await wallet(s, 1);
    const [e1] = await insertEvents(s, walletId, 1, 1);
    expect(await idle.services.creditDelivery.deliverDue()).toBe(1);
    const state = await stateOf(idle, e1!);
    expect(state).toMatchObject({ status: "failed", attemptCount: 1, nextAttemptAt: null });
    expect(state.attempts).toEqual([{ http_status: null, error: expect.stringMatching(/cannot be sent.*port 0/), duration_ms: 0 }]);
    expect(state.attempts[0]!.error).not.toMatch(/sealed/);
  });
});
