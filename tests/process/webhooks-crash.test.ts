/**
 * At-least-once webhook delivery across crashes (docs/outbox.md; docs/decisions/notifications.md
 * "Consequences": a crash between the commit and the send still delivers once the service is back): the real service runs as a child
 * process on a real PostgreSQL database and is killed with SIGKILL, then started again on the same
 * database; a real receiver on loopback counts what arrives.
 */
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, createTestDatabase } from "../support/app.js";
import { startService, type ServiceProcess } from "../support/service-process.js";
import { BASE, Walk, fundedBtcUser, initiateBtcWithdrawal } from "../support/fixtures.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";

async function kill9(service: ServiceProcess): Promise<void> {
  await service.stop("SIGKILL");
}

let db: { url: string; drop(): Promise<void> };
let receiver: Receiver;
const running: ServiceProcess[] = [];

beforeAll(async () => {
  [db, receiver] = await Promise.all([createTestDatabase(), startReceiver()]);
});
afterAll(async () => {
  for (const s of running) await kill9(s);
  await receiver?.close();
  await db?.drop();
});

const COMMON = { ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "1", WEBHOOK_TIMEOUT_S: "1", JOB_LOCK_LIFETIME_S: "5" };

/** A customer with a webhook on the receiver and a funded user, through the running service at `base`. */
async function scene(base: string, customerId: string): Promise<{ key: string; userId: string; secret: string }> {
  const { key } = await new Walk(base).tenant(customerId);
  const op = await new Walk(base).operatorToken();
  const hook = await request(base).post(`${BASE}/customers/${customerId}/webhooks`).set("Authorization", `Bearer ${op}`).send({ url: receiver.url });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  const secret = hook.body.data.signing_secret as string;
  receiver.trust(secret);
  const { userId } = await fundedBtcUser(base, key);
  return { key, userId, secret };
}

const initiate = (base: string, key: string, userId: string) => initiateBtcWithdrawal(base, key, userId);

const pinsFor = (withdrawalId: string) => receiver.received.filter((r) => r.json.type === "withdrawal.pin" && r.json.data.withdrawal_id === withdrawalId);

describe("webhook delivery survives SIGKILL", () => {
  it("committed but never sent (an API-only process killed): a worker started afterwards delivers it once", async () => {
    const api = await startService({ ...COMMON, DATABASE_URL: db.url, ROLE: "api" }, "http");
    running.push(api);
    const { key, userId, secret } = await scene(api.base, "crash-commit");
    const withdrawalId = await initiate(api.base, key, userId);
    await kill9(api);
    expect(pinsFor(withdrawalId)).toEqual([]);

    const worker = await startService({ ...COMMON, DATABASE_URL: db.url, ROLE: "worker" }, "worker");
    running.push(worker);
    const [hook] = await waitFor("the PIN notification", () => (pinsFor(withdrawalId).length > 0 ? pinsFor(withdrawalId) : undefined), 20_000);
    expect(hook!.verifiedBy[secret]).toBe(true);
    // exactly once: nothing more arrives over several delivery rounds
    await new Promise((r) => setTimeout(r, 2_500));
    expect(pinsFor(withdrawalId)).toHaveLength(1);
    await kill9(worker);
  }, 90_000);

  it("killed while the receiver holds the request: after a restart the same webhook-id is delivered, and succeeds once", async () => {
    const first = await startService({ ...COMMON, DATABASE_URL: db.url, ROLE: "all" }, "http");
    running.push(first);
    const { key, userId, secret } = await scene(first.base, "crash-inflight");
    receiver.answers.push("hang");
    const withdrawalId = await initiate(first.base, key, userId);
    const [inFlight] = await waitFor("the first attempt to reach the receiver", () => (pinsFor(withdrawalId).length > 0 ? pinsFor(withdrawalId) : undefined), 10_000);
    await kill9(first);

    const second = await startService({ ...COMMON, DATABASE_URL: db.url, ROLE: "all" }, "http");
    running.push(second);
    const hooks = await waitFor("the delivery again after the restart", () => (pinsFor(withdrawalId).length >= 2 ? pinsFor(withdrawalId) : undefined), 30_000);
    expect(hooks.map((h) => h.headers["webhook-id"])).toEqual([inFlight!.headers["webhook-id"], inFlight!.headers["webhook-id"]]);
    expect(hooks[1]!.body).toBe(inFlight!.body);
    expect(hooks[1]!.verifiedBy[secret]).toBe(true);

    const op = (await request(`${second.base}/api/v1`).post("/sessions").set("x-master-api-key", TEST_MASTER_KEY)).body.data.token as string;
    const log = await waitFor("the delivery to be recorded as succeeded", async () => {
      const res = await request(`${second.base}/api/v1`).get("/customers/crash-inflight/webhooks/deliveries").set("Authorization", `Bearer ${op}`);
      const rows = res.body.data as { status: string; attempt_count: number; attempts: { http_status: number | null }[] }[];
      return rows.length === 1 && rows[0]!.status === "succeeded" ? rows : undefined;
    }, 10_000);
    // the killed attempt left no record; the one after the restart succeeded
    expect(log[0]!.attempts.map((a) => a.http_status)).toEqual([200]);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(pinsFor(withdrawalId)).toHaveLength(2);
    await kill9(second);
  }, 90_000);
});
