/**
 * The benchmark's "hostile neighbour" rows (docs/performance.md "Hostile neighbours"; docs/security.md): what one
 * client or tenant doing something expensive or slow costs everybody else, each figure printed next
 * to the same figure measured without it ("quiet") in the same run, and its target.
 *
 * The victim is another client: a tenant's owner key reading at a modest, fixed rate (open loop,
 * {@link READ_RATE} requests a second; latency from each request's send to the end of its answer)
 * from another loopback address ({@link READER_ADDRESS}), so that the per-address connection bound
 * of the attackers (from 127.0.0.1) does not apply to it.
 *
 * 1. Anonymous 1 MiB bodies: {@link FLOOD_SENDERS} senders each POSTing, one after the other, a
 *    JSON body of 250 000 `1.0` values (`{"z":[1.0,…]}`, 1 000 007 bytes, under `BODY_LIMIT_BYTES`)
 *    without credentials to `POST /v2/wallet/credits/{uuid}/charges`, while the reader runs
 *    `GET /v2/wallet/credits` (3 seeded wallets). Printed: the reader's p50/p99 with and without the
 *    senders, and the service's CPU time per anonymous request (process CPU of /proc/<pid>/stat
 *    during the flood, less what the reader alone used in the quiet window of the same length,
 *    divided by the anonymous requests answered). Targets: p99 < 100 ms, CPU < 20 ms a request.
 * 2. Slow bodies: {@link SLOW_SOCKETS} raw sockets each sending the head of a POST announcing
 *    `Content-Length: 1048570`, then 1 048 000 bytes of it, then nothing. Three variants: with the
 *    tenant's owner key, without a key, and with the key spread over five loopback addresses (60
 *    sockets each, under `MAX_CONNECTIONS_PER_ADDRESS`: what 300 accepted bodies cost). Printed: the
 *    service's VmRSS before, the highest of samples every 100 ms, and `REQUEST_TIMEOUT_S` + 3 s
 *    after the sockets opened; how the sockets were answered (429 refused at connection, 401, 408)
 *    and how many the service had closed by then. Targets: peak < 350 MB; after within 50 MB of before.
 * 3. Sandbox clock: one tenant with daily-cut credit wallets calling Advance Sandbox Clock with
 *    `{"days": 3660}` over and over (with `to` = the answer's `target` while `complete` is false),
 *    and a dozen callers of `{"days": 1}` at once, while the reader runs `GET /v2/wallet/credits`
 *    and `/readyz`. Printed: the reader's p50/p99 with and without it, and what the clock calls got.
 *    Target: p99 < 250 ms.
 * 4. Stalled bodies from one key: {@link STALLED_SOCKETS} sockets of one tenant's key from one
 *    address, each declaring a 1 MiB body and sending 20 bytes, while the seeded tenant authorizes
 *    cards. Target: its p99 < 100 ms, every authorization 201 (the key holds only its share of the
 *    body budget; docs/security.md "Bodies, connections and time").
 * 5. Wrong keys from the partner's address: {@link WRONG_KEYS} wrong owner keys from the address the
 *    partner reads from with its working key. Target: every read 200, p99 < 100 ms
 *    (docs/security.md "Failed authentications").
 *
 * The setup goes through the API: both tenants' credit notification URLs, the victim's wallets, a
 * second tenant (operator session, customer, owner credential, a user), its daily-cut product
 * (master key), its sandbox clock, wallets and charges. The service must run with
 * `ALLOW_PRIVATE_NETWORK_TARGETS=true` (the notification URL is on loopback).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { Agent, request, type IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import { goldenProductBody } from "../../tests/support/credit-golden.js";
import { userBody } from "../../tests/support/user-body.js";
import { cpuSeconds, statusKb } from "./processes.js";
import { call } from "./seed.js";

/** The reader's address: another client than the attackers (127.0.0.1). */
export const READER_ADDRESS = "127.0.0.2";
/** Requests a second of the reader. */
export const READ_RATE = 40;
/** Concurrent anonymous senders of 1 MiB bodies. */
export const FLOOD_SENDERS = 4;
/** Seconds of each measured window (quiet, then under attack). */
const WINDOW_S = 8;
/** Seconds of the sandbox clock attack. */
const CLOCK_WINDOW_S = 12;
/** Concurrent callers of `{"days": 1}` during the clock attack. */
const SMALL_ADVANCES = 12;
/**
 * `REQUEST_TIMEOUT_S` of the service the hostile rows run on (default 30): shorter, so that the
 * slow-body variants end sooner; `HEADERS_TIMEOUT_S` is set to it too (at most 10, its default).
 */
