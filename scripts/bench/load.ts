/**
 * Load of the benchmark, with autocannon's programmatic API on loopback: one run of a fixed request
 * (`runRequests`), of the withdrawal flow (`runWithdrawals`: initiate → read the code from the
 * sandbox outbox → confirm, each connection one pair at a time on a user of its own), or of
 * transfers (`runTransfers`: each connection one transfer at a time within a pair of users of its own). Every
 * response's status is counted; a run reports anything else than the expected status, connection
 * errors and timeouts, so the caller can refuse to trust its numbers. It also reports the CPU the
 * benchmark process (the client), the server and the embedded PostgreSQL used, in % of one core.
 */
import { execFileSync } from "node:child_process";
import autocannon from "autocannon";
import type { ActivitySummary } from "./activity.js";
import { cpuSeconds, processTree } from "./processes.js";
import { TRANSFER_BTC, WITHDRAWAL_ADDRESS, WITHDRAWAL_BTC, type SeededUser, type TransferPair } from "./seed.js";

/** What one run measured. */
export interface RunResult {
  /** Completed requests (or withdrawal pairs) per second. */
  rate: number;
  /** Latency percentiles, ms (of requests, or of whole pairs). */
  p50: number;
  p99: number;
  /** Answers with another status than expected, by status (`"error"` for connection errors and timeouts, `"flow"` for a broken withdrawal flow). */
  unexpected: Record<string, number>;
  /** CPU of the client (this process), of the server process and of the embedded PostgreSQL (NaN when not known), % of one core. */
  clientCpu: number;
  serverCpu: number;
  dbCpu: number;
  /** Withdrawals only: median ms of each call of a pair (initiate, mail, confirm). */
  steps?: { initiate: number; mail: number; confirm: number };
  /** Withdrawals only: PostgreSQL's backends during the run (scripts/bench/activity.ts). */
  activity?: ActivitySummary;
}

/** A server under load: its base URL and its pid (for its CPU time), and the root of the embedded PostgreSQL's process tree if any. */
export interface Target {
  base: string;
  pid: number;
  dbPid?: number | undefined;
}

export const percentile = (sorted: number[], p: number): number => {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};

/** CPU seconds of each process in the tree of `pid`. */
const treeCpu = (pid: number | undefined): Map<number, number> =>
  new Map(pid === undefined ? [] : processTree(pid).map((p) => [p, cpuSeconds(p) || 0] as [number, number]));

/**
 * CPU seconds the tree of `pid` used since `before`: the processes alive now, from their time in
 * `before` (0 when they started since); a process that exited meanwhile is not counted. NaN without `pid`.
 */
const treeCpuSince = (pid: number | undefined, before: Map<number, number>): number => {
  if (pid === undefined) return Number.NaN;
  let used = 0;
  for (const [p, now] of treeCpu(pid)) used += now - (before.get(p) ?? 0);
  return used;
};

/** Runs `load` while measuring the CPU of this process, of the server and of the database's process tree. */
export async function measured<T>(target: Target, load: () => Promise<T>): Promise<{ value: T; clientCpu: number; serverCpu: number; dbCpu: number }> {
  const wall = performance.now();
  const client = process.cpuUsage();
  const server = cpuSeconds(target.pid);
  const db = treeCpu(target.dbPid);
  const value = await load();
  const seconds = (performance.now() - wall) / 1000;
  const used = process.cpuUsage(client);
  return {
    value,
    clientCpu: (100 * (used.user + used.system)) / 1e6 / seconds,
    serverCpu: (100 * (cpuSeconds(target.pid) - server)) / seconds,
    dbCpu: (100 * treeCpuSince(target.dbPid, db)) / seconds,
  };
}

/** Statuses of a finished autocannon run other than `expected`, with errors and timeouts. */
export function unexpectedOf(result: autocannon.Result, expected: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [status, stats] of Object.entries(result.statusCodeStats ?? {})) {
    if (!expected.includes(Number(status)) && (stats.count ?? 0) > 0) out[status] = stats.count ?? 0;
  }
  if (result.errors + result.timeouts > 0) out.error = result.errors + result.timeouts;
  return out;
}

/** A fixed request (`GET path` with `headers`) on `target` for `seconds` with `connections` connections. */
export async function runRequests(
  target: Target,
  path: string,
  headers: Record<string, string>,
  expected: number,
  seconds: number,
  connections: number,
): Promise<RunResult> {
  const { value: result, clientCpu, serverCpu, dbCpu } = await measured(target, () =>
    autocannon({ url: `${target.base}${path}`, headers, connections, duration: seconds, pipelining: 1 }),
  );
  return {
    rate: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    unexpected: unexpectedOf(result, [expected]),
    clientCpu,
    serverCpu,
    dbCpu,
  };
}

/**
 * Items (users, pairs of users) lent to the requests in flight, one request each. A request cut off
 * by a lost connection never gives its item back, so when none is free the longest-held one is
 * taken over (its request is the abandoned one).
 */
