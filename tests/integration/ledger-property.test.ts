/**
 * The custody ledger checks itself (docs/decisions/customers-users-and-wallets.md "The custody ledger"; docs/architecture.md "Patterns worth knowing"): a
 * property-based test (fast-check) runs random sequences of deposits, holds, releases, debits and
 * transfers between wallets (docs/decisions/limits-and-allowlist.md "Transfers") — some sequential,
 * some concurrent on one wallet and currency, some crossing transfers between the same wallets in
 * both directions — against the real PostgreSQL, each operation in its own transaction, next to a
 * model in plain decimal arithmetic (the project's `Money`). Invariants: entries sum to zero per
 * currency; each cached balance equals the sum of its postings; no wallet balance or available
 * amount ever goes below zero; and the balances equal what the model says was accepted. Only
 * INSUFFICIENT_BALANCE may refuse an operation: any other error (deadlock, serialization failure,
 * constraint violation…) fails the test.
 */
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Tx } from "../../src/db/sql.js";
import { DomainError } from "../../src/domain/errors.js";
import type { EntryKind } from "../../src/domain/ledger.js";
import { Money, money, type Money as MoneyValue } from "../../src/domain/money.js";
import type { LedgerCheck, LedgerService, PostRequest, TransferPostRequest, WalletCurrencyBalance } from "../../src/modules/ledger/service.js";
import { useTestApp } from "../support/app.js";
import { waitFor } from "../support/wait.js";

const t = useTestApp();
let ledger: LedgerService;

beforeAll(async () => {
  ledger = t.services.ledger;
});

const CURRENCIES = ["btc", "eth", "usdt"] as const;
/** Smallest unit of the amounts the test generates (8 decimals, like satoshis). */
const UNIT = money("0.00000001");
const ZERO = money(0);
const CLEAN = { unbalancedEntries: [], cacheMismatches: [], negativeAccounts: [], unbalancedCurrencies: [] };

/** `units` of 10⁻⁸, exactly. */
const fromUnits = (units: number): MoneyValue => money(units).times(UNIT);

/** Runs `fn` in its own transaction (src/db/sql.ts `Db.transaction`). */
function inTransaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  return t.db.transaction((tx) => fn(tx));
}

/** Runs this test's own `text` (`$1…`) with `values` in `tx`, unnamed. */
function exec<Row extends object>(tx: Tx, text: string, values: unknown[] = []): Promise<Row[]> {
  return tx.rows<Row>({ name: "", text }, values);
}

/** Runs `fn` on a fresh fork of the ORM's entity manager, outside any transaction. */
function withEm<T>(fn: (em: EntityManager) => Promise<T>): Promise<T> {
  return fn(t.orm.em.fork());
}

/** What an operation of the workload does: a one-wallet post, or a transfer between two wallets. */
type OpKind = EntryKind | "transfer";

/** One operation of the workload, resolved: a one-wallet post, or a transfer between two wallets of the run. */
type Request = PostRequest | (TransferPostRequest & { kind: "transfer" });

/** The wallets an operation changes: the wallet of a post; a transfer's source, then its destination. */
const walletsOf = (r: Request): string[] => (r.kind === "transfer" ? [r.fromWalletId, r.toWalletId] : [r.walletId]);

/** An accepted operation's balances after it, one per wallet of {@link walletsOf}, in that order. */
type Outcome = { accepted: true; after: WalletCurrencyBalance[] } | { accepted: false };

/**
 * Posts one operation in its own transaction. INSUFFICIENT_BALANCE is a refusal; every other error
 * is rethrown so that the property fails (fast-check then shrinks and prints the seed).
 */
async function attempt(request: Request): Promise<Outcome> {
  try {
    if (request.kind === "transfer") {
      const { from, to } = await inTransaction((tx) => ledger.transfer(tx, request));
      return { accepted: true, after: [from, to] };
    }
    const { after } = await inTransaction((tx) => ledger.post(tx, request));
    return { accepted: true, after: [after] };
  } catch (error) {
    if (error instanceof DomainError && error.code === "INSUFFICIENT_BALANCE") return { accepted: false };
    throw error;
  }
}