export const HOSTILE_REQUEST_TIMEOUT_S = 8;
/** Both tenants' credit notification URL (nothing listens there; the service runs with `ALLOW_PRIVATE_NETWORK_TARGETS=true` and `ROLE=api`: no delivery job). */
const NOTIFICATION_URL = "http://127.0.0.1:9/credit";
/** Sockets of each slow-body variant. */
export const SLOW_SOCKETS = 300;
/** The Content-Length the slow bodies announce, and the bytes of it they send. */
const SLOW_ANNOUNCED = 1_048_570;
const SLOW_SENT = 1_048_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mb = (kb: number): number => kb / 1024;
const fmt = (n: number, digits = 0): string => (Number.isNaN(n) ? "—" : n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }));
const percentile = (sorted: number[], p: number): number => (sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number));
const countInto = (into: Record<string, number>, key: string): void => void (into[key] = (into[key] ?? 0) + 1);
const counts = (of: Record<string, number>): string =>
  Object.keys(of).length === 0 ? "none" : Object.entries(of).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}×${fmt(v)}`).join(", ");

/** One row of the hostile-neighbour table. */
export interface HostileRow {
  scenario: string;
  /** The figure with the attack running. */
  attack: string;
  /** The same figure without it, measured just before. */
  quiet: string;
  target: string;
  ok: string;
}

/** What {@link runHostile} measured: rows, footnotes, and what makes the numbers untrustworthy. */
export interface HostileReport {
  rows: HostileRow[];
  notes: string[];
  broken: string[];
}

/** What the hostile rows need of the run. */
export interface HostileOptions {
  /** The service started for these rows: `http://127.0.0.1:<port>`, its pid. */
  base: string;
  pid: number;
  masterKey: string;
  /** The seeded tenant (the victim): its owner key, a user of it and one of its credit product codes. */
  ownerKey: string;
  userId: string;
  productCode: string;
  /** The service's `REQUEST_TIMEOUT_S`. */
  requestTimeoutS: number;
  /** Throws when the service has exited. */
  assertAlive: () => void;
  log: (line: string) => void;
}

/** The reader's latencies (ms) and its answers other than expected. */
interface ReadStats {
  latencies: number[];
  p50: number;
  p99: number;
  max: number;
  unexpected: Record<string, number>;
}

/** One request of the reader: a path, its headers, and for a write its JSON body and the status it expects (default 200). */
interface ReaderCall {
  path: string;
  headers: Record<string, string>;
  body?: string;
  expect?: number;
}

/** One call of the reader from `address`: resolves with its status (0 on a connection error or a 15 s timeout, with the error's code) and latency. */
function oneCall(base: URL, target: ReaderCall, agent: Agent, address: string): Promise<{ status: number; ms: number; error?: string }> {
  return new Promise((done) => {
    const sent = performance.now();
    const headers = target.body === undefined ? target.headers : { ...target.headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(target.body)) };
    const method = target.body === undefined ? "GET" : "POST";
    const req = request({ host: base.hostname, port: base.port, method, path: target.path, headers, agent, localAddress: address }, (res: IncomingMessage) => {
      res.resume();
      res.on("end", () => done({ status: res.statusCode ?? 0, ms: performance.now() - sent }));
      res.on("error", () => done({ status: 0, ms: performance.now() - sent }));
    });
    req.setTimeout(15_000, () => req.destroy(new Error("timeout")));
    req.on("error", (error: NodeJS.ErrnoException) => done({ status: 0, ms: performance.now() - sent, error: error.code ?? error.message }));
    req.end(target.body);
  });
}

/**
 * The reader: `READ_RATE` calls a second from `address`, open loop (one sent every 1000/rate ms whatever the
 * answers), round robin over `paths`, for `seconds`; waits for the last answers.
 */
async function pacedReads(base: string, paths: ReaderCall[], seconds: number, agent: Agent, address = READER_ADDRESS): Promise<ReadStats> {
  const url = new URL(base);
  const latencies: number[] = [];
  const unexpected: Record<string, number> = {};
  const pending: Promise<void>[] = [];
  const interval = 1000 / READ_RATE;
  const start = performance.now();
  for (let i = 0; performance.now() - start < seconds * 1000; i++) {
    const wait = start + i * interval - performance.now();
    if (wait > 0) await sleep(wait);
    const target = paths[i % paths.length] as ReaderCall;
    pending.push(
      oneCall(url, target, agent, address).then(({ status, ms, error }) => {
        latencies.push(ms);
        if (status !== (target.expect ?? 200)) countInto(unexpected, status === 0 ? `error ${error ?? "?"}` : String(status));
      }),
    );
  }
  await Promise.all(pending);
  latencies.sort((a, b) => a - b);
  return { latencies, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? Number.NaN, unexpected };
}

const latencyText = (s: ReadStats): string => `${fmt(s.p50, 1)} / ${fmt(s.p99, 1)}`;

/** The body of the flood: `{"z":[1.0,1.0,…]}` with 250 000 values (1 000 007 bytes). */
function floodBody(): Buffer {
  return Buffer.from(`{"z":[${Array.from({ length: 250_000 }, () => "1.0").join(",")}]}`);
}

