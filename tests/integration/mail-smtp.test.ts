/**
 * Withdrawal-code emails over REAL SMTP (docs/decisions/withdrawals.md; src/modules/mail/service.ts): a local
 * `smtp-server` receives what nodemailer sends, `mailparser` reads it. Covers delivery on initiate
 * and on Resend Code, that the code is not kept at rest after delivery, that the sandbox outbox
 * stays empty while SMTP is configured, what a failed delivery records (and that the withdrawal
 * survives it), a later round delivering once SMTP is back, that concurrent delivery rounds
 * never send one email twice, and that the recurring Agenda job (`mail-delivery`, docs/outbox.md) retries a
 * pending email by itself.
 */
import { type AddressInfo } from "node:net";
import { simpleParser, type AddressObject, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { MAIL_RETRY_POLICY } from "../../src/domain/outbox.js";
import { DELIVERED_TEXT, type MailService } from "../../src/modules/mail/service.js";
import { OutboxEmail } from "../../src/modules/mail/entities.js";
import { freePort } from "../../src/db/embedded.js";
import { apiOf, startTestApp, type TestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError } from "../support/fixtures.js";
import { waitFor } from "../support/wait.js";

/** A valid bitcoin testnet destination. */
const DESTINATION = "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl";
const MAIL_FROM_ADDRESS = "withdrawals@custody.test";
const MAIL_FROM = `Custody Test <${MAIL_FROM_ADDRESS}>`;
const CODE_TTL_S = 600;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// ---------------------------------------------------------------------------------------------
// A local SMTP server that keeps what it receives.

/** One message as the SMTP server received it. */
interface Received {
  envelopeFrom: string | undefined;
  envelopeTo: string[];
  mail: ParsedMail;
}

/** A running local SMTP server and its inbox. */
interface Inbox {
  port: number;
  url: string;
  messages: Received[];
  /** Delay of the final 250 reply to each message (makes delivery rounds overlap). */
  replyDelayMs: number;
  close(): Promise<void>;
}

/** Starts a plain-text SMTP server on 127.0.0.1 (`port` 0: an ephemeral one). */
async function startInbox(port = 0): Promise<Inbox> {
  const messages: Received[] = [];
  const inbox: Inbox = { port: 0, url: "", messages, replyDelayMs: 0, close: async () => {} };
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          messages.push({
            envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
            envelopeTo: session.envelope.rcptTo.map((r) => r.address),
            mail,
          });
          setTimeout(() => callback(), inbox.replyDelayMs);
        })
        .catch((error: unknown) => callback(error as Error));
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  inbox.port = (server.server.address() as AddressInfo).port;
  inbox.url = `smtp://127.0.0.1:${inbox.port}`;
  inbox.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return inbox;
}

/**
 * A TCP port that nothing listens on, which the SMTP server re-binds later: {@link freePort} keeps it
 * outside the kernel's ephemeral range, so no client connection takes it in between.
 */
const closedPort = freePort;

/** Messages of `inbox` whose subject names `withdrawalId`. */
const messagesFor = (inbox: Inbox, withdrawalId: string): Received[] =>
  inbox.messages.filter((m) => (m.mail.subject ?? "").includes(withdrawalId));

/** Waits until `inbox` holds `count` messages about `withdrawalId` and returns them. */
const waitForMessages = (inbox: Inbox, withdrawalId: string, count: number): Promise<Received[]> =>
  waitFor(`${count} email(s) about withdrawal ${withdrawalId}`, () => {
    const found = messagesFor(inbox, withdrawalId);
    return found.length >= count ? found : undefined;
  });

/** The 6-digit code of a code email. */
function codeOf(m: Received): string {
  const match = /\bcode\b\D*?(\d{6})\b/i.exec(m.mail.text ?? "");
  expect(match, `no 6-digit code in:\n${m.mail.text ?? ""}`).not.toBeNull();
  return match![1]!;
}

const addresses = (field: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(field) ? field : field ? [field] : []).flatMap((a) => a.value.map((v) => (v.address ?? "").toLowerCase()));