/** How many sessions on this file's database wait for a lock now. */
async function lockWaiters(): Promise<number> {
  const [row] = await withEm((em) =>
    em.execute<{ n: number }[]>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`),
  );
  return row?.n ?? 0;
}

/** Runs every promise to completion before failing on the first rejection (no run leaks into the next). */
async function settleAll<T>(promises: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

// ---------------------------------------------------------------------------------------------
// The model: what each wallet bucket should hold, in plain decimal arithmetic.
// ---------------------------------------------------------------------------------------------

interface Buckets {
  available: MoneyValue;
  held: MoneyValue;
}

/** The bucket a kind of operation draws from (a deposit draws from outside custody; a transfer from its source's available). */
function sourceOf(kind: OpKind): keyof Buckets | undefined {
  return kind === "hold" || kind === "transfer" ? "available" : kind === "deposit" ? undefined : "held";
}

/** Whether the model accepts `kind` of `amount` drawn from `buckets` (a transfer's: its source's). */
function allowed(buckets: Buckets, kind: OpKind, amount: MoneyValue): boolean {
  const source = sourceOf(kind);
  return source === undefined || buckets[source].gte(amount);
}

/** The buckets after one-wallet `kind` of `amount` (assumed allowed). */
function apply(buckets: Buckets, kind: EntryKind, amount: MoneyValue): Buckets {
  switch (kind) {
    case "deposit":
    case "withdrawal_reversal":
      return { available: buckets.available.plus(amount), held: buckets.held };
    case "hold":
      return { available: buckets.available.minus(amount), held: buckets.held.plus(amount) };
    case "release":
      return { available: buckets.available.plus(amount), held: buckets.held.minus(amount) };
    case "debit":
      return { available: buckets.available, held: buckets.held.minus(amount) };
  }
}

/** The model: each wallet's buckets of each currency, by `walletId:currency`. */
type Model = Map<string, Buckets>;

const modelKey = (walletId: string, currency: string): string => `${walletId}:${currency}`;
const bucketsIn = (model: Model, walletId: string, currency: string): Buckets => model.get(modelKey(walletId, currency)) ?? { available: ZERO, held: ZERO };

/** Whether the model accepts `r`. */
function allowedIn(model: Model, r: Request): boolean {
  return allowed(bucketsIn(model, walletsOf(r)[0]!, r.currency), r.kind, r.amount);
}

/** The model after `r` (assumed allowed), as a new map. */
function applyIn(model: Model, r: Request): Model {
  const next = new Map(model);
  if (r.kind === "transfer") {
    const from = bucketsIn(model, r.fromWalletId, r.currency);
    const to = bucketsIn(model, r.toWalletId, r.currency);
    next.set(modelKey(r.fromWalletId, r.currency), { available: from.available.minus(r.amount), held: from.held });
    next.set(modelKey(r.toWalletId, r.currency), { available: to.available.plus(r.amount), held: to.held });
  } else {
    next.set(modelKey(r.walletId, r.currency), apply(bucketsIn(model, r.walletId, r.currency), r.kind, r.amount));
  }
  return next;
}

/**
 * Whether some serial order of `ops`, starting from `start`, accepts exactly the ones observed as
 * accepted and refuses the others (the database serialises posts on one account by its row lock,
 * so the outcome of a concurrent batch must be that of SOME serial order). The model after a set
 * of done operations depends only on the set (each one's effect is fixed by its observed outcome),
 * so the search remembers the sets it already failed from.
 */
function explainedBySomeOrder(start: Model, ops: { request: Request; accepted: boolean }[]): boolean {
  const failed = new Set<number>();
  const search = (model: Model, remaining: number): boolean => {
    if (remaining === 0) return true;
    if (failed.has(remaining)) return false;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      if ((remaining & (1 << i)) === 0) continue;
      if (allowedIn(model, op.request) !== op.accepted) continue;
      if (search(op.accepted ? applyIn(model, op.request) : model, remaining & ~(1 << i))) return true;
    }
    failed.add(remaining);
    return false;
  };
  return search(start, (1 << ops.length) - 1);
}

// ---------------------------------------------------------------------------------------------
// Generated steps.
// ---------------------------------------------------------------------------------------------

/**
 * How an operation's amount is chosen. Relative amounts are resolved against the model when the
 * step runs, so that holds, releases and debits are often affordable and sometimes exactly at or
 * just past the limit; absolute amounts are 1 to 2^53−1 units of 10⁻⁸.
 */
type AmountSpec =
  | { units: number }
  /** `percent` % of the bucket the operation draws from, rounded down to 8 decimals (at least 1 unit). */
  | { percent: number }
  /** The whole bucket the operation draws from, plus `delta` units (−1, 0: affordable; +1: refused). */
  | { edge: -1 | 0 | 1 };

interface OpSpec {
  kind: OpKind;
  wallet: number;
  /** A transfer's destination: the `to`-th other wallet of the run (default 0; ignored by other kinds). */
  to?: number;
  currency: number;
  amount: AmountSpec;
}

type Step =
  | { type: "one"; op: OpSpec }
  /** Concurrent operations: most on one wallet and currency, a few elsewhere (sharing external accounts). */
  | { type: "batch"; ops: OpSpec[] }
  /** `count` concurrent holds of one amount, `percent` % of the available money. */
  | { type: "holds"; wallet: number; currency: number; count: number; percent: number }
  /** Concurrent transfers in one currency between the run's wallets, in both directions (crossing locks). */
  | { type: "crossfire"; ops: OpSpec[] };

const kindArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant<EntryKind>("deposit") },
  { weight: 3, arbitrary: fc.constant<EntryKind>("hold") },
  { weight: 2, arbitrary: fc.constant<EntryKind>("release") },
  { weight: 2, arbitrary: fc.constant<EntryKind>("debit") },
  { weight: 3, arbitrary: fc.constant<OpKind>("transfer") },
);
const amountArb: fc.Arbitrary<AmountSpec> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ units: fc.integer({ min: 1, max: 1_000_000_000 }) }) },
  { weight: 1, arbitrary: fc.record({ units: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }) }) },
  { weight: 4, arbitrary: fc.record({ percent: fc.integer({ min: 1, max: 150 }) }) },
  { weight: 2, arbitrary: fc.record({ edge: fc.constantFrom<(-1 | 0 | 1)[]>(-1, 0, 1) }) },
);
const indexArb = fc.nat({ max: 2 });
const opArb: fc.Arbitrary<OpSpec> = fc.record({ kind: kindArb, wallet: indexArb, to: indexArb, currency: indexArb, amount: amountArb });

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: opArb.map((op): Step => ({ type: "one", op })) },
  {
    weight: 2,
    arbitrary: fc
      .record({
        wallet: indexArb,
        currency: indexArb,
        focused: fc.array(fc.record({ kind: kindArb, to: indexArb, amount: amountArb }), { minLength: 2, maxLength: 6 }),
        elsewhere: fc.array(opArb, { maxLength: 2 }),
      })
      .map(({ wallet, currency, focused, elsewhere }): Step => ({
        type: "batch",
        ops: [...focused.map((op) => ({ ...op, wallet, currency })), ...elsewhere],
      })),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("holds" as const),
      wallet: indexArb,
      currency: indexArb,
      count: fc.integer({ min: 2, max: 8 }),
      percent: fc.integer({ min: 5, max: 60 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ currency: indexArb, moves: fc.array(fc.record({ wallet: indexArb, to: indexArb, amount: amountArb }), { minLength: 2, maxLength: 8 }) })
      .map(({ currency, moves }): Step => ({ type: "crossfire", ops: moves.map((m) => ({ ...m, kind: "transfer" as const, currency })) })),
  },
);

const scenarioArb = fc.record({
  wallets: fc.integer({ min: 1, max: 3 }),
  currencies: fc.integer({ min: 2, max: 3 }),
  /** Units first deposited, concurrently, into each wallet and currency (0: none). */
  initial: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10_000_000_000 })), { minLength: 9, maxLength: 9 }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 25, size: "medium" }),
});

/** Totals over every run of the property, to check the generator exercises both outcomes. */
const totals = { accepted: 0, refused: 0, concurrentAccepted: 0, concurrentRefused: 0, transfersAccepted: 0, transfersRefused: 0 };

/** One run of the property: fresh wallets, a network of its own, and the model. */
class Run {
  readonly walletIds: string[];
  readonly currencies: string[];
  readonly network = `networks/property-${randomUUID()}`;
  private model: Model = new Map();
  accepted = 0;

  constructor(wallets: number, currencies: number) {
    this.walletIds = Array.from({ length: wallets }, () => randomUUID());
    // Currency codes of this run only (the ledger takes any code): the run's accounts, entries and
    // currency sums are its own, so a failed run cannot leak into the next ones while fast-check shrinks.
    const suffix = randomUUID().slice(0, 8);
    this.currencies = CURRENCIES.slice(0, currencies).map((c) => `${c}-${suffix}`);
  }

  async open(): Promise<void> {
    for (const walletId of this.walletIds) await inTransaction((tx) => ledger.openWalletAccounts(tx, walletId, this.currencies));
  }

  buckets(walletId: string, currency: string): Buckets {
    return bucketsIn(this.model, walletId, currency);
  }

  private setBuckets(walletId: string, currency: string, buckets: Buckets): void {
    this.model.set(modelKey(walletId, currency), buckets);
  }

  /** Counts an outcome of `request` in the totals and in the run's accepted entries. */
  private count(request: Request, accepted: boolean, concurrent: boolean): void {
    if (accepted) this.accepted++;
    if (concurrent) totals[accepted ? "concurrentAccepted" : "concurrentRefused"]++;
    else totals[accepted ? "accepted" : "refused"]++;
    if (request.kind === "transfer") totals[accepted ? "transfersAccepted" : "transfersRefused"]++;
  }

  /**
   * The concrete request of `op`, its amount resolved against the model's current buckets. A
   * transfer goes to the `op.to`-th other wallet of the run; in a run of one wallet, where it has
   * none, it is a deposit instead.
   */
  resolve(op: OpSpec): Request {
    const walletId = this.walletIds[op.wallet % this.walletIds.length]!;
    const currency = this.currencies[op.currency % this.currencies.length]!;
    const n = this.walletIds.length;
    const kind: OpKind = op.kind === "transfer" && n === 1 ? "deposit" : op.kind;
    const source = sourceOf(kind);
    const bucket = source ? this.buckets(walletId, currency)[source] : ZERO;
    let amount: MoneyValue;
    if ("units" in op.amount) amount = fromUnits(op.amount.units);
    else if ("percent" in op.amount) amount = bucket.times(op.amount.percent).div(100).toDecimalPlaces(8, Money.ROUND_DOWN);
    else amount = bucket.plus(UNIT.times(op.amount.edge));
    if (amount.lte(0)) amount = UNIT;
    if (kind === "transfer") {
      const toWalletId = this.walletIds[((op.wallet % n) + 1 + ((op.to ?? 0) % (n - 1))) % n]!;
      return { kind, fromWalletId: walletId, toWalletId, network: this.network, currency, amount, reference: "property:transfer" };
    }
    return { kind, walletId, network: this.network, currency, amount, reference: `property:${kind}` };
  }

  /** Sequential step: the model predicts the outcome exactly, and the balances the post returns. */
  async one(op: OpSpec): Promise<void> {
    const request = this.resolve(op);
    const wallets = walletsOf(request);
    const before = this.buckets(wallets[0]!, request.currency);
    const expected = allowedIn(this.model, request);
    const outcome = await attempt(request);
    expect(outcome.accepted, `${describeRequest(request)} on ${describeBuckets(before)}`).toBe(expected);
    this.count(request, outcome.accepted, false);
    if (!outcome.accepted) return;
    this.model = applyIn(this.model, request);
    expect(outcome.after.map(balanceStrings)).toEqual(wallets.map((w) => modelStrings(request.currency, this.buckets(w, request.currency))));
  }

  /**
   * Concurrent batch: every request resolved against the state before the batch, all posted at
   * once; the accepted set must be what some serial order of the whole batch accepts.
   */
  async batch(ops: OpSpec[]): Promise<void> {
    const requests = ops.map((op) => this.resolve(op));
    const outcomes = await settleAll(requests.map((r) => attempt(r)));
    const observed = requests.map((request, i) => {
      const outcome = outcomes[i]!;
      this.count(request, outcome.accepted, true);
      // The balances each post saw after its own postings: never below zero.
      if (outcome.accepted) {
        for (const after of outcome.after) expect(after.available.gte(0) && after.held.gte(0), JSON.stringify(balanceStrings(after))).toBe(true);
      }
      return { request, accepted: outcome.accepted };
    });
    const described = observed.map((o) => `${describeRequest(o.request)} → ${o.accepted ? "accepted" : "refused"}`).join("; ");
    expect(explainedBySomeOrder(this.model, observed), `no serial order explains [${described}]`).toBe(true);
    // The final buckets do not depend on the order: the sum of the accepted operations.
    for (const op of observed) if (op.accepted) this.model = applyIn(this.model, op.request);
    await this.expectBalances();
  }

  /** `count` concurrent holds of one amount: exactly floor(available / amount) of them (at most `count`) succeed. */
  async holds(step: Extract<Step, { type: "holds" }>): Promise<void> {
    const request = this.resolve({ kind: "hold", wallet: step.wallet, currency: step.currency, amount: { percent: step.percent } }) as PostRequest;
    const before = this.buckets(request.walletId, request.currency);
    const affordable = before.available.div(request.amount).floor().toNumber();
    const outcomes = await settleAll(Array.from({ length: step.count }, () => attempt(request)));
    const accepted = outcomes.filter((o) => o.accepted).length;
    expect(accepted, `${step.count} concurrent holds of ${request.amount.toFixed()} on ${describeBuckets(before)}`).toBe(
      Math.min(step.count, affordable),
    );
    totals.concurrentAccepted += accepted;
    totals.concurrentRefused += step.count - accepted;
    this.accepted += accepted;
    const held = request.amount.times(accepted);
    this.setBuckets(request.walletId, request.currency, { available: before.available.minus(held), held: before.held.plus(held) });
    await this.expectBalances();
  }

  /** The balance cache of every wallet of the run equals the model, for every currency. */
  async expectBalances(): Promise<void> {
    for (const walletId of this.walletIds) {
      const balances = await ledger.walletBalances(t.db, walletId);
      const byCurrency = (a: { currency: string }, b: { currency: string }): number => (a.currency < b.currency ? -1 : 1);
      expect(balances.map(balanceStrings).sort(byCurrency)).toEqual(
        this.currencies.map((c) => modelStrings(c, this.buckets(walletId, c))).sort(byCurrency),
      );
    }
  }

  /** What verify() finds about this run's currencies (every list should be empty). */
  async verifyOwn(): Promise<LedgerCheck> {
    const check = await ledger.verify(t.db);
    const own = (currency: string): boolean => this.currencies.includes(currency);
    const ownCode = (code: string): boolean => this.currencies.some((c) => code.endsWith(`:${c}`));
    return {
      unbalancedEntries: check.unbalancedEntries.filter((e) => own(e.currency)),
      cacheMismatches: check.cacheMismatches.filter((m) => ownCode(m.code)),
      negativeAccounts: check.negativeAccounts.filter((a) => ownCode(a.code)),
      unbalancedCurrencies: check.unbalancedCurrencies.filter((c) => own(c.currency)),
    };
  }

  /** Everything the property promises, checked after the run. */
  async expectConsistent(): Promise<void> {
    expect(await this.verifyOwn()).toEqual(CLEAN);
    await this.expectBalances();
    // Independently of the cache and of verify(): the postings of each wallet account sum to the
    // model, the run's external accounts mirror the wallets' total, and refusals left no entry.
    const params = [...this.walletIds];
    const marks = params.map(() => "?").join(", ");
    const sums = await withEm((em) =>
      em.execute<{ code: string; wallet_id: string | null; bucket: string; currency: string; total: string }[]>(
        `select a.code, a.wallet_id, a.bucket, a.currency, coalesce(sum(p.amount), 0)::text as total
           from ledger_account a left join ledger_posting p on p.account_id = a.id
          where a.wallet_id in (${marks}) or a.network = ?
          group by a.id`,
        [...params, this.network],
      ),
    );
    const externalTotals = new Map<string, MoneyValue>();
    for (const row of sums) {
      if (row.bucket === "external") {
        externalTotals.set(row.currency, money(row.total));
        continue;
      }
      const buckets = this.buckets(row.wallet_id!, row.currency);
      expect(money(row.total).toFixed(8), row.code).toBe(buckets[row.bucket as keyof Buckets].toFixed(8));
    }
    for (const currency of this.currencies) {
      const inCustody = this.walletIds.reduce((acc, w) => acc.plus(this.buckets(w, currency).available).plus(this.buckets(w, currency).held), ZERO);
      expect((externalTotals.get(currency) ?? ZERO).neg().toFixed(8), `external ${currency}`).toBe(inCustody.toFixed(8));
    }
    const [entries] = await withEm((em) =>
      em.execute<{ n: string }[]>(`select count(*)::text as n from journal_entry where wallet_id in (${marks})`, params),
    );
    expect(Number(entries?.n)).toBe(this.accepted);
  }
}

function describeBuckets(b: Buckets): string {
  return `{available ${b.available.toFixed()}, held ${b.held.toFixed()}}`;
}

function describeRequest(r: Request): string {
  const where = r.kind === "transfer" ? `${r.fromWalletId.slice(0, 8)}→${r.toWalletId.slice(0, 8)}` : r.walletId.slice(0, 8);
  return `${r.kind} ${r.amount.toFixed()} ${r.currency} ${where}`;
}

function balanceStrings(b: WalletCurrencyBalance): { currency: string; available: string; held: string; balance: string } {
  return { currency: b.currency, available: b.available.toFixed(8), held: b.held.toFixed(8), balance: b.balance.toFixed(8) };
}

function modelStrings(currency: string, b: Buckets): { currency: string; available: string; held: string; balance: string } {
  return { currency, available: b.available.toFixed(8), held: b.held.toFixed(8), balance: b.available.plus(b.held).toFixed(8) };
}

describe("ledger invariants under random operations (property, real PostgreSQL)", () => {
  it("random sequential and concurrent deposits, holds, releases, debits and transfers keep every invariant", { timeout: 180_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ wallets, currencies, initial, steps }) => {
        const run = new Run(wallets, currencies);
        await run.open();
        const deposits = initial.map((units, i): OpSpec => ({ kind: "deposit", wallet: i % 3, currency: Math.floor(i / 3), amount: { units } }));
        await run.batch(deposits.filter((d) => "units" in d.amount && d.amount.units > 0 && d.wallet < wallets && d.currency < currencies));
        for (const step of steps) {
          if (step.type === "one") await run.one(step.op);
          else if (step.type === "batch" || step.type === "crossfire") await run.batch(step.ops);
          else await run.holds(step);
        }
        await run.expectConsistent();
      }),
      { numRuns: 100 },
    );
    // Every run's own checks passed; the whole ledger is consistent too.
    expect(await ledger.verify(t.db)).toEqual(CLEAN);
    // The generator exercised both outcomes, sequentially and concurrently.
    expect(totals.accepted).toBeGreaterThan(0);
    expect(totals.refused).toBeGreaterThan(0);
    expect(totals.concurrentAccepted).toBeGreaterThan(0);
    expect(totals.concurrentRefused).toBeGreaterThan(0);
    expect(totals.transfersAccepted).toBeGreaterThan(0);
    expect(totals.transfersRefused).toBeGreaterThan(0);
  });

  it("many equal concurrent holds exceeding the available money: exactly floor(available / amount) succeed", async () => {
    const run = new Run(1, 2);
    await run.open();
    await run.one({ kind: "deposit", wallet: 0, currency: 0, amount: { units: 1_000_000_000 } }); // 10
    // 12 holds of 3 (of 10 available): 3 succeed; 1 stays available.
    await run.holds({ type: "holds", wallet: 0, currency: 0, count: 12, percent: 30 });
    const wallet = run.walletIds[0]!;
    const currency = run.currencies[0]!;
    expect(run.buckets(wallet, currency)).toEqual({ available: money(1), held: money(9) });
    // Concurrent debits of 4 each on 9 held: 2 succeed.
    await run.batch(Array.from({ length: 6 }, () => ({ kind: "debit" as const, wallet: 0, currency: 0, amount: { units: 400_000_000 } })));
    const after = run.buckets(wallet, currency);
    expect([after.available.toFixed(), after.held.toFixed()]).toEqual(["1", "1"]);
    await run.expectConsistent();
  });

  it("refuses amounts ≤ 0 before writing anything", async () => {
    const run = new Run(1, 2);
    await run.open();
    for (const amount of [money(0), money("-0.00000001")]) {
      await expect(
        inTransaction((tx) =>
          ledger.post(tx, { kind: "deposit", walletId: run.walletIds[0]!, network: run.network, currency: run.currencies[0]!, amount }),
        ),
      ).rejects.toMatchObject({ code: "AMOUNT_MUST_BE_POSITIVE" });
    }
    await run.expectConsistent();
  });
});

describe("verify() and rebuildBalanceCache()", () => {
  /** A wallet with 5 deposited and 2 of it held, on a network of its own. */
  async function seeded(): Promise<{ run: Run; walletId: string; currency: string; code: (bucket: string) => string }> {
    const run = new Run(1, 2);
    await run.open();
    await run.one({ kind: "deposit", wallet: 0, currency: 0, amount: { units: 500_000_000 } });
    await run.one({ kind: "hold", wallet: 0, currency: 0, amount: { units: 200_000_000 } });
    const walletId = run.walletIds[0]!;
    const currency = run.currencies[0]!;
    const code = (bucket: string): string =>
      bucket === "external" ? `external:${run.network}:${currency}` : `wallet:${walletId}:${bucket}:${currency}`;
    return { run, walletId, currency, code };
  }

  it("detects corrupted cached balances and rebuilds them from the postings", async () => {
    const { run, walletId, currency, code } = await seeded();
    await run.expectConsistent();
    await withEm(async (em) => {
      await em.execute(`update ledger_account set balance = balance + 0.00000001 where code = ?`, [code("available")]);
      await em.execute(`update ledger_account set balance = 0 where code = ?`, [code("held")]);
      await em.execute(`update ledger_account set balance = 7 where code = ?`, [code("external")]);
    });

    const check = await ledger.verify(t.db);
    expect(check.unbalancedEntries).toEqual([]);
    expect(check.negativeAccounts).toEqual([]);
    expect(check.unbalancedCurrencies).toEqual([]);
    const mismatches = check.cacheMismatches
      .map((m) => ({ code: m.code, cached: money(m.cached).toFixed(), fromPostings: money(m.fromPostings).toFixed() }))
      .sort((a, b) => a.code.localeCompare(b.code));
    expect(mismatches).toEqual(
      [
        { code: code("available"), cached: "3.00000001", fromPostings: "3" },
        { code: code("held"), cached: "0", fromPostings: "2" },
        { code: code("external"), cached: "7", fromPostings: "-5" },
      ].sort((a, b) => a.code.localeCompare(b.code)),
    );
    // Balances are read from the cache, so the corruption is visible until the rebuild.
    expect((await ledger.walletBalances(t.db, walletId, [currency])).map(balanceStrings)).toEqual([
      { currency, available: "3.00000001", held: "0.00000000", balance: "3.00000001" },
    ]);

    expect(await inTransaction((tx) => ledger.rebuildBalanceCache(tx))).toBe(3);
    expect(await ledger.verify(t.db)).toEqual(CLEAN);
    await run.expectConsistent();
    expect(await inTransaction((tx) => ledger.rebuildBalanceCache(tx))).toBe(0);
  });

  it("detects unbalanced entries, unbalanced currencies and negative wallet accounts (in a rolled-back transaction)", async () => {
    const { walletId, currency, code } = await seeded();
    const rollback = new Error("rollback");
    await expect(
      inTransaction(async (tx) => {
        const [account] = await exec<{ id: string }>(tx, `select id from ledger_account where code = $1`, [code("available")]);
        const [entry] = await exec<{ id: string }>(
          tx,
          `insert into journal_entry (kind, wallet_id, network, currency, amount, created_at) values ('deposit', $1, 'networks/forged', $2, 1, now()) returning id`,
          [walletId, currency],
        );
        await exec(tx, `insert into ledger_posting (entry_id, account_id, currency, amount) values ($1, $2, $3, 1)`, [entry?.id, account?.id, currency]);
        // The CHECK constraint refuses a negative wallet bucket…
        await expect(exec(tx, `savepoint s`).then(() => exec(tx, `update ledger_account set balance = -1 where code = $1`, [code("held")]))).rejects.toThrow(
          /ledger_account_balance_check/,
        );
        await exec(tx, `rollback to savepoint s`);
        // …so verify()'s own check of it is exercised with the constraint dropped (inside this transaction).
        await exec(tx, `alter table ledger_account drop constraint ledger_account_balance_check`);
        await exec(tx, `update ledger_account set balance = -1 where code = $1`, [code("held")]);

        const check = await ledger.verify(tx);
        expect(check.unbalancedEntries.map((e) => ({ ...e, sum: money(e.sum).toFixed() }))).toEqual([
          { entryId: Number(entry?.id), currency, sum: "1" },
        ]);
        expect(check.unbalancedCurrencies.map((c) => ({ ...c, sum: money(c.sum).toFixed() }))).toEqual([{ currency, sum: "1" }]);
        expect(check.negativeAccounts.map((a) => ({ ...a, balance: money(a.balance).toFixed() }))).toEqual([
          { code: code("held"), balance: "-1" },
        ]);
        expect(check.cacheMismatches.map((m) => m.code).sort()).toEqual([code("available"), code("held")].sort());
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect(await ledger.verify(t.db)).toEqual(CLEAN);
  });
});

// ---------------------------------------------------------------------------------------------
describe("regressions", () => {
  const fresh = (): { walletId: string; currency: string; network: string } => {
    const tag = randomUUID().slice(0, 8);
    return { walletId: randomUUID(), currency: `reg-${tag}`, network: `networks/reg-${tag}` };
  };

  it("a rebuild racing a post never writes a stale balance (every account is locked first)", async () => {
    const { walletId, currency, network } = fresh();
    await inTransaction((tx) => ledger.openWalletAccounts(tx, walletId, [currency]));
    await inTransaction((tx) => ledger.post(tx, { kind: "deposit", walletId, network, currency, amount: money(10) }));
    const code = `wallet:${walletId}:available:${currency}`;
    await withEm((em) => em.execute(`update ledger_account set balance = 10.5 where code = ?`, [code]));
    // A hold that keeps its locks until the rebuild started meanwhile waits for them (or ended).
    let posted!: () => void;
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (posted = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const hold = inTransaction(async (tx) => {
      const result = await ledger.post(tx, { kind: "hold", walletId, network, currency, amount: money(5) });
      posted();
      await released;
      return result;
    });
    await Promise.race([holding, hold]);
    let rebuildEnded = false;
    const rebuild = inTransaction((tx) => ledger.rebuildBalanceCache(tx)).finally(() => (rebuildEnded = true));
    await waitFor("the rebuild to wait for the hold's locks", async () => (rebuildEnded || (await lockWaiters()) > 0 ? true : undefined), 10_000).finally(release);
    await settleAll<unknown>([hold, rebuild]);
    const [after] = await ledger.walletBalances(t.db, walletId, [currency]);
    expect(after?.available.toFixed()).toBe("5");
    expect(after?.held.toFixed()).toBe("5");
    const check = await ledger.verify(t.db);
    expect(check.cacheMismatches.filter((m) => m.code.includes(walletId))).toEqual([]);
    // and the following hold of 10 is refused, not overdrawn
    const second = await attempt({ kind: "hold", walletId, network, currency, amount: money(10) });
    expect(second.accepted).toBe(false);
  });

  it("refuses to post outside a transaction", async () => {
    const { walletId, currency, network } = fresh();
    // a Db is no transaction: the post's locks would be released at once (the types forbid it; the ledger checks it too)
    await expect(ledger.post(t.db as unknown as Tx, { kind: "deposit", walletId, network, currency, amount: money(1) })).rejects.toThrow(
      /inside a transaction/,
    );
  });

  it("refuses amounts the numeric(38,18) columns cannot hold exactly, with INVALID_AMOUNT", async () => {
    const { walletId, currency, network } = fresh();
    for (const amount of ["0.0000000000000000015", "1e20"]) {
      const error = await inTransaction((tx) => ledger.post(tx, { kind: "deposit", walletId, network, currency, amount: money(amount) })).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe("INVALID_AMOUNT");
    }
    const check = await ledger.verify(t.db);
    expect(check).toEqual(CLEAN);
  });

  it("crossing transfers between two wallets never deadlock, and keep the total (locks in id order)", async () => {
    const run = new Run(2, 2);
    await run.open();
    await run.batch([0, 1].map((wallet) => ({ kind: "deposit" as const, wallet, currency: 0, amount: { units: 1_000_000_000 } })));
    for (let round = 0; round < 10; round++) {
      // 8 transfers at once, 4 each way, each of 30 % of its source's available money.
      await run.batch(Array.from({ length: 8 }, (_, i) => ({ kind: "transfer" as const, wallet: i % 2, currency: 0, amount: { percent: 30 } })));
    }
    const currency = run.currencies[0]!;
    const total = run.walletIds.reduce((acc, w) => acc.plus(run.buckets(w, currency).available), ZERO);
    expect(total.toFixed(8)).toBe("20.00000000");
    await run.expectConsistent();
  });

  it("concurrent posts that create the same missing accounts never deadlock", async () => {
    for (let round = 0; round < 10; round++) {
      const { walletId, currency, network } = fresh();
      // accounts never opened: the hold and the release create available and held in opposite posting orders
      const outcomes = await settleAll([
        attempt({ kind: "hold", walletId, network, currency, amount: money(1) }),
        attempt({ kind: "release", walletId, network, currency, amount: money(1) }),
      ]);
      expect(outcomes.every((o) => !o.accepted)).toBe(true);
    }
  });
});