/**
 * `senders` loops each POSTing `body` to `path` on `base` without credentials, one request after
 * the other on a keep-alive connection of its own, until `stopped()`; counts the answers by status.
 */
async function flood(base: string, path: string, body: Buffer, senders: number, stopped: () => boolean): Promise<Record<string, number>> {
  const url = new URL(base);
  const agent = new Agent({ keepAlive: true, maxSockets: senders });
  const answers: Record<string, number> = {};
  const once = (): Promise<void> =>
    new Promise((done) => {
      let finished = false;
      const finish = (key: string): void => {
        if (finished) return;
        finished = true;
        countInto(answers, key);
        done();
      };
      const req = request(
        { host: url.hostname, port: url.port, method: "POST", path, agent, headers: { "content-type": "application/json", "content-length": String(body.length) } },
        (res) => {
          res.resume();
          res.on("end", () => finish(String(res.statusCode)));
          res.on("error", () => finish("error"));
        },
      );
      req.setTimeout(15_000, () => req.destroy(new Error("timeout")));
      req.on("error", () => finish("error"));
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: senders }, async () => {
      while (!stopped()) await once();
    }),
  );
  agent.destroy();
  return answers;
}

/** How one slow-body variant went. */
interface SlowResult {
  rssBeforeKb: number;
  rssPeakKb: number;
  rssAfterKb: number;
  /**
   * First status each socket received by the end; `reset` when the service closed it before any
   * answer could be read (a refusal's 429 is lost when the connection's reset arrives first),
   * `none` when it is still open without an answer.
   */
  answers: Record<string, number>;
  /** Sockets the service had closed by the end. */
  closed: number;
  /** Sockets whose whole {@link SLOW_SENT} bytes were handed to the kernel. */
  flushed: number;
  reads: ReadStats;
}

/**
 * One slow-body variant: `SLOW_SOCKETS` sockets from `addresses` (round robin), each sending the
 * head of `POST path` with `headers` and `Content-Length: 1048570`, then 1 048 000 bytes, then
 * nothing; the service's VmRSS sampled every 100 ms until `REQUEST_TIMEOUT_S` + 3 s after they
 * opened, the reader running meanwhile; then every socket is destroyed.
 */
async function slowBodies(options: HostileOptions, path: string, headers: Record<string, string>, addresses: string[], reader: () => Promise<ReadStats>): Promise<SlowResult> {
  const url = new URL(options.base);
  const head = Buffer.from(
    `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${SLOW_ANNOUNCED}\r\n` +
      `${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`,
  );
  const prefix = '{"amount":1,"description":"';
  const body = Buffer.alloc(SLOW_SENT, "a");
  body.write(prefix, 0, "latin1");
  const rssBeforeKb = statusKb(options.pid, "VmRSS");
  let rssPeakKb = rssBeforeKb;
  const sampler = setInterval(() => (rssPeakKb = Math.max(rssPeakKb, statusKb(options.pid, "VmRSS") || 0)), 100);
  const answers: Record<string, number> = {};
  let closed = 0;
  let flushed = 0;
  const sockets: Socket[] = [];
  const opened = performance.now();
  const reading = reader();
  for (let i = 0; i < SLOW_SOCKETS; i++) {
    const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: addresses[i % addresses.length] });
    let status: string | null = null;
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      status ??= /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString("latin1", 0, 16))?.[1] ?? "other";
    });
    // every close before the destroy below is the service's doing (or a failed connection)
    socket.on("close", () => closed++);
    socket.on("connect", () => {
      socket.write(head);
      socket.write(body, () => flushed++);
    });
    (socket as Socket & { answer: () => string }).answer = () => status ?? (socket.destroyed ? "reset" : "none");
    sockets.push(socket);
  }
  await sleep(Math.max(0, opened + (options.requestTimeoutS + 3) * 1000 - performance.now()));
  const rssAfterKb = statusKb(options.pid, "VmRSS");
  clearInterval(sampler);
  for (const socket of sockets) countInto(answers, (socket as Socket & { answer: () => string }).answer());
  const closedByThen = closed;
  for (const socket of sockets) socket.destroy();
  const reads = await reading;
  return { rssBeforeKb, rssPeakKb, rssAfterKb, answers, closed: closedByThen, flushed, reads };
}

/** The sandbox clock calls of the attack: answers by status, how many came back complete, latencies. */
interface ClockStats {
  big: Record<string, number>;
  small: Record<string, number>;
  complete: number;
  incomplete: number;
  bigMs: number[];
  smallMs: number[];
  hasComplete: boolean;
}

