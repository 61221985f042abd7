/**
 * The card-authorization rows of `npm run bench` (`BENCH_ONLY=authorizations`; docs/performance.md
 * "HTTP: `npm run bench`"): authorize + capture pairs over HTTP with the owner key at
 * {@link AUTH_LEVELS} in flight (scripts/bench/authorizations-load.ts), against the baseline's same
 * statements on bare node:http + raw pg (scripts/bench/baseline-authorizations.ts; `npx tsx
 * scripts/bench/capture-authorizations.ts` compares them with the service's).
 *
 * The tenant: the benchmark's customer with the golden product (`001`; tests/support/credit-golden.ts),
 * a credit notification URL registered (nothing is delivered with ROLE=api; the service still kicks
 * its delivery job after each commit, and so does the baseline), and {@link AUTH_WALLETS} USD wallets
 * of {@link AUTH_WALLET_LIMIT} cents: one per pair in flight at the highest level, so no two pairs
 * in flight wait on one wallet's row lock (an authorization or a capture locks its wallet's row
 * `for update` for its whole transaction: pairs on one wallet are serialised by design). What limits
 * the pairs is then CPU, the service's and PostgreSQL's.
 *
 * Before the load, one pair on each side on the same wallet must answer the same (ids and times
 * aside) and write the same rows; after it, the credit invariants must hold on every wallet
 * (`creditProblems`) and `npm run ledger:check` must pass.
 */
import { ActivitySampler } from "./activity.js";
import { creditProblems, runAuthorizationPairs, authorizeBody, type CreditLane } from "./authorizations-load.js";
import { rowsWrittenBy } from "./checks.js";
import type { Target } from "./load.js";
import type { ServerProcess } from "./processes.js";
import { compareRow, fmt, Side, type Row, type SideRun } from "./report.js";
import { call, type Seed } from "./seed.js";

export type { CreditLane } from "./authorizations-load.js";

/** Pairs in flight of the three rows, interleaved in each round. */
export const AUTH_LEVELS = [4, 16, 32] as const;
/** The level that carries the target. */
export const AUTH_TARGET_LEVEL = 16;
/** Target ratio (service / same SQL) at {@link AUTH_TARGET_LEVEL}. */
export const AUTH_TARGET = 0.5;
/** Wallets seeded: one per pair in flight at the highest level. */
export const AUTH_WALLETS = Math.max(...AUTH_LEVELS);
/** Cents of each benchmark authorization (captured whole). */
export const AUTH_AMOUNT = 100;
/** Credit limit of each benchmark wallet, cents: 10⁷ pairs of {@link AUTH_AMOUNT} before it is used up. */
export const AUTH_WALLET_LIMIT = 1_000_000_000;
/** The tables a pair may write. */
const TABLES = ["credit_authorization", "credit_event", "idempotency_key", "credit_wallet", "credit_statement", "agenda_jobs"];

/**
 * On the seeded tenant (its golden product, its user 0): registers a credit notification URL and
 * opens `n` USD credit wallets of {@link AUTH_WALLET_LIMIT} cents. @throws SeedError.
 */
export async function seedCreditWallets(base: string, data: Seed, n: number): Promise<CreditLane[]> {
  const owner = { "x-api-key": data.ownerKey };
  const user = data.users[0];
  if (!user) throw new Error("no user seeded");
  await call(`${base}/v2`, "PUT", "/notifications", owner, { creditNotificationsURL: "https://93.184.215.14/credit-hooks" });
  const lanes: CreditLane[] = [];
  for (let i = 0; i < n; i++) {
    const w = await call<{ walletId: string }>(`${base}/v2`, "POST", "/wallet/credits", owner, {
      userId: user.userId,
      currency: "USD",
      limit: AUTH_WALLET_LIMIT,
      creditProductCode: data.productCodes[0] ?? "001",
    });
    lanes.push({ walletId: w.walletId });
  }
  return lanes;
}

/** One pair through `base`: the two answers (status and `data`, ids, keys and times masked) as JSON. */
async function onePair(base: string, lane: CreditLane, ownerKey: string, key: string): Promise<string> {
  const headers = { "x-api-key": ownerKey, "content-type": "application/json" };
  const mask = (d: Record<string, unknown>): Record<string, unknown> => ({ ...d, authorizationId: "…", idempotencyKey: "…", expiresAt: "…", closedAt: d.closedAt ? "…" : null, createdAt: "…" });
  const a = await fetch(`${base}/v2/wallet/credits/${lane.walletId}/authorizations`, { method: "POST", headers: { ...headers, "idempotency-key": key }, body: authorizeBody(AUTH_AMOUNT) });
  const ab = (await a.json()) as { data?: Record<string, unknown>; errors?: unknown };
  const id = String(ab.data?.authorizationId);
  const c = await fetch(`${base}/v2/wallet/credits/${lane.walletId}/authorizations/${id}/capture`, { method: "POST", headers, body: "{}" });
  const cb = (await c.json()) as { data?: Record<string, unknown>; errors?: unknown };
  await new Promise((r) => setTimeout(r, 100)); // the delivery job's kick is not awaited by either side
  return JSON.stringify([a.status, ab.data ? mask(ab.data) : ab.errors, c.status, cb.data ? mask(cb.data) : cb.errors]);
}

