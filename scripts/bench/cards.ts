/**
 * The Authorize Card rows of `npm run bench` (`BENCH_ONLY=cards`; docs/performance.md "Cards:
 * Authorize Card"; the targets are docs/decisions/cards.md "Stand-in and the latency target"):
 * `POST /v2/cards/{cardId}/authorizations` with the owner key on a random card of a tenant of
 * {@link CARD_WALLETS} credit wallets × {@link CARDS_PER_WALLET} cards, each request with a fresh
 * `processorReference` (scripts/bench/cards-load.ts).
 *
 * - Load A, latency: {@link CARD_RATE} authorizations a second, open loop, for
 *   `BENCH_CARDS_RATE_SECONDS` ({@link CARD_RATE_SECONDS}) after {@link CARD_RATE_WARMUP} s of warm-up,
 *   on the service, then the same on the baseline (informative). Target: the service's p99 ≤
 *   {@link CARD_P99_TARGET} ms.
 * - Load B, throughput: {@link CARD_LEVELS} in flight (closed loop), against the baseline running the
 *   service's statements on raw `pg` (scripts/bench/baseline-cards.ts; `npx tsx
 *   scripts/bench/capture-cards.ts` compares them), sides and levels interleaved. Target: ≥
 *   {@link CARD_TARGET} of the baseline at {@link CARD_TARGET_LEVEL}.
 *
 * The tenant: the benchmark's customer with the golden product, a credit notification URL (nothing
 * is delivered with ROLE=api), its wallets opened by scripts/bench/authorizations.ts
 * `seedCreditWallets` (10⁷ USD each: the holds never exhaust a wallet, so no capture or void is
 * needed and each wallet keeps at most a few dozen open holds), and every wallet's cards issued
 * through the API, {@link SEED_PARALLEL} wallets at a time, in the mix {@link CARD_MIX}.
 *
 * Before the load, one call of each outcome on each side must answer the same (ids and times aside)
 * and write the same rows; after it, the wallets' invariants (`creditProblems`) and the cards'
 * (`cardProblems`) must hold, and `npm run ledger:check` pass.
 */
import { KICK_WINDOW_MS } from "../../src/jobs/kick-throttle.js";
import { seedCreditWallets } from "./authorizations.js";
import { creditProblems } from "./authorizations-load.js";
import { BLOCKED_MCC, CARD_AMOUNTS, CARD_MERCHANTS, cardProblems, freshReference, runCardAuthorizations, runPacedCards, type CardKind, type CardLane, type CardWallet, type PacedResult } from "./cards-load.js";
import { rowsWrittenBy } from "./checks.js";
import type { Target } from "./load.js";
import type { ServerProcess } from "./processes.js";
import { assertAlive, compareRow, fmt, Side, type Row, type SideRun } from "./report.js";
import { call, type Seed } from "./seed.js";

export type { CardWallet } from "./cards-load.js";

/** Credit wallets seeded, and cards on each (`CARDS_PER_WALLET`'s default). */
export const CARD_WALLETS = 1_000;
export const CARDS_PER_WALLET = 10;
/** The kinds of a wallet's cards, in issue order: 7 plain, 1 with a daily control, 1 blocking MCC {@link BLOCKED_MCC}, 1 paused. */
export const CARD_MIX: readonly CardKind[] = ["plain", "plain", "plain", "plain", "plain", "plain", "plain", "daily", "blockedMcc", "paused"];
/** The daily control of the `daily` cards, cents: about two authorizations of the load. */
export const CARD_DAILY = 3_000;
/** Wallets whose cards are issued at once while seeding. */
const SEED_PARALLEL = 16;
/** Load A: authorizations a second, and seconds of warm-up at that rate. */
export const CARD_RATE = 200;
export const CARD_RATE_WARMUP = 3;
/** Load A: seconds measured (`BENCH_CARDS_RATE_SECONDS`, default 30). */
export const CARD_RATE_SECONDS = ((): number => {
  const raw = Number(process.env.BENCH_CARDS_RATE_SECONDS ?? "30");
  if (!Number.isFinite(raw) || raw <= 0) throw new Error(`BENCH_CARDS_RATE_SECONDS must be a positive number, got "${process.env.BENCH_CARDS_RATE_SECONDS}"`);
  return raw;
})();
/** Load A's target: p99 in ms. */
export const CARD_P99_TARGET = 50;
/** Load B: requests in flight of its rows, interleaved in each round. */
export const CARD_LEVELS = [4, 16, 32] as const;
/** The level that carries the target, and the target ratio (service / same SQL). */
export const CARD_TARGET_LEVEL = 16;
export const CARD_TARGET = 0.7;
/** The tables one authorization may write. */
const TABLES = ["credit_authorization", "credit_event", "credit_wallet", "credit_card", "idempotency_key", "agenda_jobs"];

