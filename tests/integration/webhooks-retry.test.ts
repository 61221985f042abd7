/**
 * Retry Webhook Delivery under concurrency (docs/outbox.md "Retry and disable"; docs/decisions/notifications.md
 * "The PIN webhook"), over the service's own HTTP listener on a real PostgreSQL, with a real HTTP
 * receiver on loopback that counts the POSTs and holds a send in flight until the test releases it:
 * one send at a time per delivery, whoever asks (concurrent retries, a retry while a delivery round
 * sends it); a retry of a delivery waiting for its next attempt still sends now and gives the
 * delivery its schedule back when it fails.
 */
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apiOf, startTestApp, type TestApp } from "../support/app.js";
import { BASE, Walk } from "../support/fixtures.js";
import { listen, type Listener } from "../support/listener.js";
import { gate, startReceiver, type ReceivedHook, type Receiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";

/** Rounds every second, retries from 1 s, 5 s attempts (lease 20 s), loopback receivers allowed. */
const SETTINGS = { ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "1", WEBHOOK_RETRY_BASE_S: "1", WEBHOOK_TIMEOUT_S: "5" };
const PARALLEL = 30;

let t: TestApp;
let receiver: Receiver;
let listener: Listener;
let operator: string;
let seq = 0;

beforeAll(async () => {
  [t, receiver] = await Promise.all([startTestApp(SETTINGS), startReceiver()]);
  listener = await listen(t.express, { headersTimeoutS: 30, requestTimeoutS: 30, maxConnectionsPerAddress: 0 });
  operator = await new Walk(t.express).operatorToken();
});
afterAll(async () => {
  await listener?.close();
  await t?.dispose();
  await receiver?.close();
});
afterEach(() => {
  receiver.respond(undefined);
});

const hooksPath = (customerId: string) => `${BASE}/customers/${customerId}/webhooks`;

/** A new customer with a webhook to the receiver. */
async function hookedTenant(): Promise<{ customerId: string }> {
  const { customerId } = await new Walk(t.express).tenant(`rty-${++seq}-${Date.now().toString(36)}`);
  const res = await apiOf(t).post(hooksPath(customerId)).set("Authorization", `Bearer ${operator}`).send({ url: receiver.url });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  receiver.trust(res.body.data.signing_secret as string);
  return { customerId };
}

interface Answered {
  status: number;
  body: { data: Record<string, unknown> };
}

/** Retry Webhook Delivery over the listener (real HTTP, one connection per call). */
async function retry(customerId: string, deliveryId: string): Promise<Answered> {
  const res = await fetch(`http://127.0.0.1:${listener.port}${hooksPath(customerId)}/deliveries/${deliveryId}/retry`, {
    method: "POST",
    headers: { authorization: `Bearer ${operator}` },
  });
  return { status: res.status, body: (await res.json()) as Answered["body"] };
}

async function deliveries(customerId: string): Promise<Record<string, unknown>[]> {
  const res = await apiOf(t).get(`${hooksPath(customerId)}/deliveries`).set("Authorization", `Bearer ${operator}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Record<string, unknown>[];
}

/**
 * Writes a `withdrawal.pin` notification of a new withdrawal to the outbox, as Initiate Withdrawal
 * does in its transaction (src/modules/webhooks/service.ts `enqueuePin`), then, unless `hold`
 * changes it first in that transaction, starts a delivery round. @returns the withdrawal's id.
 */
async function writePin(customerId: string, hold?: string): Promise<string> {
  const withdrawalId = randomUUID();
  await t.db.transaction(async (tx) => {
    const pin = { withdrawalId, userId: randomUUID(), customerId, code: "246810", expiresAt: new Date(Date.now() + 600_000) };
    expect(await t.services.webhooks.enqueuePin(tx, pin)).toBe(true);
    if (hold) await tx.run({ name: "", text: `update webhook_delivery set ${hold} where customer_id = $1` }, [customerId]);
  });
  if (!hold) t.services.webhooks.kick();
  return withdrawalId;
}

const pinsFor = (withdrawalId: string): ReceivedHook[] =>
  receiver.received.filter((r) => r.json.type === "withdrawal.pin" && r.json.data.withdrawal_id === withdrawalId);

describe("Retry Webhook Delivery, one send at a time per delivery", () => {
  it(`${PARALLEL} concurrent retries of a delivered withdrawal.pin send it once; the others answer the delivery as it is`, async () => {
    const { customerId } = await hookedTenant();
    const withdrawalId = await writePin(customerId);
    const delivered = await waitFor("the withdrawal.pin to be delivered", async () => {
      const [d] = await deliveries(customerId);
      return d?.status === "succeeded" ? d : undefined;
    }, 10_000);
    const webhookId = delivered.webhook_id as string;
    expect(receiver.byId(webhookId)).toHaveLength(1);

    // the receiver holds every further POST of this delivery until the gate opens
    const held = gate();
    receiver.respond((hook) => (hook.headers["webhook-id"] === webhookId ? { status: 200, until: held.opened } : undefined));
    const answered: Answered[] = [];
    const calls = Array.from({ length: PARALLEL }, () => retry(customerId, delivered.delivery_id as string).then((a) => {
      answered.push(a);
      return a;
    }));
    try {
      // every retry but the one sending answers at once; without the bound, a second POST comes instead
      await waitFor(`${PARALLEL - 1} answers, or a second POST`, () =>
        (answered.length >= PARALLEL - 1 || receiver.byId(webhookId).length > 2 ? true : undefined), 15_000);
    } finally {
      held.open();
    }
    const all = await Promise.all(calls);

    expect(receiver.byId(webhookId)).toHaveLength(2); // the first delivery, and one retry
    expect(all.map((a) => a.status)).toEqual(Array.from({ length: PARALLEL }, () => 200));
    const views = all.map((a) => a.body.data);
    expect(views.every((v) => v.delivery_id === delivered.delivery_id && v.webhook_id === webhookId && v.status === "succeeded")).toBe(true);
    // the one that sent answers after its attempt; the others, the delivery as it was
    expect(views.map((v) => v.attempt_count).sort()).toEqual([...Array.from({ length: PARALLEL - 1 }, () => 1), 2]);
    const [after] = await deliveries(customerId);
    expect(after).toMatchObject({ status: "succeeded", attempt_count: 2, next_attempt_at: null });
    expect((after!.attempts as { http_status: number }[]).map((a) => a.http_status)).toEqual([200, 200]);
    expect(pinsFor(withdrawalId)).toHaveLength(2);
  });

  it("a retry while a delivery round sends the delivery sends nothing more and answers it pending; the round's attempt ends it", async () => {
    const { customerId } = await hookedTenant();
    const held = gate();
    let first = true;
    receiver.respond((hook) => {
      if (hook.json.type !== "withdrawal.pin" || hook.json.data.customer_id !== customerId || !first) return undefined;
      first = false;
      return { status: 200, until: held.opened };
    });
    const withdrawalId = await writePin(customerId);
    try {
      await waitFor("the round's POST, held in flight", () => (pinsFor(withdrawalId).length > 0 ? true : undefined), 10_000);
      const [inFlight] = await deliveries(customerId);
      expect(inFlight).toMatchObject({ status: "pending", attempt_count: 0 });

      const retried = await retry(customerId, inFlight!.delivery_id as string);
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      expect(retried.body.data).toMatchObject({ delivery_id: inFlight!.delivery_id, status: "pending", attempt_count: 0, attempts: [] });
      expect(pinsFor(withdrawalId)).toHaveLength(1);
    } finally {
      held.open();
    }
    const done = await waitFor("the round's attempt to be recorded", async () => {
      const [d] = await deliveries(customerId);
      return d?.status === "succeeded" ? d : undefined;
    }, 10_000);
    expect(done).toMatchObject({ attempt_count: 1 });
    expect(pinsFor(withdrawalId)).toHaveLength(1);
  });

  it("a retry of a delivery waiting hours for its next attempt sends it now; a failure gives it its schedule back, a 2xx ends it", async () => {
    const { customerId } = await hookedTenant();
    // three attempts failed before; the next one is an hour away
    const withdrawalId = await writePin(customerId, "attempt_count = 3, next_attempt_at = now() + interval '1 hour'");
    const [waiting] = await deliveries(customerId);
    expect(waiting).toMatchObject({ status: "pending", attempt_count: 3 });
    const schedule = waiting!.next_attempt_at as string;

    receiver.respond((hook) => (hook.json.data?.withdrawal_id === withdrawalId ? { status: 503 } : undefined));
    const failed = await retry(customerId, waiting!.delivery_id as string);
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    expect(failed.body.data).toMatchObject({ status: "pending", attempt_count: 4, next_attempt_at: schedule });
    expect(pinsFor(withdrawalId)).toHaveLength(1);

    receiver.respond(undefined);
    const ended = await retry(customerId, waiting!.delivery_id as string);
    expect(ended.body.data).toMatchObject({ status: "succeeded", attempt_count: 5, next_attempt_at: null });
    expect((ended.body.data.attempts as { http_status: number }[]).map((a) => a.http_status)).toEqual([503, 200]);
    const sent = pinsFor(withdrawalId);
    expect(sent).toHaveLength(2);
    expect(sent.map((h) => h.headers["webhook-id"])).toEqual([waiting!.webhook_id, waiting!.webhook_id]);
  });
});
