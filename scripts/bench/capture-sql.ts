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
import { createServer } from "node:http";
import { createBaseline } from "./baseline.js";
import { CAPTURE_MASTER, CAPTURE_SECRETS_KEY, captureAgainstApp, compareStatements, listening, showCall } from "./capture.js";
import { seed, TRANSFER_BTC, WITHDRAWAL_ADDRESS, WITHDRAWAL_BTC, type Seed } from "./seed.js";

/** Sends one request of each scenario to `base` and prints the statements of each; returns them by label. */
async function scenarios(who: string, base: string, data: Seed): Promise<Map<string, string[]>> {
  const user = data.users[0];
  if (!user) throw new Error("no user seeded");
  const byLabel = new Map<string, string[]>();
  const show = (label: string, path: string, init: RequestInit = {}): Promise<unknown> => showCall(byLabel, who, label, base, path, init);
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

await captureAgainstApp("bench-capture-", async ({ base, databaseUrl }) => {
  const data = await seed(base, CAPTURE_MASTER, { users: 1, products: 3, transferPairs: 1 });
  const ofService = await scenarios("service", base, data);
  const baseline = createBaseline({ databaseUrl, secretsKey: CAPTURE_SECRETS_KEY, currenciesJson: "[]" });
  const baselineServer = createServer(baseline.listener).listen(0, "127.0.0.1");
  const ofBaseline = await scenarios("baseline", await listening(baselineServer), data);
  const labels = ["initiate withdrawal", "sandbox mail", "confirm withdrawal", "create transfer"];
  const differences = compareStatements("the withdrawal and transfer routes", labels, ofService, ofBaseline);
  await new Promise<void>((r) => baselineServer.close(() => r()));
  await baseline.pool.end();
  return differences;
});
