/**
 * The email poller over HTTP on a real PostgreSQL against a real IMAP server (Debian's Dovecot,
 * tests/support/dovecot.ts) (reference: "Email poller", "States and transitions › Email poller";
 * docs/decisions/withdrawals.md "The email poller", docs/decisions/notifications.md "The SSRF guard"): configuration and its 404/409/422 rules, the derived mailbox and
 * masked password, a live verify, the recurring job reading a PIN email that then confirms a
 * pending withdrawal end to end, messages marked seen, statistics, bad messages skipped, disable
 * and enable by `poller_id`, delete, and the SSRF guard on the IMAP host.
 */
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiOf, startTestApp, type TestApp } from "../support/app.js";
import { startDovecot, type Dovecot } from "../support/dovecot.js";
import { BASE, Walk, expectPlatformError, fundedBtcUser, initiateBtcWithdrawal } from "../support/fixtures.js";
import { sleep, waitFor } from "../support/wait.js";

const PASSWORD = "mailbox-pass-123";
let t: TestApp;
let dovecot: Dovecot;
let operator: string;
let seq = 0;

beforeAll(async () => {
  [t, dovecot] = await Promise.all([startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true", POLLER_INTERVAL_S: "1", IMAP_TIMEOUT_S: "3" }), startDovecot()]);
  operator = await new Walk(t.express).operatorToken();
});
afterAll(async () => {
  await t?.dispose();
  await dovecot?.stop();
});

const pollerPath = (customerId: string) => `${BASE}/customers/${customerId}/email/poller`;
const asOperator = (r: request.Test) => r.set("Authorization", `Bearer ${operator}`);

/** A customer with an owner key; its owner credential's email is `ops@<id>.example` (the mailbox login). */
async function tenant(): Promise<{ customerId: string; key: string; mailbox: string }> {
  const customerId = `poll-${++seq}-${Date.now().toString(36)}`;
  const { key } = await new Walk(t.express).tenant(customerId);
  return { customerId, key, mailbox: `ops@${customerId}.example` };
}

async function createPoller(customerId: string, imap: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return asOperator(apiOf(t).post(pollerPath(customerId))).send({
    imap: { host: dovecot.host, port: dovecot.port, tls: false, password: PASSWORD, ...imap },
    ...extra,
  });
}

async function getPoller(customerId: string): Promise<Record<string, unknown>> {
  const res = await asOperator(apiOf(t).get(pollerPath(customerId)));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Record<string, unknown>;
}

const pollJobs = async (pollerId: string) =>
  t.orm.em.fork().execute<{ id: string }[]>(`select id from agenda_jobs where name = 'email-poll' and data @> ?::jsonb`, [JSON.stringify({ pollerId })]);

describe("configuration", () => {
  it("create answers 201: enabled, email and login derived from the owner credential (a body email is ignored), password masked", async () => {
    const { customerId, mailbox } = await tenant();
    const res = await createPoller(customerId, {}, { description: "PIN mailbox", email: "attacker@evil.example" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toEqual({
      poller_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      customer_id: customerId,
      email: mailbox,
      imap: { host: dovecot.host, port: dovecot.port, tls: false, user: mailbox, password: "***masked***" },
      description: "PIN mailbox",
      enabled: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(res.body)).not.toContain(PASSWORD);
    const [row] = await t.orm.em.fork().execute<Record<string, unknown>[]>(`select * from email_poller where customer_id = ?`, [customerId]);
    expect(JSON.stringify(row)).not.toContain(PASSWORD);
    expect(await pollJobs(res.body.data.poller_id as string)).toHaveLength(1);

    const got = await getPoller(customerId);
    expect(got).toMatchObject({ poller_id: res.body.data.poller_id, enabled: true, total_emails_processed: 0, total_pins_extracted: 0, last_error: null, last_error_at: null });
    expect("last_polled_at" in got && "last_successful_poll_at" in got).toBe(true);
    expect((got.imap as { password: string }).password).toBe("***masked***");
    expect((got.imap as { tls: boolean }).tls).toBe(false);
  });

  it("tls defaults to true; a second create answers 409 POLLER_ALREADY_EXISTS", async () => {
    const { customerId } = await tenant();
    const res = await createPoller(customerId, { tls: undefined });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.imap.tls).toBe(true);
    expect(res.body.data.description).toBeNull();
    expectPlatformError(await createPoller(customerId), 409, "POLLER_ALREADY_EXISTS");
  });

  it.each([
    ["port 0", { port: 0 }, {}],
    ["port 70000", { port: 70000 }, {}],
    ["a missing password", { password: undefined }, {}],
    ["a missing host", { host: undefined }, {}],
  ])("%s answers 422", async (_what, imap, extra) => {
    const { customerId } = await tenant();
    expectPlatformError(await createPoller(customerId, imap, extra), 422, "UNPROCESSABLE_ENTITY");
  });

  it("a description of 256 characters answers 422 on create and update; 255 is accepted", async () => {
    const { customerId } = await tenant();
    expectPlatformError(await createPoller(customerId, {}, { description: "d".repeat(256) }), 422, "UNPROCESSABLE_ENTITY");
    expect((await createPoller(customerId, {}, { description: "d".repeat(255) })).status).toBe(201);
    expectPlatformError(await asOperator(apiOf(t).put(pollerPath(customerId))).send({ description: "d".repeat(256) }), 422, "UNPROCESSABLE_ENTITY");
  });

  it("update changes description, imap and enabled, keeping the rest; the password stays masked", async () => {
    const { customerId } = await tenant();
    const created = await createPoller(customerId, {}, { description: "first" });
    const pollerId = created.body.data.poller_id as string;
    const res = await asOperator(apiOf(t).put(pollerPath(customerId))).send({ description: "second", enabled: false });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ poller_id: pollerId, description: "second", enabled: false, imap: { port: dovecot.port, password: "***masked***" }, total_emails_processed: 0 });
    expect(await pollJobs(pollerId)).toHaveLength(0);
    const again = await asOperator(apiOf(t).put(pollerPath(customerId))).send({ enabled: true, imap: { host: dovecot.host, port: dovecot.port, tls: false, password: "other" } });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ description: "second", enabled: true });
    expect(await pollJobs(pollerId)).toHaveLength(1);
  });

  it("without a poller: get, update, delete, verify answer 404 POLLER_NOT_FOUND; an unknown customer 404 CUSTOMER_NOT_FOUND", async () => {
    const { customerId } = await tenant();
    expectPlatformError(await asOperator(apiOf(t).get(pollerPath(customerId))), 404, "POLLER_NOT_FOUND");
    expectPlatformError(await asOperator(apiOf(t).put(pollerPath(customerId))).send({ enabled: true }), 404, "POLLER_NOT_FOUND");
    expectPlatformError(await asOperator(apiOf(t).delete(pollerPath(customerId))), 404, "POLLER_NOT_FOUND");
    expectPlatformError(await asOperator(apiOf(t).post(`${pollerPath(customerId)}/verify`)), 404, "POLLER_NOT_FOUND");
    expectPlatformError(await createPoller("never-created-co"), 404, "CUSTOMER_NOT_FOUND");
  });

  it("enable/disable answer 404 POLLER_NOT_FOUND for an unknown, malformed or other customer's poller_id", async () => {
    const mine = await tenant();
    const other = await tenant();
    await createPoller(mine.customerId);
    const theirs = (await createPoller(other.customerId)).body.data.poller_id as string;
    for (const id of ["0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e", "not-a-uuid", theirs]) {
      expectPlatformError(await asOperator(apiOf(t).post(`${pollerPath(mine.customerId)}/${id}/disable`)), 404, "POLLER_NOT_FOUND");
      expectPlatformError(await asOperator(apiOf(t).post(`${pollerPath(mine.customerId)}/${id}/enable`)), 404, "POLLER_NOT_FOUND");
    }
  });

  it("a customer session manages its own poller and gets 403 on another customer's", async () => {
    const mine = await tenant();
    const other = await tenant();
    const session = await apiOf(t).post(`${BASE}/sessions`).send({ customer_id: mine.customerId, customer_secret: mine.key });
    const token = session.body.data.token as string;
    const own = await apiOf(t).post(pollerPath(mine.customerId)).set("Authorization", `Bearer ${token}`)
      .send({ imap: { host: dovecot.host, port: dovecot.port, tls: false, password: PASSWORD } });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    expectPlatformError(await apiOf(t).get(pollerPath(other.customerId)).set("Authorization", `Bearer ${token}`), 403, "FORBIDDEN");
    expectPlatformError(await apiOf(t).get(pollerPath(mine.customerId)).set("x-api-key", mine.key), 403, "FORBIDDEN");
  });

  it("delete answers 204, removes the job, and the poller is gone", async () => {
    const { customerId } = await tenant();
    const pollerId = (await createPoller(customerId)).body.data.poller_id as string;
    const res = await asOperator(apiOf(t).delete(pollerPath(customerId)));
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect(await pollJobs(pollerId)).toHaveLength(0);
    expectPlatformError(await asOperator(apiOf(t).get(pollerPath(customerId))), 404, "POLLER_NOT_FOUND");
    expect((await createPoller(customerId)).status).toBe(201);
  });
});

