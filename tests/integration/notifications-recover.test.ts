/**
 * Recovering missed notifications (docs/outbox.md "Recovering missed notifications") on a real
 * PostgreSQL with a real HTTP receiver on loopback: a receiver answers 500 until the notifications
 * fail for good (attempt counters set one short of the last attempt, so one failure ends them),
 * then 200; RecoverCreditNotifications and Recover Webhook Deliveries send every failed
 * notification again with its original `webhook-id`, per wallet in `sequence` order; `since`
 * filters and its window, tenant isolation, the stream-head marking of a re-queue, and the credit
 * delivery log (List Credit Notification Deliveries) with its paging and attempts.
 */
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WAITING_AT, type CreditNotificationBody } from "../../src/modules/credit/notifications/delivery.js";
import { CreditWallet } from "../../src/modules/credit/accounts/entities.js";
import { requeueFailed } from "../../src/modules/outbox/recover.js";
import { TEST_MASTER_KEY, apiOf, startTestApp, type TestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError } from "../support/fixtures.js";
import { startReceiver, type ReceivedHook, type Receiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";
import { goldenProductBody } from "../support/credit-golden.js";

/** Rounds every second, retries from 1 s, 2 s attempts, loopback receivers allowed. */
const FAST = { ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "1", WEBHOOK_RETRY_BASE_S: "1", WEBHOOK_TIMEOUT_S: "2" };
/** One attempt short of the notification policy's last (17): the next failure ends the message. */
const LAST_BUT_ONE = 16;
const HOUR = 3600_000;

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
  receiver.respond(undefined);
});

const DETAILS = {
  principal_outstanding: 30000, interest_accrued: 900, totalDebt: 30900, limit: 100000, amountOverdraft: 0,
  interestSpecs: { interestRateNominal: 36, interestRateMoroso: 12, fixedInterestNominal: 0, fixedInterestMoroso: 500 },
  minimumPaymentSpecs: { minimumPaymentRate: 10, fixedMinimumPayment: 1000 },
};

interface Scene {
  customerId: string;
  key: string;
  userId: string;
  productId: string;
}

/** A tenant with a user and a credit product; with `enlisted`, its target is the receiver. */
async function scene(enlisted = true): Promise<Scene> {
  const walk = new Walk(t.express);
  const { customerId, key } = await walk.tenant(`rec-${++seq}-${Date.now().toString(36)}`);
  const { userId } = await walk.activeUserWithToken(key);
  const product = await apiOf(t).post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody(customerId));
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  const [row] = await t.orm.em.fork().execute<{ id: string }[]>(`select id from credit_product where customer_id = ? and code = '001'`, [customerId]);
  if (enlisted) {
    const res = await apiOf(t).put("/v2/notifications").set("x-api-key", key).send({ creditNotificationsURL: receiver.url });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    receiver.trust(res.body.data.signingSecret as string);
  }
  return { customerId, key, userId, productId: row!.id };
}

