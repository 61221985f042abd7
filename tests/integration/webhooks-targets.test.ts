/**
 * Outgoing notification targets over HTTP on a real PostgreSQL with real HTTP receivers on
 * loopback (docs/security.md "Outgoing notifications and their targets"): configured headers that
 * could never be sent answer 400 at registration; one URL rule for the platform webhook (400
 * `BAD_REQUEST` on `url`) and NotificationsEnlist (422 `VALIDATION_ERROR` on
 * `creditNotificationsURL`); the IPv6 forms that embed a private IPv4 address are refused at
 * registration and at connect time; Verify Webhook always answers 200 with the outcome in
 * `data.message`; a stored configuration that cannot be built into a request (written before
 * these rules) gives its delivery up at once with an attempt that says why.
 */
import type request from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SecretBox } from "../../src/modules/identity/secrets.js";
import { TEST_SECRETS_KEY, apiOf, startTestApp, type TestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError, fundedBtcUser, initiateBtcWithdrawal } from "../support/fixtures.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { sleep, waitFor } from "../support/wait.js";

const FAST = { ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "1", WEBHOOK_RETRY_BASE_S: "1", WEBHOOK_TIMEOUT_S: "2" };

let t: TestApp;
let strict: TestApp;
let receiver: Receiver;
let seq = 0;

beforeAll(async () => {
  [t, strict, receiver] = await Promise.all([
    startTestApp(FAST),
    startTestApp({ OUTBOX_INTERVAL_S: "1", WEBHOOK_RETRY_BASE_S: "1", WEBHOOK_TIMEOUT_S: "2" }),
    startReceiver(),
  ]);
});
afterAll(async () => {
  await t?.dispose();
  await strict?.dispose();
  await receiver?.close();
});
afterEach(() => {
  receiver.answers.length = 0;
});

const hooksPath = (customerId: string) => `${BASE}/customers/${customerId}/webhooks`;
const box = new SecretBox(TEST_SECRETS_KEY);

/** A new tenant on `app` with an operator token to manage its webhook. */
async function tenant(app: TestApp = t): Promise<{ customerId: string; key: string; operator: string }> {
  const walk = new Walk(app.express);
  const { customerId, key } = await walk.tenant(`tgt-${++seq}-${Date.now().toString(36)}`);
  return { customerId, key, operator: await walk.operatorToken() };
}

/** Create (POST) or Update (PUT) Webhook. */
function putHook(app: TestApp, who: { customerId: string; operator: string }, method: "post" | "put", body: unknown): request.Test {
  return apiOf(app)[method](hooksPath(who.customerId)).set("Authorization", `Bearer ${who.operator}`).send(body as object);
}

/** Expects the platform's 400 `BAD_REQUEST` naming `field`. */
function expectBadField(res: request.Response, field: string): void {
  expectPlatformError(res, 400, "BAD_REQUEST");
  expect(res.body.errors[0].field).toBe(field);
}

/** Expects the credit core's 422 `VALIDATION_ERROR` on `creditNotificationsURL`. */
function expectCreditInvalid(res: request.Response): void {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body).toMatchObject({ success: false, meta: { version: "v2" } });
  expect(res.body.errors).toContainEqual(expect.objectContaining({ code: "VALIDATION_ERROR", field: "creditNotificationsURL" }));
}

/**
 * Writes a webhook configuration directly (as one stored before the registration rules existed):
 * `url` and `headers` as given, sealed like the service seals them, with a fresh secret.
 */
async function storeRaw(app: TestApp, customerId: string, url: string, headers: { key: string; value: string }[]): Promise<void> {
  await app.orm.em.fork().execute(
    `insert into webhook (customer_id, url, headers_sealed, secret_sealed, created_at, updated_at) values (?, ?, ?, ?, now(), now())
     on conflict (customer_id) do update set url = excluded.url, headers_sealed = excluded.headers_sealed, secret_sealed = excluded.secret_sealed`,
    [customerId, url, box.seal(JSON.stringify(headers), `webhook-headers:${customerId}`), box.seal("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", `webhook-secret:${customerId}`)],
  );
}

const verify = (app: TestApp, who: { customerId: string; operator: string }) =>
  apiOf(app).post(`${hooksPath(who.customerId)}/verify`).set("Authorization", `Bearer ${who.operator}`);