export class Leases<T> {
  private readonly held = new Map<T, number>();
  private readonly free: T[];
  constructor(items: readonly T[]) {
    this.free = [...items];
  }
  lease(): T {
    let item = this.free.pop();
    if (item === undefined) {
      const [oldest] = [...this.held.entries()].sort((a, b) => a[1] - b[1]);
      if (!oldest) throw new Error("nothing to lease");
      item = oldest[0];
    }
    this.held.set(item, performance.now());
    return item;
  }
  release(item: T): void {
    if (this.held.delete(item)) this.free.push(item);
  }
}

/** Per-connection state of the withdrawal flow (autocannon resets it at every new pair). */
interface FlowContext {
  user?: SeededUser;
  startedAt?: number;
  /** When the call in flight was sent. */
  sentAt?: number;
  withdrawalId?: string;
  code?: string;
  failed?: boolean;
}

/**
 * The withdrawal flow on `target` with `inFlight` connections, each one pair at a time: POST
 * initiate (user token, a fresh Idempotency-Key, {@link WITHDRAWAL_BTC} BTC) → 201; `GET
 * /api/v1/sandbox/mail?to=<user's email>` (owner key) → 200, the code of this withdrawal read from
 * its email; POST confirm with it → 200. A connection holds one of `users` for its pair (so no two
 * pairs in flight share a user). Rate: confirmed pairs per second; latency: of whole pairs.
 */
export async function runWithdrawals(
  target: Target,
  users: readonly SeededUser[],
  ownerKey: string,
  seconds: number,
  inFlight: number,
): Promise<RunResult> {
  if (users.length < inFlight) throw new Error(`${inFlight} withdrawals in flight need ${inFlight} users, got ${users.length}`);
  const leases = new Leases(users.slice(0, inFlight));
  const lease = (): SeededUser => leases.lease();
  const release = (context: FlowContext): void => {
    if (context.user) leases.release(context.user);
    context.user = undefined;
  };
  const pairMs: number[] = [];
  const stepMs = { initiate: [] as number[], mail: [] as number[], confirm: [] as number[] };
  const flow: Record<string, number> = {};
  const broken = (what: string, context: FlowContext): void => {
    flow[what] = (flow[what] ?? 0) + 1;
    context.failed = true;
    release(context);
  };
  let keys = 0;
  const requests: autocannon.Request[] = [
    {
      method: "POST",
      setupRequest: (req, ctx) => {
        const context = ctx as FlowContext;
        const user = lease();
        context.user = user;
        context.startedAt = performance.now();
        context.sentAt = context.startedAt;
        return {
          ...req,
          method: "POST",
          path: `/api/v1/users/${user.userId}/accounts/crypto/withdrawals`,
          headers: {
            authorization: `Bearer ${user.token}`,
            "content-type": "application/json",
            "idempotency-key": `bench-${process.pid}-${Date.now()}-${++keys}`,
          },
          body: JSON.stringify({ currency: "btc", amount: Number(WITHDRAWAL_BTC), address: WITHDRAWAL_ADDRESS }),
        };
      },
      onResponse: (status, body, ctx) => {
        const context = ctx as FlowContext;
        stepMs.initiate.push(performance.now() - (context.sentAt ?? 0));
        if (status !== 201) return broken(`initiate ${status}`, context);
        context.withdrawalId = (JSON.parse(body) as { data: { id: string } }).data.id;
      },
    },
    {
      method: "GET",
      setupRequest: (req, ctx) => {
        const context = ctx as FlowContext;
        if (context.failed || !context.user) return null as unknown as autocannon.Request;
        context.sentAt = performance.now();
        return { ...req, method: "GET", path: `/api/v1/sandbox/mail?to=${encodeURIComponent(context.user.email)}`, headers: { "x-api-key": ownerKey } };
      },
      onResponse: (status, body, ctx) => {
        const context = ctx as FlowContext;
        stepMs.mail.push(performance.now() - (context.sentAt ?? 0));
        if (status !== 200) return broken(`mail ${status}`, context);
        const at = body.indexOf(`Withdrawal: ${context.withdrawalId ?? "?"}`);
        const code = at < 0 ? null : /Confirmation code: (\d{6})/.exec(body.slice(at, at + 200));
        if (!code?.[1]) return broken("code not found in the outbox", context);
        context.code = code[1];
      },
    },
    {
      method: "POST",
      setupRequest: (req, ctx) => {
        const context = ctx as FlowContext;
        if (context.failed || !context.user || !context.code) return null as unknown as autocannon.Request;
        context.sentAt = performance.now();
        return {
          ...req,
          method: "POST",
          path: `/api/v1/users/${context.user.userId}/accounts/crypto/withdrawals/${context.withdrawalId}/confirm`,
          headers: { authorization: `Bearer ${context.user.token}`, "content-type": "application/json" },
          body: JSON.stringify({ code: context.code }),
        };
      },
      onResponse: (status, _body, ctx) => {
        const context = ctx as FlowContext;
        stepMs.confirm.push(performance.now() - (context.sentAt ?? 0));
        if (status !== 200) return broken(`confirm ${status}`, context);
        pairMs.push(performance.now() - (context.startedAt ?? 0));
        release(context);
      },
    },
  ];
  const { value: result, clientCpu, serverCpu, dbCpu } = await measured(target, () =>
    autocannon({ url: target.base, connections: inFlight, duration: seconds, pipelining: 1, requests }),
  );
  pairMs.sort((a, b) => a - b);
  const unexpected = { ...unexpectedOf(result, [200, 201]), ...(Object.keys(flow).length > 0 && { flow: Object.values(flow).reduce((a, b) => a + b, 0) }) };
  const p50Of = (values: number[]): number => percentile(values.sort((a, b) => a - b), 50);
  const steps = { initiate: p50Of(stepMs.initiate), mail: p50Of(stepMs.mail), confirm: p50Of(stepMs.confirm) };
  return { rate: pairMs.length / result.duration, p50: percentile(pairMs, 50), p99: percentile(pairMs, 99), unexpected, clientCpu, serverCpu, dbCpu, steps };
}

