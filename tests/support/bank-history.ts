/**
 * The history of a bank test under faults (tests/process/bank-under-kills.test.ts), in the spirit
 * of the Jepsen bank test: every request a client loop sends is recorded with what came back (a
 * status and body, or `cut off` when the connection died after the request was written, or `error`
 * when it never reached a service), and the history is then checked against the database rows:
 * what answered 2xx exists once, what was refused exists not at all, and one `Idempotency-Key`
 * has at most one effect (docs/decisions/requests-and-validation.md "Idempotency").
 */
import type pg from "pg";
import request from "supertest";
import { expect } from "vitest";

/** What one request got: an HTTP status, `cut off` (sent, no answer) or `error` (never sent). */
export type Outcome = number | "cut off" | "error";

/** One recorded request. */
export interface Entry {
  /** The logical operation, e.g. `transfer`, `charge`, `capture`. */
  op: string;
  /** The `Idempotency-Key` sent, if any. */
  key?: string;
  method: string;
  base: string;
  path: string;
  body?: unknown;
  outcome: Outcome;
  /** The parsed JSON body (or text) of the answer; the error message when there was none. */
  response: unknown;
  /** Whether this request repeats an earlier one with the same key (a retry). */
  retry: boolean;
  startedAt: number;
  endedAt: number;
}

/** Options of one request. */
export interface CallOptions {
  headers?: Record<string, string>;
  body?: unknown;
  key?: string;
  retry?: boolean;
  timeoutMs?: number;
}

/** Whether `outcome` is a 2xx status. */
export const ok = (outcome: Outcome): outcome is number => typeof outcome === "number" && outcome >= 200 && outcome < 300;

/** The error codes of a connection that was never made: the request was not sent. */
const NOT_SENT = new Set(["ECONNREFUSED", "EADDRNOTAVAIL", "ENOTFOUND"]);

/** An append-only log of requests and answers. */
export class History {
  readonly entries: Entry[] = [];

