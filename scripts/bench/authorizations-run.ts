/**
 * `BENCH_ONLY=authorizations npm run bench` (scripts/bench.ts dispatches here; docs/performance.md
 * "HTTP: `npm run bench`"), run by scripts/bench/pair-run.ts: the tenant seeded with one VERIFIED
 * user and the golden product, then scripts/bench/authorizations.ts `seedCreditWallets`; the
 * baseline scripts/bench/baseline-authorizations-server.ts; the load of
 * scripts/bench/authorizations.ts, then the credit invariants.
 */
import { AUTH_AMOUNT, AUTH_LEVELS, AUTH_WALLETS, checkAuthorizationPair, runAuthorizationScenario, seedCreditWallets } from "./authorizations.js";
import { runPairBench, type PairRun } from "./pair-run.js";

/** What the run needs from scripts/bench.ts. */
export type AuthorizationRun = PairRun;

/** @returns what broke the run (empty: a trusted run). */
export function runAuthorizationBench(r: AuthorizationRun): Promise<string[]> {
  return runPairBench(r, {
    seed: { users: 1, products: 1 },
    lanes: (base, seeded) => seedCreditWallets(base, seeded, AUTH_WALLETS),
    baselineScript: "scripts/bench/baseline-authorizations-server.ts",
    laneName: "credit wallet",
    checkPair: checkAuthorizationPair,
    scenario: runAuthorizationScenario,
    problemsLabel: "credit invariants after the authorizations",
    levels: AUTH_LEVELS,
    pairsNote: (writes) =>
      `Pairs: POST /v2/wallet/credits/{w}/authorizations (owner key, a fresh Idempotency-Key, ${AUTH_AMOUNT} cents) → 201 approved, then POST …/{id}/capture (whole) → 200; ` +
      `a pair in flight holds one of ${AUTH_WALLETS} wallets of the golden product (one per pair in flight at ${Math.max(...AUTH_LEVELS)}: an authorization and a capture lock their wallet's row, so pairs on one wallet would queue on it); pairs/s counts captures, latency is of the whole pair. ` +
      `The baseline runs the service's own 8 + 7 statements in the same transactions and order (scripts/bench/baseline-authorizations.ts; npx tsx scripts/bench/capture-authorizations.ts compares them); one pair answers the same and writes the same rows on both sides (${JSON.stringify(writes)}).`,
  });
}
