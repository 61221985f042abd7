/**
 * `npx tsx scripts/bench/capture-authorizations.ts`: prints every SQL statement the service runs for
 * one authorize + capture pair of the authorization rows of `npm run bench` (BENCH_ONLY=authorizations;
 * docs/performance.md "HTTP: `npm run bench`"), then the baseline's (scripts/bench/baseline-authorizations.ts),
 * and checks that the baseline runs the service's statements: same sequence once literals, bound
 * parameters and numbers are masked (as scripts/bench/capture-sql.ts does for withdrawals and
 * transfers). Exit status 1 when they differ. It builds the real app in this process (createApp,
 * `ROLE=api`, rate limits off) on a throw-away embedded PostgreSQL, wraps `pg.Client.prototype.query`,
 * seeds the tenant as the benchmark does (scripts/bench/authorizations.ts `seedCreditWallets`).
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";
import { loadConfig } from "../../src/config.js";
import { createApp } from "../../src/app.js";
import { KICK_WINDOW_MS } from "../../src/jobs/kick-throttle.js";
import { authorizationBaselineListener } from "./baseline-authorizations.js";
import { AUTH_AMOUNT, seedCreditWallets, type CreditLane } from "./authorizations.js";
import { BENCH_TRANSFER_CAPS } from "./processes.js";
import { seed } from "./seed.js";

const MASTER = "bench-master-key-0123456789abcdefghijklmnop";
const SECRETS_KEY = "bench-secrets-key-0123456789abcdefghijklmnop";
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

/** A statement's shape: whitespace collapsed, string literals, `$n` and `?` parameters, numbers and `null` masked as `?`. */
const shape = (statement: string): string =>
  statement
    .replace(/ {3}-- \[.*$/, "")
    .replace(/\s+/g, " ")
    .replace(/'(?:[^']|'')*'/g, "?")
    .replace(/\$\d+/g, "?")
    .replace(/\b\d+(\.\d+)?\b/g, "?")
    .replace(/\bnull\b/g, "?")
    .trim()
    .toLowerCase();

/** One authorize + capture through `base`; prints and returns the statements of each call. */
async function pair(who: string, base: string, lane: CreditLane, ownerKey: string): Promise<Map<string, string[]>> {
  const byLabel = new Map<string, string[]>();
  const show = async (label: string, path: string, init: RequestInit): Promise<Record<string, unknown>> => {
    log = [];
    const res = await fetch(`${base}${path}`, init);
    const body = (await res.json()) as Record<string, unknown>;
    // the delivery job's kick runs after the commit, coalesced within KICK_WINDOW_MS (src/jobs/kick-throttle.ts): wait past it
    await new Promise((r) => setTimeout(r, KICK_WINDOW_MS + 150));
    console.log(`\n## ${who}, ${label}: ${init.method ?? "GET"} ${path} → ${res.status}`);
    for (const line of log) console.log(`  ${line}`);
    byLabel.set(label, log);
    log = undefined;
    return body;
  };
  const owner = { "x-api-key": ownerKey, "content-type": "application/json" };
  const auth = await show("authorize", `/v2/wallet/credits/${lane.walletId}/authorizations`, {
    method: "POST",
    headers: { ...owner, "idempotency-key": `capture-auth-${who}` },
    body: JSON.stringify({ amount: AUTH_AMOUNT, merchant: { name: "Corner store", mcc: "5411", country: "MX" } }),
  });
  const id = (auth.data as { authorizationId: string }).authorizationId;
  await show("capture", `/v2/wallet/credits/${lane.walletId}/authorizations/${id}/capture`, { method: "POST", headers: owner, body: "{}" });
  return byLabel;
}

const listening = async (server: Server): Promise<string> => {
  await new Promise((r) => server.once("listening", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

const dir = mkdtempSync(join(tmpdir(), "bench-capture-auth-"));
chmodSync(dir, 0o755);
const db = await startEmbeddedPostgres(dir, "capture", { persistent: false });
let differences = 0;
try {
  const config = loadConfig({
    DATABASE_URL: db.url,
    MASTER_API_KEY: MASTER,
    SECRETS_KEY,
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
  const base = await listening(server);
  const data = await seed(base, MASTER, { users: 1, products: 1 });
  const lanes = await seedCreditWallets(base, data, 1);
  const lane = lanes[0] as CreditLane;
  const ofService = await pair("service", base, lane, data.ownerKey);
  const pool = new pg.Pool({ connectionString: db.url, max: 10 });
  const baselineServer = createServer(authorizationBaselineListener(pool, SECRETS_KEY)).listen(0, "127.0.0.1");
  const ofBaseline = await pair("baseline", await listening(baselineServer), lane, data.ownerKey);
  console.log("\n# authorize and capture: the baseline's statements against the service's");
  for (const label of ["authorize", "capture"]) {
    const a = (ofService.get(label) ?? []).map(shape);
    const b = (ofBaseline.get(label) ?? []).map(shape);
    const wrong = Array.from({ length: Math.max(a.length, b.length) }, (_, i) => i).filter((i) => a[i] !== b[i]);
    differences += wrong.length;
    console.log(`${label}: ${wrong.length === 0 ? `the same ${a.length} statements` : `${wrong.length} differences`}`);
    for (const i of wrong) console.log(`  #${i + 1}\n    service  ${a[i] ?? "(none)"}\n    baseline ${b[i] ?? "(none)"}`);
  }
  await new Promise<void>((r) => baselineServer.close(() => r()));
  await pool.end();
  await new Promise<void>((r) => server.close(() => r()));
  await app.close();
} finally {
  await db.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(differences === 0 ? 0 : 1);