/** Runs the five rows on the service of `options` (started for them, with `REQUEST_TIMEOUT_S` = `options.requestTimeoutS`). */
export async function runHostile(options: HostileOptions): Promise<HostileReport> {
  const { base, log } = options;
  const rows: HostileRow[] = [];
  const notes: string[] = [];
  const broken: string[] = [];
  const rssAt: string[] = [`at the start ${fmt(mb(statusKb(options.pid, "VmRSS")))} MB`];
  const owner = { "x-api-key": options.ownerKey };
  const master = { "x-api-key": options.masterKey };
  const readerAgent = new Agent({ keepAlive: true, maxSockets: 16 });

  // The victim tenant: three credit wallets to list.
  log("hostile neighbour rows: seeding a second tenant and credit wallets through the API…");
  // credit wallets need a notification URL (docs/decisions/credit.md "Wallets"): a closed local port
  await call(`${base}/v2`, "PUT", "/notifications", owner, { creditNotificationsURL: NOTIFICATION_URL });
  const victimWallets: string[] = [];
  for (let i = 0; i < 3; i++) {
    const wallet = await call<{ walletId: string }>(`${base}/v2`, "POST", "/wallet/credits", owner, { userId: options.userId, currency: "USD", limit: 100_000 + i, creditProductCode: options.productCode });
    victimWallets.push(wallet.walletId);
  }
  // The clock tenant: customer, owner credential, a user, a daily-cut product, its clock, wallets with a charge each.
  const session = await call<{ token: string }>(`${base}/api/v1`, "POST", "/sessions", { "x-master-api-key": options.masterKey });
  const op = { authorization: `Bearer ${session.token}` };
  const clockCustomer = `bench-clock-${randomBytes(3).toString("hex")}`;
  await call(`${base}/api/v1`, "POST", "/customers", op, { customer_id: clockCustomer, email: `ops@${clockCustomer}.example`, entity_name: "Bench Clock" });
  const clockKey = (await call<{ customer_secret: string }>(`${base}/api/v1`, "POST", `/customers/${clockCustomer}/credentials`, op)).customer_secret;
  const clockOwner = { "x-api-key": clockKey };
  const clockUser = await call<{ user_id: string }>(
    `${base}/api/v1`,
    "POST",
    "/users",
    clockOwner,
    userBody({ last_name: "Clock", email: `clock@${clockCustomer}.example`, phone_number: "2025559900" }, { id_number: "123-45-9900" }),
  );
  await call(`${base}/api/v1`, "POST", `/users/${clockUser.user_id}/activate`, clockOwner);
  await call(`${base}/v2`, "PUT", "/notifications", clockOwner, { creditNotificationsURL: NOTIFICATION_URL });
  await call(`${base}/v2`, "POST", "/credit-products", master, goldenProductBody(clockCustomer, { cutFrequency: "daily" }));
  await call(`${base}/v2`, "PUT", "/sandbox/clock", clockOwner, { now: "2026-01-01T00:00:00Z" });
  const clockWallets = 4;
  for (let i = 0; i < clockWallets; i++) {
    const wallet = await call<{ walletId: string }>(`${base}/v2`, "POST", "/wallet/credits", clockOwner, {
      userId: clockUser.user_id,
      currency: "USD",
      limit: 1_000_000,
      creditProductCode: "001",
    });
    await call(`${base}/v2`, "POST", `/wallet/credits/${wallet.walletId}/charges`, { ...clockOwner, "idempotency-key": `bench-clock-${i}` }, { amount: 50_000, description: "Bench" });
  }
  const listPath = { path: "/v2/wallet/credits", headers: owner };
  // warm the reader's connections and the route
  await pacedReads(base, [listPath], 1, readerAgent);

  // 1. Anonymous 1 MiB bodies
  {
    log("- hostile neighbour: anonymous 1 MiB bodies (quiet window, then the flood)");
    const body = floodBody();
    const cpu0 = cpuSeconds(options.pid);
    const t0 = performance.now();
    const quiet = await pacedReads(base, [listPath], WINDOW_S, readerAgent);
    const quietCpu = cpuSeconds(options.pid) - cpu0;
    const quietS = (performance.now() - t0) / 1000;
    options.assertAlive();
    let stop = false;
    const cpu1 = cpuSeconds(options.pid);
    const t1 = performance.now();
    const flooding = flood(base, `/v2/wallet/credits/${randomUUID()}/charges`, body, FLOOD_SENDERS, () => stop);
    const attacked = await pacedReads(base, [listPath], WINDOW_S, readerAgent);
    stop = true;
    const answers = await flooding;
    const attackCpu = cpuSeconds(options.pid) - cpu1;
    const attackS = (performance.now() - t1) / 1000;
    options.assertAlive();
    rssAt.push(`after the 1 MiB bodies ${fmt(mb(statusKb(options.pid, "VmRSS")))} MB`);
    const answered = Object.entries(answers).filter(([k]) => k !== "error").reduce((sum, [, v]) => sum + v, 0);
    const cpuMs = (1000 * (attackCpu - (quietCpu * attackS) / quietS)) / answered;
    if (Object.keys(quiet.unexpected).length + Object.keys(attacked.unexpected).length > 0) {
      broken.push(`hostile 1 MiB bodies, reader: quiet ${counts(quiet.unexpected)}, attacked ${counts(attacked.unexpected)}`);
    }
    rows.push({
      scenario: `hostile neighbour: anonymous 1 MiB bodies (${FLOOD_SENDERS} senders) — other tenant's GET /v2/wallet/credits p50 / p99 ms`,
      attack: latencyText(attacked),
      quiet: latencyText(quiet),
      target: "p99 < 100 ms",
      ok: attacked.p99 < 100 ? "yes" : "NO",
    });
    rows.push({
      scenario: "hostile neighbour: service CPU per anonymous 1 MiB request",
      attack: `${fmt(cpuMs, 2)} ms`,
      quiet: "—",
      target: "< 20 ms",
      ok: answered === 0 ? "NO (none answered)" : cpuMs < 20 ? "yes" : "NO",
    });
    notes.push(
      `Anonymous 1 MiB bodies: ${FLOOD_SENDERS} senders from 127.0.0.1 posting ${fmt(body.length)} bytes (\`{"z":[1.0,…]}\`, 250 000 values) without credentials to POST /v2/wallet/credits/{uuid}/charges for ${fmt(attackS, 1)} s: ` +
        `${fmt(answered)} answered (${fmt(answered / attackS)}/s; ${counts(answers)}); service CPU ${fmt((100 * attackCpu) / attackS)} % of a core during the flood, ${fmt((100 * quietCpu) / quietS)} % in the quiet window (reader alone); ` +
        `CPU per anonymous request = (flood CPU − quiet CPU scaled to the flood's length) / answered. Reader (another tenant's owner key, from ${READER_ADDRESS}, ${READ_RATE}/s open loop): ` +
        `${quiet.latencies.length} requests quiet (max ${fmt(quiet.max, 1)} ms), ${attacked.latencies.length} under the flood (max ${fmt(attacked.max, 1)} ms).`,
    );
  }

  // 2. Slow bodies
  {
    const path = `/v2/wallet/credits/${randomUUID()}/charges`;
    const variants = [
      { label: "owner key, from 127.0.0.1", headers: { ...owner, "idempotency-key": "bench-slow" }, addresses: ["127.0.0.1"] },
      { label: "no key, from 127.0.0.1", headers: {}, addresses: ["127.0.0.1"] },
      {
        label: "owner key, from 127.0.0.3–127.0.0.7 (60 each: under the per-address bound)",
        headers: { ...owner, "idempotency-key": "bench-slow-spread" },
        addresses: ["127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7"],
      },
    ];
    for (const variant of variants) {
      log(`- hostile neighbour: slow bodies, ${variant.label} (${options.requestTimeoutS + 3} s)`);
      const result = await slowBodies(options, path, variant.headers, variant.addresses, () =>
        pacedReads(base, [listPath], options.requestTimeoutS + 2, readerAgent),
      );
      options.assertAlive();
      const refused = (result.answers["429"] ?? 0) + (result.answers.reset ?? 0);
      const backNear = mb(result.rssAfterKb) <= mb(result.rssBeforeKb) + 50;
      const peakOk = mb(result.rssPeakKb) < 350;
      rows.push({
        scenario: `hostile neighbour: slow bodies, ${SLOW_SOCKETS} sockets, ${variant.label} — service RSS peak / ${options.requestTimeoutS + 3} s after, MB`,
        attack: `${fmt(mb(result.rssPeakKb))} / ${fmt(mb(result.rssAfterKb))}`,
        quiet: `${fmt(mb(result.rssBeforeKb))} before`,
        target: "peak < 350, after ≤ before + 50",
        ok: peakOk && backNear ? "yes" : `NO (${[!peakOk && "peak", !backNear && "not back"].filter(Boolean).join(", ")})`,
      });
      notes.push(
        `Slow bodies, ${variant.label}: ${SLOW_SOCKETS} sockets each sending a POST ${path.replace(/[0-9a-f-]{36}/, "{uuid}")} head with Content-Length ${fmt(SLOW_ANNOUNCED)}, then ${fmt(SLOW_SENT)} bytes, then nothing; ` +
          `${SLOW_SOCKETS - refused} accepted, ${refused} refused at connection (429, or reset before the 429 could be read); ` +
          `first status each socket received by ${options.requestTimeoutS + 3} s after opening: ${counts(result.answers)}; closed by the service by then: ${result.closed}; bodies fully handed to the kernel: ${result.flushed}; ` +
          `reader (${READER_ADDRESS}) meanwhile p50 / p99 ${latencyText(result.reads)} ms${Object.keys(result.reads.unexpected).length > 0 ? `, unexpected ${counts(result.reads.unexpected)}` : ""}.`,
      );
    }
  }

  // 3. Sandbox clock
  {
    log(`- hostile neighbour: sandbox clock (quiet window, then ${CLOCK_WINDOW_S} s of clock calls)`);
    const paths = [listPath, { path: "/readyz", headers: {} }];
    const quiet = await pacedReads(base, paths, WINDOW_S, readerAgent);
    options.assertAlive();
    const clockBefore = await call<{ now: string }>(`${base}/v2`, "GET", "/sandbox/clock", clockOwner);
    const stats: ClockStats = { big: {}, small: {}, complete: 0, incomplete: 0, bigMs: [], smallMs: [], hasComplete: false };
    let stop = false;
    const advance = async (body: unknown): Promise<{ status: number; ms: number; data?: { complete?: boolean; target?: string } }> => {
      const sent = performance.now();
      try {
        const res = await fetch(`${base}/v2/sandbox/clock/advance`, { method: "POST", headers: { ...clockOwner, "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(120_000) });
        const text = await res.text();
        const ms = performance.now() - sent;
        if (res.status !== 200) return { status: res.status, ms };
        return { status: 200, ms, data: (JSON.parse(text) as { data: { complete?: boolean; target?: string } }).data };
      } catch {
        return { status: 0, ms: performance.now() - sent };
      }
    };
    const cpu0 = cpuSeconds(options.pid);
    const t0 = performance.now();
    const bigLoop = (async () => {
      let next: unknown = { days: 3660 };
      while (!stop) {
        const r = await advance(next);
        countInto(stats.big, r.status === 0 ? "error" : String(r.status));
        stats.bigMs.push(r.ms);
        if (r.data && typeof r.data.complete === "boolean") {
          stats.hasComplete = true;
          if (r.data.complete) stats.complete++;
          else stats.incomplete++;
          next = r.data.complete || !r.data.target ? { days: 3660 } : { to: r.data.target };
        } else if (r.status === 429) {
          await sleep(200);
        }
      }
    })();
    const smallLoops = Array.from({ length: SMALL_ADVANCES }, async () => {
      while (!stop) {
        const r = await advance({ days: 1 });
        countInto(stats.small, r.status === 0 ? "error" : String(r.status));
        stats.smallMs.push(r.ms);
        if (r.status === 429) await sleep(200);
      }
    });
    const attacked = await pacedReads(base, paths, CLOCK_WINDOW_S, readerAgent);
    const attackS = (performance.now() - t0) / 1000;
    const attackCpu = cpuSeconds(options.pid) - cpu0;
    stop = true;
    // the calls in flight finish within the service's time budget per call (queued ones after it)
    const drained = await Promise.race([Promise.all([bigLoop, ...smallLoops]).then(() => true), sleep(60_000).then(() => false)]);
    options.assertAlive();
    const clockAfter = await call<{ now: string }>(`${base}/v2`, "GET", "/sandbox/clock", clockOwner);
    const movedDays = (Date.parse(clockAfter.now) - Date.parse(clockBefore.now)) / 86_400_000;
    if (Object.keys(quiet.unexpected).length + Object.keys(attacked.unexpected).length > 0) {
      broken.push(`hostile sandbox clock, reader: quiet ${counts(quiet.unexpected)}, attacked ${counts(attacked.unexpected)}`);
    }
    const unexpectedClock = [...Object.keys(stats.big), ...Object.keys(stats.small)].filter((k) => k !== "200" && k !== "429");
    if (unexpectedClock.length > 0) broken.push(`hostile sandbox clock calls answered ${unexpectedClock.join(", ")} (big: ${counts(stats.big)}; days 1: ${counts(stats.small)})`);
    if (!drained) broken.push("hostile sandbox clock: calls still unanswered 60 s after the window");
    rows.push({
      scenario: "hostile neighbour: sandbox clock (3660-day advances + 12 × 1 day) — other tenant's list + /readyz p50 / p99 ms",
      attack: latencyText(attacked),
      quiet: latencyText(quiet),
      target: "p99 < 250 ms",
      ok: attacked.p99 < 250 ? "yes" : "NO",
    });
    const bigSorted = [...stats.bigMs].sort((a, b) => a - b);
    const smallSorted = [...stats.smallMs].sort((a, b) => a - b);
    notes.push(
      `Sandbox clock: tenant ${clockCustomer} with ${clockWallets} credit wallets on a daily-cut product (a 500.00 charge each), clock set to 2026-01-01; for ${fmt(attackS, 1)} s one caller of Advance Sandbox Clock {"days":3660} ` +
        `(${stats.hasComplete ? 'then {"to": target} while the answer says complete: false' : "the answer has no complete field: calls counted"}) and ${SMALL_ADVANCES} callers of {"days":1}. ` +
        `3660-day calls: ${counts(stats.big)}${stats.hasComplete ? ` (${stats.complete} complete, ${stats.incomplete} stopped early)` : ""}, median ${fmt(percentile(bigSorted, 50))} ms, max ${fmt(bigSorted.at(-1) ?? Number.NaN)} ms; ` +
        `1-day calls: ${counts(stats.small)}, median ${fmt(percentile(smallSorted, 50))} ms, max ${fmt(smallSorted.at(-1) ?? Number.NaN)} ms; the clock moved ${fmt(movedDays)} days (${clockBefore.now} → ${clockAfter.now}). ` +
        `Service CPU ${fmt((100 * attackCpu) / attackS)} % of a core during it. Reader: GET /v2/wallet/credits (owner key of the seeded tenant) and /readyz alternating, ${READ_RATE}/s from ${READER_ADDRESS}: ` +
        `${quiet.latencies.length} quiet (max ${fmt(quiet.max, 1)} ms), ${attacked.latencies.length} during the clock calls (max ${fmt(attacked.max, 1)} ms).`,
    );
  }
  // 4. Stalled bodies from one key, another tenant authorizing cards
  await stalledBodiesOfOneKey(options, { clockKey, victimWallet: victimWallets[0] as string, readerAgent, rows, notes, broken });
  // 5. Wrong keys from the partner's own address
  await wrongKeysFromPartnerAddress(options, { listPath, readerAgent, rows, notes, broken });

  readerAgent.destroy();
  rssAt.push(`at the end ${fmt(mb(statusKb(options.pid, "VmRSS")))} MB (peak VmHWM ${fmt(mb(statusKb(options.pid, "VmHWM")))} MB)`);
  notes.push(`The hostile rows' service's VmRSS: ${rssAt.join(", ")}.`);
  return { rows, notes, broken };
}

/** What the two caller-isolation rows add to the report. */
interface RowSinks {
  readerAgent: Agent;
  rows: HostileRow[];
  notes: string[];
  broken: string[];
}

/** Sockets of the stalled-bodies row: one address's whole connection bound (`MAX_CONNECTIONS_PER_ADDRESS`, 64). */
export const STALLED_SOCKETS = 64;
/** The attacker's address in the stalled-bodies row. */
const STALLED_ADDRESS = "127.0.0.9";

/**
 * Row 4: {@link STALLED_SOCKETS} sockets of one tenant's key (the clock tenant's), from one
 * address, each declaring a 1 MiB charge and sending 20 bytes of it, then nothing; meanwhile the
 * seeded tenant authorizes 1 cent on its credit wallet {@link READ_RATE} times a second from
 * {@link READER_ADDRESS}. Before the per-caller share, those sockets held the whole body budget and
 * the other tenant's authorizations were answered 503. Target: its p99 < 100 ms, every one 201.
 */
async function stalledBodiesOfOneKey(options: HostileOptions, ctx: RowSinks & { clockKey: string; victimWallet: string }): Promise<void> {
  const { base, log } = options;
  const url = new URL(base);
  const authorize: ReaderCall = {
    path: `/v2/wallet/credits/${ctx.victimWallet}/authorizations`,
    headers: { "x-api-key": options.ownerKey },
    body: JSON.stringify({ amount: 1, merchant: { name: "Bench" } }),
    expect: 201,
  };
  log(`- hostile neighbour: ${STALLED_SOCKETS} stalled bodies from one key (quiet window, then the sockets)`);
  const quiet = await pacedReads(base, [authorize], WINDOW_S, ctx.readerAgent);
  options.assertAlive();
  const answers: Record<string, number> = {};
  const sockets: Socket[] = [];
  const head = `POST /v2/wallet/credits/${randomUUID()}/charges HTTP/1.1\r\nHost: ${url.host}\r\nx-api-key: ${ctx.clockKey}\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{"amount":1,"descr`;
  for (let i = 0; i < STALLED_SOCKETS; i++) {
    const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: STALLED_ADDRESS });
    let status: string | null = null;
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => (status ??= /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString("latin1", 0, 16))?.[1] ?? "other"));
    socket.on("connect", () => socket.write(head));
    (socket as Socket & { answer: () => string }).answer = () => status ?? (socket.destroyed ? "reset" : "none");
    sockets.push(socket);
  }
  await sleep(500);
  const attacked = await pacedReads(base, [authorize], WINDOW_S, ctx.readerAgent);
  for (const socket of sockets) countInto(answers, (socket as Socket & { answer: () => string }).answer());
  for (const socket of sockets) socket.destroy();
  options.assertAlive();
  if (Object.keys(quiet.unexpected).length > 0) ctx.broken.push(`hostile stalled bodies, quiet authorizations: ${counts(quiet.unexpected)}`);
  const refusedOthers = Object.keys(attacked.unexpected).length > 0;
  ctx.rows.push({
    scenario: `hostile neighbour: ${STALLED_SOCKETS} stalled 1 MiB bodies from one key — other tenant's card authorization p50 / p99 ms`,
    attack: latencyText(attacked),
    quiet: latencyText(quiet),
    target: "p99 < 100 ms, all 201",
    ok: attacked.p99 < 100 && !refusedOthers ? "yes" : `NO${refusedOthers ? ` (${counts(attacked.unexpected)})` : ""}`,
  });
  ctx.notes.push(
    `Stalled bodies from one key: ${STALLED_SOCKETS} sockets from ${STALLED_ADDRESS} with another tenant's owner key, each a POST charges head declaring Content-Length 1048576 and 20 bytes of body, then nothing; ` +
      `their answers while the sockets were open: ${counts(answers)} (the key's share of MAX_BODY_BYTES_IN_FLIGHT holds 16 bodies; the rest are refused with 429 and closed). ` +
      `Victim: the seeded tenant's owner key authorizing 1 cent on its credit wallet, ${READ_RATE}/s from ${READER_ADDRESS}: ${quiet.latencies.length} quiet, ${attacked.latencies.length} during (max ${fmt(attacked.max, 1)} ms)` +
      `${refusedOthers ? `, answered otherwise than 201: ${counts(attacked.unexpected)}` : ", all 201"}.`,
  );
}

