/**
 * `npx tsx scripts/bench/profile.ts [scenario] [seconds]`: where the service's CPU goes under one
 * benchmark load (not part of `npm run bench`). Starts the built service as the bench does, with
 * `--cpu-prof`, seeds it (scripts/bench/seed.ts), drives `scenario` for `seconds` (default 10):
 * `withdrawals` (16 pairs in flight, scripts/bench/load.ts), `authorizations` (16 authorize + capture
 * pairs in flight, scripts/bench/authorizations-load.ts), `cards` (16 Authorize Card in flight on the
 * card row's 1 000 wallets and 10 000 cards, scripts/bench/cards.ts; `PROFILE_CARD_WALLETS=60` seeds
 * fewer, so that the load rather than the seeding fills the profile), `trading` (16 quote + order pairs in flight,
 * scripts/bench/trading-load.ts, on the seeded users' wallets topped up), `balance` or `currencies` (owner key, 32
 * connections), `unauthorized` (`/api/v1/currencies` without credentials: the 401 path, 32 connections); stops it, and prints the self time of the profile grouped by package and the top
 * functions. The raw `.cpuprofile` stays in the printed folder (open it in Chrome DevTools).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBenchDatabase } from "./database.js";
import { runRequests, runWithdrawals } from "./load.js";
import { benchServiceEnv, serviceCommand, startServer } from "./processes.js";
import { seed } from "./seed.js";
import { AUTH_AMOUNT, AUTH_WALLETS, seedCreditWallets } from "./authorizations.js";
import { runAuthorizationPairs } from "./authorizations-load.js";
import { runTradingPairs, seedTradingLanes } from "./trading-load.js";
import { seedCardWallets } from "./cards.js";
import { runCardAuthorizations } from "./cards-load.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `@mikro-orm/core`, `express`, `node:internal`, `service` (dist/src), … for a script URL. */
function packageOf(url: string): string {
  if (url === "") return "(native / vm)";
  if (url.startsWith("node:")) return "node:internal";
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1] as string;
  if (url.includes("/dist/") || url.includes("/src/")) return "service";
  return url;
}

const [scenario = "withdrawals", secondsText = "10"] = process.argv.slice(2);
const seconds = Number(secondsText);
const profileDir = mkdtempSync(join(tmpdir(), "service-profile-"));
const database = await createBenchDatabase();
try {
  const masterKey = randomBytes(24).toString("hex");
  const env = benchServiceEnv(database.url, randomBytes(24).toString("hex"), masterKey);
  const { args } = serviceCommand();
  const service = await startServer("service", ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, ...args], env);
  const seeded = await seed(service.base, masterKey, { users: 32, products: 3 });
  const target = { base: service.base, pid: service.pid };
  const result =
    scenario === "cards"
      ? await runCardAuthorizations(target, (await seedCardWallets(service.base, seeded, Number(process.env.PROFILE_CARD_WALLETS ?? 1000))).flatMap((w) => w.cards), seeded.ownerKey, seconds, 16, {})
      : scenario === "authorizations"
      ? await runAuthorizationPairs(target, await seedCreditWallets(service.base, seeded, AUTH_WALLETS), seeded.ownerKey, AUTH_AMOUNT, seconds, 16)
      : scenario === "trading"
      ? await runTradingPairs(target, await seedTradingLanes(service.base, seeded), seeded.ownerKey, seconds, 16)
      : scenario === "withdrawals"
      ? await runWithdrawals(target, seeded.users, seeded.ownerKey, seconds, 16)
      : scenario === "unauthorized"
      ? await runRequests(target, "/api/v1/currencies", {}, 401, seconds, 32)
      : await runRequests(
          target,
          scenario === "currencies" ? "/api/v1/currencies" : `/api/v1/wallets/${seeded.users[0]!.walletId}/balance`,
          { "x-api-key": seeded.ownerKey },
          200,
          seconds,
          32,
        );
  console.log(`${scenario}: ${JSON.stringify({ rate: result.rate, p50: result.p50, p99: result.p99 })}`);
  await service.stop();

  const file = readdirSync(profileDir).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no profile written in ${profileDir}`);
  const profile = JSON.parse(readFileSync(join(profileDir, file), "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)" || functionName === "(program)" || functionName === "(garbage collector)") {
      byPackage.set(functionName, (byPackage.get(functionName) ?? 0) + us);
      continue;
    }
    const pkg = packageOf(url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    const key = `${functionName || "(anonymous)"} ${url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/(dist|src)\//, "$1/")}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)} %`;
  console.log(`\nprofile ${join(profileDir, file)}: ${(total / 1e6).toFixed(1)} s sampled`);
  console.log("\nself time by package:");
  for (const [pkg, us] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${pct(us)}  ${pkg}`);
  console.log("\ntop functions (self):");
  for (const [fn, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`  ${pct(us)}  ${fn}`);
} finally {
  await database.dispose();
}
