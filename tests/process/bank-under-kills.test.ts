/**
 * A bank test under faults, in the spirit of the Jepsen bank test: two API processes and one
 * worker on one PostgreSQL database; client loops send sandbox deposits, transfers, withdrawals
 * (initiated and confirmed with the emailed code), credit charges, payments, authorizations with
 * their captures and voids, and sandbox clock advances that run the credit cycles, alternating
 * between the API processes, and retry with the same `Idempotency-Key` after a cut-off (and a few
 * times after a 2xx). One API process is killed with SIGKILL at ~10 s and the worker at ~20 s, each
 * started again. The recorded history (tests/support/bank-history.ts) is then checked against the
 * rows: what answered 2xx exists once, what was refused does not exist, one key has at most one
 * effect (docs/decisions/requests-and-validation.md "Idempotency"); `npm run ledger:check` is clean
 * (docs/decisions/customers-users-and-wallets.md "The custody ledger"); every credit wallet keeps
 * its invariants (docs/decisions/credit.md "Authorizations"); and every credit notification reaches
 * the receiver at least once, first receipts in `sequence` order per wallet
 * (docs/decisions/notifications.md, docs/outbox.md), which now and then answers 503 or not at all
 * while the workload runs.
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY, createTestDatabase } from "../support/app.js";
import { History, checkCreditWallets, checkEffects, ok, type CallOptions, type Entry, openCreditWallets, rng } from "../support/bank-history.js";
import { goldenProductBody } from "../support/credit-golden.js";
import { BASE, BTC_DESTINATION, Walk, fundedBtcUser, type FundedUser } from "../support/fixtures.js";
import { startService, type ServiceProcess } from "../support/service-process.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { sleep, waitFor } from "../support/wait.js";

const WORKLOAD_MS = 40_000;
const KILL_API_AT_MS = 10_000;
const KILL_WORKER_AT_MS = 20_000;
const CLOCK_EVERY_MS = 4_000;

const ENV = {
  RATE_LIMIT_IP: "off",
  RATE_LIMIT_CREDENTIAL: "off",
  RATE_LIMIT_AUTH_FAILURES: "off",
  RATE_LIMIT_CODES: "off",
  ALLOW_PRIVATE_NETWORK_TARGETS: "true",
  OUTBOX_INTERVAL_S: "1",
  WEBHOOK_RETRY_BASE_S: "1",
  WEBHOOK_TIMEOUT_S: "2",
  JOB_LOCK_LIFETIME_S: "5",
  LOG_LEVEL: "warn",
};

let db: { url: string; drop(): Promise<void> };
let receiver: Receiver;
let client: pg.Client;
/** The API processes by slot; a slot is empty while its process is down. */
const apis: (ServiceProcess | undefined)[] = [];
let worker: ServiceProcess | undefined;
const everyProcess: ServiceProcess[] = [];

let key: string;
let users: FundedUser[];
let creditWallets: string[];
const history = new History();
/** When the receiver stops failing now and then: the workload's end (ms since the epoch). */
let faultsUntil = Number.POSITIVE_INFINITY;
const faults: string[] = [];

/**
 * Starts a service process of `role` on the test database; the worker logs at `info`, since its
 * readiness is the info line "background jobs started" (tests/support/service-process.ts).
 */
const api = (role: "api" | "worker") => startService({ ...ENV, DATABASE_URL: db.url, ROLE: role, ...(role === "worker" ? { LOG_LEVEL: "info" } : {}) }, role === "api" ? "http" : "worker").then((s) => {
  everyProcess.push(s);
  return s;
});

beforeAll(async () => {
  [db, receiver] = await Promise.all([createTestDatabase(), startReceiver()]);
  client = new pg.Client({ connectionString: db.url });
  const [a, b, w] = await Promise.all([api("api"), api("api"), api("worker")]);
  apis.push(a, b);
  worker = w;
  await client.connect();
  await seed(a.base);
}, 120_000);

afterAll(async () => {
  await Promise.all(everyProcess.map((s) => s.stop("SIGKILL")));
  await client?.end();
  await receiver?.close();
  await db?.drop();
});