/**
 * Records every delivery round a MailService starts (including those `kick()` starts), so a test
 * can wait for the rounds to end instead of sleeping.
 */
function trackRounds(mail: MailService): Promise<number>[] {
  const rounds: Promise<number>[] = [];
  const original = mail.deliverPending.bind(mail);
  vi.spyOn(mail, "deliverPending").mockImplementation((limit?: number) => {
    const round = original(limit);
    rounds.push(round);
    return round;
  });
  return rounds;
}

/** The outbox rows about a withdrawal, oldest first. */
async function outboxOf(app: TestApp, withdrawalId: string): Promise<OutboxEmail[]> {
  return app.orm.em.fork().find(OutboxEmail, { reference: `withdrawal:${withdrawalId}` }, { orderBy: { createdAt: "asc", id: "asc" } });
}

// ---------------------------------------------------------------------------------------------
// A user with a funded BTC wallet.

interface Scene {
  key: string;
  userId: string;
  email: string;
  walletId: string;
}

let customerSeq = 0;
let phoneSeq = 0;

async function fundedScene(app: TestApp, prefix: string, btc = 1): Promise<Scene> {
  const walk = new Walk(app.express);
  const { key } = await walk.tenant(`mail-${prefix}-${++customerSeq}`);
  const user = await walk.user(key, { phone_number: `20255${String(++phoneSeq * 13).padStart(5, "0")}` });
  const userId = user.user_id as string;
  const email = user.email as string;
  const activated = await apiOf(app).post(`${BASE}/users/${userId}/activate`).set("x-api-key", key);
  expect(activated.status, JSON.stringify(activated.body)).toBe(200);
  const wallet = await apiOf(app)
    .post(`${BASE}/users/${userId}/wallets`)
    .set("x-api-key", key)
    .send({ name: `BTC ${prefix}`, networks: [{ name: "networks/bitcoin", currency: "btc" }] });
  expect(wallet.status, JSON.stringify(wallet.body)).toBe(201);
  const walletId = wallet.body.data.wallet_id as string;
  const deposit = await apiOf(app)
    .post(`${BASE}/sandbox/deposits`)
    .set("x-api-key", key)
    .send({ wallet_id: walletId, network: "networks/bitcoin", currency: "btc", amount: btc });
  expect(deposit.status, JSON.stringify(deposit.body)).toBe(201);
  return { key, userId, email, walletId };
}

const withdrawalsPath = (s: Scene) => `${BASE}/users/${s.userId}/accounts/crypto/withdrawals`;

async function initiate(app: TestApp, s: Scene, amount = 0.001): Promise<string> {
  const res = await apiOf(app).post(withdrawalsPath(s)).set("x-api-key", s.key).send({ currency: "btc", amount, address: DESTINATION });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.data.withdraw.status).toBe("PENDING");
  return res.body.data.id as string;
}

const confirm = (app: TestApp, s: Scene, withdrawalId: string, code: string) =>
  apiOf(app).post(`${withdrawalsPath(s)}/${withdrawalId}/confirm`).set("x-api-key", s.key).send({ code });

const resend = (app: TestApp, s: Scene, withdrawalId: string) =>
  apiOf(app).post(`${withdrawalsPath(s)}/${withdrawalId}/verification/codes`).set("x-api-key", s.key);

