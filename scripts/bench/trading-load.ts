/**
 * The seeding and the load of the trading rows of `npm run bench` (BENCH_ONLY=trading;
 * scripts/bench/trading.ts; docs/performance.md "Trading"): quote + order pairs with autocannon,
 * each connection one pair at a time on a wallet of its own, buy and sell alternating on each
 * wallet (docs/decisions/trading.md).
 */
import autocannon from "autocannon";
import { Leases, measured, percentile, unexpectedOf, type RunResult, type Target } from "./load.js";
import { call, type Seed } from "./seed.js";

/** A lane of the load: a user, its btc + usdt wallet, and the side of its next pair. */
export interface TradingLane {
  userId: string;
  walletId: string;
  next: "buy" | "sell";
}

/** BTC of each benchmark quote: about 65 USDT of notional at the sandbox's mid price (bounds 1–1 000 000 USDT). */
export const TRADE_BTC = "0.001";
/** Topped up on each lane's wallet after the seeding's 1 BTC and 250 USDT. */
export const TOP_UP = { btc: 10, usdt: 1_000_000 } as const;

/** The body of a Create Quote of `side` on `lane`'s wallet. */
export const quoteBody = (lane: TradingLane, side: "buy" | "sell"): string => JSON.stringify({ wallet_id: lane.walletId, symbol: "BTCUSDT", side, quantity: Number(TRADE_BTC) });

/**
 * Turns the users seeded by scripts/bench/seed.ts (each VERIFIED, with a wallet of btc on bitcoin
 * and usdt on ethereum) into lanes: deposits {@link TOP_UP} more into each wallet (sandbox deposits,
 * confirmed), so alternating buys and sells never run short. @throws SeedError.
 */
export async function seedTradingLanes(base: string, seeded: Seed): Promise<TradingLane[]> {
  const owner = { "x-api-key": seeded.ownerKey };
  const lanes: TradingLane[] = [];
  for (const u of seeded.users) {
    await call(`${base}/api/v1`, "POST", "/sandbox/deposits", owner, { wallet_id: u.walletId, network: "networks/bitcoin", currency: "btc", amount: TOP_UP.btc });
    await call(`${base}/api/v1`, "POST", "/sandbox/deposits", owner, { wallet_id: u.walletId, network: "networks/ethereum", currency: "usdt", amount: TOP_UP.usdt });
    lanes.push({ userId: u.userId, walletId: u.walletId, next: "buy" });
  }
  return lanes;
}

/** Per-connection state of a pair (autocannon keeps it across the pair's two requests). */
interface PairContext {
  lane?: TradingLane;
  side?: "buy" | "sell";
  quoteId?: string;
  startedAt?: number;
  sentAt?: number;
  failed?: boolean;
}

/**
 * Quote + order pairs on `target` with `inFlight` connections, each one pair at a time: `POST
 * /api/v1/users/{u}/quotes` (owner key, BTCUSDT, {@link TRADE_BTC}, the lane's next side) → 201;
 * `POST /api/v1/users/{u}/orders {quote_id}` → 201 `FILLED`, then the lane's side flips. A pair
 * holds one of the first `inFlight` of `lanes` (no two pairs in flight lock the same wallet's accounts).
 * Rate: filled orders per second; latency: of whole pairs; `steps` the median of each call (ms) as
 * `initiate` (quote) and `confirm` (order).
 */
export async function runTradingPairs(target: Target, lanes: readonly TradingLane[], ownerKey: string, seconds: number, inFlight: number): Promise<RunResult> {
  if (lanes.length < inFlight) throw new Error(`${inFlight} pairs in flight need ${inFlight} wallets, got ${lanes.length}`);
  const leases = new Leases(lanes.slice(0, inFlight));
  const pairMs: number[] = [];
  const stepMs = { quote: [] as number[], order: [] as number[] };
  const flow: Record<string, number> = {};
  const broken = (what: string, context: PairContext): void => {
    flow[what] = (flow[what] ?? 0) + 1;
    context.failed = true;
    if (context.lane) leases.release(context.lane);
    context.lane = undefined;
  };
  const headers = { "x-api-key": ownerKey, "content-type": "application/json" };
  const requests: autocannon.Request[] = [
    {
      method: "POST",
      setupRequest: (req, ctx) => {
        const context = ctx as PairContext;
        const lane = leases.lease();
        context.lane = lane;
        context.side = lane.next;
        context.failed = false;
        context.startedAt = performance.now();
        context.sentAt = context.startedAt;
        return { ...req, method: "POST", path: `/api/v1/users/${lane.userId}/quotes`, headers, body: quoteBody(lane, lane.next) };
      },
      onResponse: (status, text, ctx) => {
        const context = ctx as PairContext;
        stepMs.quote.push(performance.now() - (context.sentAt ?? 0));
        if (status !== 201) return broken(`quote ${status}`, context);
        context.quoteId = (JSON.parse(text) as { data: { quote_id: string } }).data.quote_id;
      },
    },
    {
      method: "POST",
      setupRequest: (req, ctx) => {
        const context = ctx as PairContext;
        if (context.failed || !context.lane || !context.quoteId) return null as unknown as autocannon.Request;
        context.sentAt = performance.now();
        return { ...req, method: "POST", path: `/api/v1/users/${context.lane.userId}/orders`, headers, body: JSON.stringify({ quote_id: context.quoteId }) };
      },
      onResponse: (status, text, ctx) => {
        const context = ctx as PairContext;
        stepMs.order.push(performance.now() - (context.sentAt ?? 0));
        if (status !== 201) return broken(`order ${status}`, context);
        if ((JSON.parse(text) as { data: { status: string } }).data.status !== "FILLED") return broken("order not FILLED", context);
        pairMs.push(performance.now() - (context.startedAt ?? 0));
        if (context.lane) {
          context.lane.next = context.side === "buy" ? "sell" : "buy";
          leases.release(context.lane);
        }
        context.lane = undefined;
        context.quoteId = undefined;
      },
    },
  ];
  const { value: result, clientCpu, serverCpu, dbCpu } = await measured(target, () =>
    autocannon({ url: target.base, connections: inFlight, duration: seconds, pipelining: 1, requests }),
  );
  pairMs.sort((a, b) => a - b);
  const p50Of = (values: number[]): number => percentile(values.sort((a, b) => a - b), 50);
  const unexpected = { ...unexpectedOf(result, [201]), ...(Object.keys(flow).length > 0 && { flow: Object.values(flow).reduce((a, b) => a + b, 0) }) };
  return {
    rate: pairMs.length / result.duration,
    p50: percentile(pairMs, 50),
    p99: percentile(pairMs, 99),
    unexpected,
    clientCpu,
    serverCpu,
    dbCpu,
    steps: { initiate: p50Of(stepMs.quote), mail: Number.NaN, confirm: p50Of(stepMs.order) },
  };
}