/** Tenant, four funded btc users, the golden product, the receiver enlisted, the clock, three credit wallets. */
async function seed(base: string): Promise<void> {
  ({ key } = await new Walk(base).tenant("bank-kills"));
  users = [];
  for (let n = 0; n < 4; n++) users.push(await fundedBtcUser(base, key, 1));
  const customerId = "bank-kills";
  const product = await request(base).post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody(customerId));
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  const enlisted = await request(base).put("/v2/notifications").set("x-api-key", key).send({ creditNotificationsURL: receiver.url });
  expect(enlisted.status, JSON.stringify(enlisted.body)).toBe(200);
  receiver.trust(enlisted.body.data.signingSecret as string);
  // While the workload runs the receiver fails now and then: a 503 one request in 33, no answer at
  // all one in 200 (the sender's 2 s timeout), so deliveries are retried with their webhook-id
  // while the processes die. After it, the receiver answers every request, so the backlog drains in
  // a bounded time however many events the workload wrote: a wallet's events go one at a time, and
  // each fault holds its wallet for a retry (1 s and more).
  let hooks = 0;
  receiver.respond(() => (Date.now() >= faultsUntil ? undefined : ++hooks % 200 === 7 ? "hang" : hooks % 33 === 5 ? { status: 503 } : undefined));
  const clock = await request(base).put("/v2/sandbox/clock").set("x-api-key", key).send({ now: "2026-01-01T00:00:00Z" });
  expect(clock.status, JSON.stringify(clock.body)).toBe(200);
  creditWallets = await openCreditWallets(base, key, users.slice(0, 3));
}


let turn = 0;
/** The base URL of a live API process, alternating between the two; waits while both are down. */
async function base(): Promise<string> {
  for (;;) {
    const live = apis.filter((s): s is ServiceProcess => s !== undefined);
    if (live.length > 0) return live[turn++ % live.length]!.base;
    await sleep(50);
  }
}

const unknown = (e: Entry) => e.outcome === "cut off" || e.outcome === "error" || (typeof e.outcome === "number" && e.outcome >= 500);

/**
 * Sends a keyed request; after a cut-off, a refused connection or a 5xx it retries with the same
 * key and body (up to 3 more times), and after a 2xx it repeats once with probability `repeat`.
 * @returns the last entry.
 */
async function keyed(op: string, method: string, path: string, options: CallOptions, random: () => number, repeat = 0.1): Promise<Entry> {
  let entry = await history.call(op, await base(), method, path, options);
  for (let n = 0; n < 3 && unknown(entry); n++) {
    await sleep(200);
    entry = await history.call(op, await base(), method, path, { ...options, retry: true });
  }
  if (ok(entry.outcome) && options.key !== undefined && random() < repeat) {
    const again = await history.call(op, await base(), method, path, { ...options, retry: true });
    if (ok(again.outcome)) entry = again;
  }
  return entry;
}

const data = (e: Entry) => (e.response as { data: Record<string, unknown> }).data;

/** Deposits, transfers and withdrawals (initiate, read the code, confirm) until `until`. */
async function platformLoop(loop: number, until: number): Promise<void> {
  const random = rng(1000 + loop);
  const headers = { "x-api-key": key };
  for (let n = 0; Date.now() < until; n++) {
    const r = random();
    const from = users[Math.floor(random() * users.length)]!;
    if (r < 0.2) {
      const body = { wallet_id: from.walletId, network: "networks/bitcoin", currency: "btc", amount: 0.01 };
      await history.call("deposit", await base(), "POST", `${BASE}/sandbox/deposits`, { headers, body });
    } else if (r < 0.65) {
      const to = users.filter((u) => u !== from)[Math.floor(random() * (users.length - 1))]!;
      const body = { from_wallet_id: from.walletId, to_wallet_id: to.walletId, currency: "btc", amount: Number((0.0001 * (1 + Math.floor(random() * 9))).toFixed(4)) };
      await keyed("transfer", "POST", `${BASE}/transfers`, { headers, body, key: `tr-${loop}-${n}` }, random);
    } else {
      await withdrawal(from, `wd-${loop}-${n}`, headers, random);
    }
  }
}

/** Initiates a withdrawal, reads its code from the sandbox outbox and confirms it. */
async function withdrawal(user: FundedUser, idempotencyKey: string, headers: Record<string, string>, random: () => number): Promise<void> {
  const path = `${BASE}/users/${user.userId}/accounts/crypto/withdrawals`;
  const body = { currency: "btc", amount: 0.0002, address: BTC_DESTINATION };
  const started = await keyed("withdraw", "POST", path, { headers, body, key: idempotencyKey }, random);
  if (!ok(started.outcome)) return;
  const id = data(started).id as string;
  let code: string | undefined;
  for (let n = 0; n < 5 && code === undefined; n++) {
    const mail = await history.call("read-mail", await base(), "GET", `${BASE}/sandbox/mail?to=${encodeURIComponent(user.email)}`, { headers });
    const found = ok(mail.outcome) ? ((mail.response as { data: { text: string }[] }).data.find((m) => m.text.includes(id))) : undefined;
    code = found?.text.replaceAll(id, "").match(/(?<![0-9A-Za-z.])\d{6}(?![0-9A-Za-z.])/)?.[0];
    if (code === undefined) await sleep(200);
  }
  if (code === undefined) return;
  const confirmed = await history.call("confirm", await base(), "POST", `${path}/${id}/confirm`, { headers, body: { code } });
  if (unknown(confirmed)) await history.call("confirm", await base(), "POST", `${path}/${id}/confirm`, { headers, body: { code }, retry: true });
}

