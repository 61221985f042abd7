/**
 * What the statement captures share (scripts/bench/capture-sql.ts, capture-authorizations.ts,
 * capture-trading.ts; docs/performance.md "HTTP: `npm run bench`"): the real app built in this
 * process (`ROLE=api`, rate limits off, the bench's transfer caps) on a throw-away embedded
 * PostgreSQL, a log of every statement any `pg` client of this process sends while a call is shown,
 * and the comparison of the service's statements with a baseline's once literals, bound parameters
 * and numbers are masked.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";
import { loadConfig } from "../../src/config.js";
import { createApp, type App } from "../../src/app.js";
import { BENCH_TRANSFER_CAPS } from "./processes.js";

/** The master key and the secrets key of the captured app. */
export const CAPTURE_MASTER = "bench-master-key-0123456789abcdefghijklmnop";
export const CAPTURE_SECRETS_KEY = "bench-secrets-key-0123456789abcdefghijklmnop";

let log: string[] | undefined;
const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
  if (log) {
    const [first, second] = args;
    const text = typeof first === "string" ? first : (first as { text?: string }).text;
    const values = Array.isArray(second) ? second : (first as { values?: unknown[] }).values;
    log.push(`${String(text).replace(/\s+/g, " ")}${values && values.length > 0 ? `   -- ${JSON.stringify(values)}` : ""}`);
  }
  return original.apply(this, args);
};

/**
 * Sends `init` to `base` + `path`, waits `settleMs` for what the call starts after its answer (a
 * job's kick), prints the statements sent meanwhile under `title`, and stores them under `label`.
 * @returns the answer's JSON body.
 */
export async function showCall(into: Map<string, string[]>, title: string, label: string, base: string, path: string, init: RequestInit = {}, settleMs = 50): Promise<Record<string, unknown>> {
  log = [];
  const res = await fetch(`${base}${path}`, init);
  const body = (await res.json()) as Record<string, unknown>;
  await new Promise((r) => setTimeout(r, settleMs));
  console.log(`\n## ${title}, ${label}: ${init.method ?? "GET"} ${path} → ${res.status}`);
  const seen = log;
  log = undefined;
  for (const line of seen) console.log(`  ${line}`);
  into.set(label, seen);
  return body;
}

/** A statement's shape: whitespace collapsed, string literals, `$n` and `?` parameters, numbers and `null` masked as `?`. */
export const shape = (statement: string): string =>
  statement
    .replace(/ {3}-- \[.*$/, "")
    .replace(/\s+/g, " ")
    .replace(/'(?:[^']|'')*'/g, "?")
    .replace(/\$\d+/g, "?")
    .replace(/\b\d+(\.\d+)?\b/g, "?")
    .replace(/\bnull\b/g, "?")
    .trim()
    .toLowerCase();

/** The base URL of `server` once it listens (on 127.0.0.1). */
export async function listening(server: Server): Promise<string> {
  await new Promise((r) => server.once("listening", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * Prints, for each of `labels`, whether the baseline's statements are the service's (by
 * {@link shape}, in order) and each difference. @returns how many statements differ.
 */
export function compareStatements(title: string, labels: readonly string[], ofService: Map<string, string[]>, ofBaseline: Map<string, string[]>): number {
  console.log(`\n# ${title}: the baseline's statements against the service's`);
  let differences = 0;
  for (const label of labels) {
    const a = (ofService.get(label) ?? []).map(shape);
    const b = (ofBaseline.get(label) ?? []).map(shape);
    const wrong = Array.from({ length: Math.max(a.length, b.length) }, (_, i) => i).filter((i) => a[i] !== b[i]);
    differences += wrong.length;
    console.log(`${label}: ${wrong.length === 0 ? `the same ${a.length} statements` : `${wrong.length} differences`}`);
    for (const i of wrong) console.log(`  #${i + 1}\n    service  ${a[i] ?? "(none)"}\n    baseline ${b[i] ?? "(none)"}`);
  }
  return differences;
}

/**
 * Runs `work` against the captured app (its base URL and database URL), then stops the app and the
 * database, and exits with status 0 when `work` found no difference, else 1.
 */
export async function captureAgainstApp(dirPrefix: string, work: (ctx: { base: string; databaseUrl: string; app: App }) => Promise<number>): Promise<never> {
  const dir = mkdtempSync(join(tmpdir(), dirPrefix));
  chmodSync(dir, 0o755);
  const db = await startEmbeddedPostgres(dir, "capture", { persistent: false });
  let differences: number;
  try {
    const config = loadConfig({
      DATABASE_URL: db.url,
      MASTER_API_KEY: CAPTURE_MASTER,
      SECRETS_KEY: CAPTURE_SECRETS_KEY,
      LOG_LEVEL: "silent",
      ROLE: "api",
      RATE_LIMIT_IP: "off",
      RATE_LIMIT_CREDENTIAL: "off",
      RATE_LIMIT_AUTH_FAILURES: "off",
      RATE_LIMIT_CODES: "off",
      TRANSFER_CAPS: BENCH_TRANSFER_CAPS,
    });
    const app = await createApp(config);
    const server = app.express.listen(0, "127.0.0.1");
    try {
      differences = await work({ base: await listening(server), databaseUrl: db.url, app });
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
      await app.close();
    }
  } finally {
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(differences === 0 ? 0 : 1);
}
