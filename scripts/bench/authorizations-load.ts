/**
 * The load and the checks of the card-authorization rows of `npm run bench` (scripts/bench/authorizations.ts;
 * docs/performance.md "HTTP: `npm run bench`"): authorize + capture pairs with autocannon, each
 * connection one pair at a time on a credit wallet of its own, and the credit invariants of the
 * wallets after the load (docs/decisions/credit.md "Authorizations").
 */
import autocannon from "autocannon";
import pg from "pg";
import { Leases, measured, percentile, unexpectedOf, type RunResult, type Target } from "./load.js";

/** A lane of the load: a credit wallet of its own (scripts/bench/authorizations.ts seeds them). */
export interface CreditLane {
  walletId: string;
}

/** Per-connection state of a pair (autocannon keeps it across the pair's two requests). */
interface PairContext {
  lane?: CreditLane;
  authorizationId?: string;
  startedAt?: number;
  sentAt?: number;
  failed?: boolean;
}

/** The body of each benchmark authorization. */
export const authorizeBody = (amount: number): string => JSON.stringify({ amount, merchant: { name: "Corner store", mcc: "5411", country: "MX" } });

/**
 * Authorize + capture pairs on `target` with `inFlight` connections, each one pair at a time: `POST
 * /v2/wallet/credits/{w}/authorizations` (owner key, a fresh Idempotency-Key, `amount` cents) → 201
 * `approved`; `POST …/authorizations/{id}/capture` (no amount: the whole hold) → 200. A pair holds
 * one of the first `inFlight` of `lanes` (no two pairs in flight lock the same wallet row).
 * Rate: captured pairs per second; latency: of whole pairs; `steps` the median of each call (ms)
 * as `initiate` (authorize) and `confirm` (capture).
 */
export async function runAuthorizationPairs(target: Target, lanes: readonly CreditLane[], ownerKey: string, amount: number, seconds: number, inFlight: number): Promise<RunResult> {
  if (lanes.length < inFlight) throw new Error(`${inFlight} pairs in flight need ${inFlight} wallets, got ${lanes.length}`);
  const leases = new Leases(lanes.slice(0, inFlight));
  const pairMs: number[] = [];
  const stepMs = { authorize: [] as number[], capture: [] as number[] };
  const flow: Record<string, number> = {};
  const broken = (what: string, context: PairContext): void => {
    flow[what] = (flow[what] ?? 0) + 1;
    context.failed = true;
    if (context.lane) leases.release(context.lane);
    context.lane = undefined;
  };
  const headers = { "x-api-key": ownerKey, "content-type": "application/json" };
  const body = authorizeBody(amount);
  let keys = 0;
  const requests: autocannon.Request[] = [
    {
      method: "POST",
      setupRequest: (req, ctx) => {
        const context = ctx as PairContext;
        const lane = leases.lease();
        context.lane = lane;
        context.failed = false;
        context.startedAt = performance.now();
        context.sentAt = context.startedAt;
        return {
          ...req,
          method: "POST",
          path: `/v2/wallet/credits/${lane.walletId}/authorizations`,
          headers: { ...headers, "idempotency-key": `bench-auth-${process.pid}-${Date.now()}-${++keys}` },
          body,
        };
      },
      onResponse: (status, text, ctx) => {
        const context = ctx as PairContext;
        stepMs.authorize.push(performance.now() - (context.sentAt ?? 0));
        if (status !== 201) return broken(`authorize ${status}`, context);
        const data = (JSON.parse(text) as { data: { authorizationId: string; status: string } }).data;
        if (data.status !== "approved") return broken(`authorization ${data.status}`, context);
        context.authorizationId = data.authorizationId;
      },
    },
    {
      method: "POST",
      setupRequest: (req, ctx) => {
        const context = ctx as PairContext;
        if (context.failed || !context.lane || !context.authorizationId) return null as unknown as autocannon.Request;
        context.sentAt = performance.now();
        return { ...req, method: "POST", path: `/v2/wallet/credits/${context.lane.walletId}/authorizations/${context.authorizationId}/capture`, headers, body: "{}" };
      },
      onResponse: (status, _text, ctx) => {
        const context = ctx as PairContext;
        stepMs.capture.push(performance.now() - (context.sentAt ?? 0));
        if (status !== 200) return broken(`capture ${status}`, context);
        pairMs.push(performance.now() - (context.startedAt ?? 0));
        if (context.lane) leases.release(context.lane);
        context.lane = undefined;
        context.authorizationId = undefined;
      },
    },
  ];
  const { value: result, clientCpu, serverCpu, dbCpu } = await measured(target, () =>
    autocannon({ url: target.base, connections: inFlight, duration: seconds, pipelining: 1, requests }),
  );
  pairMs.sort((a, b) => a - b);
  const p50Of = (values: number[]): number => percentile(values.sort((a, b) => a - b), 50);
  const unexpected = { ...unexpectedOf(result, [200, 201]), ...(Object.keys(flow).length > 0 && { flow: Object.values(flow).reduce((a, b) => a + b, 0) }) };
  return {
    rate: pairMs.length / result.duration,
    p50: percentile(pairMs, 50),
    p99: percentile(pairMs, 99),
    unexpected,
    clientCpu,
    serverCpu,
    dbCpu,
    steps: { initiate: p50Of(stepMs.authorize), mail: Number.NaN, confirm: p50Of(stepMs.capture) },
  };
}

/**
 * The credit invariants of every wallet of the database at `url` (docs/decisions/credit.md
 * "Authorizations"): `available + held + totalDebt − overdraft ≤ limit`; `amount_held` = the sum of
 * its open (`approved`) authorizations; `sequence` = its events; and, for wallets that saw nothing
 * but authorizations (no statement, no payment: the benchmark's), principal = the sum captured.
 * @returns one line per kind of problem; empty when they hold, and how many wallets were checked.
 */
export async function creditProblems(url: string): Promise<{ problems: string[]; wallets: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const count = async (sql: string): Promise<number> => Number((await client.query<{ n: string }>(`select count(*) as n from (${sql}) x`)).rows[0]?.n);
    const checks: [string, string][] = [
      [
        "wallets over their limit (available + held + debt − overdraft > limit)",
        `select wallet_id from credit_wallet where available_amount + amount_held + principal_outstanding + interest_outstanding
           - greatest(0, principal_outstanding + interest_outstanding + amount_held - credit_limit) > credit_limit`,
      ],
      [
        "wallets whose held amount is not the sum of their open authorizations",
        `select w.wallet_id from credit_wallet w left join (select wallet_id, sum(amount) as s from credit_authorization where status = 'approved' group by wallet_id) a
           on a.wallet_id = w.wallet_id where w.amount_held <> coalesce(a.s, 0)`,
      ],
      ["wallets whose sequence is not their number of events", `select w.wallet_id from credit_wallet w where w.sequence <> (select count(*) from credit_event e where e.wallet_id = w.wallet_id)`],
      [
        "wallets (authorizations only) whose principal is not the sum captured",
        `select w.wallet_id from credit_wallet w
           where not exists (select 1 from credit_event e where e.wallet_id = w.wallet_id and e.type not like 'Autorizacion%')
             and w.principal_outstanding <> (select coalesce(sum(captured_amount), 0) from credit_authorization a where a.wallet_id = w.wallet_id)`,
      ],
    ];
    const problems: string[] = [];
    for (const [label, sql] of checks) {
      const n = await count(sql);
      if (n > 0) problems.push(`${n} ${label}`);
    }
    return { problems, wallets: await count(`select wallet_id from credit_wallet`) };
  } finally {
    await client.end();
  }
}