async function wallet(s: Scene, events: number): Promise<string> {
  const walletId = randomUUID();
  const now = new Date();
  await t.orm.em.fork().insert(CreditWallet, {
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

/** Inserts events `from`…`to` of a wallet created at `createdAt`, their counters one short of the last attempt. @returns their ids by sequence. */
/**
 * Inserts events `from`..`to` of a wallet, `pending` with LAST_BUT_ONE attempts, or already
 * `failed` after 17 (`failed`: a delivery round can never take them before the test looks).
 */
async function insertEvents(s: Scene, walletId: string, from: number, to: number, createdAt = new Date(), failed = false): Promise<string[]> {
  const ids: string[] = [];
  const values: unknown[] = [];
  for (let n = from; n <= to; n++) {
    const id = randomUUID();
    ids.push(id);
    values.push(id, walletId, s.customerId, n, "Reporte de Pago", 100 * n, "credit", true, JSON.stringify(DETAILS), createdAt,
      failed ? 17 : LAST_BUT_ONE, failed ? "failed" : "pending");
  }
  await t.orm.em.fork().execute(
    `insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at, attempt_count, delivery_status)
       values ${ids.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?)").join(", ")}`,
    values,
  );
  return ids;
}

const bodyOf = (hook: ReceivedHook) => JSON.parse(hook.body) as CreditNotificationBody;
const ofWallet = (walletId: string) => receiver.received.filter((h) => h.body.includes(walletId) && bodyOf(h).walletId === walletId);

async function statuses(ids: readonly string[]): Promise<string[]> {
  const rows = await t.orm.em.fork().execute<{ id: string; delivery_status: string }[]>(
    `select id, delivery_status from credit_event where id in (${ids.map(() => "?").join(", ")})`, [...ids]);
  return ids.map((id) => rows.find((r) => r.id === id)!.delivery_status);
}

const waitForAll = (ids: readonly string[], status: string) =>
  waitFor(`${ids.length} events ${status}`, async () => ((await statuses(ids)).every((x) => x === status) ? true : undefined), 15_000);

const recover = (s: Scene, since: Date | string) =>
  apiOf(t).post("/v2/notifications/recover").set("x-api-key", s.key).send({ since: since instanceof Date ? since.toISOString() : since });

describe("RecoverCreditNotifications", () => {
  it("sends every failed notification again, per wallet in sequence order, with the original webhook-id; the log shows both attempts", async () => {
    const s = await scene();
    const [a, b] = [await wallet(s, 3), await wallet(s, 2)];
    const down = new Set([a, b]);
    receiver.respond((hook) => (down.has(String(bodyOf(hook).walletId)) ? { status: 500 } : undefined));
    const aIds = await insertEvents(s, a, 1, 3);
    const bIds = await insertEvents(s, b, 1, 2);
    t.services.creditDelivery.notifyCreditEventsWritten(5);
    await waitForAll([...aIds, ...bIds], "failed");
    const before = { a: ofWallet(a).length, b: ofWallet(b).length };
    expect(before).toEqual({ a: 3, b: 2 });

    down.clear();
    const res = await recover(s, new Date(Date.now() - HOUR));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ recovered: 5 });
    await waitForAll([...aIds, ...bIds], "succeeded");

    const againA = ofWallet(a).slice(before.a);
    const againB = ofWallet(b).slice(before.b);
    expect(againA.map((h) => bodyOf(h).sequence)).toEqual([1, 2, 3]);
    expect(againA.map((h) => h.headers["webhook-id"])).toEqual(aIds);
    expect(againB.map((h) => h.headers["webhook-id"])).toEqual(bIds);
    // the same webhook-id as the failed attempt
    expect(ofWallet(a).slice(0, before.a).map((h) => h.headers["webhook-id"])).toEqual(aIds);

    const log = await apiOf(t).get("/v2/notifications/deliveries").set("x-api-key", s.key);
    expect(log.status, JSON.stringify(log.body)).toBe(200);
    expect(log.body.data.total).toBe(5);
    const first = (log.body.data.items as Record<string, unknown>[]).find((d) => d.eventId === aIds[0])!;
    expect(first).toMatchObject({ webhookId: aIds[0], walletId: a, sequence: 1, type: "Reporte de Pago", status: "succeeded", nextAttemptAt: null });
    expect((first.attempts as Record<string, unknown>[]).map((x) => [x.httpStatus, x.error])).toEqual([[500, "HTTP 500"], [200, null]]);
    expect((first.attempts as Record<string, unknown>[])[0]).toMatchObject({ attemptedAt: expect.any(String), durationMs: expect.any(Number) });

    // nothing left to recover
    expect((await recover(s, new Date(Date.now() - HOUR))).body.data).toEqual({ recovered: 0 });
  });

  it("only recovers what was created at or after since, and only the caller's tenant", async () => {
    const s = await scene();
    const other = await scene();
    const w = await wallet(s, 2);
    const o = await wallet(other, 1);
    const old = await insertEvents(s, w, 1, 1, new Date(Date.now() - 48 * HOUR), true);
    const recent = await insertEvents(s, w, 2, 2, new Date(Date.now() - HOUR), true);
    const others = await insertEvents(other, o, 1, 1, new Date(Date.now() - HOUR), true);

    const res = await recover(s, new Date(Date.now() - 24 * HOUR));
    expect(res.body.data).toEqual({ recovered: 1 });
    await waitForAll(recent, "succeeded");
    expect(await statuses([...old, ...others])).toEqual(["failed", "failed"]);
    expect(receiver.byId(recent[0]!)).toHaveLength(1);
    expect(receiver.byId(others[0]!)).toHaveLength(0);
  });

  it("counts since on the tenant's sandbox clock: a tenant whose clock is months behind recovers its events by sandbox instants", async () => {
    const s = await scene();
    await t.orm.em.fork().execute(`insert into credit_clock (customer_id, "now", updated_at) values (?, ?, now())`, [s.customerId, new Date("2026-02-20T00:00:00Z")]);
    const w = await wallet(s, 1);
    const missed = await insertEvents(s, w, 1, 1, new Date("2026-02-10T00:00:00Z"), true);
    const res = await recover(s, "2026-02-01T00:00:00Z");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ recovered: 1 });
    await waitForAll(missed, "succeeded");
    // 30 days before the sandbox clock, and after it, are outside the window whatever the real date
    expect((await recover(s, "2026-01-20T00:00:00Z")).status).toBe(422);
    expect((await recover(s, "2026-02-21T00:00:00Z")).status).toBe(422);
  });

  it("keeps the stream head rule: a re-queued event makes the later pending events of its wallet wait", async () => {
    const s = await scene(false);
    const w = await wallet(s, 3);
    const [e1, e2, e3] = await insertEvents(s, w, 1, 3);
    const em = t.orm.em.fork();
    await em.execute(`update credit_event set delivery_status = 'failed', next_attempt_at = null where id in (?, ?)`, [e1, e2]);
    await em.execute(`update credit_event set next_attempt_at = null where id = ?`, [e3]);
    await em.transactional(async (tx) => {
      expect(await requeueFailed(tx, t.services.creditDelivery.channel, s.customerId, new Date(Date.now() - HOUR))).toBe(2);
      const rows = await tx.execute<{ id: string; delivery_status: string; attempt_count: number; next_attempt_at: Date | null }[]>(
        `select id, delivery_status, attempt_count, next_attempt_at from credit_event where wallet_id = ? order by sequence`, [w]);
      expect(rows.map((r) => [r.id, r.delivery_status, r.attempt_count])).toEqual([[e1, "pending", 0], [e2, "pending", 0], [e3, "pending", LAST_BUT_ONE]]);
      expect(rows.map((r) => (r.next_attempt_at === null ? null : new Date(r.next_attempt_at).getTime()))).toEqual([null, WAITING_AT.getTime(), WAITING_AT.getTime()]);
    });
  });

  it("answers 422 for a since in the future or more than 30 days back, 404 without a target; the delivery log pages", async () => {
    const s = await scene();
    for (const since of [new Date(Date.now() + HOUR), new Date(Date.now() - 31 * 24 * HOUR)]) {
      const res = await recover(s, since);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(JSON.stringify(res.body)).toContain("since");
    }
    expect((await recover(s, "yesterday")).status).toBe(422);
    const bare = await scene(false);
    expect((await recover(bare, new Date(Date.now() - HOUR))).status).toBe(404);

    const w = await wallet(bare, 3);
    const ids = await insertEvents(bare, w, 1, 3);
    const page = await apiOf(t).get("/v2/notifications/deliveries?limit=2&offset=1").set("x-api-key", bare.key);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body.data).toMatchObject({ total: 3, limit: 2, offset: 1 });
    expect((page.body.data.items as { eventId: string; status: string }[]).map((d) => [d.eventId, d.status])).toEqual([[ids[1], "pending"], [ids[0], "pending"]]);
    expect((await apiOf(t).get("/v2/notifications/deliveries?limit=101").set("x-api-key", bare.key)).status).toBe(422);
  });
});

