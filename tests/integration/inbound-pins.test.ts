/**
 * PINs pushed by the provider over HTTP on a real PostgreSQL (docs/decisions/withdrawals.md "PINs
 * pushed by the provider", docs/security.md "Inbound webhooks"): the inbound secret (create, read
 * masked, rotate with an overlap, delete) and who may manage it; the receive path signed as a
 * provider signs it, with the independent `standardwebhooks` library: its order of checks (413,
 * then one identical 401, then 400), each PIN_NOTIFICATION_FAILED, the PIN becoming the code
 * exactly as a polled PIN does, and one answer per `webhook-id`, concurrent copies included.
 */
import type request from "supertest";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiOf, startTestApp, type TestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError, fundedBtcUser, initiateBtcWithdrawal } from "../support/fixtures.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";

let t: TestApp;
let receiver: Receiver;
let operator: string;
let seq = 0;

beforeAll(async () => {
  [t, receiver] = await Promise.all([startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true" }), startReceiver()]);
  operator = await new Walk(t.express).operatorToken();
});
afterAll(async () => {
  await t?.dispose();
  await receiver?.close();
});

const configPath = (customerId: string) => `${BASE}/customers/${customerId}/inbound-webhook`;
const receivePath = (customerId: string) => `${BASE}/inbound/${customerId}/pins`;
const asOperator = (r: request.Test) => r.set("Authorization", `Bearer ${operator}`);

/** A customer with an owner key, a PIN webhook (so `withdrawal.pin` events are written) and an inbound secret. */
async function tenant(): Promise<{ customerId: string; key: string; secret: string }> {
  const customerId = `inbound-${++seq}-${Date.now().toString(36)}`;
  const { key } = await new Walk(t.express).tenant(customerId);
  const hook = await asOperator(apiOf(t).post(`${BASE}/customers/${customerId}/webhooks`)).send({ url: receiver.url });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  const created = await asOperator(apiOf(t).post(configPath(customerId)));
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { customerId, key, secret: created.body.data.secret as string };
}

let messageSeq = 0;
/** A new `webhook-id`. */
const newId = () => `msg_inbound_${++messageSeq}_${Date.now().toString(36)}`;

/** POSTs `body` (text, sent as is) to the receive path, signed by `secret` as a provider signs it. */
function push(customerId: string, secret: string, body: string, options: { id?: string; at?: Date; headers?: Record<string, string> } = {}) {
  const id = options.id ?? newId();
  const at = options.at ?? new Date();
  const signature = new Webhook(secret).sign(id, at, body);
  return apiOf(t)
    .post(receivePath(customerId))
    .set("Content-Type", "application/json")
    .set({ "webhook-id": id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": signature, ...options.headers })
    .send(body);
}

const pinBody = (withdrawalId: string, pin: unknown) => JSON.stringify({ withdrawal_id: withdrawalId, pin });

/** The user's emails in the sandbox outbox, newest first. */
async function mails(key: string, email: string): Promise<{ text: string }[]> {
  const res = await apiOf(t).get(`${BASE}/sandbox/mail`).query({ to: email }).set("x-api-key", key);
  expect(res.status).toBe(200);
  return res.body.data as { text: string }[];
}

/** `withdrawal.pin` notifications written for one withdrawal. */
async function pinEvents(withdrawalId: string): Promise<number> {
  const rows = await t.orm.em.fork().execute<{ n: string }[]>(`select count(*) as n from webhook_delivery where event_type = 'withdrawal.pin' and reference = ?`, [`withdrawal:${withdrawalId}`]);
  return Number(rows[0]!.n);
}

const confirm = (key: string, userId: string, withdrawalId: string, code: string) =>
  apiOf(t).post(`${BASE}/users/${userId}/accounts/crypto/withdrawals/${withdrawalId}/confirm`).set("x-api-key", key).send({ code });

/** A 401's error list, without what differs per request (trace id, time). */
function unauthorizedOf(res: request.Response): unknown {
  expect(res.status, JSON.stringify(res.body)).toBe(401);
  expect(res.body.success).toBe(false);
  return res.body.errors;
}

describe("the inbound secret", () => {
  it("create answers 201 with the receive path and a whsec_ secret shown once; read masks it; the secret is sealed at rest", async () => {
    const customerId = `inbound-cfg-${Date.now().toString(36)}`;
    await new Walk(t.express).tenant(customerId);
    const res = await asOperator(apiOf(t).post(configPath(customerId)));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toEqual({
      url: `/api/v1/inbound/${customerId}/pins`,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      created_at: expect.any(String),
      previous_secret_expires_at: null,
    });
    const secret = res.body.data.secret as string;
    const got = await asOperator(apiOf(t).get(configPath(customerId)));
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual({ url: `/api/v1/inbound/${customerId}/pins`, secret: "***masked***", created_at: res.body.data.created_at, previous_secret_expires_at: null });
    const [row] = await t.orm.em.fork().execute<Record<string, unknown>[]>(`select * from inbound_webhook where customer_id = ?`, [customerId]);
    expect(JSON.stringify(row)).not.toContain(secret.slice("whsec_".length));
  });

  it("rotation: the previous secret verifies during the overlap, only the newest two after two rotations, none once the overlap ends or after delete", async () => {
    const { customerId, key, secret: first } = await tenant();
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    const verifies = async (secret: string) => (await push(customerId, secret, pinBody(withdrawalId, "4821"))).status === 200;

    const second = await asOperator(apiOf(t).post(configPath(customerId)));
    expect(second.status).toBe(201);
    const expiresAt = Date.parse(second.body.data.previous_secret_expires_at as string);
    expect(Math.abs(expiresAt - (Date.now() + 86_400_000))).toBeLessThan(60_000);
    expect((await asOperator(apiOf(t).get(configPath(customerId)))).body.data.previous_secret_expires_at).toBe(second.body.data.previous_secret_expires_at);
    expect(await verifies(first)).toBe(true);
    expect(await verifies(second.body.data.secret as string)).toBe(true);

    const third = await asOperator(apiOf(t).post(configPath(customerId)));
    expect(third.status).toBe(201);
    expect(await verifies(first)).toBe(false);
    expect(await verifies(second.body.data.secret as string)).toBe(true);
    expect(await verifies(third.body.data.secret as string)).toBe(true);

    // the overlap over: only the newest verifies
    await t.orm.em.fork().execute(`update inbound_webhook set previous_secret_expires_at = now() - interval '1 second' where customer_id = ?`, [customerId]);
    expect(await verifies(second.body.data.secret as string)).toBe(false);
    expect(await verifies(third.body.data.secret as string)).toBe(true);
    expect((await asOperator(apiOf(t).get(configPath(customerId)))).body.data.previous_secret_expires_at).toBeNull();

    const deleted = await asOperator(apiOf(t).delete(configPath(customerId)));
    expect(deleted.status).toBe(204);
    expect(await verifies(third.body.data.secret as string)).toBe(false);
    expectPlatformError(await asOperator(apiOf(t).get(configPath(customerId))), 404, "WEBHOOK_NOT_FOUND");
    expectPlatformError(await asOperator(apiOf(t).delete(configPath(customerId))), 404, "WEBHOOK_NOT_FOUND");
  });

  it("a customer session manages its own; another customer's session gets 403, an owner API key 403, no credential 401; an unknown customer 404", async () => {
    const mine = await tenant();
    const other = await tenant();
    const session = await apiOf(t).post(`${BASE}/sessions`).send({ customer_id: mine.customerId, customer_secret: mine.key });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const token = session.body.data.token as string;
    const asMine = (r: request.Test) => r.set("Authorization", `Bearer ${token}`);
    expect((await asMine(apiOf(t).get(configPath(mine.customerId)))).status).toBe(200);
    expect((await asMine(apiOf(t).post(configPath(mine.customerId)))).status).toBe(201);
    for (const r of [apiOf(t).get(configPath(other.customerId)), apiOf(t).post(configPath(other.customerId)), apiOf(t).delete(configPath(other.customerId))]) {
      expectPlatformError(await asMine(r), 403, "FORBIDDEN");
    }
    expectPlatformError(await apiOf(t).get(configPath(mine.customerId)).set("x-api-key", mine.key), 403, "FORBIDDEN");
    expectPlatformError(await apiOf(t).get(configPath(mine.customerId)), 401, "UNAUTHORIZED");
    expectPlatformError(await asOperator(apiOf(t).post(configPath("no-such-customer"))), 404, "CUSTOMER_NOT_FOUND");
  });
});

describe("receiving a PIN", () => {
  it("every failed authentication answers the same 401 INVALID_WEBHOOK_SIGNATURE", async () => {
    const { customerId, key, secret } = await tenant();
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    const body = pinBody(withdrawalId, "4821");
    const noSecret = `inbound-none-${Date.now().toString(36)}`;
    await new Walk(t.express).tenant(noSecret);
    const wrongSecret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    const cases: [string, Promise<request.Response>][] = [
      ["no signature headers", apiOf(t).post(receivePath(customerId)).set("Content-Type", "application/json").send(body)],
      ["no webhook-signature", push(customerId, secret, body, { headers: { "webhook-signature": "" } })],
      ["a signature by another secret", push(customerId, wrongSecret, body)],
      ["a timestamp 400 s old", push(customerId, secret, body, { at: new Date(Date.now() - 400_000) })],
      ["a timestamp 400 s ahead", push(customerId, secret, body, { at: new Date(Date.now() + 400_000) })],
      ["a webhook-id other than the signed one", push(customerId, secret, body, { headers: { "webhook-id": "msg_other" } })],
      ["an unknown customer", push("no-such-customer", secret, body)],
      ["a customer without an inbound webhook", push(noSecret, secret, body)],
      ["a webhook-id over 255 characters", push(customerId, secret, body, { id: "m".repeat(256) })],
    ];
    const expected = [{ code: "INVALID_WEBHOOK_SIGNATURE", message: "The webhook signature is missing or does not verify." }];
    for (const [what, pending] of cases) {
      const res = await pending;
      expect(unauthorizedOf(res), what).toEqual(expected);
    }
    // nothing happened to the withdrawal: the issued code is still the only one
    expect(await mails(key, user.email)).toHaveLength(1);
  });

  it("the size is checked first: 8 KiB is read, one byte more answers 413 whatever the signature", async () => {
    const { customerId, key, secret } = await tenant();
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    const base = pinBody(withdrawalId, "4821").slice(0, -1);
    const padded = (bytes: number) => `${base},"pad":"${"x".repeat(bytes - base.length - 10)}"}`;
    expect(Buffer.byteLength(padded(8192))).toBe(8192);
    const atLimit = await push(customerId, secret, padded(8192));
    expect(atLimit.status, JSON.stringify(atLimit.body)).toBe(200);
    expectPlatformError(await push(customerId, secret, padded(8193)), 413, "PAYLOAD_TOO_LARGE");
    expectPlatformError(await push(customerId, "whsec_" + Buffer.alloc(32, 1).toString("base64"), padded(8193)), 413, "PAYLOAD_TOO_LARGE");
  });

  it("a verified body that is not JSON answers 400 BAD_REQUEST; an unverified one 401", async () => {
    const { customerId, secret } = await tenant();
    expectPlatformError(await push(customerId, secret, "withdrawal 1234"), 400, "BAD_REQUEST");
    expectPlatformError(await push(customerId, secret, ""), 400, "BAD_REQUEST");
    expectPlatformError(await push(customerId, "whsec_" + Buffer.alloc(32, 1).toString("base64"), "withdrawal 1234"), 401, "INVALID_WEBHOOK_SIGNATURE");
  });

  it("each PIN that cannot be applied answers 400 PIN_NOTIFICATION_FAILED with its own message", async () => {
    const mine = await tenant();
    const other = await tenant();
    const user = await fundedBtcUser(t.express, mine.key);
    const otherUser = await fundedBtcUser(t.express, other.key);
    const pending = await initiateBtcWithdrawal(t.express, mine.key, user.userId);
    const cancelled = await initiateBtcWithdrawal(t.express, mine.key, user.userId);
    expect((await apiOf(t).delete(`${BASE}/users/${user.userId}/accounts/crypto/withdrawals/${cancelled}`).set("x-api-key", mine.key)).status).toBe(204);
    const theirs = await initiateBtcWithdrawal(t.express, other.key, otherUser.userId);
    const cases: [string, string, string][] = [
      ["no withdrawal_id", JSON.stringify({ pin: "4821" }), "withdrawal_id"],
      ["a numeric pin", pinBody(pending, 4821), "pin"],
      ["a pin of 3 digits", pinBody(pending, "482"), "pin"],
      ["a pin of 9 digits", pinBody(pending, "482100000"), "pin"],
      ["a pin with a letter", pinBody(pending, "48a1"), "pin"],
      ["an unknown withdrawal", pinBody("0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e", "4821"), "withdrawal_id"],
      ["another customer's withdrawal", pinBody(theirs, "4821"), "withdrawal_id"],
      ["a cancelled withdrawal", pinBody(cancelled, "4821"), "withdrawal_id"],
    ];
    const messages = new Map<string, string>();
    for (const [what, body, field] of cases) {
      const res = await push(mine.customerId, mine.secret, body);
      expectPlatformError(res, 400, "PIN_NOTIFICATION_FAILED");
      expect(res.body.errors[0].field, what).toBe(field);
      messages.set(what, res.body.errors[0].message as string);
    }
    expect(messages.get("no withdrawal_id")).toMatch(/withdrawal_id/);
    expect(messages.get("a numeric pin")).toMatch(/4 to 8 digits/);
    expect(messages.get("another customer's withdrawal")).toMatch(/not a withdrawal of this customer/);
    expect(messages.get("a cancelled withdrawal")).toMatch(/no longer PENDING/);
    expect(new Set([messages.get("no withdrawal_id"), messages.get("a numeric pin"), messages.get("an unknown withdrawal")?.replace(/"[^"]+"/, ""), messages.get("a cancelled withdrawal")?.replace(/"[^"]+"/, "")]).size).toBe(4);
    // the pending withdrawal and the other customer's kept their codes
    expect(await mails(mine.key, user.email)).toHaveLength(2);
    expect(await mails(other.key, otherUser.email)).toHaveLength(1);
    expect(await pinEvents(pending)).toBe(1);
  });

  it("a pushed PIN becomes the code as a polled one does: the old code is void, the user is emailed, withdrawal.pin is written, the PIN confirms", async () => {
    const { customerId, key, secret } = await tenant();
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    const issued = /Confirmation code: (\d{6})/.exec((await mails(key, user.email))[0]!.text)![1]!;
    const [before] = await t.orm.em.fork().execute<{ code_expires_at: Date }[]>(`select code_expires_at from withdrawal where id = ?`, [withdrawalId]);

    const res = await push(customerId, secret, pinBody(withdrawalId, "73051946"));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ message: expect.stringContaining(withdrawalId) });

    const sent = await mails(key, user.email);
    expect(sent).toHaveLength(2);
    expect(sent[0]!.text).toContain("Confirmation code: 73051946");
    expect(await pinEvents(withdrawalId)).toBe(2);
    const [after] = await t.orm.em.fork().execute<{ code_expires_at: Date }[]>(`select code_expires_at from withdrawal where id = ?`, [withdrawalId]);
    expect(new Date(after!.code_expires_at).getTime()).toBeGreaterThanOrEqual(new Date(before!.code_expires_at).getTime());

    expectPlatformError(await confirm(key, user.userId, withdrawalId, issued), 400, "CONFIRMATION_CODE_INVALID");
    const ok = await confirm(key, user.userId, withdrawalId, "73051946");
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data).toEqual({ id: withdrawalId, status: "COMPLETED" });
  });

  it("one webhook-id has one effect: 10 identical sends at once get one answer, and a later repeat gets it whatever its body", async () => {
    const { customerId, key, secret } = await tenant();
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    const id = newId();
    const body = pinBody(withdrawalId, "5519");
    const answers = await Promise.all(Array.from({ length: 10 }, () => push(customerId, secret, body, { id })));
    for (const res of answers) {
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data).toEqual(answers[0]!.body.data);
    }
    expect(await mails(key, user.email)).toHaveLength(2);
    expect(await pinEvents(withdrawalId)).toBe(2);

    const repeat = await push(customerId, secret, pinBody(withdrawalId, "0000"), { id });
    expect(repeat.status).toBe(200);
    expect(repeat.body.data).toEqual(answers[0]!.body.data);
    const notJson = await push(customerId, secret, "not json", { id });
    expect(notJson.status).toBe(200);
    expect(await mails(key, user.email)).toHaveLength(2);
    expect((await confirm(key, user.userId, withdrawalId, "5519")).status).toBe(200);
  });

  it("a first answer of 400 is the answer of every repeat, even one whose body would now succeed", async () => {
    const { customerId, key, secret } = await tenant();
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    const id = newId();
    const first = await push(customerId, secret, pinBody(withdrawalId, "12"), { id });
    expectPlatformError(first, 400, "PIN_NOTIFICATION_FAILED");
    const repeat = await push(customerId, secret, pinBody(withdrawalId, "1234"), { id });
    expectPlatformError(repeat, 400, "PIN_NOTIFICATION_FAILED");
    expect(repeat.body.errors).toEqual(first.body.errors);
    expect(await mails(key, user.email)).toHaveLength(1);
    // the same webhook-id of another customer is another message
    const other = await tenant();
    const otherUser = await fundedBtcUser(t.express, other.key);
    const theirs = await initiateBtcWithdrawal(t.express, other.key, otherUser.userId);
    expect((await push(other.customerId, other.secret, pinBody(theirs, "1234"), { id })).status).toBe(200);
  });
});