/** Per-request state of a transfer (autocannon resets it at every request). */
interface TransferContext {
  pair?: TransferPair;
  sentAt?: number;
}

/**
 * Create Transfer on `target` with `inFlight` connections, each one request at a time: `POST
 * /api/v1/transfers` with the sender's user token, a fresh Idempotency-Key and {@link TRANSFER_BTC}
 * BTC → 201. A request holds one of the first `inFlight` of `pairs` (so no two requests in flight
 * share a user, a wallet or a ledger row) and sends from the side that received the pair's
 * previous transfer (back and forth: the balances stay near the deposit). Rate: 201s per second;
 * latency: of each request, ms.
 */
export async function runTransfers(target: Target, pairs: readonly TransferPair[], seconds: number, inFlight: number): Promise<RunResult> {
  if (pairs.length < inFlight) throw new Error(`${inFlight} transfers in flight need ${inFlight} pairs of users, got ${pairs.length}`);
  const leases = new Leases(pairs.slice(0, inFlight));
  const reversed = new Set<TransferPair>();
  const doneMs: number[] = [];
  let keys = 0;
  const requests: autocannon.Request[] = [
    {
      method: "POST",
      setupRequest: (req, ctx) => {
        const context = ctx as TransferContext;
        const pair = leases.lease();
        const [from, to] = reversed.has(pair) ? [pair.b, pair.a] : [pair.a, pair.b];
        context.pair = pair;
        context.sentAt = performance.now();
        return {
          ...req,
          method: "POST",
          path: "/api/v1/transfers",
          headers: {
            authorization: `Bearer ${from.token}`,
            "content-type": "application/json",
            "idempotency-key": `bench-transfer-${process.pid}-${Date.now()}-${++keys}`,
          },
          body: JSON.stringify({ from_wallet_id: from.walletId, to_wallet_id: to.walletId, currency: "btc", amount: Number(TRANSFER_BTC) }),
        };
      },
      onResponse: (status, _body, ctx) => {
        const context = ctx as TransferContext;
        if (!context.pair) return;
        if (status === 201) {
          doneMs.push(performance.now() - (context.sentAt ?? 0));
          if (!reversed.delete(context.pair)) reversed.add(context.pair);
        }
        leases.release(context.pair);
        context.pair = undefined;
      },
    },
  ];
  const { value: result, clientCpu, serverCpu, dbCpu } = await measured(target, () =>
    autocannon({ url: target.base, connections: inFlight, duration: seconds, pipelining: 1, requests }),
  );
  doneMs.sort((a, b) => a - b);
  return {
    rate: doneMs.length / result.duration,
    p50: percentile(doneMs, 50),
    p99: percentile(doneMs, 99),
    unexpected: unexpectedOf(result, [201]),
    clientCpu,
    serverCpu,
    dbCpu,
  };
}

/** What one wrk run measured: requests per second, and answers that were not `expected` (non-2xx counted by wrk) or failed. */
export interface WrkResult {
  rate: number;
  unexpected: number;
}

/**
 * A cross-check with wrk (C, one thread: one core for the client), when it is installed: `GET path`
 * on `target` for `seconds`, with `headers` (a credential) on every request. `expected` 2xx: wrk's
 * non-2xx and socket errors are unexpected; any other `expected` (the 401): every answer must be non-2xx.
 * @returns undefined when wrk is not installed (scripts/bench/wrk.ts says how to install it).
 */
export function runWrk(target: Target, path: string, expected: number, seconds: number, connections: number, headers: Record<string, string> = {}): WrkResult | undefined {
  let out: string;
  const headerArgs = Object.entries(headers).flatMap(([name, value]) => ["-H", `${name}: ${value}`]);
  try {
    out = execFileSync("wrk", ["-t1", `-c${connections}`, `-d${Math.max(1, Math.floor(seconds))}s`, ...headerArgs, `${target.base}${path}`], { encoding: "utf8" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const rate = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  return { rate, unexpected: errors + (expected < 300 ? non2xx : total - non2xx) };
}
