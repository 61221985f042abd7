/**
 * The load and the checks of the Authorize Card rows of `npm run bench` (scripts/bench/cards.ts;
 * docs/performance.md "Cards: Authorize Card"): `POST /v2/cards/{cardId}/authorizations` on a random
 * card of the seeded tenant with a fresh `processorReference`, at a fixed rate (open loop:
 * {@link runPacedCards}) or with a fixed number in flight (closed loop, autocannon:
 * {@link runCardAuthorizations}); and the cards' invariants after the load ({@link cardProblems}).
 */
import { Agent, request } from "node:http";
import autocannon from "autocannon";
import pg from "pg";
import { measured, percentile, unexpectedOf, type RunResult, type Target } from "./load.js";

/** What a seeded card is for in the mix (scripts/bench/cards.ts `CARD_MIX`). */
export type CardKind = "plain" | "daily" | "blockedMcc" | "paused";

/** A seeded card: its id, its wallet and its kind. */
export interface CardLane {
  cardId: string;
  walletId: string;
  kind: CardKind;
}

/** A seeded credit wallet with its cards (one lane of scripts/bench/pair-run.ts). */
export interface CardWallet {
  walletId: string;
  cards: CardLane[];
}

/** The merchants of the load, drawn with equal odds; `7995` (betting) is the MCC the `blockedMcc` cards block. */
export const CARD_MERCHANTS = [
  { name: "Corner store", mcc: "5411", country: "MX" },
  { name: "Taqueria El Paso", mcc: "5812", country: "MX" },
  { name: "Farmacia Centro", mcc: "5912", country: "MX" },
  { name: "Lucky Bets", mcc: "7995", country: "US" },
] as const;
/** The MCC the `blockedMcc` cards refuse. */
export const BLOCKED_MCC = "7995";
/** Cents of each authorization of the load: drawn uniformly from this range (whole cents). */
export const CARD_AMOUNTS = { min: 100, max: 2_500 } as const;

let references = 0;
const referencePrefix = `bench-${process.pid}-${Date.now().toString(36)}`;

/** A fresh processor reference (unique in this process's runs: the tenant's references are unique). */
export const freshReference = (): string => `${referencePrefix}-${++references}`;

/** The body of one authorization: a random amount of {@link CARD_AMOUNTS} cents at a random merchant, a fresh reference. */
export function cardAuthorizationBody(amount = CARD_AMOUNTS.min + Math.floor(Math.random() * (CARD_AMOUNTS.max - CARD_AMOUNTS.min + 1))): string {
  const merchant = CARD_MERCHANTS[Math.floor(Math.random() * CARD_MERCHANTS.length)] ?? CARD_MERCHANTS[0];
  return JSON.stringify({ amount, merchant, processorReference: freshReference() });
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

/** The outcome of one answer: `approved`, the `declineReason`, or `HTTP <status>`. */
function outcomeOf(status: number, body: string): string {
  if (status !== 201) return `HTTP ${status}`;
  return /"status":"approved"/.test(body) ? "approved" : (/"declineReason":"([A-Z_]+)"/.exec(body)?.[1] ?? "declined ?");
}

const countInto = (into: Record<string, number>, key: string): void => void (into[key] = (into[key] ?? 0) + 1);

/** One open-loop run: the common figures, plus what was sent and how late the sender was. */
export interface PacedResult extends RunResult {
  /** Requests sent (on schedule), answers by outcome ({@link outcomeOf}). */
  sent: number;
  outcomes: Record<string, number>;
  /** The latest a request left after its scheduled instant, ms (the client's own lag). */
  maxLagMs: number;
  /** p50 and p99 from the instant each request was handed to the socket pool instead (without the client's lag), ms. */
  p50Sent: number;
  p99Sent: number;
}

/**
 * `rate` authorizations a second on `target` for `seconds`, open loop: request `i` is due at
 * `start + i / rate` and sent then whatever the earlier ones are doing (a late timer sends every
 * request already due), over a keep-alive agent of at most 48 sockets (under the service's
 * `MAX_CONNECTIONS_PER_ADDRESS`, 64). Latency runs from the request's scheduled instant to the end
 * of its answer, so a request queued behind slow ones counts its wait. Rate: 201 answers per second
 * from the first send to the last answer.
 */
export async function runPacedCards(target: Target, cards: readonly CardLane[], ownerKey: string, rate: number, seconds: number): Promise<PacedResult> {
  const url = new URL(target.base);
  const agent = new Agent({ keepAlive: true, maxSockets: 48 });
  const latencies: number[] = [];
  const fromSend: number[] = [];
  const outcomes: Record<string, number> = {};
  const unexpected: Record<string, number> = {};
  const pending: Promise<void>[] = [];
  let maxLagMs = 0;
  const send = (due: number): Promise<void> =>
    new Promise((done) => {
      const sentAt = performance.now();
      const body = cardAuthorizationBody();
      const headers = { "x-api-key": ownerKey, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) };
      const req = request({ host: url.hostname, port: url.port, method: "POST", path: `/v2/cards/${pick(cards).cardId}/authorizations`, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          latencies.push(performance.now() - due);
          fromSend.push(performance.now() - sentAt);
          const outcome = outcomeOf(res.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"));
          countInto(outcomes, outcome);
          if (outcome.startsWith("HTTP")) countInto(unexpected, String(res.statusCode));
          done();
        });
      });
      req.setTimeout(15_000, () => req.destroy(new Error("timeout")));
      req.on("error", () => (countInto(unexpected, "error"), done()));
      req.end(body);
    });
  const interval = 1000 / rate;
  const total = Math.round(rate * seconds);
  const { value: elapsed, clientCpu, serverCpu, dbCpu } = await measured(target, async () => {
    const start = performance.now();
    for (let i = 0; i < total; ) {
      const now = performance.now();
      for (; i < total && start + i * interval <= now; i++) {
        maxLagMs = Math.max(maxLagMs, now - (start + i * interval));
        pending.push(send(start + i * interval));
      }
      if (i < total) await new Promise((r) => setTimeout(r, Math.max(0, start + i * interval - performance.now())));
    }
    await Promise.all(pending);
    return (performance.now() - start) / 1000;
  });
  agent.destroy();
  latencies.sort((a, b) => a - b);
  fromSend.sort((a, b) => a - b);
  const answered = Object.entries(outcomes).reduce((n, [k, v]) => (k.startsWith("HTTP") ? n : n + v), 0);
  return { rate: answered / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), unexpected, clientCpu, serverCpu, dbCpu, sent: total, outcomes, maxLagMs, p50Sent: percentile(fromSend, 50), p99Sent: percentile(fromSend, 99) };
}

