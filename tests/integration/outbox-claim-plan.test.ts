/**
 * The outbox's claim stays cheap however large the backlog is (docs/outbox.md "The claim's plan";
 * src/modules/outbox/repository/claim.ts): with 200 000 pending messages in a channel's table, the claim
 * statement of every branch is an index scan over the due messages only, bounded by
 * `next_attempt_at`, that removes no row by a filter, and it takes well under 50 ms. The credit
 * backlog is the hard case: 200 wallets of 1 000 pending events each, every wallet's head in
 * backoff, so no event is due; before, the never-attempted branch walked every later event of every
 * wallet and dropped it by its filter (3.6 s in production with 166 000 events). The plans are read
 * from `EXPLAIN (ANALYZE, FORMAT JSON)` of the services' own claim statements, in a transaction
 * that is rolled back.
 *
 * Also the order of a stream under concurrency: the insert trigger of `credit_event` and a delivery
 * ending the wallet's head serialise on the head's row lock, so the event written at the same time
 * is never left waiting behind an event that is no longer pending.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { PARKED_AT, WAITING_AT } from "../../src/domain/outbox.js";
import { Db } from "../../src/db/sql.js";
import { claimStatement, type ClaimBranch } from "../../src/modules/outbox/repository/claim.js";
import type { OutboxChannel } from "../../src/modules/outbox/channel.js";
import { Outbox } from "../../src/modules/outbox/outbox.js";
import { CreditWallet } from "../../src/modules/credit/accounts/entities.js";
import { TEST_MASTER_KEY, apiOf, startTestApp, type TestApp } from "../support/app.js";
import { goldenProductBody } from "../support/credit-golden.js";
import { Walk } from "../support/fixtures.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";

const BACKLOG = 200_000;
const WALLETS = 200;
/** A generous bound: this is a plan test, not a benchmark (the plans below take about a millisecond). */
const CLAIM_BOUND_MS = 50;

let t: TestApp;
let receiver: Receiver;
let customerId: string;
let walletIds: string[];

/** One node of a JSON plan. */
interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Relation Name"?: string;
  "Actual Rows": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

const flatten = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(flatten)];

/** `EXPLAIN (ANALYZE, FORMAT JSON)` of a statement (`$n` placeholders), rolled back. */
async function explain(text: string, params: unknown[]): Promise<{ nodes: PlanNode[]; executionMs: number }> {
  const client = new pg.Client({ connectionString: t.databaseUrl });
  await client.connect();
  try {
    await client.query("begin");
    const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode; "Execution Time": number }] }>(`explain (analyze, format json) ${text}`, params);
    const [result] = rows[0]!["QUERY PLAN"];
    return { nodes: flatten(result.Plan), executionMs: result["Execution Time"] };
  } finally {
    await client.query("rollback").catch(() => {});
    await client.end();
  }
}

/**
 * Asserts the claim plan of `channel` over `branch`: an index scan of `index` on `table` that
 * returned `claimed` rows, no node removing rows by a filter, and a time under the bound.
 */
async function expectIndexClaim<M>(channel: OutboxChannel<M>, branch: ClaimBranch, table: string, index: string, claimed: number): Promise<number> {
  const { statement, values } = claimStatement(channel, branch);
  const { nodes, executionMs } = await explain(statement.text, values);
  const scan = nodes.find((node) => node["Relation Name"] === table && node["Index Name"] === index);
  expect(scan, `an index scan of ${index} in ${JSON.stringify(nodes.map((node) => [node["Node Type"], node["Index Name"] ?? node["Relation Name"]]))}`).toBeDefined();
  expect(scan!["Node Type"]).toMatch(/^Index (Only )?Scan$/);
  expect(scan!["Actual Rows"]).toBe(claimed);
  expect(nodes.filter((node) => node["Node Type"] === "Seq Scan" && node["Relation Name"] === table)).toEqual([]);
  expect(nodes.filter((node) => (node["Rows Removed by Filter"] ?? 0) > 0).map((node) => [node["Node Type"], node["Index Name"], node["Rows Removed by Filter"]])).toEqual([]);
  expect(executionMs).toBeLessThan(CLAIM_BOUND_MS);
  return executionMs;
}

