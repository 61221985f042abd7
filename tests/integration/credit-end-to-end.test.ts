/**
 * The credit core end to end on the real app: a tenant sets its sandbox clock, enlists a real HTTP
 * receiver, opens a wallet on the golden product of docs/decisions/credit.md and charges it through the API;
 * advancing the clock past the cut produces the golden statement (ADB interest 1125, minimum 5500),
 * and every notification reaches the receiver signed (standardwebhooks), in `sequence` order,
 * started by the writers after their commit (the periodic delivery round is set to an hour here,
 * so only that start can deliver them in time).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiOf, startTestApp, TEST_MASTER_KEY, type TestApp } from "../support/app.js";
import { Walk } from "../support/fixtures.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";
import { goldenProductBody } from "../support/credit-golden.js";

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  [t, receiver] = await Promise.all([startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "3600" }), startReceiver()]);
});
afterAll(async () => {
  await t?.dispose();
  await receiver?.close();
});

interface Notification { walletId: string; type: string; amount: number; sequence: number }

describe("the golden vector through the API, with its notifications delivered", () => {
  it("cuts Jan 31 with interest 1125 and minimum 5500, and delivers each notification in order after commit", async () => {
    const walk = new Walk(t.express);
    const { customerId, key } = await walk.tenant(`e2e-${Date.now().toString(36)}`);
    const { userId } = await walk.activeUserWithToken(key);
    const api = () => apiOf(t);

    expect((await api().post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody(customerId))).status).toBe(201);
    const enlisted = await api().put("/v2/notifications").set("x-api-key", key).send({ creditNotificationsURL: receiver.url });
    expect(enlisted.status).toBe(200);
    receiver.trust(enlisted.body.data.signingSecret as string);

    const clock = await api().put("/v2/sandbox/clock").set("x-api-key", key).send({ now: "2026-01-01T00:00:00Z" });
    expect(clock.status, JSON.stringify(clock.body)).toBe(200);
    const created = await api().post("/v2/wallet/credits").set("x-api-key", key)
      .send({ userId, currency: "USD", limit: 100000, firstCutDate: "2026-01-31T00:00:00Z", creditProductCode: "001" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const walletId = created.body.data.walletId as string;

    const charge = (amount: number) => api().post(`/v2/wallet/credits/${walletId}/charges`).set("x-api-key", key).send({ amount, description: "golden" });
    expect((await charge(30000)).status).toBe(201);
    expect((await api().post("/v2/sandbox/clock/advance").set("x-api-key", key).send({ days: 15 })).status).toBe(200);
    expect((await charge(15000)).status).toBe(201);

    const advanced = await api().post("/v2/sandbox/clock/advance").set("x-api-key", key).send({ to: "2026-02-01T00:00:00Z" });
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    const calculated = (advanced.body.data.notifications as Notification[]).find((n) => n.type === "Interes Nominal Calculado");
    expect(calculated).toMatchObject({ walletId, amount: 1125, sequence: 1 });

    const statements = await api().get(`/v2/wallet/credits/${walletId}/statements`).set("x-api-key", key);
    expect(statements.status).toBe(200);
    expect(statements.body.data.items[0]).toMatchObject({ sumOfDailyBalance: 1125000, interestGenerated: 1125, minimumPayment: 5500 });

    // A payment emits Reporte de Pago (sequence 2); both reach the receiver in order without a periodic round.
    const paid = await api().post(`/v2/wallet/credits/${walletId}/payments`).set("x-api-key", key).send({ amount: 5500 });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    const delivered = await waitFor("both notifications delivered", () => {
      const mine = receiver.received.map((h) => JSON.parse(h.body) as Notification).filter((n) => n.walletId === walletId);
      return mine.length >= 2 ? mine : undefined;
    }, 15_000);
    expect(delivered.map((n) => [n.sequence, n.type])).toEqual([[1, "Interes Nominal Calculado"], [2, "Reporte de Pago"]]);
    expect(delivered[1]!.amount).toBe(5500);
    const secret = enlisted.body.data.signingSecret as string;
    const hooks = receiver.received.filter((h) => (JSON.parse(h.body) as Notification).walletId === walletId);
    expect(hooks.every((h) => h.verifiedBy[secret] === true)).toBe(true);
  });
});