/** Per-connection state of a closed-loop request (autocannon keeps it across the connection's requests). */
interface CardContext {
  sentAt?: number;
}

/**
 * Authorize Card on `target` with `inFlight` connections, each one request at a time on a random
 * card of `cards` with a fresh processor reference (closed loop). Rate: 201 answers per second;
 * latency of each request (ms, measured here: sub-millisecond); `outcomes` counted into `into`.
 */
export async function runCardAuthorizations(target: Target, cards: readonly CardLane[], ownerKey: string, seconds: number, inFlight: number, into: Record<string, number>): Promise<RunResult> {
  const doneMs: number[] = [];
  const headers = { "x-api-key": ownerKey, "content-type": "application/json" };
  const requests: autocannon.Request[] = [
    {
      method: "POST",
      setupRequest: (req, ctx) => {
        (ctx as CardContext).sentAt = performance.now();
        return { ...req, method: "POST", path: `/v2/cards/${pick(cards).cardId}/authorizations`, headers, body: cardAuthorizationBody() };
      },
      onResponse: (status, body, ctx) => {
        const outcome = outcomeOf(status, body);
        countInto(into, outcome);
        if (status === 201) doneMs.push(performance.now() - ((ctx as CardContext).sentAt ?? 0));
      },
    },
  ];
  const { value: result, clientCpu, serverCpu, dbCpu } = await measured(target, () =>
    autocannon({ url: target.base, connections: inFlight, duration: seconds, pipelining: 1, requests }),
  );
  doneMs.sort((a, b) => a - b);
  return { rate: doneMs.length / result.duration, p50: percentile(doneMs, 50), p99: percentile(doneMs, 99), unexpected: unexpectedOf(result, [201]), clientCpu, serverCpu, dbCpu };
}

/**
 * The cards' invariants on the database at `url` after the load (docs/decisions/cards.md
 * "Authorize on a card", "Spend controls"): per card and UTC day, the approved amounts less what
 * was released within the card's `daily` control; no approval on a `PAUSED` card, nor at an MCC of
 * the card's `blockedMcc`; every card authorization on its card's wallet, with one notification
 * carrying its `cardId`; every decline with its reason. (The wallets' own invariants are
 * scripts/bench/authorizations-load.ts `creditProblems`.)
 * @returns one line per kind of problem; empty when they hold; the card authorizations checked.
 */
export async function cardProblems(url: string): Promise<{ problems: string[]; authorizations: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const count = async (sql: string): Promise<number> => Number((await client.query<{ n: string }>(`select count(*) as n from (${sql}) x`)).rows[0]?.n);
    const checks: [string, string][] = [
      [
        "card-days whose approved sum is over the card's daily control",
        `select a.card_id from credit_authorization a join credit_card c on c.card_id = a.card_id
          where a.status <> 'declined' and c.spend_controls ? 'daily'
          group by a.card_id, (a.created_at at time zone 'UTC')::date, c.spend_controls
         having sum(a.amount - a.released_amount) > (c.spend_controls->>'daily')::bigint`,
      ],
      ["approvals on a PAUSED card", `select 1 from credit_authorization a join credit_card c on c.card_id = a.card_id where c.state = 'PAUSED' and a.status = 'approved'`],
      [
        "approvals at a blocked MCC",
        `select 1 from credit_authorization a join credit_card c on c.card_id = a.card_id where a.status = 'approved' and c.spend_controls ? 'blockedMcc' and c.spend_controls->'blockedMcc' ? a.merchant_mcc`,
      ],
      ["card authorizations on another wallet than their card's", `select 1 from credit_authorization a join credit_card c on c.card_id = a.card_id where a.wallet_id <> c.wallet_id`],
      [
        "cards whose authorizations are not their notifications with cardId",
        `select coalesce(a.card_id, e.card_id) from (select card_id, count(*) n from credit_authorization where card_id is not null group by card_id) a
           full join (select card_id, count(*) n from credit_event where card_id is not null group by card_id) e on e.card_id = a.card_id
          where a.n is distinct from e.n`,
      ],
      ["declines without a reason, or approvals with one", `select 1 from credit_authorization where (status = 'declined') <> (decline_reason is not null)`],
    ];
    const problems: string[] = [];
    for (const [label, sql] of checks) {
      const n = await count(sql);
      if (n > 0) problems.push(`${n} ${label}`);
    }
    return { problems, authorizations: await count(`select 1 from credit_authorization where card_id is not null`) };
  } finally {
    await client.end();
  }
}
