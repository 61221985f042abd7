/**
 * The customer webhook over HTTP on a real PostgreSQL with real HTTP receivers on loopback
 * (reference: "Customer webhook", "Webhook configuration", "Events › Withdrawal PIN
 * notifications"; docs/decisions/withdrawals.md, docs/decisions/notifications.md): configuration and its 400/404/422 rules, masked
 * reads, Standard Webhooks signatures checked by the independent `standardwebhooks` package,
 * `withdrawal.pin` on initiate and resend, the outbox with retries and the same `webhook-id`,
 * HTTP 410, timeouts and redirects, secret rotation, the delivery log and manual retry, delete,
 * the SSRF guard at registration and at connect time, and secrets sealed at rest.
 */
import type request from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { apiOf, startTestApp, type TestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError, fundedBtcUser, initiateBtcWithdrawal } from "../support/fixtures.js";
import { startReceiver, type ReceivedHook, type Receiver } from "../support/webhook-receiver.js";
import { sleep, waitFor } from "../support/wait.js";

const FAST = { ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "1", WEBHOOK_RETRY_BASE_S: "1", WEBHOOK_TIMEOUT_S: "2" };

let t: TestApp;
let receiver: Receiver;
let operator: string;
let seq = 0;

beforeAll(async () => {
  [t, receiver] = await Promise.all([startTestApp(FAST), startReceiver()]);
  operator = await new Walk(t.express).operatorToken();
});
afterAll(async () => {
  await t?.dispose();
  await receiver?.close();
});
afterEach(() => {
  receiver.answers.length = 0;
});

const hooksPath = (customerId: string) => `${BASE}/customers/${customerId}/webhooks`;
const asOperator = (r: request.Test) => r.set("Authorization", `Bearer ${operator}`);

/** A new customer with an owner key. */
async function tenant(): Promise<{ customerId: string; key: string }> {
  const { customerId, key } = await new Walk(t.express).tenant(`hook-${++seq}-${Date.now().toString(36)}`);
  return { customerId, key };
}

/** Registers `url` for `customerId`; returns the signing secret, trusted by the receiver. */
async function register(customerId: string, url = receiver.url, headers: { key: string; value: string }[] = []): Promise<string> {
  const res = await asOperator(apiOf(t).post(hooksPath(customerId))).send({ url, headers });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const secret = res.body.data.signing_secret as string;
  receiver.trust(secret);
  return secret;
}

/** The PIN notifications the receiver got for `withdrawalId`. */
const pinsFor = (withdrawalId: string): ReceivedHook[] =>
  receiver.received.filter((r) => r.json.type === "withdrawal.pin" && r.json.data.withdrawal_id === withdrawalId);

const waitForPins = (withdrawalId: string, count: number, timeoutMs = 8_000) =>
  waitFor(`${count} withdrawal.pin notification(s) for ${withdrawalId}`, () => {
    const found = pinsFor(withdrawalId);
    return found.length >= count ? found : undefined;
  }, timeoutMs);

async function deliveries(customerId: string, query = ""): Promise<Record<string, unknown>[]> {
  const res = await asOperator(apiOf(t).get(`${hooksPath(customerId)}/deliveries${query}`));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Record<string, unknown>[];
}