/** Charges, payments, authorizations with captures and voids on the credit wallets until `until`. */
async function creditLoop(loop: number, until: number): Promise<void> {
  const random = rng(2000 + loop);
  const headers = { "x-api-key": key };
  for (let n = 0; Date.now() < until; n++) {
    const r = random();
    const wallet = creditWallets[Math.floor(random() * creditWallets.length)]!;
    const path = `/v2/wallet/credits/${wallet}`;
    const amount = 100 * (1 + Math.floor(random() * 20));
    if (r < 0.35) {
      await keyed("charge", "POST", `${path}/charges`, { headers, body: { amount, description: `bank ${loop}-${n}` }, key: `ch-${loop}-${n}` }, random);
    } else if (r < 0.6) {
      await keyed("payment", "POST", `${path}/payments`, { headers, body: { amount }, key: `pay-${loop}-${n}` }, random);
    } else {
      const auth = await keyed("authorize", "POST", `${path}/authorizations`, { headers, body: { amount, merchant: { name: "Bank test shop" } }, key: `au-${loop}-${n}` }, random);
      if (!ok(auth.outcome) || data(auth).status !== "approved") continue;
      const id = data(auth).authorizationId as string;
      const next = random();
      if (next < 0.1) continue; // left open: the clock expires it
      const [op, body] = next < 0.6 ? ["capture", random() < 0.5 ? { amount: Math.max(100, amount - 100) } : {}] as const : ["void", undefined] as const;
      const closed = await history.call(op, await base(), "POST", `${path}/authorizations/${id}/${op}`, { headers, body });
      if (unknown(closed)) await history.call(op, await base(), "POST", `${path}/authorizations/${id}/${op}`, { headers, body, retry: true });
    }
  }
}

/** A sandbox clock advance of one day every {@link CLOCK_EVERY_MS} until `until` (never retried: each advances). */
async function clockLoop(until: number): Promise<void> {
  while (Date.now() + CLOCK_EVERY_MS < until) {
    await sleep(CLOCK_EVERY_MS);
    await history.call("advance", await base(), "POST", "/v2/sandbox/clock/advance", { headers: { "x-api-key": key }, body: { days: 1 } });
  }
}

/** SIGKILLs API slot 0 at {@link KILL_API_AT_MS} and the worker at {@link KILL_WORKER_AT_MS}, starting each again at once. */
async function faultLoop(t0: number): Promise<void> {
  await sleep(Math.max(0, t0 + KILL_API_AT_MS - Date.now()));
  const victim = apis[0]!;
  apis[0] = undefined;
  await victim.stop("SIGKILL");
  faults.push(`${new Date().toISOString()} SIGKILL api ${victim.base} (pid ${victim.child.pid})`);
  const replacement = await api("api");
  apis[0] = replacement;
  faults.push(`${new Date().toISOString()} api restarted at ${replacement.base}`);
  await sleep(Math.max(0, t0 + KILL_WORKER_AT_MS - Date.now()));
  const w = worker!;
  await w.stop("SIGKILL");
  faults.push(`${new Date().toISOString()} SIGKILL worker (pid ${w.child.pid})`);
  worker = await api("worker");
  faults.push(`${new Date().toISOString()} worker restarted`);
}

