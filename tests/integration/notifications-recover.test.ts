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
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { Db } from "../../src/db/sql.js";
import { WAITING_AT, type CreditNotificationBody } from "../../src/modules/credit/notifications/delivery.js";
import { CreditWallet } from "../../src/modules/credit/accounts/entities.js";
import { requeueFailed } from "../../src/modules/outbox/recover.js";
import { TEST_MASTER_KEY, apiOf, startTestApp, type TestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError } from "../support/fixtures.js";
import { gate, startReceiver, type ReceivedHook, type Receiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";
import { goldenProductBody } from "../support/credit-golden.js";

/** Rounds every second, retries from 1 s, 2 s attempts, loopback receivers allowed. */
const FAST = { ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "1", WEBHOOK_RETRY_BASE_S: "1", WEBHOOK_TIMEOUT_S: "2" };
/** One attempt short of the notification policy's last (17): the next failure ends the message. */
const LAST_BUT_ONE = 16;
/**
 * Attempts that failed before the outage: the next failure waits 1 s × 3^DEEP ≈ 4 min (±20 %), a
 * retry with the whole schedule still ahead, far beyond the 11 s lease (3 × WEBHOOK_TIMEOUT_S + 5 s).
 */
const DEEP = 5;
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

/** How inserted events start: their delivery status and attempts counter, and when they were created. */
interface EventsState {
  createdAt?: Date;
  /** `pending` (default), `failed` (after 17 attempts: a delivery round can never take them before the test looks) or `succeeded`. */
  status?: "pending" | "failed" | "succeeded";
  /** The attempts counter; default 17 when failed, 1 when succeeded, LAST_BUT_ONE when pending. */
  attempts?: number;
}

/** Inserts events `from`..`to` of a wallet in one statement, in the state `state` says. @returns their ids by sequence. */
async function insertEvents(s: Scene, walletId: string, from: number, to: number, state: EventsState = {}): Promise<string[]> {
  const status = state.status ?? "pending";
  const attempts = state.attempts ?? { pending: LAST_BUT_ONE, failed: 17, succeeded: 1 }[status];
  const ids: string[] = [];
  const values: unknown[] = [];
  for (let n = from; n <= to; n++) {
    const id = randomUUID();
    ids.push(id);
    values.push(id, walletId, s.customerId, n, "Reporte de Pago", 100 * n, "credit", true, JSON.stringify(DETAILS), state.createdAt ?? new Date(), attempts, status);
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
    const old = await insertEvents(s, w, 1, 1, { createdAt: new Date(Date.now() - 48 * HOUR), status: "failed" });
    const recent = await insertEvents(s, w, 2, 2, { createdAt: new Date(Date.now() - HOUR), status: "failed" });
    const others = await insertEvents(other, o, 1, 1, { createdAt: new Date(Date.now() - HOUR), status: "failed" });

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
    const missed = await insertEvents(s, w, 1, 1, { createdAt: new Date("2026-02-10T00:00:00Z"), status: "failed" });
    const res = await recover(s, "2026-02-01T00:00:00Z");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ recovered: 1 });
    await waitForAll(missed, "succeeded");
    // 30 days before the sandbox clock, and after it, are outside the window whatever the real date
    expect((await recover(s, "2026-01-20T00:00:00Z")).status).toBe(422);
    expect((await recover(s, "2026-02-21T00:00:00Z")).status).toBe(422);
  });

  it("keeps the stream head rule: a re-queued event makes the later pending events of its wallet wait; a never-attempted one is not re-queued", async () => {
    const s = await scene(false);
    const w = await wallet(s, 4);
    const [e1, e2, e3] = await insertEvents(s, w, 1, 3);
    const [e4] = await insertEvents(s, w, 4, 4, { attempts: 0 });
    const em = t.orm.em.fork();
    await em.execute(`update credit_event set delivery_status = 'failed', next_attempt_at = null where id in (?, ?)`, [e1, e2]);
    await em.execute(`update credit_event set next_attempt_at = null where id = ?`, [e3]);
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    onTestFinished(() => pool.end());
    await new Db(pool, { named: true }).transaction(async (tx) => {
      // e1 and e2 failed for good, e3 pending after failed attempts; e4 never attempted
      expect(await requeueFailed(tx, t.services.creditDelivery.channel, s.customerId, new Date(Date.now() - HOUR))).toBe(3);
      const rows = await tx.rows<{ id: string; delivery_status: string; attempt_count: number; next_attempt_at: Date | null }>(
        { name: "test_wallet_events", text: `select id, delivery_status, attempt_count, next_attempt_at from credit_event where wallet_id = $1 order by sequence` }, [w]);
      expect(rows.map((r) => [r.id, r.delivery_status, r.attempt_count])).toEqual([[e1, "pending", 0], [e2, "pending", 0], [e3, "pending", 0], [e4, "pending", 0]]);
      expect(rows.map((r) => (r.next_attempt_at === null ? null : new Date(r.next_attempt_at).getTime())))
        .toEqual([null, WAITING_AT.getTime(), WAITING_AT.getTime(), WAITING_AT.getTime()]);
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

const hooksPath = (customerId: string) => `${BASE}/customers/${customerId}/webhooks`;

/** A PIN webhook to the receiver for customer `customerId` (a new one unless given), registered by an operator session. */
async function hooked(existing?: string): Promise<{ customerId: string; token: string }> {
  const walk = new Walk(t.express);
  const token = await walk.operatorToken();
  const customerId = existing ?? (await walk.tenant(`rhk-${++seq}-${Date.now().toString(36)}`)).customerId;
  const res = await apiOf(t).post(hooksPath(customerId)).set("Authorization", `Bearer ${token}`).send({ url: receiver.url });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  receiver.trust(res.body.data.signing_secret as string);
  return { customerId, token };
}

const recoverHooks = (hook: { customerId: string; token: string }, since: Date) =>
  apiOf(t).post(`${hooksPath(hook.customerId)}/deliveries/recover`).set("Authorization", `Bearer ${hook.token}`).send({ since: since.toISOString() });

describe("Recover Webhook Deliveries", () => {
  /** Writes `count` `address.added` notifications marked with the customer, one attempt short of the last. */
  async function enqueue(customerId: string, count: number): Promise<void> {
    await t.db.transaction(async (tx) => {
      for (let n = 1; n <= count; n++) {
        await t.services.webhooks.enqueueEvent(tx, { customerId, type: "address.added", data: { marker: customerId, n }, reference: `test:${n}` });
      }
      await tx.run({ name: "", text: `update webhook_delivery set attempt_count = $1 where customer_id = $2` }, [LAST_BUT_ONE, customerId]);
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

describe("recovering messages still waiting for a retry (pending after failed attempts)", () => {
  /** Delivery state of credit events, by id. */
  async function eventRows(ids: readonly string[]): Promise<{ id: string; delivery_status: string; attempt_count: number; next_attempt_at: Date | null }[]> {
    const rows = await t.orm.em.fork().execute<{ id: string; delivery_status: string; attempt_count: number; next_attempt_at: Date | null }[]>(
      `select id, delivery_status, attempt_count, next_attempt_at from credit_event where id in (${ids.map(() => "?").join(", ")})`, [...ids]);
    return ids.map((id) => rows.find((r) => r.id === id)!);
  }

  /** Writes a `withdrawal.pin` of a new withdrawal for `customerId`, DEEP attempts already failed, and starts a round. @returns its delivery. */
  async function failingPin(customerId: string): Promise<{ id: string; webhookId: string }> {
    await t.db.transaction(async (tx) => {
      const pin = { withdrawalId: randomUUID(), userId: randomUUID(), customerId, code: "246810", expiresAt: new Date(Date.now() + 600_000) };
      expect(await t.services.webhooks.enqueuePin(tx, pin)).toBe(true);
      await tx.run({ name: "", text: `update webhook_delivery set attempt_count = $1 where customer_id = $2` }, [DEEP, customerId]);
    });
    t.services.webhooks.kick();
    const [row] = await t.orm.em.fork().execute<{ id: string; webhook_message_id: string }[]>(
      `select id, webhook_message_id from webhook_delivery where customer_id = ?`, [customerId]);
    return { id: row!.id, webhookId: row!.webhook_message_id };
  }

  const pinRow = async (id: string) =>
    (await t.orm.em.fork().execute<{ status: string; attempt_count: number; next_attempt_at: Date | null }[]>(
      `select status, attempt_count, next_attempt_at from webhook_delivery where id = ?`, [id]))[0]!;

  it("a receiver that failed three credit notifications and a withdrawal.pin gets every message within seconds of the recovers: in order, with its webhook-id, none twice", async () => {
    const s = await scene();
    const hook = await hooked(s.customerId);
    const [a, b, c] = [await wallet(s, 3), await wallet(s, 2), await wallet(s, 1)];
    let down = true;
    receiver.respond((h) => (down && ([a, b, c].includes(String(bodyOf(h).walletId)) || h.json.data?.customer_id === s.customerId) ? { status: 500 } : undefined));
    // A: its head fails, events 2 and 3 wait behind it, never attempted; B: event 1 was delivered before the outage
    const aIds = [...await insertEvents(s, a, 1, 1, { attempts: DEEP }), ...await insertEvents(s, a, 2, 3, { attempts: 0 })];
    const [b1] = await insertEvents(s, b, 1, 1, { status: "succeeded" });
    const [b2] = await insertEvents(s, b, 2, 2, { attempts: DEEP });
    const [c1] = await insertEvents(s, c, 1, 1, { attempts: DEEP });
    t.services.creditDelivery.notifyCreditEventsWritten(6);
    const pin = await failingPin(s.customerId);

    const failing = [aIds[0]!, b2!, c1!];
    const waiting = await waitFor("an attempt of each to fail", async () => {
      const rows = await eventRows(failing);
      const pinned = await pinRow(pin.id);
      return rows.every((r) => r.attempt_count === DEEP + 1) && pinned.attempt_count === DEEP + 1 ? [...rows, pinned] : undefined;
    }, 10_000);
    // still pending, each behind a backoff of minutes
    for (const row of waiting) {
      expect("delivery_status" in row ? row.delivery_status : row.status).toBe("pending");
      expect(new Date(row.next_attempt_at!).getTime()).toBeGreaterThan(Date.now() + 60_000);
    }
    const before = receiver.received.length;

    down = false;
    const since = new Date(Date.now() - HOUR);
    const [credit, pins] = await Promise.all([recover(s, since), recoverHooks(hook, since)]);
    expect(credit.status, JSON.stringify(credit.body)).toBe(200);
    expect(credit.body.data).toEqual({ recovered: 3 });
    expect(pins.status, JSON.stringify(pins.body)).toBe(200);
    expect(pins.body.data).toEqual({ recovered: 1 });

    await waitFor("every message to be delivered", async () => {
      const rows = await eventRows([...aIds, b2!, c1!]);
      return rows.every((r) => r.delivery_status === "succeeded") && (await pinRow(pin.id)).status === "succeeded" ? true : undefined;
    }, 5_000);

    const after = receiver.received.slice(before);
    const ids = (walletId: string) => after.filter((h) => bodyOf(h).walletId === walletId).map((h) => [h.headers["webhook-id"], bodyOf(h).sequence]);
    expect(ids(a)).toEqual([[aIds[0], 1], [aIds[1], 2], [aIds[2], 3]]);
    expect(ids(b)).toEqual([[b2, 2]]);
    expect(ids(c)).toEqual([[c1, 1]]);
    expect(after.filter((h) => h.json.type === "withdrawal.pin").map((h) => h.headers["webhook-id"])).toEqual([pin.webhookId]);
    // in all: the failed attempt and the delivery of each failing one, the others once, the delivered one never again
    expect([...aIds, b1!, b2!, c1!].map((id) => receiver.byId(id).length)).toEqual([2, 1, 1, 0, 2, 2]);
    expect(receiver.byId(pin.webhookId)).toHaveLength(2);
    expect((await eventRows([b1!]))[0]).toMatchObject({ delivery_status: "succeeded", attempt_count: 1 });
  });

  it("a notification in flight when the recover runs is not sent twice; its failed attempt is followed by the restarted schedule, not the old backoff", async () => {
    const s = await scene();
    const w = await wallet(s, 1);
    const held = gate();
    let first = true;
    receiver.respond((h) => {
      if (bodyOf(h).walletId !== w || !first) return undefined;
      first = false;
      return { status: 500, until: held.opened };
    });
    const [e1] = await insertEvents(s, w, 1, 1, { attempts: DEEP });
    t.services.creditDelivery.notifyCreditEventsWritten(1);
    try {
      await waitFor("the round's attempt, held in flight", () => (ofWallet(w).length > 0 ? true : undefined), 10_000);
      const res = await recover(s, new Date(Date.now() - HOUR));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data).toEqual({ recovered: 1 });
      // its counter restarted, its lease kept: a further round does not take it while it is in flight
      const [leased] = await eventRows([e1!]);
      expect(leased).toMatchObject({ delivery_status: "pending", attempt_count: 0 });
      expect(new Date(leased!.next_attempt_at!).getTime()).toBeGreaterThan(Date.now());
      await t.services.creditDelivery.deliverDue();
      expect(ofWallet(w)).toHaveLength(1);
    } finally {
      held.open();
    }
    // the held attempt fails (500) against the restarted counter: the next one comes after the first wait (1 s), not ~4 min
    await waitFor("the event to be delivered", async () => ((await statuses([e1!]))[0] === "succeeded" ? true : undefined), 5_000);
    expect(ofWallet(w).map((h) => h.headers["webhook-id"])).toEqual([e1, e1]);
    expect((await eventRows([e1!]))[0]).toMatchObject({ attempt_count: 2 });
  });
});