describe("Recover Webhook Deliveries", () => {
  const hooksPath = (customerId: string) => `${BASE}/customers/${customerId}/webhooks`;

  async function hooked(): Promise<{ customerId: string; token: string }> {
    const walk = new Walk(t.express);
    const token = await walk.operatorToken();
    const { customerId } = await walk.tenant(`rhk-${++seq}-${Date.now().toString(36)}`);
    const res = await apiOf(t).post(hooksPath(customerId)).set("Authorization", `Bearer ${token}`).send({ url: receiver.url });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    receiver.trust(res.body.data.signing_secret as string);
    return { customerId, token };
  }

  /** Writes `count` `address.added` notifications marked with the customer, one attempt short of the last. */
  async function enqueue(customerId: string, count: number): Promise<void> {
    await t.orm.em.fork().transactional(async (tx) => {
      for (let n = 1; n <= count; n++) {
        await t.services.webhooks.enqueueEvent(tx, { customerId, type: "address.added", data: { marker: customerId, n }, reference: `test:${n}` });
      }
      await tx.flush();
      await tx.execute(`update webhook_delivery set attempt_count = ? where customer_id = ?`, [LAST_BUT_ONE, customerId]);
    });
    t.services.webhooks.kick();
  }

  const deliveryStates = (customerId: string) =>
    t.orm.em.fork().execute<{ webhook_message_id: string; status: string }[]>(
      `select webhook_message_id, status from webhook_delivery where customer_id = ? order by created_at, id`, [customerId]);
  const waitForDeliveries = (customerId: string, status: string) =>
    waitFor(`deliveries ${status}`, async () => ((await deliveryStates(customerId)).every((d) => d.status === status) ? true : undefined), 15_000);

  it("sends every failed delivery again with its webhook-id; only the caller's; a disabled webhook answers 400", async () => {
    const mine = await hooked();
    const other = await hooked();
    const down = new Set([mine.customerId, other.customerId]);
    receiver.respond((hook) => (down.has(String(hook.json.data?.marker)) ? { status: 500 } : undefined));
    await enqueue(mine.customerId, 2);
    await enqueue(other.customerId, 1);
    await waitForDeliveries(mine.customerId, "failed");
    await waitForDeliveries(other.customerId, "failed");
    down.clear();

    const future = await apiOf(t).post(`${hooksPath(mine.customerId)}/deliveries/recover`).set("Authorization", `Bearer ${mine.token}`).send({ since: new Date(Date.now() + HOUR).toISOString() });
    expectPlatformError(future, 422, "UNPROCESSABLE_ENTITY");
    const res = await apiOf(t).post(`${hooksPath(mine.customerId)}/deliveries/recover`).set("Authorization", `Bearer ${mine.token}`).send({ since: new Date(Date.now() - HOUR).toISOString() });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ recovered: 2 });
    await waitForDeliveries(mine.customerId, "succeeded");
    for (const d of await deliveryStates(mine.customerId)) {
      expect(receiver.byId(d.webhook_message_id).map((h) => h.headers["webhook-id"])).toEqual([d.webhook_message_id, d.webhook_message_id]);
    }
    expect((await deliveryStates(other.customerId)).map((d) => d.status)).toEqual(["failed"]);

    await t.orm.em.fork().execute(`update webhook set disabled_at = now(), disabled_reason = 'test' where customer_id = ?`, [other.customerId]);
    const disabled = await apiOf(t).post(`${hooksPath(other.customerId)}/deliveries/recover`).set("Authorization", `Bearer ${other.token}`).send({ since: new Date(Date.now() - HOUR).toISOString() });
    expectPlatformError(disabled, 400, "BAD_REQUEST");
    expect((await deliveryStates(other.customerId)).map((d) => d.status)).toEqual(["failed"]);
  });
});