const sql = <T extends Record<string, unknown>>(text: string, params: unknown[] = []) => t.orm.em.fork().getConnection().execute<T[]>(text, params);

beforeAll(async () => {
  // ROLE=api: no worker claims anything but the test
  [t, receiver] = await Promise.all([startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true", ROLE: "api", OUTBOX_INTERVAL_S: "3600" }), startReceiver()]);
}, 60_000);
afterAll(async () => {
  await t?.dispose();
  await receiver?.close();
});

describe("the credit notification claim over 200 000 pending events", () => {
  beforeAll(async () => {
    const walk = new Walk(t.express);
    const tenant = await walk.tenant(`plan-credit-${Date.now().toString(36)}`);
    customerId = tenant.customerId;
    const { userId } = await walk.activeUserWithToken(tenant.key);
    const product = await apiOf(t).post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody(customerId));
    expect(product.status, JSON.stringify(product.body)).toBe(201);
    const enlisted = await apiOf(t).put("/v2/notifications").set("x-api-key", tenant.key).send({ creditNotificationsURL: receiver.url });
    expect(enlisted.status, JSON.stringify(enlisted.body)).toBe(200);
    receiver.trust(enlisted.body.data.signingSecret as string);
    const productId = (await sql<{ id: string }>(`select id from credit_product where customer_id = ? and code = '001'`, [customerId]))[0]!.id;
    const now = new Date();
    const first = randomUUID();
    await t.orm.em.fork().insert(CreditWallet, {
      walletId: first, customerId, userId, productId, currency: "USD", description: null,
      status: "active", statusBeforeDefault: null, limit: 100000, availableAmount: 70000, principalOutstanding: 30000,
      interestOutstanding: 0, firstCutDate: new Date("2026-01-31T00:00:00Z"), time: null, expiresAt: null,
      cycleStart: new Date("2026-01-01T00:00:00Z"), sumOfDailyBalance: 0, lastCloseAt: null, nextCutAt: new Date("2026-01-31T00:00:00Z"),
      interestRateNominal: "36.0000", interestRateMoroso: "12.0000", fixedInterestNominal: 0, fixedInterestMoroso: 500,
      minimumPaymentRate: "10.0000", fixedMinimumPayment: 1000, specsOverridden: false, pendingSpecs: null,
      sequence: BACKLOG / WALLETS, asOf: now, createdAt: now, updatedAt: now,
    });
    // the other wallets: copies of the first under new ids (set-based)
    await sql(
      `insert into credit_wallet select (jsonb_populate_record(null::credit_wallet, to_jsonb(w) || jsonb_build_object('wallet_id', gen_random_uuid()))).*
         from credit_wallet w, generate_series(2, ?) where w.wallet_id = ?`,
      [WALLETS, first],
    );
    walletIds = (await sql<{ wallet_id: string }>(`select wallet_id from credit_wallet where customer_id = ? order by wallet_id`, [customerId])).map((r) => r.wallet_id);
    expect(walletIds).toHaveLength(WALLETS);
    // 1 000 events a wallet, written as the writers write them (no delivery column), in sequence order
    await sql(
      `insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
       select gen_random_uuid(), w.wallet_id, w.customer_id, n, 'Reporte de Pago', 100, 'credit', true, '{}'::jsonb, now()
         from credit_wallet w cross join generate_series(1, ?) n where w.customer_id = ? order by w.wallet_id, n`,
      [BACKLOG / WALLETS, customerId],
    );
    // every head has failed once and waits for its retry (as when the receiver is down)
    await sql(`update credit_event set next_attempt_at = now() + interval '1 hour', attempt_count = 1 where customer_id = ? and sequence = 1`, [customerId]);
    await sql(`analyze credit_event`);
  }, 180_000);

  it("the insert trigger left only the wallets' heads outside the waiting range", async () => {
    const rows = await sql<{ waiting: number; heads: number; other: number }>(
      `select count(*) filter (where next_attempt_at = ?)::int as waiting,
              count(*) filter (where sequence = 1 and next_attempt_at > now() and next_attempt_at < ?)::int as heads,
              count(*) filter (where next_attempt_at is null or next_attempt_at <= now())::int as other
         from credit_event where customer_id = ? and delivery_status = 'pending'`,
      [WAITING_AT, PARKED_AT, customerId],
    );
    expect(rows[0]).toEqual({ waiting: BACKLOG - WALLETS, heads: WALLETS, other: 0 });
  });

  it("finds nothing due with index scans of credit_event_pending_due_index that filter no row, in under 50 ms", async () => {
    const channel = t.services.creditDelivery.channel;
    for (const branch of ["due", "new"] as const) await expectIndexClaim(channel, branch, "credit_event", "credit_event_pending_due_index", 0);
  });

  it("takes a due head, and a never-attempted head, the same way", async () => {
    const channel = t.services.creditDelivery.channel;
    await sql(`update credit_event set next_attempt_at = now() - interval '1 second' where wallet_id = ? and sequence = 1`, [walletIds[7]]);
    await sql(`update credit_event set next_attempt_at = null where wallet_id = ? and sequence = 1`, [walletIds[8]]);
    try {
      await expectIndexClaim(channel, "due", "credit_event", "credit_event_pending_due_index", 1);
      await expectIndexClaim(channel, "new", "credit_event", "credit_event_pending_due_index", 1);
    } finally {
      await sql(`update credit_event set next_attempt_at = now() + interval '1 hour' where wallet_id in (?, ?) and sequence = 1`, [walletIds[7], walletIds[8]]);
    }
  });
});

describe("the email and PIN webhook claims over 200 000 pending messages", () => {
  beforeAll(async () => {
    // every message failed once and waits for its retry
    await sql(
      `insert into outbox_email (id, customer_id, "to", subject, text, status, attempts, next_attempt_at, last_error, reference, created_at, sent_at)
       select gen_random_uuid(), ?, 'user' || n || '@example.com', 'subject', 'text', 'pending', 1, now() + interval '1 hour', 'down', null, now() - n * interval '1 millisecond', null
         from generate_series(1, ?) n`,
      [customerId, BACKLOG],
    );
    await sql(
      `insert into webhook_delivery (id, customer_id, webhook_message_id, event_type, payload_sealed, status, attempt_count, next_attempt_at, reference, created_at, updated_at)
       select gen_random_uuid(), ?, 'msg_plan_' || n, 'withdrawal.pin', 'sealed', 'pending', 1, now() + interval '1 hour', null, now(), now()
         from generate_series(1, ?) n`,
      [customerId, BACKLOG],
    );
    await sql(`analyze outbox_email`);
    await sql(`analyze webhook_delivery`);
  }, 180_000);

  it("the email claim is an index scan of outbox_email_due_index that filters no row, in under 50 ms", async () => {
    await expectIndexClaim(t.services.mail.channel, "due", "outbox_email", "outbox_email_due_index", 0);
  });

  it("the webhook claim is an index scan of webhook_delivery_due_index that filters no row, in under 50 ms", async () => {
    await expectIndexClaim(t.services.webhooks.channel, "due", "webhook_delivery", "webhook_delivery_due_index", 0);
  });
});

describe("the order of a stream under concurrency", () => {
  let userId: string;
  let productId: string;

  beforeAll(async () => {
    const walk = new Walk(t.express);
    const tenant = await walk.tenant(`plan-order-${Date.now().toString(36)}`);
    ({ userId } = await walk.activeUserWithToken(tenant.key));
    const product = await apiOf(t).post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody(tenant.customerId));
    expect(product.status, JSON.stringify(product.body)).toBe(201);
    const enlisted = await apiOf(t).put("/v2/notifications").set("x-api-key", tenant.key).send({ creditNotificationsURL: receiver.url });
    expect(enlisted.status).toBe(200);
    productId = (await sql<{ id: string }>(`select id from credit_product where customer_id = ? and code = '001'`, [tenant.customerId]))[0]!.id;
    customerId = tenant.customerId;
  });

  /** A wallet of the order tenant with its event 1 written (the head, due now). */
  async function walletWithHead(): Promise<{ walletId: string; e1: string }> {
    const walletId = randomUUID();
    await sql(
      `insert into credit_wallet select (jsonb_populate_record(null::credit_wallet, to_jsonb(w) || jsonb_build_object('wallet_id', ?::text, 'customer_id', ?::text, 'user_id', ?::text, 'product_id', ?::text))).*
         from credit_wallet w limit 1`,
      [walletId, customerId, userId, productId],
    );
    const e1 = randomUUID();
    await sql(insertEvent, [e1, walletId, customerId, 1]);
    return { walletId, e1 };
  }
  const insertEvent = `insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
    values (?, ?, ?, ?, 'Reporte de Pago', 100, 'credit', true, '{}'::jsonb, now())`;
  const nextAttemptOf = async (id: string) => (await sql<{ next_attempt_at: Date | null }>(`select next_attempt_at from credit_event where id = ?`, [id]))[0]!.next_attempt_at;
  /** Waits until a backend of the database waits for a row lock. */
  const someoneWaitsForALock = () =>
    waitFor("a transaction to wait for the head's row lock", async () => {
      const [row] = await sql<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
      return row!.n > 0 ? true : undefined;
    });

  it("an event written while a round sends its wallet's head: the round's record waits for the writer, then makes the event due", async () => {
    const { walletId, e1 } = await walletWithHead();
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 2 });
    onTestFinished(() => pool.end());
    const outbox = new Outbox(new Db(pool, { named: true }), t.logger);
    const channel = t.services.creditDelivery.channel;
    const claimed = await outbox.claim(channel);
    expect(claimed).toMatchObject({ id: e1 });
    const writer = new pg.Client({ connectionString: t.databaseUrl });
    await writer.connect();
    try {
      await writer.query("begin");
      const e2 = randomUUID();
      let n = 0;
      await writer.query(insertEvent.replace(/\?/g, () => `$${++n}`), [e2, walletId, customerId, 2]);
      const delivered = outbox.deliver(channel, claimed!);
      await someoneWaitsForALock();
      await writer.query("commit");
      expect(await delivered).toBe("succeeded");
      // event 2 was written behind a pending event 1 and is due now that event 1 has ended
      expect(await nextAttemptOf(e2)).toBeNull();
      expect(await t.services.creditDelivery.deliverDue()).toBe(1);
      expect(receiver.received.filter((h) => (JSON.parse(h.body) as { walletId: string }).walletId === walletId).map((h) => h.headers["webhook-id"])).toEqual([e1, e2]);
    } finally {
      await writer.end();
    }
  });

  it("an event written while a delivery ends its wallet's head: the writer waits for it, and the event is the new head, due", async () => {
    const { walletId, e1 } = await walletWithHead();
    const deliverer = new pg.Client({ connectionString: t.databaseUrl });
    await deliverer.connect();
    try {
      // a delivery's record, ended but not committed: the head succeeded, its stream had no later event to make due
      await deliverer.query("begin");
      await deliverer.query(`update credit_event set delivery_status = 'succeeded', attempt_count = 1, next_attempt_at = null where id = $1`, [e1]);
      await deliverer.query(
        `update credit_event set next_attempt_at = null where id = (select h.id from credit_event h where h.wallet_id = $1 and h.delivery_status = 'pending' order by h.sequence limit 1) and next_attempt_at = $2`,
        [walletId, WAITING_AT],
      );
      const e2 = randomUUID();
      const written = sql(insertEvent, [e2, walletId, customerId, 2]);
      await someoneWaitsForALock();
      await deliverer.query("commit");
      await written;
      expect(await nextAttemptOf(e2)).toBeNull();
    } finally {
      await deliverer.end();
    }
  });
});
