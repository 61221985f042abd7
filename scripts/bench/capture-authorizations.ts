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
import { createServer } from "node:http";
import pg from "pg";
import { KICK_WINDOW_MS } from "../../src/jobs/kick-throttle.js";
import { authorizationBaselineListener } from "./baseline-authorizations.js";
import { AUTH_AMOUNT, seedCreditWallets, type CreditLane } from "./authorizations.js";
import { CAPTURE_MASTER, CAPTURE_SECRETS_KEY, captureAgainstApp, compareStatements, listening, showCall } from "./capture.js";
import { seed } from "./seed.js";

/** One authorize + capture through `base`; prints and returns the statements of each call. */
async function pair(who: string, base: string, lane: CreditLane, ownerKey: string): Promise<Map<string, string[]>> {
  const byLabel = new Map<string, string[]>();
  // past the delivery job's kick window (src/jobs/kick-throttle.ts), so a call's delayed kick is counted with it
  const settle = KICK_WINDOW_MS + 150;
  const owner = { "x-api-key": ownerKey, "content-type": "application/json" };
  const auth = await showCall(byLabel, who, "authorize", base, `/v2/wallet/credits/${lane.walletId}/authorizations`, {
    method: "POST",
    headers: { ...owner, "idempotency-key": `capture-auth-${who}` },
    body: JSON.stringify({ amount: AUTH_AMOUNT, merchant: { name: "Corner store", mcc: "5411", country: "MX" } }),
  }, settle);
  const id = (auth.data as { authorizationId: string }).authorizationId;
  await showCall(byLabel, who, "capture", base, `/v2/wallet/credits/${lane.walletId}/authorizations/${id}/capture`, { method: "POST", headers: owner, body: "{}" }, settle);
  return byLabel;
}

await captureAgainstApp("bench-capture-auth-", async ({ base, databaseUrl }) => {
  const data = await seed(base, CAPTURE_MASTER, { users: 1, products: 1 });
  const lanes = await seedCreditWallets(base, data, 1);
  const lane = lanes[0] as CreditLane;
  const ofService = await pair("service", base, lane, data.ownerKey);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const baselineServer = createServer(authorizationBaselineListener(pool, CAPTURE_SECRETS_KEY)).listen(0, "127.0.0.1");
  const ofBaseline = await pair("baseline", await listening(baselineServer), lane, data.ownerKey);
  const differences = compareStatements("authorize and capture", ["authorize", "capture"], ofService, ofBaseline);
  await new Promise<void>((r) => baselineServer.close(() => r()));
  await pool.end();
  return differences;
});