/** Runs `each` on every item, `width` at a time. */
async function inParallel<T>(items: readonly T[], width: number, each: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        await each(items[index] as T, index);
      }
    }),
  );
}

/** The spend controls of a card of `kind` at issue (a `paused` card is paused after its issue). */
const controlsOf = (kind: CardKind): Record<string, unknown> | undefined =>
  kind === "daily" ? { daily: CARD_DAILY } : kind === "blockedMcc" ? { blockedMcc: [BLOCKED_MCC] } : undefined;

/**
 * On the seeded tenant: `wallets` credit wallets (scripts/bench/authorizations.ts
 * `seedCreditWallets`, which also registers the notification URL), then on each its
 * {@link CARD_MIX} cards (Issue Card; Update Card `{state: PAUSED}` for the paused one),
 * {@link SEED_PARALLEL} wallets at a time (one wallet's issues wait on its lock). @throws SeedError.
 */
export async function seedCardWallets(base: string, data: Seed, wallets = CARD_WALLETS): Promise<CardWallet[]> {
  const owner = { "x-api-key": data.ownerKey };
  const opened = await seedCreditWallets(base, data, wallets);
  const out: CardWallet[] = opened.map((w) => ({ walletId: w.walletId, cards: [] }));
  await inParallel(out, SEED_PARALLEL, async (wallet, i) => {
    for (const [j, kind] of CARD_MIX.entries()) {
      const controls = controlsOf(kind);
      const card = await call<{ cardId: string }>(`${base}/v2`, "POST", `/wallet/credits/${wallet.walletId}/cards`, owner, {
        cardholderName: `Bench Holder ${i}-${j}`,
        ...(controls && { spendControls: controls }),
      });
      if (kind === "paused") await call(`${base}/v2`, "PATCH", `/cards/${card.cardId}`, owner, { state: "PAUSED" });
      wallet.cards.push({ cardId: card.cardId, walletId: wallet.walletId, kind });
    }
  });
  return out;
}

/** The card of `kind` of `wallet`. */
function cardOf(wallet: CardWallet, kind: CardKind): CardLane {
  const card = wallet.cards.find((c) => c.kind === kind);
  if (!card) throw new Error(`wallet ${wallet.walletId} has no ${kind} card`);
  return card;
}

/**
 * One call of each outcome through `base` on `wallet`'s cards, {@link KICK_WINDOW_MS} + 50 ms apart
 * (each writing call then kicks the delivery job once, on both sides): an approval, `CARD_PAUSED`,
 * `MCC_BLOCKED`, `SPEND_LIMIT_EXCEEDED` (the daily control + 1 cent: its detail is the same on
 * both sides), and the first reference again (`isDuplicate`). @returns the answers (status, `data`
 * with ids, references and times masked) as JSON.
 */
async function eachOutcome(base: string, wallet: CardWallet, ownerKey: string): Promise<string> {
  const headers = { "x-api-key": ownerKey, "content-type": "application/json" };
  const [store, , , bets] = CARD_MERCHANTS;
  const first = freshReference();
  const body = (amount: number, merchant: (typeof CARD_MERCHANTS)[number], reference = freshReference()): string => JSON.stringify({ amount, merchant, processorReference: reference });
  const calls: [CardLane, string][] = [
    [cardOf(wallet, "plain"), body(500, store, first)],
    [cardOf(wallet, "paused"), body(500, store)],
    [cardOf(wallet, "blockedMcc"), body(500, bets)],
    [cardOf(wallet, "daily"), body(CARD_DAILY + 1, store)],
    [cardOf(wallet, "plain"), body(700, store, first)],
  ];
  const mask = (d: Record<string, unknown>): Record<string, unknown> => ({ ...d, authorizationId: "…", processorReference: "…", idempotencyKey: "…", expiresAt: d.expiresAt ? "…" : null, createdAt: "…" });
  const answers: unknown[] = [];
  for (const [card, sent] of calls) {
    const res = await fetch(`${base}/v2/cards/${card.cardId}/authorizations`, { method: "POST", headers, body: sent });
    const json = (await res.json()) as { data?: Record<string, unknown>; errors?: unknown };
    answers.push([res.status, json.data ? mask(json.data) : json.errors]);
    await new Promise((r) => setTimeout(r, KICK_WINDOW_MS + 50));
  }
  return JSON.stringify(answers);
}

/**
 * {@link eachOutcome} through the service, then through the baseline, on the first wallet.
 * @returns the rows the five calls write per table.
 * @throws when an answer is not the expected outcome, the answers differ, or the sides write different rows.
 */
