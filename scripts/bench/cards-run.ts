/**
 * `BENCH_ONLY=cards npm run bench` (scripts/bench.ts dispatches here; docs/performance.md "Cards:
 * Authorize Card"), run by scripts/bench/pair-run.ts: the tenant seeded with one VERIFIED user and
 * the golden product, then scripts/bench/cards.ts `seedCardWallets` (1 000 wallets × 10 cards); the
 * baseline scripts/bench/baseline-authorizations-server.ts (its `/v2/cards/…` routes:
 * scripts/bench/baseline-cards.ts); the loads of scripts/bench/cards.ts, then the wallets' and the
 * cards' invariants.
 */
import { CARD_LEVELS, cardsNote, checkCardCalls, runCardScenario, seedCardWallets } from "./cards.js";
import { runPairBench, type PairRun } from "./pair-run.js";

/** @returns what broke the run (empty: a trusted run). */
export function runCardBench(r: PairRun): Promise<string[]> {
  return runPairBench(r, {
    seed: { users: 1, products: 1 },
    lanes: (base, seeded) => seedCardWallets(base, seeded),
    baselineScript: "scripts/bench/baseline-authorizations-server.ts",
    laneName: "credit wallet with cards",
    checkPair: checkCardCalls,
    scenario: runCardScenario,
    problemsLabel: "wallet and card invariants after the Authorize Card load",
    levels: CARD_LEVELS,
    unit: "authorizations",
    pairsNote: cardsNote,
  });
}