describe("configured headers that could never be sent answer 400 at registration", () => {
  it.each([
    ["a Cyrillic value", { key: "X-Api-Key", value: "ключ" }, "headers.0.value"],
    ["a value with a line separator", { key: "X-Api-Key", value: "a\u2028b" }, "headers.0.value"],
    ["a value with a Latin-1 letter", { key: "X-Api-Key", value: "café" }, "headers.0.value"],
    ["the key Trailer", { key: "Trailer", value: "x" }, "headers.0.key"],
    ["the key content_length", { key: "content_length", value: "1" }, "headers.0.key"],
    ["the key Content_Type", { key: "Content_Type", value: "text/plain" }, "headers.0.key"],
    ["the key Keep-Alive", { key: "Keep-Alive", value: "timeout=5" }, "headers.0.key"],
    ["the key TE", { key: "TE", value: "trailers" }, "headers.0.key"],
    ["the key Expect", { key: "Expect", value: "100-continue" }, "headers.0.key"],
    ["the key Upgrade", { key: "Upgrade", value: "h2c" }, "headers.0.key"],
    ["the key Connection", { key: "Connection", value: "close" }, "headers.0.key"],
    ["the key Host", { key: "Host", value: "evil.example" }, "headers.0.key"],
    ["a webhook-* key", { key: "Webhook-Version", value: "1" }, "headers.0.key"],
  ])("%s: 400 BAD_REQUEST naming the field on create and update, nothing stored", async (_what, header, field) => {
    const who = await tenant();
    expectBadField(await putHook(t, who, "post", { url: receiver.url, headers: [header] }), field);
    expectPlatformError(await apiOf(t).get(hooksPath(who.customerId)).set("Authorization", `Bearer ${who.operator}`), 404, "WEBHOOK_NOT_FOUND");
    expect((await putHook(t, who, "post", { url: receiver.url })).status).toBe(201);
    expectBadField(await putHook(t, who, "put", { url: receiver.url, headers: [{ key: "X-Fine", value: "ok" }, header] }), field.replace(".0.", ".1."));
  });
});

describe("Verify Webhook always answers 200, the outcome in data.message", () => {
  it.each([
    ["a stored header key Trailer", [{ key: "Trailer", value: "x" }], /Trailer/],
    ["a stored header value ключ", [{ key: "X-Api-Key", value: "ключ" }], /X-Api-Key/],
    ["a stored header value a\\u2028b", [{ key: "X-Api-Key", value: "a\u2028b" }], /X-Api-Key/],
  ])("%s: 200, not sent, the message names the header", async (_what, headers, names) => {
    const who = await tenant();
    await storeRaw(t, who.customerId, receiver.url, headers);
    const before = receiver.received.length;
    const res = await verify(t, who);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.message).toMatch(/not sent/);
    expect(res.body.data.message).toMatch(names);
    expect(res.body.data.payload).toMatchObject({ type: "webhook.test", data: { customer_id: who.customerId } });
    expect(receiver.received.length).toBe(before);
  });

  it("sealed headers that do not open: 200, the message says which sealed value", async () => {
    const who = await tenant();
    await storeRaw(t, who.customerId, receiver.url, []);
    await t.orm.em.fork().execute(`update webhook set headers_sealed = ? where customer_id = ?`, [box.seal("[]", "webhook-headers:someone-else"), who.customerId]);
    const res = await verify(t, who);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.message).toMatch(/not sent.*headers.*cannot be opened/);
  });

  it("a stored URL naming port 0: 200, the message says so", async () => {
    const who = await tenant();
    await storeRaw(t, who.customerId, "http://127.0.0.1:0/hooks", []);
    const res = await verify(t, who);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.message).toMatch(/not sent.*port 0/);
  });

  it("a target refused by the SSRF guard at connect time ([::127.0.0.1]): 200, the refusal in the message", async () => {
    const who = await tenant(strict);
    const port = new URL(receiver.url).port;
    await storeRaw(strict, who.customerId, `http://[::127.0.0.1]:${port}/hooks`, []);
    const res = await verify(strict, who);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.message).toMatch(/failed.*not allowed/);
    expect(res.body.data.message).not.toMatch(/EHOSTUNREACH|ENETUNREACH/);
  });
});

describe("a stored configuration that cannot be built into a request", () => {
  it.each([
    ["a header key Trailer", undefined, [{ key: "Trailer", value: "x" }], /Trailer/],
    ["a header value ключ", undefined, [{ key: "X-Api-Key", value: "ключ" }], /X-Api-Key/],
    ["a URL naming port 0", "http://127.0.0.1:0/hooks", [], /port 0/],
  ])("%s: one attempt says why, the delivery is failed at once, nothing is retried", async (_what, url, headers, names) => {
    const who = await tenant();
    await storeRaw(t, who.customerId, url ?? receiver.url, headers);
    const user = await fundedBtcUser(t.express, who.key);
    const before = receiver.received.length;
    const withdrawalId = await initiateBtcWithdrawal(t.express, who.key, user.userId);
    const list = () => apiOf(t).get(`${hooksPath(who.customerId)}/deliveries`).set("Authorization", `Bearer ${who.operator}`);
    const row = await waitFor("the delivery to end", async () => {
      const [first] = (await list()).body.data as { status: string }[];
      return first && first.status !== "pending" ? first : undefined;
    });
    expect(row).toMatchObject({ status: "failed", attempt_count: 1, next_attempt_at: null, payload: { data: { withdrawal_id: withdrawalId } } });
    const [attempt] = (row as unknown as { attempts: { http_status: number | null; error: string }[] }).attempts;
    expect(attempt!.http_status).toBeNull();
    expect(attempt!.error).toMatch(/cannot be sent/);
    expect(attempt!.error).toMatch(names);
    expect(attempt!.error).not.toMatch(/sealed/);
    // rounds run every second and the first retry would come after about 1 s: none comes
    await sleep(2_500);
    const [after] = (await list()).body.data as { attempt_count: number; status: string }[];
    expect(after).toMatchObject({ status: "failed", attempt_count: 1 });
    expect(receiver.received.length).toBe(before);
  });
});