export async function checkCardCalls(databaseUrl: string, service: string, baseline: string, wallet: CardWallet, ownerKey: string): Promise<Record<string, number>> {
  const sides = [];
  for (const base of [service, baseline]) sides.push(await rowsWrittenBy(databaseUrl, TABLES, () => eachOutcome(base, wallet, ownerKey)));
  const [a, b] = sides as [{ rows: Record<string, number>; value: string }, { rows: Record<string, number>; value: string }];
  const expected = ['"status":"approved"', '"declineReason":"CARD_PAUSED"', '"declineReason":"MCC_BLOCKED"', '"declineReason":"SPEND_LIMIT_EXCEEDED"', '"isDuplicate":true'];
  if (expected.some((e) => !a.value.includes(e)) || a.value !== b.value) throw new Error(`Authorize Card answers differently:\n  service  ${a.value}\n  baseline ${b.value}`);
  if (JSON.stringify(a.rows) !== JSON.stringify(b.rows)) throw new Error(`Authorize Card writes different rows: service ${JSON.stringify(a.rows)}, baseline ${JSON.stringify(b.rows)}`);
  return a.rows;
}

/** What the scenario needs from the benchmark (scripts/bench/pair-run.ts). */
export interface CardScenario {
  service: Target;
  baseline: Target;
  lanes: readonly CardWallet[];
  ownerKey: string;
  databaseUrl: string;
  servers: ServerProcess[];
  alternate: (label: string, sides: SideRun[], servers: ServerProcess[]) => Promise<void>;
}

/** Outcomes as shares of their total: `approved 85 %, CARD_PAUSED 10 %, …`. */
function shares(outcomes: Record<string, number>): string {
  const total = Object.values(outcomes).reduce((a, b) => a + b, 0);
  return Object.entries(outcomes)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${fmt((100 * v) / total, 1)} %`)
    .join(", ");
}

/** Load A on `target`: warm-up, then the measured run; `servers` checked alive after each. */
async function pacedSide(s: CardScenario, target: Target, cards: readonly CardLane[], log: (line: string) => void, name: string): Promise<PacedResult> {
  await runPacedCards(target, cards, s.ownerKey, CARD_RATE, CARD_RATE_WARMUP);
  assertAlive(s.servers);
  const r = await runPacedCards(target, cards, s.ownerKey, CARD_RATE, CARD_RATE_SECONDS);
  assertAlive(s.servers);
  log(`    ${name.padEnd(11)} ${r.rate.toFixed(0).padStart(6)}/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  cpu client/server/postgres ${r.clientCpu.toFixed(0)}/${r.serverCpu.toFixed(0)}/${r.dbCpu.toFixed(0)} %`);
  return r;
}

/** Load A's row: the service's achieved rate and latency at {@link CARD_RATE}/s against its target. */
function pacedRow(r: PacedResult): Row {
  const broken = Object.keys(r.unexpected).length > 0 ? `BROKEN (service: ${Object.entries(r.unexpected).map(([k, v]) => `${k}×${v}`).join(", ")}): numbers not trusted` : null;
  return {
    scenario: `Authorize Card at ${CARD_RATE}/s open loop, ${fmt(CARD_WALLETS * CARDS_PER_WALLET)} cards (achieved/s, latency from the scheduled send)`,
    rate: fmt(r.rate),
    p50: fmt(r.p50, 1),
    p99: fmt(r.p99, 1),
    baseline: "—",
    ratio: "—",
    target: `p99 ≤ ${CARD_P99_TARGET} ms`,
    ok: broken ?? (r.p99 <= CARD_P99_TARGET ? "yes" : "NO"),
  };
}

/** Load A, then load B (levels interleaved), then the invariants. */
export async function runCardScenario(s: CardScenario): Promise<{ rows: Row[]; notes: string[]; problems: string[] }> {
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const cards = s.lanes.flatMap((w) => w.cards);
  log(`- Authorize Card at ${CARD_RATE}/s open loop, ${CARD_RATE_WARMUP} s of warm-up then ${CARD_RATE_SECONDS} s, service then same SQL`);
  const paced = await pacedSide(s, s.service, cards, log, "service");
  const pacedBase = await pacedSide(s, s.baseline, cards, log, "same SQL");
  const outcomes = { service: {} as Record<string, number>, baseline: {} as Record<string, number> };
  const levels = CARD_LEVELS.map((level) => ({ level, service: new Side(`service ${level}`), baseline: new Side(`same SQL ${level}`) }));
  const run = (t: Target, level: number, into: Record<string, number>) => (seconds: number) => runCardAuthorizations(t, cards, s.ownerKey, seconds, level, into);
  await s.alternate(
    `Authorize Card, ${CARD_LEVELS.join(", ")} in flight, interleaved`,
    levels.flatMap((l) => [
      { side: l.service, run: run(s.service, l.level, outcomes.service) },
      { side: l.baseline, run: run(s.baseline, l.level, outcomes.baseline) },
    ]),
    s.servers,
  );
  const rows: Row[] = [pacedRow(paced)];
  const notes: string[] = [
    `Authorize Card at ${CARD_RATE}/s: service ${paced.sent} sent, latest send ${fmt(paced.maxLagMs, 1)} ms behind schedule (this client's own lag; from the actual send p50 ${fmt(paced.p50Sent, 1)} ms, p99 ${fmt(paced.p99Sent, 1)} ms), CPU client/server/postgres ${fmt(paced.clientCpu)}/${fmt(paced.serverCpu)}/${fmt(paced.dbCpu)} % (${fmt((10 * paced.serverCpu) / paced.rate, 2)} ms of server CPU per authorization); ` +
      `same SQL at the same rate: ${fmt(pacedBase.rate)}/s, p50 ${fmt(pacedBase.p50, 1)} ms, p99 ${fmt(pacedBase.p99, 1)} ms (from the actual send ${fmt(pacedBase.p99Sent, 1)} ms), CPU ${fmt(pacedBase.clientCpu)}/${fmt(pacedBase.serverCpu)}/${fmt(pacedBase.dbCpu)} %${Object.keys(pacedBase.unexpected).length > 0 ? `, unexpected ${JSON.stringify(pacedBase.unexpected)}` : ""}. ` +
      `Outcomes at ${CARD_RATE}/s (service): ${shares(paced.outcomes)}.`,
  ];
  for (const { level, service, baseline } of levels) {
    rows.push(compareRow(`Authorize Card, ${level} in flight (authorizations/s)`, service, baseline, level === CARD_TARGET_LEVEL ? CARD_TARGET : null));
    notes.push(`${level} in flight: CPU client/server/postgres service ${service.cpu}, same SQL ${baseline.cpu}, CPU/authorization ratio ${fmt(baseline.cpuMs / service.cpuMs, 2)}; spread service ${service.spread}, same SQL ${baseline.spread}`);
  }
  notes.push(`Outcomes in flight (warm-ups included): service ${shares(outcomes.service)}; same SQL ${shares(outcomes.baseline)}.`);
  const wallets = await creditProblems(s.databaseUrl);
  const checked = await cardProblems(s.databaseUrl);
  const problems = [...wallets.problems, ...checked.problems];
  notes.push(`Invariants after the load, on all ${fmt(wallets.wallets)} wallets and ${fmt(checked.authorizations)} card authorizations (held = open authorizations, no wallet over its limit, each card-day within its daily control, no approval on a paused card or at a blocked MCC, one notification with cardId per authorization): ${problems.length === 0 ? "hold" : problems.join("; ")}.`);
  return { rows, notes, problems };
}