/** Runs `npm run ledger:check`'s script on the test database. */
function ledgerCheck(): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "scripts/ledger-check.ts"],
      { cwd: resolve(import.meta.dirname, "../.."), env: { ...process.env, DATABASE_URL: db.url, SECRETS_KEY: TEST_SECRETS_KEY, LOG_LEVEL: "silent" } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

interface Notification { walletId: string; sequence: number }

describe("the bank under SIGKILL of an API process and of the worker", () => {
  it("keeps every answered effect exactly once, one effect per key, a clean ledger, the credit invariants and every notification", { timeout: 170_000 }, async () => {
    const t0 = Date.now();
    const until = t0 + WORKLOAD_MS;
    faultsUntil = until;
    await Promise.all([
      platformLoop(0, until), platformLoop(1, until), platformLoop(2, until),
      creditLoop(0, until), creditLoop(1, until), creditLoop(2, until),
      clockLoop(until), faultLoop(t0),
    ]);
    const evidence = join(tmpdir(), `bank-under-kills-${t0}.json`);
    writeFileSync(evidence, JSON.stringify({ faults, entries: history.entries }, null, 1));
    console.log(`bank-under-kills: ${history.entries.length} requests in ${Date.now() - t0} ms; history ${evidence}\n${faults.join("\n")}\n${JSON.stringify(history.summary(), null, 1)}`);
    // the faults happened and the workload went on around them
    expect(faults).toHaveLength(4);
    for (const op of ["deposit", "transfer", "withdraw", "confirm", "charge", "payment", "authorize", "advance"]) {
      expect(history.of(op).filter((e) => ok(e.outcome)).length, `${op} answered 2xx at least once`).toBeGreaterThan(0);
    }

    expect(await checkEffects(client, history)).toEqual([]);
    // a 2xx confirm completed its withdrawal; a 2xx capture or void closed its authorization so
    const closings = [
      ...history.of("confirm").filter((e) => ok(e.outcome)).map((e) => ({ e, sql: `select status from withdrawal where id::text = $1`, id: e.path.split("/").at(-2)!, want: "COMPLETED" })),
      ...history.of("capture").filter((e) => ok(e.outcome)).map((e) => ({ e, sql: `select status from credit_authorization where authorization_id::text = $1`, id: e.path.split("/").at(-2)!, want: "captured" })),
      ...history.of("void").filter((e) => ok(e.outcome)).map((e) => ({ e, sql: `select status from credit_authorization where authorization_id::text = $1`, id: e.path.split("/").at(-2)!, want: "voided" })),
    ];
    const wrongStatus: string[] = [];
    for (const c of closings) {
      const status = (await client.query<{ status: string }>(c.sql, [c.id])).rows[0]?.status;
      if (status !== c.want) wrongStatus.push(`${status} ≠ ${c.want}: ${History.line(c.e)}`);
    }
    expect(wrongStatus).toEqual([]);

    const ledger = await ledgerCheck();
    expect(ledger.code, ledger.output).toBe(0);
    expect(ledger.output).toContain("The ledger is consistent.");

    expect(await checkCreditWallets(client)).toEqual([]);

    // every credit_event row reaches the receiver (bounded wait for the worker's rounds)
    const events = (await client.query<{ wallet_id: string; sequence: string }>(`select wallet_id, sequence from credit_event order by wallet_id, sequence`)).rows;
    expect(events.length).toBeGreaterThan(0);
    const missing = () => {
      const got = new Set(receiver.received.map((h) => JSON.parse(h.body) as Notification).map((b) => `${b.walletId}/${b.sequence}`));
      return events.filter((e) => !got.has(`${e.wallet_id}/${e.sequence}`));
    };
    const drainFrom = Date.now();
    const pendingAtEnd = missing().length;
    await waitFor(`${events.length} credit notifications at the receiver`, () => (missing().length === 0 ? true : undefined), 60_000)
      .catch((error: Error) => expect.fail(`${error.message}; missing ${JSON.stringify(missing().slice(0, 20))}`));
    // first receipts (duplicates by webhook-id removed) arrive in sequence order per wallet
    const seen = new Set<string>();
    const firsts = new Map<string, number[]>();
    for (const h of receiver.received) {
      const id = String(h.headers["webhook-id"]);
      if (seen.has(id)) continue;
      seen.add(id);
      const b = JSON.parse(h.body) as Notification;
      (firsts.get(b.walletId) ?? firsts.set(b.walletId, []).get(b.walletId)!).push(b.sequence);
    }
    for (const [walletId, sequences] of firsts) {
      const outOfOrder = sequences.filter((s, n) => n > 0 && s <= sequences[n - 1]!);
      expect(outOfOrder, `first receipts of wallet ${walletId}: ${sequences.join(",")}`).toEqual([]);
    }
    console.log(`bank-under-kills: ${events.length} credit events, ${pendingAtEnd} not yet received after the checks, all received ${Date.now() - drainFrom} ms later; ${receiver.received.length} receipts (${seen.size} webhook-ids); done in ${Date.now() - t0} ms`);
  });
});