async function btcBalance(app: TestApp, s: Scene): Promise<{ balance: string; available: string; held: string }> {
  const res = await apiOf(app).get(`${BASE}/wallets/${s.walletId}/balance`).set("x-api-key", s.key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const item = (res.body.data.balance as { currency: string; balance: string; available: string; held: string }[]).find((b) => b.currency === "btc");
  expect(item).toBeDefined();
  return item!;
}

// ---------------------------------------------------------------------------------------------

describe("withdrawal code emails with SMTP configured", () => {
  let inbox: Inbox;
  let t: TestApp;

  beforeAll(async () => {
    inbox = await startInbox();
    // The tests drive the delivery rounds themselves: the recurring Agenda round is kept out of their way.
    t = await startTestApp({ SMTP_URL: inbox.url, MAIL_FROM, WITHDRAWAL_CODE_TTL_S: String(CODE_TTL_S), OUTBOX_INTERVAL_S: "3600" });
  });
  afterAll(async () => {
    await t?.dispose();
    await inbox?.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    inbox.replyDelayMs = 0;
  });

  it("initiate emails the user one code (from MAIL_FROM) naming the withdrawal and its expiry; the code confirms it", async () => {
    expect(t.services.mail.smtpEnabled).toBe(true);
    const s = await fundedScene(t, "deliver");
    const before = Date.now();
    const id = await initiate(t, s);
    const after = Date.now();
    expect(id).toMatch(UUID);

    const [message, ...others] = await waitForMessages(inbox, id, 1);
    expect(others).toHaveLength(0);
    const { mail } = message!;
    // Envelope and headers.
    expect(message!.envelopeFrom).toBe(MAIL_FROM_ADDRESS);
    expect(message!.envelopeTo).toEqual([s.email.toLowerCase()]);
    expect(addresses(mail.from)).toEqual([MAIL_FROM_ADDRESS]);
    expect(mail.from?.value[0]?.name).toBe("Custody Test");
    expect(addresses(mail.to)).toEqual([s.email.toLowerCase()]);
    expect(mail.subject).toContain(id);
    expect(mail.subject).toMatch(/withdrawal/i);
    // Plain text: id, expiry, code.
    const text = mail.text ?? "";
    expect(mail.html).toBeFalsy();
    expect(text).toContain(id);
    expect(text).toContain(DESTINATION);
    const expiry = /\b(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)\b/.exec(text);
    expect(expiry, text).not.toBeNull();
    const expiresAt = Date.parse(expiry![1]!);
    expect(expiresAt).toBeGreaterThanOrEqual(before + CODE_TTL_S * 1000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(after + CODE_TTL_S * 1000 + 1000);
    const code = codeOf(message!);
    expect(code).toMatch(/^\d{6}$/);

    const res = await confirm(t, s, id, code);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ id, status: "COMPLETED" });
    // Still exactly one email about it.
    expect(messagesFor(inbox, id)).toHaveLength(1);
  });

  it("keeps the sandbox outbox empty and drops the code from the outbox row once delivered", async () => {
    const s = await fundedScene(t, "at-rest");
    const id = await initiate(t, s);
    const [message] = await waitForMessages(inbox, id, 1);
    const code = codeOf(message!);

    // The row is marked sent in the delivering transaction, which commits right after the 250 reply.
    const row = await waitFor("the outbox row to be marked sent", async () => {
      const rows = await outboxOf(t, id);
      return rows.length === 1 && rows[0]!.status === "sent" ? rows[0] : undefined;
    });
    expect(row.to.toLowerCase()).toBe(s.email.toLowerCase());
    expect(row.text).toBe(DELIVERED_TEXT);
    expect(row.text).not.toContain(code);
    expect(row.attempts).toBe(0);
    expect(row.lastError).toBeNull();
    expect(row.sentAt).toBeInstanceOf(Date);
    // Nothing anywhere in the outbox table still holds the code.
    const leaked = await t.orm.em.fork().execute<{ n: string }[]>(
      `select count(*)::text as n from outbox_email where text like ? or subject like ?`,
      [`%${code}%`, `%${code}%`],
    );
    expect(leaked[0]?.n).toBe("0");

    for (const query of [{}, { to: s.email }]) {
      const mailbox = await apiOf(t).get(`${BASE}/sandbox/mail`).query(query).set("x-api-key", s.key);
      expect(mailbox.status, JSON.stringify(mailbox.body)).toBe(200);
      expect(mailbox.body.data).toEqual([]);
    }
  });

  it("Resend Code emails a second, different code: the old one answers 400, the new one confirms", async () => {
    const s = await fundedScene(t, "resend");
    const id = await initiate(t, s);
    const [first] = await waitForMessages(inbox, id, 1);
    const oldCode = codeOf(first!);

    const resent = await resend(t, s, id);
    expect(resent.status, JSON.stringify(resent.body)).toBe(200);
    const messages = await waitForMessages(inbox, id, 2);
    expect(messages).toHaveLength(2);
    const second = messages[1]!;
    expect(addresses(second.mail.to)).toEqual([s.email.toLowerCase()]);
    expect(second.mail.subject).toContain(id);
    expect(second.mail.text).toContain(id);
    const newCode = codeOf(second);
    expect(newCode).toMatch(/^\d{6}$/);
    expect(newCode).not.toBe(oldCode);

    expectPlatformError(await confirm(t, s, id, oldCode), 400, "CONFIRMATION_CODE_INVALID");
    const ok = await confirm(t, s, id, newCode);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data).toEqual({ id, status: "COMPLETED" });

    const rows = await waitFor("both outbox rows to be marked sent", async () => {
      const found = await outboxOf(t, id);
      return found.length === 2 && found.every((r) => r.status === "sent") ? found : undefined;
    });
    for (const row of rows) expect(row.text).toBe(DELIVERED_TEXT);
  });

  it("two concurrent deliverPending() rounds send every pending email exactly once", async () => {
    const s = await fundedScene(t, "concurrent");
    // Earlier tests' emails are all delivered: only this test's emails are pending below.
    await waitFor("no pending email from earlier tests", async () => {
      const n = await t.orm.em.fork().count(OutboxEmail, { status: "pending" });
      return n === 0 ? true : undefined;
    });
    // Leave the emails pending: initiate's own kick() would deliver them before the rounds below.
    const kick = vi.spyOn(t.services.mail, "kick").mockImplementation(() => {});
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await initiate(t, s));
    expect(kick).toHaveBeenCalledTimes(6);
    expect(await t.orm.em.fork().count(OutboxEmail, { status: "pending" })).toBe(6);
    const receivedBefore = inbox.messages.length;

    inbox.replyDelayMs = 30; // each send holds its row for a while, so the two rounds overlap
    const [a, b] = await Promise.all([t.services.mail.deliverPending(), t.services.mail.deliverPending()]);
    expect(a + b).toBe(6);
    expect(Math.min(a, b), `both rounds should have sent some (a=${a}, b=${b})`).toBeGreaterThan(0);

    expect(inbox.messages.length - receivedBefore).toBe(6);
    for (const id of ids) expect(messagesFor(inbox, id), `emails about ${id}`).toHaveLength(1);
    const rows = await t.orm.em.fork().find(OutboxEmail, { reference: { $in: ids.map((id) => `withdrawal:${id}`) } });
    expect(rows).toHaveLength(6);
    for (const row of rows) {
      expect(row.status).toBe("sent");
      expect(row.text).toBe(DELIVERED_TEXT);
    }
    // A further round finds nothing to send.
    expect(await t.services.mail.deliverPending()).toBe(0);
    expect(inbox.messages.length - receivedBefore).toBe(6);
  });
});