/** The footnote of what was measured, given the rows the five check calls wrote. */
export function cardsNote(writes: Record<string, number>): string {
  return (
    `Authorize Card: POST /v2/cards/{cardId}/authorizations (owner key), a random card of ${fmt(CARD_WALLETS * CARDS_PER_WALLET)} (${CARD_WALLETS} wallets of the golden product × ${CARDS_PER_WALLET} cards: ${CARD_MIX.filter((k) => k === "plain").length} without controls, 1 with daily ${CARD_DAILY} cents, 1 blocking MCC ${BLOCKED_MCC}, 1 PAUSED), ` +
    `${CARD_AMOUNTS.min}–${CARD_AMOUNTS.max} cents at one of ${CARD_MERCHANTS.length} merchants (one with MCC ${BLOCKED_MCC}), a fresh processorReference each; the holds are neither captured nor voided (10⁷ USD a wallet: they never exhaust it). ` +
    `Open loop: requests sent on schedule whatever the answers, latency from the scheduled instant. Closed loop: rates count 201s; ${CARD_LEVELS.at(-1)} in flight on 1 000 wallets rarely meet on one wallet's lock. ` +
    `The baseline runs the service's own statements in the same transactions and order (credential, CARD_WALLET, BEGIN, LOCK_WALLET, CARD_DECISION, the write, COMMIT, the coalesced kick: scripts/bench/baseline-cards.ts; npx tsx scripts/bench/capture-cards.ts compares them); ` +
    `an approval, CARD_PAUSED, MCC_BLOCKED, SPEND_LIMIT_EXCEEDED and a repeated reference answer the same and write the same rows on both sides (${JSON.stringify(writes)}).`
  );
}