/** The partner's address in the wrong-keys row. */
const PARTNER_ADDRESS = "127.0.0.10";
/** Wrong keys sent from the partner's address. */
export const WRONG_KEYS = 100;

/**
 * Row 5: {@link WRONG_KEYS} requests with wrong owner keys from the partner's own address (as a
 * NAT'd neighbour or a buggy client would send them), while the partner reads with its working key
 * from that address {@link READ_RATE} times a second. Before, the 21st wrong key locked the address
 * out and the working key got 429 for five minutes. Target: every read of the partner 200.
 */
async function wrongKeysFromPartnerAddress(options: HostileOptions, ctx: RowSinks & { listPath: ReaderCall }): Promise<void> {
  const { base, log } = options;
  const url = new URL(base);
  log(`- hostile neighbour: ${WRONG_KEYS} wrong keys from the partner's address (quiet window, then the guesses)`);
  const quiet = await pacedReads(base, [ctx.listPath], WINDOW_S, ctx.readerAgent, PARTNER_ADDRESS);
  options.assertAlive();
  const guesses: Record<string, number> = {};
  const guessAgent = new Agent({ keepAlive: true, maxSockets: 4 });
  const guessing = (async () => {
    for (let i = 0; i < WRONG_KEYS; i++) {
      const { status } = await oneCall(url, { path: "/v2/wallet/credits", headers: { "x-api-key": `sk_wrong-${i}-${randomBytes(16).toString("hex")}` } }, guessAgent, PARTNER_ADDRESS);
      countInto(guesses, String(status));
      await sleep((WINDOW_S * 1000) / WRONG_KEYS / 2);
    }
  })();
  const attacked = await pacedReads(base, [ctx.listPath], WINDOW_S, ctx.readerAgent, PARTNER_ADDRESS);
  await guessing;
  guessAgent.destroy();
  options.assertAlive();
  if (Object.keys(quiet.unexpected).length > 0) ctx.broken.push(`hostile wrong keys, quiet reads: ${counts(quiet.unexpected)}`);
  const refused = Object.keys(attacked.unexpected).length > 0;
  ctx.rows.push({
    scenario: `hostile neighbour: ${WRONG_KEYS} wrong keys from the partner's address — the partner's GET /v2/wallet/credits p50 / p99 ms`,
    attack: latencyText(attacked),
    quiet: latencyText(quiet),
    target: "all 200, p99 < 100 ms",
    ok: !refused && attacked.p99 < 100 ? "yes" : `NO${refused ? ` (${counts(attacked.unexpected)})` : ""}`,
  });
  ctx.notes.push(
    `Wrong keys from the partner's address: ${WRONG_KEYS} requests with random wrong owner keys from ${PARTNER_ADDRESS} over ${WINDOW_S / 2} s (RATE_LIMIT_AUTH_FAILURES=20/300, the default), answered ${counts(guesses)}; ` +
      `the partner's working key from the same address, ${READ_RATE}/s: ${quiet.latencies.length} quiet, ${attacked.latencies.length} during (max ${fmt(attacked.max, 1)} ms)` +
      `${refused ? `, answered otherwise than 200: ${counts(attacked.unexpected)}` : ", all 200"}.`,
  );
}

/** Prints the hostile-neighbour table: scenario | under attack | quiet | target | ok?. */
export function printHostileTable(rows: HostileRow[], print: (line: string) => void): void {
  const header: HostileRow = { scenario: "hostile neighbour", attack: "under attack", quiet: "quiet", target: "target", ok: "ok?" };
  const keys = Object.keys(header) as (keyof HostileRow)[];
  const widths = keys.map((k) => Math.max(...[header, ...rows].map((r) => r[k].length)));
  const line = (r: HostileRow): string => `| ${keys.map((k, i) => (k === "attack" || k === "quiet" ? r[k].padStart(widths[i] as number) : r[k].padEnd(widths[i] as number))).join(" | ")} |`;
  print(line(header));
  print(`|${widths.map((w, i) => (keys[i] === "attack" || keys[i] === "quiet" ? `${"-".repeat(w + 1)}:` : `:${"-".repeat(w + 1)}`)).join("|")}|`);
  for (const r of rows) print(line(r));
}