describe("withdrawal code emails while SMTP is down", () => {
  let port: number;
  let t: TestApp;
  let inbox: Inbox | undefined;
  let s: Scene;
  let id: string;

  beforeAll(async () => {
    port = await closedPort();
    t = await startTestApp({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM, OUTBOX_INTERVAL_S: "3600" });
    s = await fundedScene(t, "down");
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await t?.dispose();
    await inbox?.close();
  });

  it("initiate still answers 201; the failed delivery is recorded and the withdrawal is kept, PENDING and held", async () => {
    const rounds = trackRounds(t.services.mail);
    id = await initiate(t, s, 0.25);
    // initiate's kick() started one round; wait for it to end (it must not throw).
    expect(rounds).toHaveLength(1);
    await Promise.all(rounds);

    const rows = await outboxOf(t, id);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.to.toLowerCase()).toBe(s.email.toLowerCase());
    expect(row.lastError, "last_error of the failed delivery").toMatch(/ECONNREFUSED|connect/i);
    expect(row.attempts).toBeGreaterThanOrEqual(1);
    expect(row.sentAt).toBeNull();
    expect(["pending", "failed"]).toContain(row.status); // which of the two: next test

    // The withdrawal was not rolled back by the mail failure.
    const got = await apiOf(t).get(`${withdrawalsPath(s)}/${id}`).set("x-api-key", s.key);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.data).toMatchObject({ id, status: "PENDING", currency: "btc", amount: 0.25, address: DESTINATION });
    expect(await btcBalance(t, s)).toMatchObject({ balance: "1.00000000", available: "0.75000000", held: "0.25000000" });
    // Nor was the email put in the sandbox outbox instead.
    const mailbox = await apiOf(t).get(`${BASE}/sandbox/mail`).set("x-api-key", s.key);
    expect(mailbox.status).toBe(200);
    expect(mailbox.body.data).toEqual([]);
  });

  it("one round against a dead server does not use up the email's attempts: it stays pending for a later round", async () => {
    expect(id, "the previous test initiated the withdrawal").toMatch(UUID);
    const [row] = await outboxOf(t, id);
    // MailService: "A failure is recorded and retried on a later round, up to MAIL_RETRY_POLICY.maxAttempts".
    expect(row?.status, `after one round: attempts=${row?.attempts} of ${MAIL_RETRY_POLICY.maxAttempts}`).toBe("pending");
    expect(row?.attempts).toBe(1);
    // the retry waits its backoff (15 s after the first failure) instead of hammering a dead server
    const [due] = await t.orm.em.fork().execute<{ wait_s: string }[]>(
      `select extract(epoch from next_attempt_at - now()) as wait_s from outbox_email where reference = ?`,
      [`withdrawal:${id}`],
    );
    expect(Number(due?.wait_s)).toBeGreaterThan(10);
    expect(await t.services.mail.deliverPending()).toBe(0);
  });

  it("a later round delivers the pending email once SMTP is back, and its code confirms the withdrawal", async () => {
    expect(id, "the previous test initiated the withdrawal").toMatch(UUID);
    inbox = await startInbox(port);
    // the backoff has passed (moved here rather than waited for)
    await t.orm.em.fork().execute(`update outbox_email set next_attempt_at = now() where reference = ?`, [`withdrawal:${id}`]);
    const sent = await t.services.mail.deliverPending();
    expect(sent).toBe(1);
    const [message, ...others] = await waitForMessages(inbox, id, 1);
    expect(others).toHaveLength(0);
    expect(addresses(message!.mail.to)).toEqual([s.email.toLowerCase()]);
    const code = codeOf(message!);

    const [row] = await outboxOf(t, id);
    expect(row?.status).toBe("sent");
    expect(row?.text).toBe(DELIVERED_TEXT);

    const ok = await confirm(t, s, id, code);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data).toEqual({ id, status: "COMPLETED" });
    expect(await btcBalance(t, s)).toMatchObject({ balance: "0.75000000", available: "0.75000000", held: "0.00000000" });
  });
});