/**
 * One pair through the service, then one through the baseline, on the same wallet.
 * @returns the rows one pair writes per table.
 * @throws when an answer is not 201 / 200, the answers differ, or the sides write different rows.
 */
export async function checkAuthorizationPair(databaseUrl: string, service: string, baseline: string, lane: CreditLane, ownerKey: string): Promise<Record<string, number>> {
  const sides = [];
  for (const [name, base] of [["service", service], ["baseline", baseline]] as const) {
    sides.push(await rowsWrittenBy(databaseUrl, TABLES, () => onePair(base, lane, ownerKey, `bench-auth-check-${name}-${Date.now()}`)));
  }
  const [a, b] = sides as [{ rows: Record<string, number>; value: string }, { rows: Record<string, number>; value: string }];
  if (!a.value.startsWith("[201,") || !a.value.includes(",200,") || a.value !== b.value) throw new Error(`an authorize + capture pair answers differently:\n  service  ${a.value}\n  baseline ${b.value}`);
  if (JSON.stringify(a.rows) !== JSON.stringify(b.rows)) throw new Error(`a pair writes different rows: service ${JSON.stringify(a.rows)}, baseline ${JSON.stringify(b.rows)}`);
  return a.rows;
}

/** What the scenario needs from the benchmark. */
export interface AuthorizationScenario {
  service: Target;
  baseline: Target;
  lanes: readonly CreditLane[];
  ownerKey: string;
  databaseUrl: string;
  servers: ServerProcess[];
  /** scripts/bench/report.ts `alternator`'s runner. */
  alternate: (label: string, sides: SideRun[], servers: ServerProcess[]) => Promise<void>;
}

/** The rows and their footnotes. */
export interface AuthorizationReport {
  rows: Row[];
  notes: string[];
  /** The credit invariants' problems after the load (empty: they hold). */
  problems: string[];
}

/**
 * Runs the levels interleaved in each round (service 4, same SQL 4, service 16, …), sampling
 * PostgreSQL's activity during each run, then checks the credit invariants.
 */
export async function runAuthorizationScenario(s: AuthorizationScenario): Promise<AuthorizationReport> {
  const levels = AUTH_LEVELS.map((level) => ({ level, service: new Side(`service ${level}`), baseline: new Side(`same SQL ${level}`) }));
  const run = (t: Target, level: number) => async (seconds: number) => {
    const sampler = new ActivitySampler(s.databaseUrl);
    await sampler.start();
    const result = await runAuthorizationPairs(t, s.lanes, s.ownerKey, AUTH_AMOUNT, seconds, level);
    return { ...result, activity: await sampler.stop() };
  };
  await s.alternate(
    `authorize + capture pairs, ${AUTH_LEVELS.join(", ")} in flight, interleaved`,
    levels.flatMap((l) => [
      { side: l.service, run: run(s.service, l.level) },
      { side: l.baseline, run: run(s.baseline, l.level) },
    ]),
    s.servers,
  );
  const report: AuthorizationReport = { rows: [], notes: [], problems: [] };
  for (const { level, service, baseline } of levels) {
    report.rows.push(compareRow(`authorize + capture, ${level} in flight (pairs/s, pair latency)`, service, baseline, level === AUTH_TARGET_LEVEL ? AUTH_TARGET : null));
    const steps = (side: Side): string => side.steps.replace("initiate", "authorize").replace(/, mail [^,]*/, "").replace("confirm", "capture");
    report.notes.push(
      `${level} in flight: CPU client/server/postgres service ${service.cpu}, same SQL ${baseline.cpu}, CPU/pair ratio ${fmt(baseline.cpuMs / service.cpuMs, 2)}; ` +
        `calls (median ms) service ${steps(service)}, same SQL ${steps(baseline)}; PostgreSQL: service ${service.locks}; same SQL ${baseline.locks}; ` +
        `spread service ${service.spread}, same SQL ${baseline.spread}`,
    );
  }
  const checked = await creditProblems(s.databaseUrl);
  report.problems = checked.problems;
  report.notes.push(`credit invariants on all ${checked.wallets} wallets after the load: ${checked.problems.length === 0 ? "hold" : checked.problems.join("; ")}`);
  return report;
}
