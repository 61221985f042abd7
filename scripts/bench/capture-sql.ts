/**
 * `npx tsx scripts/bench/capture-sql.ts`: prints every SQL statement the service runs for each
 * request the benchmark sends (docs/performance.md "HTTP: `npm run bench`"), then the baseline's (scripts/bench/baseline.ts), and
 * checks that the withdrawal and transfer routes of the baseline run the service's statements: same sequence,
 * once literals, bound parameters and numbers are masked. Exit status 1 when they differ (the
 * baseline must then follow the service again). It builds the real app in this process (createApp,
 * `ROLE=api`, rate limits off as in the benchmark) on a throw-away embedded PostgreSQL, wraps
 * `pg.Client.prototype.query` to record each statement with its parameters, seeds through the API
 * (scripts/bench/seed.ts), sends one request of each scenario to the service, then the same to the
 * baseline served from this process.
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
import { createBaseline } from "./baseline.js";
import { BENCH_TRANSFER_CAPS } from "./processes.js";
import { seed, TRANSFER_BTC, WITHDRAWAL_ADDRESS, WITHDRAWAL_BTC, type Seed } from "./seed.js";

const MASTER = "bench-master-key-0123456789abcdefghijklmnop";
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

/** A statement's shape: whitespace collapsed, string literals, `$n` parameters, numbers and `null` masked as `?`. */
const shape = (statement: string): string =>
  statement
    .replace(/ {3}-- \[.*$/, "")
    .replace(/\s+/g, " ")
    .replace(/'(?:[^']|'')*'/g, "?")
    .replace(/\$\d+/g, "?")
    .replace(/\b\d+\b/g, "?")
    .replace(/\bnull\b/g, "?")
    .trim()
    .toLowerCase();

/** Sends one request of each scenario to `base` and prints the statements of each; returns them by label. */
async function scenarios(who: string, base: string, data: Seed): Promise<Map<string, string[]>> {
  const user = data.users[0];
  if (!user) throw new Error("no user seeded");
  const byLabel = new Map<string, string[]>();
  const show = async (label: string, path: string, init: RequestInit = {}): Promise<unknown> => {
    log = [];
    const res = await fetch(`${base}${path}`, init);
    const body = (await res.json()) as unknown;
    await new Promise((r) => setTimeout(r, 50));
    console.log(`\n## ${who}, ${label}: ${init.method ?? "GET"} ${path} → ${res.status}`);
    for (const line of log) console.log(`  ${line}`);
    byLabel.set(label, log);
    log = undefined;
    return body;
  };
  const owner = { "x-api-key": data.ownerKey };
  const bearer = { authorization: `Bearer ${user.token}` };
  await show("currencies, owner key", "/api/v1/currencies", { headers: owner });
  await show("balance, owner key", `/api/v1/wallets/${user.walletId}/balance`, { headers: owner });
  await show("balance, user token", `/api/v1/wallets/${user.walletId}/balance`, { headers: bearer });
  await show("no credentials (401)", "/api/v1/currencies");
  await show("credit products, owner key", "/v2/credit-products", { headers: owner });
  const initiated = (await show("initiate withdrawal", `/api/v1/users/${user.userId}/accounts/crypto/withdrawals`, {
    method: "POST",
    headers: { ...bearer, "content-type": "application/json", "idempotency-key": `capture-${who}` },
    body: JSON.stringify({ currency: "btc", amount: Number(WITHDRAWAL_BTC), address: WITHDRAWAL_ADDRESS }),
  })) as { data: { id: string } };
  const mail = (await show("sandbox mail", `/api/v1/sandbox/mail?to=${encodeURIComponent(user.email)}`, { headers: owner })) as {
    data: { text: string }[];
  };
  const text = mail.data.find((m) => m.text.includes(initiated.data.id))?.text ?? "";
  const code = /code: (\d{6})/.exec(text)?.[1] ?? "";
  await show("confirm withdrawal", `/api/v1/users/${user.userId}/accounts/crypto/withdrawals/${initiated.data.id}/confirm`, {
    method: "POST",
    headers: { ...bearer, "content-type": "application/json" },
    body: JSON.stringify({ code }),
  });
  const pair = data.transferPairs[0];
  if (!pair) throw new Error("no transfer pair seeded");
  await show("create transfer", "/api/v1/transfers", {
    method: "POST",
    headers: { authorization: `Bearer ${pair.a.token}`, "content-type": "application/json", "idempotency-key": `capture-transfer-${who}` },
    body: JSON.stringify({ from_wallet_id: pair.a.walletId, to_wallet_id: pair.b.walletId, currency: "btc", amount: Number(TRANSFER_BTC) }),
  });
  return byLabel;
}

const listening = async (server: Server): Promise<string> => {
  await new Promise((r) => server.once("listening", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

const SECRETS_KEY = "bench-secrets-key-0123456789abcdefghijklmnop";
const dir = mkdtempSync(join(tmpdir(), "bench-capture-"));
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
  const data = await seed(base, MASTER, { users: 1, products: 3, transferPairs: 1 });
  const ofService = await scenarios("service", base, data);
  const baseline = createBaseline({ databaseUrl: db.url, secretsKey: SECRETS_KEY, currenciesJson: "[]" });
  const baselineServer = createServer(baseline.listener).listen(0, "127.0.0.1");
  const ofBaseline = await scenarios("baseline", await listening(baselineServer), data);
  console.log("\n# the withdrawal and transfer routes: the baseline's statements against the service's");
  for (const label of ["initiate withdrawal", "sandbox mail", "confirm withdrawal", "create transfer"]) {
    const a = (ofService.get(label) ?? []).map(shape);
    const b = (ofBaseline.get(label) ?? []).map(shape);
    const wrong = Array.from({ length: Math.max(a.length, b.length) }, (_, i) => i).filter((i) => a[i] !== b[i]);
    differences += wrong.length;
    console.log(`${label}: ${wrong.length === 0 ? `the same ${a.length} statements` : `${wrong.length} differences`}`);
    for (const i of wrong) console.log(`  #${i + 1}\n    service  ${a[i] ?? "(none)"}\n    baseline ${b[i] ?? "(none)"}`);
  }
  await new Promise<void>((r) => baselineServer.close(() => r()));
  await baseline.pool.end();
  await new Promise<void>((r) => server.close(() => r()));
  await app.close();
} finally {
  await db.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(differences === 0 ? 0 : 1);