describe("configuration", () => {
  it("create answers 201 with the url and a whsec_ secret shown once; get masks every header value", async () => {
    const { customerId } = await tenant();
    const res = await asOperator(apiOf(t).post(hooksPath(customerId))).send({
      url: receiver.url,
      headers: [{ key: "X-Acme-Token", value: "top-secret-value" }, { key: "x_trace_source", value: "custody" }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.url).toBe(receiver.url);
    expect(res.body.data.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(typeof res.body.data.message).toBe("string");

    const got = await asOperator(apiOf(t).get(hooksPath(customerId)));
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual({
      url: receiver.url,
      headers: [{ key: "X-Acme-Token", value: "***masked***" }, { key: "x_trace_source", value: "***masked***" }],
      enabled: true,
      disabled_reason: null,
    });
    expect(JSON.stringify(got.body)).not.toContain("top-secret-value");
    expect(JSON.stringify(got.body)).not.toContain(res.body.data.signing_secret);
  });

  it("create overwrites the configuration with a new secret; update keeps the secret and answers 200 {message, url}", async () => {
    const { customerId } = await tenant();
    const first = await register(customerId, `${receiver.url}/a`);
    const second = await register(customerId, `${receiver.url}/b`, [{ key: "X-One", value: "1" }]);
    expect(second).not.toBe(first);
    const updated = await asOperator(apiOf(t).put(hooksPath(customerId))).send({ url: `${receiver.url}/c` });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.data).toEqual({ message: expect.any(String), url: `${receiver.url}/c` });
    expect(updated.body.data.signing_secret).toBeUndefined();
    const got = await asOperator(apiOf(t).get(hooksPath(customerId)));
    expect(got.body.data).toMatchObject({ url: `${receiver.url}/c`, headers: [] });
  });

  it.each([
    ["a URL that is not absolute", { url: "hooks.example.com/pins" }, "url"],
    ["an ftp URL", { url: "ftp://hooks.example.com/pins" }, "url"],
    ["a URL with credentials", { url: "https://user:pass@hooks.example.com/pins" }, "url"],
    ["a header key with a space", { url: "https://hooks.example.com", headers: [{ key: "X Token", value: "v" }] }, "headers.0.key"],
    ["a header key with a colon", { url: "https://hooks.example.com", headers: [{ key: "X-Token:", value: "v" }] }, "headers.0.key"],
    ["a header key with a dot", { url: "https://hooks.example.com", headers: [{ key: "x.token", value: "v" }] }, "headers.0.key"],
    ["a reserved header", { url: "https://hooks.example.com", headers: [{ key: "Webhook-Signature", value: "v" }] }, "headers.0.key"],
    ["a header given twice", { url: "https://hooks.example.com", headers: [{ key: "X-A", value: "1" }, { key: "x-a", value: "2" }] }, "headers.1.key"],
    ["a header value with a line break", { url: "https://hooks.example.com", headers: [{ key: "X-A", value: "1\r\nX-B: 2" }] }, "headers.0.value"],
  ])("%s answers 400 BAD_REQUEST on create and update", async (_what, body, field) => {
    const { customerId } = await tenant();
    const created = await asOperator(apiOf(t).post(hooksPath(customerId))).send(body);
    expectPlatformError(created, 400, "BAD_REQUEST");
    expect(created.body.errors[0].field ?? field).toBe(field);
    await register(customerId);
    const updated = await asOperator(apiOf(t).put(hooksPath(customerId))).send(body);
    expectPlatformError(updated, 400, "BAD_REQUEST");
  });

  it("a missing url, a url over 2048 characters, or more than 20 headers answers 422", async () => {
    const { customerId } = await tenant();
    expectPlatformError(await asOperator(apiOf(t).post(hooksPath(customerId))).send({ headers: [] }), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await asOperator(apiOf(t).post(hooksPath(customerId))).send({ url: `https://x.example/${"a".repeat(2048)}` }), 422, "UNPROCESSABLE_ENTITY");
    const headers = Array.from({ length: 21 }, (_, i) => ({ key: `X-H${i}`, value: "v" }));
    expectPlatformError(await asOperator(apiOf(t).post(hooksPath(customerId))).send({ url: receiver.url, headers }), 422, "UNPROCESSABLE_ENTITY");
    await register(customerId);
    expectPlatformError(await asOperator(apiOf(t).put(hooksPath(customerId))).send({}), 422, "UNPROCESSABLE_ENTITY");
  });

  it("without a webhook, get, update, delete, verify and rotate answer 404 WEBHOOK_NOT_FOUND; an unknown customer 404 CUSTOMER_NOT_FOUND", async () => {
    const { customerId } = await tenant();
    expectPlatformError(await asOperator(apiOf(t).get(hooksPath(customerId))), 404, "WEBHOOK_NOT_FOUND");
    expectPlatformError(await asOperator(apiOf(t).put(hooksPath(customerId))).send({ url: receiver.url }), 404, "WEBHOOK_NOT_FOUND");
    expectPlatformError(await asOperator(apiOf(t).delete(hooksPath(customerId))), 404, "WEBHOOK_NOT_FOUND");
    expectPlatformError(await asOperator(apiOf(t).post(`${hooksPath(customerId)}/verify`)), 404, "WEBHOOK_NOT_FOUND");
    expectPlatformError(await asOperator(apiOf(t).post(`${hooksPath(customerId)}/secret`)), 404, "WEBHOOK_NOT_FOUND");
    expectPlatformError(await asOperator(apiOf(t).get(hooksPath("never-created-customer"))), 404, "CUSTOMER_NOT_FOUND");
    expectPlatformError(await asOperator(apiOf(t).post(hooksPath("never-created-customer"))).send({ url: receiver.url }), 404, "CUSTOMER_NOT_FOUND");
  });

  it("a customer session manages its own webhook and gets 403 on another customer's; an owner key gets 403", async () => {
    const mine = await tenant();
    const other = await tenant();
    const session = await apiOf(t).post(`${BASE}/sessions`).send({ customer_id: mine.customerId, customer_secret: mine.key });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const token = session.body.data.token as string;
    const own = await apiOf(t).post(hooksPath(mine.customerId)).set("Authorization", `Bearer ${token}`).send({ url: receiver.url });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    expectPlatformError(await apiOf(t).post(hooksPath(other.customerId)).set("Authorization", `Bearer ${token}`).send({ url: receiver.url }), 403, "FORBIDDEN");
    expectPlatformError(await apiOf(t).get(`${hooksPath(other.customerId)}/deliveries`).set("Authorization", `Bearer ${token}`), 403, "FORBIDDEN");
    expectPlatformError(await apiOf(t).get(hooksPath(mine.customerId)).set("x-api-key", mine.key), 403, "FORBIDDEN");
  });

  it("secrets and header values are sealed at rest: the database holds neither in clear", async () => {
    const { customerId } = await tenant();
    const secret = await register(customerId, receiver.url, [{ key: "X-Api-Token", value: "header-secret-123" }]);
    const [row] = await t.orm.em.fork().execute<Record<string, unknown>[]>(`select * from webhook where customer_id = ?`, [customerId]);
    const dump = JSON.stringify(row);
    expect(dump).not.toContain("header-secret-123");
    expect(dump).not.toContain(secret.slice("whsec_".length, 30));
    expect(String(row?.secret_sealed)).toMatch(/^v1\./);
  });
});

describe("SSRF guard (docs/decisions/notifications.md)", () => {
  let strict: TestApp;
  let strictOperator: string;
  beforeAll(async () => {
    strict = await startTestApp({ OUTBOX_INTERVAL_S: "1", WEBHOOK_TIMEOUT_S: "2" });
    strictOperator = await new Walk(strict.express).operatorToken();
  });
  afterAll(async () => {
    await strict?.dispose();
  });

  it.each([
    ["loopback", "http://127.0.0.1:9/hooks"],
    ["a name resolving to loopback", "http://localhost:9/hooks"],
    ["a private network", "http://10.1.2.3/hooks"],
    ["link-local (cloud metadata)", "http://169.254.169.254/latest/meta-data"],
    ["IPv6 loopback", "http://[::1]:9/hooks"],
    ["IPv4-mapped IPv6 loopback", "http://[::ffff:127.0.0.1]:9/hooks"],
    ["the unspecified address", "http://0.0.0.0:9/hooks"],
  ])("%s is refused at registration with 400", async (_what, url) => {
    const { customerId } = await new Walk(strict.express).tenant(`ssrf-${++seq}`);
    const res = await apiOf(strict).post(hooksPath(customerId)).set("Authorization", `Bearer ${strictOperator}`).send({ url });
    expectPlatformError(res, 400, "BAD_REQUEST");
    expect(res.body.errors[0].message).toMatch(/private|loopback|link-local|reserved/);
  });

  it("a target that became private after registration is refused at connect time: the attempt fails, nothing reaches it", async () => {
    // Registered with a public address; then the target moves to loopback (as a DNS answer that
    // changes after registration would make it): the stored URL is pointed at the receiver.
    const { customerId, key } = await new Walk(strict.express).tenant(`rebind-${++seq}`);
    const registered = await apiOf(strict).post(hooksPath(customerId)).set("Authorization", `Bearer ${strictOperator}`).send({ url: "http://93.184.215.14/hooks" });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    await strict.orm.em.fork().execute(`update webhook set url = ? where customer_id = ?`, [receiver.url, customerId]);
    const user = await fundedBtcUser(strict.express, key);
    const before = receiver.received.length;
    const withdrawalId = await initiateBtcWithdrawal(strict.express, key, user.userId);
    const log = await waitFor("a failed attempt", async () => {
      const res = await apiOf(strict).get(`${hooksPath(customerId)}/deliveries`).set("Authorization", `Bearer ${strictOperator}`);
      const [first] = res.body.data as { attempt_count: number; attempts: { error: string | null; http_status: number | null }[]; payload: { data: { withdrawal_id: string } } }[];
      return first && first.attempt_count >= 1 ? first : undefined;
    });
    expect(log.payload.data.withdrawal_id).toBe(withdrawalId);
    expect(log.attempts[0]?.http_status).toBeNull();
    expect(log.attempts[0]?.error).toMatch(/not allowed/i);
    expect(receiver.received.slice(before).filter((r) => r.json.data.withdrawal_id === withdrawalId)).toEqual([]);
  });
});

describe("verify", () => {
  it("sends a signed webhook.test payload and answers 200 with the outcome", async () => {
    const { customerId } = await tenant();
    const secret = await register(customerId, receiver.url, [{ key: "X-Acme-Token", value: "abc" }]);
    const before = receiver.received.length;
    const res = await asOperator(apiOf(t).post(`${hooksPath(customerId)}/verify`));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.message).toMatch(/delivered.*200/);
    expect(res.body.data.response_data).toBeUndefined();
    const [hook, ...rest] = receiver.received.slice(before);
    expect(rest).toEqual([]);
    expect(hook!.json).toEqual({ type: "webhook.test", timestamp: expect.any(String), data: { customer_id: customerId, message: expect.any(String) } });
    expect(res.body.data.payload).toEqual(hook!.json);
    expect(hook!.verifiedBy[secret]).toBe(true);
    expect(hook!.headers["x-acme-token"]).toBe("abc");
    expect(hook!.headers["content-type"]).toBe("application/json");
    expect(hook!.headers["webhook-id"]).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    expect(Math.abs(Number(hook!.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(10);
    // not part of the delivery log
    expect(await deliveries(customerId)).toEqual([]);
  });

  it("a failing receiver: still 200, the message names the status and response_data holds its body (JSON or text)", async () => {
    const { customerId } = await tenant();
    await register(customerId);
    receiver.answers.push({ status: 500, body: '{"error":"boom"}' }, { status: 403, body: "<html>nope</html>", headers: { "content-type": "text/html" } });
    const json = await asOperator(apiOf(t).post(`${hooksPath(customerId)}/verify`));
    expect(json.status).toBe(200);
    expect(json.body.data.message).toMatch(/failed.*500/);
    expect(json.body.data.response_data).toEqual({ error: "boom" });
    const text = await asOperator(apiOf(t).post(`${hooksPath(customerId)}/verify`));
    expect(text.body.data.message).toMatch(/failed.*403/);
    expect(text.body.data.response_data).toBe("<html>nope</html>");
  });

  it("an unreachable receiver: 200 with the connection error in the message", async () => {
    const { customerId } = await tenant();
    const closed = await startReceiver();
    const url = closed.url;
    await closed.close();
    await register(customerId, url);
    const res = await asOperator(apiOf(t).post(`${hooksPath(customerId)}/verify`));
    expect(res.status).toBe(200);
    expect(res.body.data.message).toMatch(/failed.*ECONNREFUSED/);
  });
});

describe("withdrawal.pin notifications", () => {
  it("initiate and resend each push the new code, signed, with the configured headers; the code confirms; the email still goes out", async () => {
    const { customerId, key } = await tenant();
    const secret = await register(customerId, receiver.url, [{ key: "X-Acme-Token", value: "t0k3n" }]);
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    const [first] = await waitForPins(withdrawalId, 1);
    expect(first!.verifiedBy[secret]).toBe(true);
    expect(first!.headers["x-acme-token"]).toBe("t0k3n");
    expect(first!.json).toEqual({
      type: "withdrawal.pin",
      timestamp: expect.any(String),
      data: { withdrawal_id: withdrawalId, user_id: user.userId, customer_id: customerId, code: expect.stringMatching(/^\d{6}$/), expires_at: expect.any(String) },
    });
    const expiresIn = Date.parse(first!.json.data.expires_at as string) - Date.now();
    expect(expiresIn).toBeGreaterThan(500_000);
    expect(expiresIn).toBeLessThanOrEqual(600_000);

    const mail = await apiOf(t).get(`${BASE}/sandbox/mail`).query({ to: user.email }).set("x-api-key", key);
    expect(mail.body.data).toHaveLength(1);
    expect(mail.body.data[0].text).toContain(first!.json.data.code as string);

    const resent = await apiOf(t).post(`${BASE}/users/${user.userId}/accounts/crypto/withdrawals/${withdrawalId}/verification/codes`).set("x-api-key", key);
    expect(resent.status, JSON.stringify(resent.body)).toBe(200);
    const [, second] = await waitForPins(withdrawalId, 2);
    expect(second!.verifiedBy[secret]).toBe(true);
    expect(second!.headers["webhook-id"]).not.toBe(first!.headers["webhook-id"]);
    expect(second!.json.data.code).toMatch(/^\d{6}$/);

    const confirm = (code: unknown) =>
      apiOf(t).post(`${BASE}/users/${user.userId}/accounts/crypto/withdrawals/${withdrawalId}/confirm`).set("x-api-key", key).send({ code });
    if (first!.json.data.code !== second!.json.data.code) expectPlatformError(await confirm(first!.json.data.code), 400, "CONFIRMATION_CODE_INVALID");
    const ok = await confirm(second!.json.data.code);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data).toEqual({ id: withdrawalId, status: "COMPLETED" });

    const log = await waitFor("both deliveries succeeded", async () => {
      const rows = await deliveries(customerId);
      return rows.length === 2 && rows.every((r) => r.status === "succeeded") ? rows : undefined;
    });
    expect(log.map((r) => r.webhook_id)).toEqual([second!.headers["webhook-id"], first!.headers["webhook-id"]]);
    expect(log[1]).toMatchObject({ event_type: "withdrawal.pin", attempt_count: 1, next_attempt_at: null, payload: first!.json });
    expect((log[1]!.attempts as unknown[])[0]).toEqual({ attempted_at: expect.any(String), http_status: 200, duration_ms: expect.any(Number), error: null });
  });

  it("the code is sealed at rest in the outbox row", async () => {
    const { customerId, key } = await tenant();
    await register(customerId);
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    const [pin] = await waitForPins(withdrawalId, 1);
    const rows = await t.orm.em.fork().execute<Record<string, unknown>[]>(`select * from webhook_delivery where customer_id = ?`, [customerId]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(pin!.json.data.code as string);
  });

  it("a failing receiver is retried with backoff and the same webhook-id until it answers 2xx", async () => {
    const { customerId, key } = await tenant();
    const secret = await register(customerId);
    receiver.answers.push({ status: 503 }, { status: 302, headers: { location: `${receiver.url}/elsewhere` } });
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    const hooks = await waitForPins(withdrawalId, 3, 15_000);
    expect(new Set(hooks.map((h) => h.headers["webhook-id"])).size).toBe(1);
    expect(new Set(hooks.map((h) => h.body)).size).toBe(1);
    expect(hooks.every((h) => h.verifiedBy[secret])).toBe(true);
    // the redirect was not followed
    expect(receiver.received.filter((r) => r.json.data.withdrawal_id === withdrawalId).length).toBe(3);
    // backoff: about 1 s (±20 %) then about 3 s (±20 %)
    expect(hooks[1]!.receivedAt - hooks[0]!.receivedAt).toBeGreaterThanOrEqual(700);
    expect(hooks[2]!.receivedAt - hooks[1]!.receivedAt).toBeGreaterThanOrEqual(2_300);
    const [row] = await waitFor("the delivery to succeed", async () => {
      const rows = await deliveries(customerId);
      return rows[0]?.status === "succeeded" ? rows : undefined;
    });
    expect(row!.attempt_count).toBe(3);
    expect((row!.attempts as { http_status: number | null; error: string | null }[]).map((a) => [a.http_status, a.error])).toEqual([
      [503, "HTTP 503"],
      [302, "HTTP 302"],
      [200, null],
    ]);
  });

  it("a receiver that does not answer within WEBHOOK_TIMEOUT_S fails the attempt, which is retried", async () => {
    const { customerId, key } = await tenant();
    await register(customerId);
    receiver.answers.push("hang");
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    await waitForPins(withdrawalId, 2, 15_000);
    const [row] = await waitFor("the delivery to succeed", async () => {
      const rows = await deliveries(customerId);
      return rows[0]?.status === "succeeded" ? rows : undefined;
    }, 10_000);
    const [timedOut] = row!.attempts as { http_status: number | null; error: string | null; duration_ms: number }[];
    expect(timedOut).toMatchObject({ http_status: null, error: expect.stringMatching(/no answer within 2000 ms/) });
    expect(timedOut!.duration_ms).toBeGreaterThanOrEqual(1_900);
  });

  it("HTTP 410 disables the webhook: no further notifications until it is updated", async () => {
    const { customerId, key } = await tenant();
    await register(customerId);
    receiver.answers.push({ status: 410 });
    const user = await fundedBtcUser(t.express, key, 2);
    const first = await initiateBtcWithdrawal(t.express, key, user.userId);
    await waitForPins(first, 1);
    const got = await waitFor("the webhook to be disabled", async () => {
      const res = await asOperator(apiOf(t).get(hooksPath(customerId)));
      return res.body.data.enabled === false ? res.body.data : undefined;
    });
    expect(got.disabled_reason).toMatch(/410/);
    expect((await deliveries(customerId))[0]).toMatchObject({ status: "disabled", attempt_count: 1 });

    const second = await initiateBtcWithdrawal(t.express, key, user.userId);
    await sleep(1_500);
    expect(pinsFor(second)).toEqual([]);
    expect(await deliveries(customerId)).toHaveLength(1);
    const [retried] = await Promise.all([asOperator(apiOf(t).post(`${hooksPath(customerId)}/deliveries/${(await deliveries(customerId))[0]!.delivery_id as string}/retry`))]);
    expectPlatformError(retried!, 400, "BAD_REQUEST");

    const updated = await asOperator(apiOf(t).put(hooksPath(customerId))).send({ url: receiver.url });
    expect(updated.status).toBe(200);
    expect((await asOperator(apiOf(t).get(hooksPath(customerId)))).body.data).toMatchObject({ enabled: true, disabled_reason: null });
    const third = await initiateBtcWithdrawal(t.express, key, user.userId);
    await waitForPins(third, 1);
  });

  it("deleting the webhook stops the notifications; the delivery log is kept", async () => {
    const { customerId, key } = await tenant();
    await register(customerId);
    const user = await fundedBtcUser(t.express, key);
    const first = await initiateBtcWithdrawal(t.express, key, user.userId);
    await waitForPins(first, 1);
    const deleted = await asOperator(apiOf(t).delete(hooksPath(customerId)));
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expectPlatformError(await asOperator(apiOf(t).get(hooksPath(customerId))), 404, "WEBHOOK_NOT_FOUND");
    const second = await initiateBtcWithdrawal(t.express, key, user.userId);
    await sleep(1_500);
    expect(pinsFor(second)).toEqual([]);
    const log = await deliveries(customerId);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ status: "succeeded" });
  });

  it("deleting the customer stops its pending deliveries: they become disabled, nothing is sent", async () => {
    const { customerId, key } = await tenant();
    await register(customerId);
    // failing answers throughout, so a retry racing the deletion cannot end the delivery itself
    receiver.answers.push(...Array.from({ length: 10 }, () => ({ status: 503 })));
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    await waitForPins(withdrawalId, 1);
    await waitFor("the failed first attempt to be recorded", async () => {
      const [row] = await t.orm.em.fork().execute<{ attempt_count: number }[]>(`select attempt_count from webhook_delivery where customer_id = ?`, [customerId]);
      return row && row.attempt_count >= 1 ? true : undefined;
    });
    expect((await asOperator(apiOf(t).delete(`${BASE}/customers/${customerId}`))).status).toBe(204);
    const [row] = await waitFor("the delivery to be disabled", async () => {
      const rows = await t.orm.em.fork().execute<{ status: string }[]>(`select status from webhook_delivery where customer_id = ?`, [customerId]);
      return rows[0]?.status === "disabled" ? rows : undefined;
    }, 10_000);
    expect(row!.status).toBe("disabled");
    const sent = pinsFor(withdrawalId).length;
    await sleep(2_500); // several delivery rounds: nothing more goes out
    expect(pinsFor(withdrawalId)).toHaveLength(sent);
  });

  it("a customer without a webhook gets no notification row at all, and no delivery job is started", async () => {
    const { customerId, key } = await tenant();
    const user = await fundedBtcUser(t.express, key);
    const kick = vi.spyOn(t.services.webhooks, "kick");
    try {
      await initiateBtcWithdrawal(t.express, key, user.userId);
      expect(kick).not.toHaveBeenCalled();
      expect(await deliveries(customerId)).toEqual([]);
      // with a webhook, the same call starts one delivery job
      await register(customerId);
      await initiateBtcWithdrawal(t.express, key, user.userId);
      expect(kick).toHaveBeenCalledTimes(1);
    } finally {
      kick.mockRestore();
    }
  });
});

describe("secret rotation", () => {
  it("after a rotation both secrets sign for 24 hours: two signatures, each verified by standardwebhooks", async () => {
    const { customerId, key } = await tenant();
    const old = await register(customerId);
    const rotated = await asOperator(apiOf(t).post(`${hooksPath(customerId)}/secret`));
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const fresh = rotated.body.data.signing_secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    const overlap = Date.parse(rotated.body.data.previous_secret_expires_at as string) - Date.now();
    expect(overlap).toBeGreaterThan(23.9 * 3600_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3600_000);
    receiver.trust(fresh);

    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    const [hook] = await waitForPins(withdrawalId, 1);
    const signatures = String(hook!.headers["webhook-signature"]).split(" ");
    expect(signatures).toHaveLength(2);
    expect(signatures.every((s) => s.startsWith("v1,"))).toBe(true);
    expect(hook!.verifiedBy[old]).toBe(true);
    expect(hook!.verifiedBy[fresh]).toBe(true);

    // once the overlap has passed, only the new secret signs
    await t.orm.em.fork().execute(`update webhook set previous_secret_expires_at = now() - interval '1 second' where customer_id = ?`, [customerId]);
    const verify = await asOperator(apiOf(t).post(`${hooksPath(customerId)}/verify`));
    expect(verify.body.data.message).toMatch(/delivered/);
    const last = receiver.received.at(-1)!;
    expect(String(last.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(last.verifiedBy[fresh]).toBe(true);
    expect(last.verifiedBy[old]).toBe(false);
  });
});

describe("delivery log", () => {
  it("lists newest first with pagination and a status filter; retry sends one again now with the same webhook-id", async () => {
    const { customerId, key } = await tenant();
    const secret = await register(customerId);
    const user = await fundedBtcUser(t.express, key);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await initiateBtcWithdrawal(t.express, key, user.userId));
    for (const id of ids) await waitForPins(id, 1);
    const all = await waitFor("three succeeded deliveries", async () => {
      const rows = await deliveries(customerId);
      return rows.length === 3 && rows.every((r) => r.status === "succeeded") ? rows : undefined;
    });
    expect(all.map((r) => (r.payload as { data: { withdrawal_id: string } }).data.withdrawal_id)).toEqual([...ids].reverse());

    const page = await asOperator(apiOf(t).get(`${hooksPath(customerId)}/deliveries`).query({ "filter[limit]": 2, "filter[skip]": 1 }));
    expect(page.status).toBe(200);
    expect(page.body.data.map((r: { delivery_id: string }) => r.delivery_id)).toEqual([all[1]!.delivery_id, all[2]!.delivery_id]);
    expect(page.body.meta.pagination.records).toEqual({ skip: 1, limit: 2, total: 3, has_next: false, has_previous: true });
    expect(await deliveries(customerId, "?filter[where][status]=pending")).toEqual([]);
    expectPlatformError(await asOperator(apiOf(t).get(`${hooksPath(customerId)}/deliveries?filter[where][status]=lost`)), 422, "UNPROCESSABLE_ENTITY");

    const target = all[2]!;
    const before = receiver.byId(target.webhook_id as string).length;
    const retried = await asOperator(apiOf(t).post(`${hooksPath(customerId)}/deliveries/${target.delivery_id as string}/retry`));
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body.data).toMatchObject({ delivery_id: target.delivery_id, webhook_id: target.webhook_id, status: "succeeded", attempt_count: 2 });
    const again = receiver.byId(target.webhook_id as string);
    expect(again).toHaveLength(before + 1);
    expect(again.at(-1)!.body).toBe(again[0]!.body);
    expect(again.at(-1)!.verifiedBy[secret]).toBe(true);

    expectPlatformError(await asOperator(apiOf(t).post(`${hooksPath(customerId)}/deliveries/0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e/retry`)), 404, "NOT_FOUND");
    expectPlatformError(await asOperator(apiOf(t).post(`${hooksPath(customerId)}/deliveries/not-a-uuid/retry`)), 404, "NOT_FOUND");
    const other = await tenant();
    await register(other.customerId);
    expectPlatformError(await asOperator(apiOf(t).post(`${hooksPath(other.customerId)}/deliveries/${target.delivery_id as string}/retry`)), 404, "NOT_FOUND");
  });
});