describe("one URL rule for both surfaces", () => {
  /** URLs refused always, also with ALLOW_PRIVATE_NETWORK_TARGETS=true (the app `t`). */
  const refusedAlways = (port: string) => [
    ["port 0", "http://127.0.0.1:0/hooks"],
    ["port 0 written 00", "http://127.0.0.1:00/hooks"],
    ["CR LF inside", `http://127.0.0.1:${port}/ho\r\noks`],
    ["a trailing LF", `http://127.0.0.1:${port}/hooks\n`],
    ["a tab inside", `http://127.0.0.1:${port}/ho\toks`],
    ["a leading space", ` http://127.0.0.1:${port}/hooks`],
    ["a trailing space", `http://127.0.0.1:${port}/hooks `],
  ];

  it("each is refused by Create and Update Webhook (400 on url) and by NotificationsEnlist (422 on creditNotificationsURL)", async () => {
    const who = await tenant();
    expect((await putHook(t, who, "post", { url: receiver.url })).status).toBe(201);
    for (const [what, url] of refusedAlways(new URL(receiver.url).port)) {
      for (const method of ["post", "put"] as const) {
        const res = await putHook(t, who, method, { url });
        expect(res.status, `${what} on ${method}: ${JSON.stringify(res.body)}`).toBe(400);
        expectBadField(res, "url");
      }
      expectCreditInvalid(await apiOf(t).put("/v2/notifications").set("x-api-key", who.key).send({ creditNotificationsURL: url }));
    }
    // the webhook kept its registration
    const got = await apiOf(t).get(hooksPath(who.customerId)).set("Authorization", `Bearer ${who.operator}`);
    expect(got.body.data.url).toBe(receiver.url);
  });

  it.each([
    ["IPv4-compatible loopback", "http://[::127.0.0.1]:18940/hook"],
    ["IPv4-compatible loopback, hex", "http://[::7f00:1]/hook"],
    ["IPv4-compatible private", "http://[::10.0.0.1]/hook"],
    ["IPv4-compatible metadata", "http://[::169.254.169.254]/latest/meta-data"],
    ["IPv4-translated loopback", "http://[::ffff:0:127.0.0.1]/hook"],
    ["NAT64 loopback", "http://[64:ff9b::127.0.0.1]/hook"],
    ["6to4 of loopback", "http://[2002:7f00:1::1]/hook"],
    ["Teredo", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook"],
  ])("without ALLOW_PRIVATE_NETWORK_TARGETS, %s (%s) is refused by both surfaces", async (_what, url) => {
    const who = await tenant(strict);
    const res = await putHook(strict, who, "post", { url });
    expectBadField(res, "url");
    expect(res.body.errors[0].message).toMatch(/private|loopback|link-local|reserved/);
    expectCreditInvalid(await apiOf(strict).put("/v2/notifications").set("x-api-key", who.key).send({ creditNotificationsURL: url }));
  });
});

describe("the SSRF guard at connect time", () => {
  it("a stored [::127.0.0.1] target gets no connection: the attempt says it is not allowed", async () => {
    const who = await tenant(strict);
    expect((await putHook(strict, who, "post", { url: "http://93.184.215.14/hooks" })).status).toBe(201);
    const port = new URL(receiver.url).port;
    await strict.orm.em.fork().execute(`update webhook set url = ? where customer_id = ?`, [`http://[::127.0.0.1]:${port}/hooks`, who.customerId]);
    const user = await fundedBtcUser(strict.express, who.key);
    await initiateBtcWithdrawal(strict.express, who.key, user.userId);
    const row = await waitFor("a failed attempt", async () => {
      const res = await apiOf(strict).get(`${hooksPath(who.customerId)}/deliveries`).set("Authorization", `Bearer ${who.operator}`);
      const [first] = res.body.data as { attempt_count: number; attempts: { error: string | null }[] }[];
      return first && first.attempt_count >= 1 ? first : undefined;
    });
    expect(row.attempts[0]!.error).toMatch(/not allowed/);
    expect(row.attempts[0]!.error).toMatch(/127\.0\.0\.1/);
  });
});
