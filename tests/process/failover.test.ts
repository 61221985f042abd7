/**
 * Failover of the three-node PostgreSQL cluster (docs/operations.md "Failover"): Patroni with
 * synchronous_mode_strict behind HAProxy (tests/support/ha-cluster.ts, the templates of ops/ha/),
 * two API processes and one worker on DATABASE_URL and DATABASE_SESSION_URL through HAProxy, and a
 * mixed workload with `Idempotency-Key`s (sandbox deposits, transfers, withdrawals initiated and
 * confirmed, credit charges, payments, authorizations with captures and voids) retried with the
 * same key after a 503 or no answer, as docs/decisions/requests-and-validation.md tells a client.
 *
 * Two faults, one `it` each, on the same cluster:
 * - kill: the leader's Patroni and its PostgreSQL are SIGKILLed; once the synchronous standby is
 *   promoted and a write went through, the new leader is SIGKILLed too, which leaves one node: no
 *   write may then answer 2xx (strict synchronous mode makes its COMMIT wait); then the nodes come
 *   back (the first one with pg_rewind).
 * - freeze: the leader's Patroni and PostgreSQL are SIGSTOPped (a hung machine), then SIGCONTed
 *   once a standby was promoted; the former leader rejoins as a replica.
 *
 * Checked each time: no 500 (every 5xx is 503 `SERVICE_UNAVAILABLE` with `Retry-After`); no answer
 * later than DATABASE_WAIT_S + {@link MARGIN_MS}; no 2xx write while one node only was up; every
 * process serves again without a restart and the worker's jobs resume; every answered effect
 * exists once and one key has at most one effect (tests/support/bank-history.ts); `npm run
 * ledger:check` is clean; the credit wallets keep their invariants (docs/decisions/credit.md);
 * every credit notification reaches the receiver, first receipts in `sequence` order per wallet
 * (docs/decisions/notifications.md). The switch times and outcome counts are printed and written
 * to a JSON file in the temporary folder.
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY } from "../support/app.js";
import { History, checkCreditWallets, checkEffects, ok, type CallOptions, type Entry, openCreditWallets, rng } from "../support/bank-history.js";
import { goldenProductBody } from "../support/credit-golden.js";
import { BASE, BTC_DESTINATION, Walk, fundedBtcUser, type FundedUser } from "../support/fixtures.js";
import { HaCluster, type HaNode } from "../support/ha-cluster.js";
import { startService, type ServiceProcess } from "../support/service-process.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { sleep, waitFor } from "../support/wait.js";

/** DATABASE_WAIT_S of the service processes (shorter than the default 10, for a quicker run). */
const WAIT_S = 5;
/** What an answer may take past DATABASE_WAIT_S (the request's own work, a loaded 2-core machine), ms. */
const MARGIN_MS = 3_000;
/** 2xx writes the workload makes before a fault, and after the recovery (a count, not a time: a busy machine cannot starve the check). */
const STEADY_WRITES = 30;
/** How long a promotion may take (the contract: about 30 s), ms. */
const PROMOTION_BOUND_MS = 30_000;
const DATABASE = "custody";

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
  DATABASE_WAIT_S: String(WAIT_S),
  LOG_LEVEL: "warn",
};

/** The operations that write; the rest (reading the sandbox mail) only read. */
const WRITES = new Set(["deposit", "transfer", "withdraw", "confirm", "charge", "payment", "authorize", "capture", "void"]);

let cluster: HaCluster;
let receiver: Receiver;
const apis: ServiceProcess[] = [];
let worker: ServiceProcess;
let key: string;
let users: FundedUser[];
let creditWallets: string[];
/** When the seed was done: the workload's deposits come after it (ms since the epoch). */
let seededAt: number;
/** Every variant's figures, printed at the end. */
const report: Record<string, unknown> = {};

beforeAll(async () => {
  [cluster, receiver] = await Promise.all([HaCluster.start(), startReceiver()]);
  const admin = new pg.Client({ connectionString: cluster.url() });
  admin.on("error", () => {});
  try {
    await admin.connect();
    await admin.query(`create database ${DATABASE}`);
  } finally {
    await admin.end().catch(() => {});
  }
  const env = { ...ENV, DATABASE_URL: cluster.url(DATABASE), DATABASE_SESSION_URL: cluster.url(DATABASE) };
  const [a, b, w] = await Promise.all([
    startService({ ...env, ROLE: "api" }, "http"),
    startService({ ...env, ROLE: "api" }, "http"),
    startService({ ...env, ROLE: "worker", LOG_LEVEL: "info" }, "worker"),
  ]);
  apis.push(a, b);
  worker = w;
  await seed(a.base);
  seededAt = Date.now();
}, 180_000);