describe("retries on Agenda: the recurring mail-delivery job", () => {
  let port: number;
  let inbox: Inbox | undefined;
  let t: TestApp;

  beforeAll(async () => {
    port = await closedPort();
    t = await startTestApp({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM, OUTBOX_INTERVAL_S: "1" });
  });
  afterAll(async () => {
    await t?.dispose();
    await inbox?.close();
  });

  it("sends an email that failed once, when its backoff has passed and SMTP is back, with no round started by hand", async () => {
    const s = await fundedScene(t, "agenda");
    const id = await initiate(t, s, 0.01);
    const failed = await waitFor("the first attempt to fail", async () => {
      const [row] = await outboxOf(t, id);
      return row && row.attempts >= 1 ? row : undefined;
    });
    expect(failed.status).toBe("pending");
    inbox = await startInbox(port);
    await t.orm.em.fork().execute(`update outbox_email set next_attempt_at = now() where reference = ?`, [`withdrawal:${id}`]);
    const [message] = await waitForMessages(inbox, id, 1);
    expect(addresses(message!.mail.to)).toEqual([s.email.toLowerCase()]);
    const [row] = await waitFor("the row to be marked sent", async () => {
      const rows = await outboxOf(t, id);
      return rows[0]?.status === "sent" ? rows : undefined;
    });
    expect(row!.attempts).toBe(1);
    expect(row!.text).toBe(DELIVERED_TEXT);
    const ok = await confirm(t, s, id, codeOf(message!));
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });
});