  /**
   * Sends one request with fetch (10 s timeout unless told) and records it. Never throws: a
   * refused connection is `error`, any other failure (reset, socket closed, timeout) `cut off`.
   */
  async call(op: string, base: string, method: string, path: string, options: CallOptions = {}): Promise<Entry> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== undefined) headers["Idempotency-Key"] = options.key;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const entry: Entry = {
      op, key: options.key, method, base, path, body: options.body, outcome: "error", response: undefined,
      retry: options.retry ?? false, startedAt: Date.now(), endedAt: 0,
    };
    try {
      const res = await fetch(`${base}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      const text = await res.text();
      entry.outcome = res.status;
      try {
        entry.response = JSON.parse(text);
      } catch {
        entry.response = text;
      }
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      entry.outcome = cause?.code !== undefined && NOT_SENT.has(cause.code) ? "error" : "cut off";
      entry.response = `${(error as Error).message}${cause?.code ? ` (${cause.code})` : ""}`;
    }
    entry.endedAt = Date.now();
    this.entries.push(entry);
    return entry;
  }

  /** The entries of operation `op`. */
  of(op: string): Entry[] {
    return this.entries.filter((e) => e.op === op);
  }

  /** Counts per operation and outcome, e.g. `{ transfer: { "201": 40, "cut off": 2 } }`. */
  summary(): Record<string, Record<string, number>> {
    const out: Record<string, Record<string, number>> = {};
    for (const e of this.entries) {
      const byOutcome = (out[e.op] ??= {});
      const name = String(e.outcome) + (e.retry ? " (retry)" : "");
      byOutcome[name] = (byOutcome[name] ?? 0) + 1;
    }
    return out;
  }

  /** A compact line of an entry, for a failure message. */
  static line(e: Entry): string {
    return `${new Date(e.startedAt).toISOString()} ${e.op} ${e.method} ${e.base}${e.path} key=${e.key ?? "-"} body=${JSON.stringify(e.body)} → ${e.outcome} ${JSON.stringify(e.response).slice(0, 300)}`;
  }
}

/** Where an operation's effect is stored: table, id column, where the id is in a 2xx answer. */
export interface Effect {
  op: string;
  table: string;
  idColumn: string;
  /** The id from a 2xx answer's `data`. */
  idOf(data: Record<string, unknown>): string;
  /** Whether the table has an `idempotency_key` column that holds the key sent. */
  keyed: boolean;
}

/** The operations whose effect is a row, as this test drives them. */
export const EFFECTS: Effect[] = [
  { op: "deposit", table: "wallet_transaction", idColumn: "id", idOf: (d) => String(d.id), keyed: false },
  { op: "transfer", table: "transfer", idColumn: "id", idOf: (d) => String(d.transfer_id), keyed: true },
  { op: "withdraw", table: "withdrawal", idColumn: "id", idOf: (d) => String(d.id), keyed: true },
  { op: "charge", table: "credit_charge", idColumn: "id", idOf: (d) => String(d.id), keyed: true },
  { op: "payment", table: "credit_payment", idColumn: "id", idOf: (d) => String(d.id), keyed: true },
  { op: "authorize", table: "credit_authorization", idColumn: "authorization_id", idOf: (d) => String(d.authorizationId), keyed: true },
];

const dataOf = (e: Entry): Record<string, unknown> => ((e.response as { data?: Record<string, unknown> } | undefined)?.data ?? {});

/**
 * Checks the history of each keyed or row-producing operation against the database; @returns the
 * violations as readable lines (empty when it holds):
 * - every 2xx answer names a row that exists exactly once, holding the key sent;
 * - every 2xx answer to one key names the same row (a repeat returns the first result);
 * - a key has at most one row;
 * - a key whose every attempt was refused (4xx, no cut-off, no 5xx) has no row.
 */
export async function checkEffects(db: pg.Client, history: History): Promise<string[]> {
  const violations: string[] = [];
  for (const effect of EFFECTS) {
    const entries = history.of(effect.op);
    const idsByKey = new Map<string, Set<string>>();
    for (const e of entries.filter((x) => ok(x.outcome))) {
      const id = effect.idOf(dataOf(e));
      const rows = (await db.query<{ n: number; idempotency_key?: string }>(
        `select count(*)::int as n${effect.keyed ? ", min(idempotency_key) as idempotency_key" : ""} from ${effect.table} where ${effect.idColumn}::text = $1`,
        [id],
      )).rows[0]!;
      if (rows.n !== 1) violations.push(`${effect.op}: answered 2xx with id ${id} but ${rows.n} rows in ${effect.table}: ${History.line(e)}`);
      if (effect.keyed && e.key !== undefined && rows.n === 1 && rows.idempotency_key !== e.key) {
        violations.push(`${effect.op}: row ${id} holds key ${rows.idempotency_key}, the request sent ${e.key}: ${History.line(e)}`);
      }
      if (e.key !== undefined) (idsByKey.get(e.key) ?? idsByKey.set(e.key, new Set()).get(e.key)!).add(id);
    }
    for (const [key, ids] of idsByKey) {
      if (ids.size > 1) violations.push(`${effect.op}: key ${key} answered 2xx with different ids ${[...ids].join(", ")}`);
    }
    if (!effect.keyed) continue;
    const keys = [...new Set(entries.map((e) => e.key).filter((k): k is string => k !== undefined))];
    const counts = new Map(
      (await db.query<{ k: string; n: number }>(`select idempotency_key as k, count(*)::int as n from ${effect.table} where idempotency_key = any($1) group by 1`, [keys])).rows.map((r) => [r.k, r.n]),
    );
    for (const key of keys) {
      const attempts = entries.filter((e) => e.key === key);
      const n = counts.get(key) ?? 0;
      if (n > 1) violations.push(`${effect.op}: key ${key} has ${n} rows in ${effect.table}:\n  ${attempts.map(History.line).join("\n  ")}`);
      const refused = attempts.every((e) => typeof e.outcome === "number" && e.outcome >= 400 && e.outcome < 500);
      if (refused && n !== 0) violations.push(`${effect.op}: key ${key} was refused on every attempt but has ${n} rows:\n  ${attempts.map(History.line).join("\n  ")}`);
    }
  }
  return violations;
}

/**
 * The credit invariants of every wallet of the database (docs/decisions/credit.md): the limit
 * bound on available + held + debt net of the overdraft, `amount_held` equal to the sum of its
 * approved authorizations, no negative counter, and events numbered 1..n without a gap (n the
 * wallet's `sequence`). @returns the violations, one line each.
 */
export async function checkCreditWallets(db: pg.Client): Promise<string[]> {
  const violations: string[] = [];
  const wallets = (await db.query<Record<string, string>>(
    `select w.wallet_id, w.credit_limit, w.available_amount, w.amount_held, w.principal_outstanding, w.interest_outstanding, w.sequence,
       (select coalesce(sum(a.amount), 0) from credit_authorization a where a.wallet_id = w.wallet_id and a.status = 'approved') as held_by_rows,
       (select count(*) from credit_event e where e.wallet_id = w.wallet_id) as events,
       (select coalesce(min(e.sequence), 0) from credit_event e where e.wallet_id = w.wallet_id) as min_seq,
       (select coalesce(max(e.sequence), 0) from credit_event e where e.wallet_id = w.wallet_id) as max_seq,
       (select count(distinct e.sequence) from credit_event e where e.wallet_id = w.wallet_id) as distinct_seq
     from credit_wallet w order by w.wallet_id`,
  )).rows;
  for (const w of wallets) {
    const [limit, avail, held, p, i] = [w.credit_limit, w.available_amount, w.amount_held, w.principal_outstanding, w.interest_outstanding].map(Number) as [number, number, number, number, number];
    const overdraft = Math.max(0, p + i + held - limit);
    const row = JSON.stringify(w);
    if (avail + held + p + i - overdraft > limit) violations.push(`wallet ${w.wallet_id}: available + held + debt − overdraft above the limit: ${row}`);
    if (held !== Number(w.held_by_rows)) violations.push(`wallet ${w.wallet_id}: amount_held ≠ sum of approved authorizations: ${row}`);
    if ([limit, avail, held, p, i].some((v) => v < 0)) violations.push(`wallet ${w.wallet_id}: a negative counter: ${row}`);
    const n = Number(w.events);
    const gapless = n === 0 || (Number(w.min_seq) === 1 && Number(w.max_seq) === n && Number(w.distinct_seq) === n);
    if (!gapless || Number(w.sequence) !== n) violations.push(`wallet ${w.wallet_id}: event sequences not 1..${w.sequence}: ${row}`);
  }
  return violations;
}

/** A small deterministic random source per workload loop (mulberry32): numbers in [0, 1) from `seed`. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Opens a USD credit wallet of product `001` (limit 100 000, first cut 2026-01-05) for each of
 * `users` on the service at `base`, with owner key `key`, asserting 201. @returns their ids, in order.
 */
export async function openCreditWallets(base: string, key: string, users: readonly { userId: string }[]): Promise<string[]> {
  const ids: string[] = [];
  for (const u of users) {
    const created = await request(base).post("/v2/wallet/credits").set("x-api-key", key)
      .send({ userId: u.userId, currency: "USD", limit: 100000, firstCutDate: "2026-01-05T00:00:00Z", creditProductCode: "001" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    ids.push(created.body.data.walletId as string);
  }
  return ids;
}