describe("SSRF guard on the IMAP host (docs/decisions/notifications.md#the-ssrf-guard)", () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp();
  });
  afterAll(async () => {
    await strict?.dispose();
  });

  it.each(["127.0.0.1", "localhost", "10.0.0.8", "169.254.169.254", "::1"])("%s answers 422 on field imap.host", async (host) => {
    const walk = new Walk(strict.express);
    const customerId = `poll-ssrf-${++seq}`;
    await walk.tenant(customerId);
    const token = await walk.operatorToken();
    const res = await apiOf(strict).post(pollerPath(customerId)).set("Authorization", `Bearer ${token}`)
      .send({ imap: { host, port: 993, password: PASSWORD } });
    expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
    expect(res.body.errors[0].field).toBe("imap.host");
  });
});

describe("verify", () => {
  it("a live login with the stored settings answers 200 {success: true, message}", async () => {
    const { customerId, mailbox } = await tenant();
    dovecot.addUser(mailbox, PASSWORD);
    await createPoller(customerId);
    const res = await asOperator(apiOf(t).post(`${pollerPath(customerId)}/verify`));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ success: true, message: expect.stringContaining(mailbox) });
  });

  it("a closed port answers 401 UNAUTHORIZED naming the refused connection", async () => {
    const { customerId, mailbox } = await tenant();
    dovecot.addUser(mailbox, PASSWORD);
    await createPoller(customerId, { port: 9 });
    const res = await asOperator(apiOf(t).post(`${pollerPath(customerId)}/verify`));
    expectPlatformError(res, 401, "UNAUTHORIZED");
    expect(res.body.errors[0].message).toMatch(/refused/);
  });

  it("a wrong password answers 401 UNAUTHORIZED with the reason, never the password", async () => {
    const { customerId, mailbox } = await tenant();
    dovecot.addUser(mailbox, PASSWORD);
    await createPoller(customerId, { password: "not-the-password" });
    const res = await asOperator(apiOf(t).post(`${pollerPath(customerId)}/verify`));
    expectPlatformError(res, 401, "UNAUTHORIZED");
    expect(res.body.errors[0].message).toMatch(/login refused/i);
    expect(JSON.stringify(res.body)).not.toContain("not-the-password");
  });
});

