/**
 * The ledger's trade entries under random load (docs/decisions/trading.md "The ledger";
 * src/modules/ledger/service.ts `trade`): a property-based test (fast-check) funds wallets, then
 * runs random orders — buys and sells between btc, eth and usdt, with fees in the quote currency —
 * some concurrently on one wallet in opposite directions, against the real PostgreSQL and next to a
 * model in exact decimals. Invariants after each run: every entry and every currency sums to zero
 * over all accounts (wallets, external, liquidity, fees), each cached balance equals its postings,
 * no wallet balance goes below zero, each wallet's available balance is the model's, and the fee
 * account of each currency holds exactly the fees of the accepted orders. Only INSUFFICIENT_BALANCE
 * may refuse an order: a deadlock or any other error fails the test.
 */
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { money, type Money } from "../../src/domain/money.js";
import { useTestApp } from "../support/app.js";

const t = useTestApp();
const CLEAN = { unbalancedEntries: [], cacheMismatches: [], negativeAccounts: [], unbalancedCurrencies: [] };
const CURRENCIES = ["btc", "eth", "usdt"] as const;
type Currency = (typeof CURRENCIES)[number];
const UNIT = money("0.00000001");
const units = (n: number): Money => money(n).times(UNIT);

interface Order {
  wallet: number;
  spent: Currency;
  received: Currency;
  spentUnits: number;
  receivedUnits: number;
  feeUnits: number;
  /** The fee currency: the spent one (a buy pays fees inside what it spends) or the received one (a sell). */
  feeOnSpent: boolean;
}

const pairArb = fc.constantFrom<[Currency, Currency]>(["usdt", "btc"], ["btc", "usdt"], ["usdt", "eth"], ["eth", "usdt"], ["btc", "eth"], ["eth", "btc"]);
const orderArb = (wallets: number): fc.Arbitrary<Order> =>
  fc.record({
    wallet: fc.integer({ min: 0, max: wallets - 1 }),
    pair: pairArb,
    spentUnits: fc.integer({ min: 1, max: 5e8 }),
    receivedUnits: fc.integer({ min: 1, max: 5e8 }),
    feeUnits: fc.integer({ min: 0, max: 1e6 }),
    feeOnSpent: fc.boolean(),
  }).map(({ pair, ...o }) => ({ ...o, spent: pair[0], received: pair[1] }));

/** Posts one order; true when accepted, false when INSUFFICIENT_BALANCE refused it. */
async function place(walletId: string, o: Order): Promise<boolean> {
  try {
    await t.db.transaction((tx) =>
      t.services.ledger.trade(tx, {
        walletId,
        spent: { currency: o.spent, amount: units(o.spentUnits) },
        received: { currency: o.received, amount: units(o.receivedUnits) },
        fees: units(o.feeUnits),
        feeCurrency: o.feeOnSpent ? o.spent : o.received,
        reference: `order:${randomUUID()}`,
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof DomainError && error.code === "INSUFFICIENT_BALANCE") return false;
    throw error;
  }
}

/** The model's balance change of an accepted order, per currency, for its wallet. */
function apply(model: Map<string, Money>, o: Order, fees: Map<string, Money>): void {
  const key = (c: Currency) => `${o.wallet}:${c}`;
  model.set(key(o.spent), (model.get(key(o.spent)) ?? money(0)).minus(units(o.spentUnits)));
  model.set(key(o.received), (model.get(key(o.received)) ?? money(0)).plus(units(o.receivedUnits)));
  const feeCurrency = o.feeOnSpent ? o.spent : o.received;
  fees.set(feeCurrency, (fees.get(feeCurrency) ?? money(0)).plus(units(o.feeUnits)));
}

describe("trade entries under random load", () => {
  it("balanced per entry and per currency, caches right, never negative, the model's balances and the fees' sum", { timeout: 180_000 }, async () => {
    const ledger = t.services.ledger;
    const feeBaseline = new Map<string, Money>();
    for (const c of CURRENCIES) {
      const [row] = await t.orm.em.fork().execute<{ s: string | null }[]>(`select sum(p.amount)::text as s from ledger_posting p join ledger_account a on a.id = p.account_id where a.code = ?`, [`fees:${c}`]);
      feeBaseline.set(c, money(row?.s ?? 0));
    }
    const feesTotal = new Map<string, Money>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(orderArb(3), { minLength: 4, maxLength: 14 }),
        fc.array(fc.tuple(orderArb(3), orderArb(3)), { minLength: 1, maxLength: 3 }),
        async (sequential, concurrentPairs) => {
          const wallets = [randomUUID(), randomUUID(), randomUUID()];
          const model = new Map<string, Money>();
          await t.db.transaction(async (tx) => {
            for (const [i, w] of wallets.entries()) {
              await ledger.openWalletAccounts(tx, w, CURRENCIES);
              for (const c of CURRENCIES) {
                await ledger.post(tx, { kind: "deposit", walletId: w, network: "networks/test", currency: c, amount: units(3e8) });
                model.set(`${i}:${c}`, units(3e8));
              }
            }
          });
          for (const o of sequential) if (await place(wallets[o.wallet]!, o)) apply(model, o, feesTotal);
          for (const [a, b] of concurrentPairs) {
            // the same wallet, opposite directions at once: both legs' accounts are locked together, so no deadlock
            const second = { ...b, wallet: a.wallet, spent: a.received, received: a.spent };
            const [okA, okB] = await Promise.all([place(wallets[a.wallet]!, a), place(wallets[a.wallet]!, second)]);
            if (okA) apply(model, a, feesTotal);
            if (okB) apply(model, second, feesTotal);
          }
          for (const [i, w] of wallets.entries()) {
            const balances = await ledger.walletBalances(t.db, w);
            for (const b of balances) {
              expect(b.available.gte(0)).toBe(true);
              expect(b.available.toFixed(), `${i}:${b.currency}`).toBe((model.get(`${i}:${b.currency}`) ?? money(0)).toFixed());
            }
          }
        },
      ),
      { numRuns: 15, seed: 20261126, endOnFailure: true },
    );
    expect(await ledger.verify(t.db)).toEqual(CLEAN);
    for (const c of CURRENCIES) {
      const [row] = await t.orm.em.fork().execute<{ s: string | null }[]>(`select sum(p.amount)::text as s from ledger_posting p join ledger_account a on a.id = p.account_id where a.code = ?`, [`fees:${c}`]);
      expect(money(row?.s ?? 0).minus(feeBaseline.get(c) ?? 0).toFixed(), `fees:${c}`).toBe((feesTotal.get(c) ?? money(0)).toFixed());
    }
  });
});