afterAll(async () => {
  await Promise.all([...apis, worker].filter(Boolean).map((s) => s.stop("SIGKILL")));
  await receiver?.close();
  await cluster?.stop();
  const file = join(tmpdir(), `failover-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(report, null, 1));
  console.log(`failover figures (${file}):\n${JSON.stringify(report, null, 1)}`);
});

/** Tenant, four funded btc users, the golden credit product, the receiver enlisted, three credit wallets. */
async function seed(base: string): Promise<void> {
  ({ key } = await new Walk(base).tenant("failover"));
  users = [];
  for (let n = 0; n < 4; n++) users.push(await fundedBtcUser(base, key, 1));
  const product = await request(base).post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody("failover"));
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  const enlisted = await request(base).put("/v2/notifications").set("x-api-key", key).send({ creditNotificationsURL: receiver.url });
  expect(enlisted.status, JSON.stringify(enlisted.body)).toBe(200);
  receiver.trust(enlisted.body.data.signingSecret as string);
  const clock = await request(base).put("/v2/sandbox/clock").set("x-api-key", key).send({ now: "2026-01-01T00:00:00Z" });
  expect(clock.status, JSON.stringify(clock.body)).toBe(200);
  creditWallets = await openCreditWallets(base, key, users.slice(0, 3));
}


const unknown = (e: Entry) => e.outcome === "cut off" || e.outcome === "error" || (typeof e.outcome === "number" && e.outcome >= 500);
const data = (e: Entry) => (e.response as { data: Record<string, unknown> }).data;

/** One workload: its history, the loops' stop flag, and the API processes taken in turn. */
class Workload {
  readonly history = new History();
  running = true;
  private turn = 0;
  private loops: Promise<void>[] = [];

  constructor(private readonly name: string) {}

  private base(): string {
    return apis[this.turn++ % apis.length]!.base;
  }

  /** Sends one request with a bound well past DATABASE_WAIT_S, so that a late answer is measured rather than cut. */
  private call(op: string, method: string, path: string, options: CallOptions): Promise<Entry> {
    return this.history.call(op, this.base(), method, path, { timeoutMs: 20_000, ...options });
  }

  /**
   * Sends a keyed request; after no answer or a 5xx it waits Retry-After (2 s) and sends it again
   * with the same key and body, up to 5 more times; after a 2xx it repeats once with probability
   * `repeat`. @returns the last entry.
   */
  private async keyed(op: string, method: string, path: string, options: CallOptions, random: () => number, repeat = 0.1): Promise<Entry> {
    let entry = await this.call(op, method, path, options);
    for (let n = 0; n < 5 && unknown(entry) && this.running; n++) {
      await sleep(2_000);
      entry = await this.call(op, method, path, { ...options, retry: true });
    }
    if (ok(entry.outcome) && random() < repeat) {
      const again = await this.call(op, method, path, { ...options, retry: true });
      if (ok(again.outcome)) entry = again;
    }
    return entry;
  }

  /** Deposits, transfers and withdrawals (initiate, read the code, confirm), each keyed. */
  private async platformLoop(loop: number): Promise<void> {
    const random = rng(1000 + loop);
    const headers = { "x-api-key": key };
    for (let n = 0; this.running; n++) {
      const r = random();
      const from = users[Math.floor(random() * users.length)]!;
      if (r < 0.25) {
        const body = { wallet_id: from.walletId, network: "networks/bitcoin", currency: "btc", amount: 0.01 };
        await this.keyed("deposit", "POST", `${BASE}/sandbox/deposits`, { headers, body, key: `${this.name}-dep-${loop}-${n}` }, random);
      } else if (r < 0.65) {
        const to = users.filter((u) => u !== from)[Math.floor(random() * (users.length - 1))]!;
        const body = { from_wallet_id: from.walletId, to_wallet_id: to.walletId, currency: "btc", amount: Number((0.0001 * (1 + Math.floor(random() * 9))).toFixed(4)) };
        await this.keyed("transfer", "POST", `${BASE}/transfers`, { headers, body, key: `${this.name}-tr-${loop}-${n}` }, random);
      } else {
        await this.withdrawal(from, `${this.name}-wd-${loop}-${n}`, headers, random);
      }
    }
  }

  private async withdrawal(user: FundedUser, idempotencyKey: string, headers: Record<string, string>, random: () => number): Promise<void> {
    const path = `${BASE}/users/${user.userId}/accounts/crypto/withdrawals`;
    const body = { currency: "btc", amount: 0.0002, address: BTC_DESTINATION };
    const started = await this.keyed("withdraw", "POST", path, { headers, body, key: idempotencyKey }, random);
    if (!ok(started.outcome)) return;
    const id = data(started).id as string;
    let code: string | undefined;
    for (let n = 0; n < 8 && code === undefined && this.running; n++) {
      const mail = await this.call("read-mail", "GET", `${BASE}/sandbox/mail?to=${encodeURIComponent(user.email)}`, { headers });
      const found = ok(mail.outcome) ? ((mail.response as { data: { text: string }[] }).data.find((m) => m.text.includes(id))) : undefined;
      code = found?.text.replaceAll(id, "").match(/(?<![0-9A-Za-z.])\d{6}(?![0-9A-Za-z.])/)?.[0];
      if (code === undefined) await sleep(500);
    }
    if (code === undefined) return;
    let confirmed = await this.call("confirm", "POST", `${path}/${id}/confirm`, { headers, body: { code } });
    for (let n = 0; n < 3 && unknown(confirmed) && this.running; n++) {
      await sleep(2_000);
      confirmed = await this.call("confirm", "POST", `${path}/${id}/confirm`, { headers, body: { code }, retry: true });
    }
  }

  /** Charges, payments, authorizations with captures and voids on the credit wallets. */
  private async creditLoop(loop: number): Promise<void> {
    const random = rng(2000 + loop);
    const headers = { "x-api-key": key };
    for (let n = 0; this.running; n++) {
      const r = random();
      const wallet = creditWallets[Math.floor(random() * creditWallets.length)]!;
      const path = `/v2/wallet/credits/${wallet}`;
      const amount = 100 * (1 + Math.floor(random() * 20));
      const k = `${this.name}-${loop}-${n}`;
      if (r < 0.35) {
        await this.keyed("charge", "POST", `${path}/charges`, { headers, body: { amount, description: `failover ${k}` }, key: `ch-${k}` }, random);
      } else if (r < 0.6) {
        await this.keyed("payment", "POST", `${path}/payments`, { headers, body: { amount }, key: `pay-${k}` }, random);
      } else {
        const auth = await this.keyed("authorize", "POST", `${path}/authorizations`, { headers, body: { amount, merchant: { name: "Failover shop" } }, key: `au-${k}` }, random);
        if (!ok(auth.outcome) || data(auth).status !== "approved") continue;
        const id = data(auth).authorizationId as string;
        const [op, body] = random() < 0.5 ? ["capture", {}] as const : ["void", undefined] as const;
        let closed = await this.call(op, "POST", `${path}/authorizations/${id}/${op}`, { headers, body });
        for (let m = 0; m < 3 && unknown(closed) && this.running; m++) {
          await sleep(2_000);
          closed = await this.call(op, "POST", `${path}/authorizations/${id}/${op}`, { headers, body, retry: true });
        }
      }
    }
  }

  start(): void {
    this.loops = [0, 1, 2].map((n) => this.platformLoop(n)).concat([0, 1].map((n) => this.creditLoop(n)));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Waits for {@link STEADY_WRITES} 2xx writes started after `since`. */
  async steady(since: number): Promise<void> {
    await waitFor(`${STEADY_WRITES} 2xx writes`, () => (this.history.entries.filter((x) => WRITES.has(x.op) && x.startedAt > since && ok(x.outcome)).length >= STEADY_WRITES ? true : undefined), 60_000);
  }

  /** Waits for a 2xx write that started after `since` (ms since the epoch) and @returns when it was answered. */
  firstWriteOk(since: number, timeoutMs: number): Promise<number> {
    return waitFor(`a 2xx write started after ${new Date(since).toISOString()}`, () => {
      const e = this.history.entries.filter((x) => WRITES.has(x.op) && x.startedAt > since && ok(x.outcome)).sort((p, q) => p.endedAt - q.endedAt)[0];
      return e?.endedAt;
    }, timeoutMs);
  }

  /** Counts of outcomes: 2xx, 503, other 4xx, and unknown (no answer within the client's bound). */
  counts(): Record<string, number> {
    const out = { ok: 0, "503": 0, "4xx": 0, other5xx: 0, unknown: 0 };
    for (const { outcome } of this.history.entries) {
      if (typeof outcome !== "number") out.unknown++;
      else if (outcome >= 200 && outcome < 300) out.ok++;
      else if (outcome === 503) out["503"]++;
      else if (outcome >= 500) out.other5xx++;
      else out["4xx"]++;
    }
    return out;
  }
}

/** Runs `npm run ledger:check`'s script on the cluster's database (through HAProxy). */
function ledgerCheck(): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "scripts/ledger-check.ts"],
      { cwd: resolve(import.meta.dirname, "../.."), env: { ...process.env, DATABASE_URL: cluster.url(DATABASE), SECRETS_KEY: TEST_SECRETS_KEY, LOG_LEVEL: "silent" } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

interface Notification { walletId: string; sequence: number }

/**
 * After a recovery: each API process answers a keyed write 2xx within 30 s (the same process, no
 * restart), and the worker's jobs run again: a charge made now reaches the receiver as a
 * notification within 30 s.
 */
async function everyProcessServes(tag: string): Promise<void> {
  const headers = { "x-api-key": key, "content-type": "application/json" };
  for (const [n, s] of apis.entries()) {
    await waitFor(`API process ${n} to answer a write 2xx`, async () => {
      const res = await fetch(`${s.base}${BASE}/sandbox/deposits`, {
        method: "POST", headers: { ...headers, "idempotency-key": `${tag}-probe-${n}` },
        body: JSON.stringify({ wallet_id: users[0]!.walletId, network: "networks/bitcoin", currency: "btc", amount: 0.001 }),
        signal: AbortSignal.timeout(15_000),
      }).catch(() => undefined);
      return res?.status === 201 ? true : undefined;
    }, 30_000);
  }
  const wallet = creditWallets[0]!;
  // retried with the same key until it answers 201 (one charge whatever the attempts)
  await waitFor("the probe charge to answer 201", async () => {
    const charged = await fetch(`${apis[0]!.base}/v2/wallet/credits/${wallet}/charges`, {
      method: "POST", headers: { ...headers, "idempotency-key": `${tag}-probe-charge` }, body: JSON.stringify({ amount: 100, description: `${tag} probe` }),
      signal: AbortSignal.timeout(15_000),
    }).catch(() => undefined);
    return charged?.status === 201 ? true : undefined;
  }, 30_000);
  const sequence = await waitFor("the probe charge's event", async () => {
    const client = new pg.Client({ connectionString: cluster.url(DATABASE) });
    try {
      await client.connect();
      const { rows } = await client.query<{ s: string }>("select max(sequence)::text as s from credit_event where wallet_id = $1", [wallet]);
      return rows[0]?.s ?? undefined;
    } finally {
      await client.end().catch(() => {});
    }
  }, 10_000);
  await waitFor(`the worker to deliver notification ${wallet}/${sequence}`, () => (
    receiver.received.some((h) => {
      const b = JSON.parse(h.body) as Notification;
      return b.walletId === wallet && b.sequence === Number(sequence);
    }) ? true : undefined), 30_000);
}

/** The checks every variant ends with; `oneNode` is the window in which one node only was up. */
async function checkHistory(w: Workload, oneNode?: { from: number; to: number }): Promise<void> {
  const entries = w.history.entries;
  for (const op of ["deposit", "transfer", "withdraw", "charge", "payment"]) {
    expect(w.history.of(op).filter((e) => ok(e.outcome)).length, `${op} answered 2xx at least once`).toBeGreaterThan(0);
  }
  // no 500: every 5xx is 503 SERVICE_UNAVAILABLE with Retry-After
  const bad5xx = entries.filter((e) => typeof e.outcome === "number" && e.outcome >= 500 && e.outcome !== 503);
  expect(bad5xx.map(History.line), "5xx other than 503").toEqual([]);
  const bad503 = entries.filter((e) => e.outcome === 503 && JSON.stringify(e.response).includes("SERVICE_UNAVAILABLE") === false);
  expect(bad503.map(History.line), "503 without SERVICE_UNAVAILABLE").toEqual([]);
  // no answer later than DATABASE_WAIT_S + margin, and none missing
  const late = entries.filter((e) => e.endedAt - e.startedAt > WAIT_S * 1000 + MARGIN_MS || e.outcome === "cut off" || e.outcome === "error");
  expect(late.map((e) => `${e.endedAt - e.startedAt} ms: ${History.line(e)}`), `answers later than ${WAIT_S} s + ${MARGIN_MS} ms, or none`).toEqual([]);
  if (oneNode) {
    const alone = entries.filter((e) => WRITES.has(e.op) && ok(e.outcome) && e.startedAt > oneNode.from && e.endedAt < oneNode.to);
    expect(alone.map(History.line), "2xx writes while one node only was up").toEqual([]);
  }
}

/**
 * What both cases report besides their switch times: the outcome counts (overall and per
 * operation), the longest answer, the workload's and the case's durations (s, from `t0`), the
 * credit events and how long their notifications took to drain, and the cluster's events from
 * index `eventsFrom` on.
 */
function caseFigures(w: Workload, state: { drainMs: number; events: number }, t0: number, workloadEnd: number, eventsFrom: number): Record<string, unknown> {
  return {
    outcomes: w.counts(),
    byOperation: w.history.summary(),
    "longest answer ms": Math.max(...w.history.entries.map((e) => e.endedAt - e.startedAt)),
    "workload s": seconds(workloadEnd - t0),
    "credit events": state.events,
    "notifications drained after the checks ms": state.drainMs,
    "test s": seconds(Date.now() - t0),
    events: cluster.events.slice(eventsFrom).map((e) => `${seconds(e.at - t0)} s ${e.what}`),
  };
}

/** The checks on the rows, the ledger, the credit wallets and the notifications, after the workload. */
async function checkState(w: Workload): Promise<{ drainMs: number; events: number }> {
  const client = new pg.Client({ connectionString: cluster.url(DATABASE) });
  await client.connect();
  try {
    expect(await checkEffects(client, w.history)).toEqual([]);
    // one sandbox deposit per key: the key's result is the deposit's order_id, booked once, and
    // every deposit of the workload is some key's result (docs/idempotency.md)
    const twice = (await client.query("select order_id, count(*)::int as n from wallet_transaction where action = 'deposit' group by 1 having count(*) > 1")).rows;
    expect(twice, "sandbox deposits booked twice for one order").toEqual([]);
    const keyless = (await client.query(
      `select t.id, t.order_id from wallet_transaction t where t.action = 'deposit' and t.created_at > $1
         and not exists (select 1 from idempotency_key k where k.scope = 'sandbox_deposit' and k.result_id = t.order_id::text)`,
      [new Date(seededAt)],
    )).rows;
    expect(keyless, "sandbox deposits that are no key's result").toEqual([]);
    const closings = [
      ...w.history.of("confirm").filter((e) => ok(e.outcome)).map((e) => ({ e, sql: "select status from withdrawal where id::text = $1", want: "COMPLETED" })),
      ...w.history.of("capture").filter((e) => ok(e.outcome)).map((e) => ({ e, sql: "select status from credit_authorization where authorization_id::text = $1", want: "captured" })),
      ...w.history.of("void").filter((e) => ok(e.outcome)).map((e) => ({ e, sql: "select status from credit_authorization where authorization_id::text = $1", want: "voided" })),
    ];
    const wrong: string[] = [];
    for (const c of closings) {
      const status = (await client.query<{ status: string }>(c.sql, [c.e.path.split("/").at(-2)!])).rows[0]?.status;
      if (status !== c.want) wrong.push(`${status} ≠ ${c.want}: ${History.line(c.e)}`);
    }
    expect(wrong).toEqual([]);
    expect(await checkCreditWallets(client)).toEqual([]);
    const ledger = await ledgerCheck();
    expect(ledger.code, ledger.output).toBe(0);
    expect(ledger.output).toContain("The ledger is consistent.");

    const events = (await client.query<{ wallet_id: string; sequence: string }>("select wallet_id, sequence from credit_event order by wallet_id, sequence")).rows;
    const missing = () => {
      const got = new Set(receiver.received.map((h) => JSON.parse(h.body) as Notification).map((b) => `${b.walletId}/${b.sequence}`));
      return events.filter((e) => !got.has(`${e.wallet_id}/${e.sequence}`));
    };
    const drainFrom = Date.now();
    await waitFor(`${events.length} credit notifications at the receiver`, () => (missing().length === 0 ? true : undefined), 60_000)
      .catch((error: Error) => expect.fail(`${error.message}; missing ${JSON.stringify(missing().slice(0, 20))}`));
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
      expect(sequences.filter((s, n) => n > 0 && s <= sequences[n - 1]!), `first receipts of wallet ${walletId}`).toEqual([]);
    }
    return { drainMs: Date.now() - drainFrom, events: events.length };
  } finally {
    await client.end();
  }
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

describe("failover of the three-node PostgreSQL cluster behind HAProxy", () => {
  it("SIGKILL of the leader, then of the promoted one: 503 and never 500, no 2xx write on one node, nothing acknowledged lost", { timeout: 240_000 }, async () => {
    const t0 = Date.now();
    const w = new Workload("kill");
    w.start();
    await w.steady(t0);
    const first = await cluster.waitForLeader(5_000);
    const killAt = Date.now();
    await cluster.kill(first);
    const second = await cluster.waitForLeader(PROMOTION_BOUND_MS, [first.name]);
    const promotedAt = Date.now();
    const firstOkAt = await w.firstWriteOk(killAt, 45_000);
    // once Patroni names the third node the new leader's synchronous standby (only such a node may
    // be promoted), kill the new leader too, which leaves that one node
    await cluster.waitForHealthy(PROMOTION_BOUND_MS, 2);
    const syncAt = Date.now();
    const killSecondAt = Date.now();
    await cluster.kill(second);
    const third = await cluster.waitForLeader(PROMOTION_BOUND_MS, [first.name, second.name]);
    const thirdPromotedAt = Date.now();
    // writes go on being tried against the lone node for more than DATABASE_WAIT_S
    await sleep((WAIT_S + 3) * 1000);
    const restartAt = Date.now();
    cluster.restartNode(first);
    const recoveredOkAt = await w.firstWriteOk(restartAt, 60_000);
    cluster.restartNode(second);
    await cluster.waitForHealthy(60_000, 3);
    const healthyAt = Date.now();
    await everyProcessServes("kill");
    await w.steady(Date.now());
    await w.stop();
    const workloadEnd = Date.now();

    await checkHistory(w, { from: killSecondAt + 500, to: restartAt });
    // the lone node did get write attempts, and refused them (503), while reads could go on
    expect(w.history.entries.filter((e) => WRITES.has(e.op) && e.startedAt > killSecondAt + 500 && e.endedAt < restartAt).length).toBeGreaterThan(0);
    const state = await checkState(w);
    report.kill = {
      leaders: [first.name, second.name, third.name],
      "kill→promotion s": seconds(promotedAt - killAt),
      "kill→first 2xx write s": seconds(firstOkAt - killAt),
      "kill→synchronous standby named s": seconds(syncAt - killAt),
      "second kill→promotion of the lone node s": seconds(thirdPromotedAt - killSecondAt),
      "restart of a node→first 2xx write s": seconds(recoveredOkAt - restartAt),
      "restarts→three nodes healthy s": seconds(healthyAt - restartAt),
      ...caseFigures(w, state, t0, workloadEnd, 0),
    };
    console.log(`failover (kill): ${JSON.stringify(report.kill)}`);
    expect(promotedAt - killAt).toBeLessThan(PROMOTION_BOUND_MS);
  });

  it("SIGSTOP of the leader (a hung node): a standby takes over, the former leader rejoins after SIGCONT, nothing acknowledged lost", { timeout: 180_000 }, async () => {
    const t0 = Date.now();
    const eventsFrom = cluster.events.length;
    await cluster.waitForHealthy(60_000, 3);
    const w = new Workload("freeze");
    w.start();
    await w.steady(t0);
    const frozen: HaNode = await cluster.waitForLeader(5_000);
    const freezeAt = Date.now();
    cluster.freeze(frozen);
    const next = await cluster.waitForLeader(PROMOTION_BOUND_MS, [frozen.name]);
    const promotedAt = Date.now();
    const firstOkAt = await w.firstWriteOk(freezeAt, 45_000);
    cluster.thaw(frozen);
    const thawAt = Date.now();
    await cluster.waitForHealthy(60_000, 3);
    const healthyAt = Date.now();
    await everyProcessServes("freeze");
    await w.steady(Date.now());
    await w.stop();
    const workloadEnd = Date.now();

    await checkHistory(w);
    const state = await checkState(w);
    report.freeze = {
      leaders: [frozen.name, next.name],
      "freeze→promotion s": seconds(promotedAt - freezeAt),
      "freeze→first 2xx write s": seconds(firstOkAt - freezeAt),
      "thaw→three nodes healthy s": seconds(healthyAt - thawAt),
      ...caseFigures(w, state, t0, workloadEnd, eventsFrom),
    };
    console.log(`failover (freeze): ${JSON.stringify(report.freeze)}`);
    expect(promotedAt - freezeAt).toBeLessThan(PROMOTION_BOUND_MS);
  });
});