describe("polling", () => {
  it("a PIN email for a pending withdrawal becomes its code: the old code stops working, the PIN confirms it; the message is seen and counted", async () => {
    const { customerId, key, mailbox } = await tenant();
    dovecot.addUser(mailbox, PASSWORD);
    const user = await fundedBtcUser(t.express, key);
    const withdrawalId = await initiateBtcWithdrawal(t.express, key, user.userId);
    const outbox = await apiOf(t).get(`${BASE}/sandbox/mail`).query({ to: user.email }).set("x-api-key", key);
    const issued = /Confirmation code: (\d{6})/.exec(outbox.body.data[0].text as string)![1]!;

    // Delivered before the poller exists: its first poll reads it.
    const uid = await dovecot.deliver(mailbox, PASSWORD, { subject: `Withdrawal ${withdrawalId} PIN`, text: `Your withdrawal PIN is 73051946.\nIt expires in 10 minutes.` });
    const created = await createPoller(customerId);
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    const stats = await waitFor("the poll to apply the PIN", async () => {
      const got = await getPoller(customerId);
      return got.total_pins_extracted === 1 ? got : undefined;
    }, 15_000);
    expect(stats).toMatchObject({ total_emails_processed: 1, last_error: null });
    expect(stats.last_successful_poll_at).toEqual(expect.any(String));
    expect((await dovecot.flags(mailbox, PASSWORD)).get(uid)).toContain("\\Seen");

    // The user got the PIN like an issued code.
    const mails = await apiOf(t).get(`${BASE}/sandbox/mail`).query({ to: user.email }).set("x-api-key", key);
    expect(mails.body.data).toHaveLength(2);
    expect(mails.body.data[0].text).toContain("Confirmation code: 73051946");

    const confirm = (code: string) =>
      apiOf(t).post(`${BASE}/users/${user.userId}/accounts/crypto/withdrawals/${withdrawalId}/confirm`).set("x-api-key", key).send({ code });
    expectPlatformError(await confirm(issued), 400, "CONFIRMATION_CODE_INVALID");
    const ok = await confirm("73051946");
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data).toEqual({ id: withdrawalId, status: "COMPLETED" });
  });

  it("messages without a PIN, for an unknown or another customer's withdrawal, or malformed are seen and counted, change nothing, and do not stop a good one", async () => {
    const { customerId, key, mailbox } = await tenant();
    const other = await tenant();
    dovecot.addUser(mailbox, PASSWORD);
    const user = await fundedBtcUser(t.express, key);
    const otherUser = await fundedBtcUser(t.express, other.key);
    const mine = await initiateBtcWithdrawal(t.express, key, user.userId);
    const theirs = await initiateBtcWithdrawal(t.express, other.key, otherUser.userId);
    const uids = [
      await dovecot.deliver(mailbox, PASSWORD, { subject: "Newsletter", text: "Nothing to see here." }),
      await dovecot.deliver(mailbox, PASSWORD, { subject: `Withdrawal 0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e`, text: "PIN 4444" }),
      await dovecot.deliver(mailbox, PASSWORD, { subject: `Withdrawal ${theirs}`, text: "PIN 5555" }),
      await dovecot.deliver(mailbox, PASSWORD, { subject: "=?bogus?Q?broken?=", text: "\u0000\u0001 PIN" }),
      await dovecot.deliver(mailbox, PASSWORD, { subject: `Withdrawal ${mine}`, text: "PIN: 246810" }),
    ];
    await createPoller(customerId);
    // the messages are counted one by one and the PINs when the poll ends: wait for the end of the poll
    const stats = await waitFor("all five messages to be processed and the poll to end", async () => {
      const got = await getPoller(customerId);
      return got.total_emails_processed === 5 && got.last_successful_poll_at ? got : undefined;
    }, 15_000);
    expect(stats.total_pins_extracted).toBe(1);
    const flags = await dovecot.flags(mailbox, PASSWORD);
    for (const uid of uids) expect(flags.get(uid), `message ${uid}`).toContain("\\Seen");
    // another customer's withdrawal kept its own code
    const theirMail = await apiOf(t).get(`${BASE}/sandbox/mail`).query({ to: otherUser.email }).set("x-api-key", other.key);
    expect(theirMail.body.data).toHaveLength(1);
    const ok = await apiOf(t).post(`${BASE}/users/${user.userId}/accounts/crypto/withdrawals/${mine}/confirm`).set("x-api-key", key).send({ code: "246810" });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it("disable by poller_id stops polling (a message stays unseen); enable starts it again", async () => {
    const { customerId, mailbox } = await tenant();
    dovecot.addUser(mailbox, PASSWORD);
    const pollerId = (await createPoller(customerId)).body.data.poller_id as string;
    await waitFor("a first poll", async () => ((await getPoller(customerId)).last_successful_poll_at ? true : undefined), 10_000);
    const disabled = await asOperator(apiOf(t).post(`${pollerPath(customerId)}/${pollerId}/disable`));
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    expect(disabled.body.data.message).toMatch(/disabled/i);
    expect((await getPoller(customerId)).enabled).toBe(false);
    expect(await pollJobs(pollerId)).toHaveLength(0);

    const uid = await dovecot.deliver(mailbox, PASSWORD, { subject: "After disable", text: "hello" });
    // A window in which nothing must happen (a fixed time on purpose): three poll intervals
    // (POLLER_INTERVAL_S=1) in which the disabled poller must not read the message.
    await sleep(3_000);
    expect((await dovecot.flags(mailbox, PASSWORD)).get(uid)).not.toContain("\\Seen");
    expect((await getPoller(customerId)).total_emails_processed).toBe(0);

    const enabled = await asOperator(apiOf(t).post(`${pollerPath(customerId)}/${pollerId.toUpperCase()}/enable`));
    expect(enabled.status, JSON.stringify(enabled.body)).toBe(200);
    expect((await getPoller(customerId)).enabled).toBe(true);
    await waitFor("the message to be read after enable", async () => ((await dovecot.flags(mailbox, PASSWORD)).get(uid)?.includes("\\Seen") ? true : undefined), 10_000);
  });

  it("a failing mailbox is recorded in last_error without touching another customer's poller", async () => {
    const broken = await tenant();
    const healthy = await tenant();
    dovecot.addUser(healthy.mailbox, PASSWORD);
    await createPoller(broken.customerId, { password: "wrong-password" });
    await createPoller(healthy.customerId);
    const failed = await waitFor("the broken poller's error", async () => {
      const got = await getPoller(broken.customerId);
      return got.last_error ? got : undefined;
    }, 10_000);
    expect(failed.last_error).toMatch(/login refused/i);
    expect(failed.last_error).not.toContain("wrong-password");
    expect(failed.last_error_at).toEqual(expect.any(String));
    expect(failed.last_polled_at).toEqual(expect.any(String));
    expect(failed.last_successful_poll_at).toBeNull();
    const uid = await dovecot.deliver(healthy.mailbox, PASSWORD, { subject: "hi", text: "no pin" });
    await waitFor("the healthy poller to read its message", async () => ((await dovecot.flags(healthy.mailbox, PASSWORD)).get(uid)?.includes("\\Seen") ? true : undefined), 10_000);
    expect((await getPoller(healthy.customerId)).last_error).toBeNull();
  });

  it("deleting the customer stops its poller: the job is removed at its next run and no message is read", async () => {
    const { customerId, mailbox } = await tenant();
    dovecot.addUser(mailbox, PASSWORD);
    const pollerId = (await createPoller(customerId)).body.data.poller_id as string;
    await waitFor("a first poll", async () => ((await getPoller(customerId)).last_successful_poll_at ? true : undefined), 10_000);
    expect((await asOperator(apiOf(t).delete(`${BASE}/customers/${customerId}`))).status).toBe(204);
    const uid = await dovecot.deliver(mailbox, PASSWORD, { subject: "after the customer was deleted", text: "PIN 1234" });
    await waitFor("the poll job to be removed", async () => ((await pollJobs(pollerId)).length === 0 ? true : undefined), 10_000);
    expect((await dovecot.flags(mailbox, PASSWORD)).get(uid)).not.toContain("\\Seen");
  });
});
