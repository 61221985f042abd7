/**
 * Trading's answers and wallet transactions (docs/decisions/trading.md; spec/platform/trading.tsp
 * `Quote`, `Order`; reference "Wallet transaction" trade fields): amounts leave as 8-decimal strings.
 */
import type { components } from "../../../generated/types/platform.js";
import { format8, money, type Money } from "../../domain/money.js";
import type { QuoteTerms } from "../../domain/trading.js";
import type { WalletCurrencyBalance } from "../ledger/service.js";
import type { OrderRecord, QuoteRecord, TradeAddress, TradeTransaction } from "./repository.js";

type Schemas = components["schemas"];

/** A stored quote as the API returns it (spec `Quote`). */
export function quoteView(q: QuoteRecord): Schemas["Quote"] {
  return {
    quote_id: q.quoteId,
    wallet_id: q.walletId,
    user_id: q.userId,
    symbol: q.symbol,
    base: q.base,
    quote: q.quote,
    side: q.side,
    quantity: format8(q.quantity),
    price: format8(q.price),
    fees: format8(q.fees),
    total: format8(q.total),
    expires_at: q.expiresAt.toISOString(),
    created_at: q.createdAt.toISOString(),
  };
}

/**
 * A stored order as the API returns it (spec `Order`; `quote_id` null for a market order, the
 * entity's absent value too); `isDuplicate` for a repeated Idempotency-Key.
 */
export function orderView(o: Omit<OrderRecord, "quoteId"> & { quoteId?: string | null }, isDuplicate: boolean): Schemas["Order"] {
  return {
    order_id: o.orderId,
    quote_id: o.quoteId ?? null,
    trade_id: o.tradeId,
    wallet_id: o.walletId,
    user_id: o.userId,
    symbol: o.symbol,
    base: o.base,
    quote: o.quote,
    side: o.side,
    quantity: format8(o.quantity),
    price: format8(o.price),
    fees: format8(o.fees),
    total: format8(o.total),
    status: o.status,
    idempotency_key: o.idempotencyKey,
    is_duplicate: isDuplicate,
    created_at: o.createdAt.toISOString(),
  };
}

/**
 * An order's two wallet transactions (action `trade`, status `done`, `order_id`, `trade_id`, `symbol`
 * the pair, `price`; written by src/modules/trading/repository.ts `writeOrder`), base currency first,
 * each with the wallet's balance of that currency after the order and the first network (by name)
 * on which the wallet has an address of the currency, and that address (none: empty strings):
 * `amount` and `net_proceeds` are what moved in that currency (the quote currency: the total paid
 * on a buy, received on a sell, fees included; the base currency: the quantity), as on every other
 * action; `fees` the order's fees on the quote currency's transaction, 0 on the base's
 * (docs/decisions/trading.md "The ledger"). Amounts exact decimal text.
 */
export function tradeTransactions(
  order: OrderRecord,
  terms: QuoteTerms,
  booked: { entryIds: [number, number]; spent: WalletCurrencyBalance; received: WalletCurrencyBalance },
  addresses: readonly TradeAddress[],
): TradeTransaction[] {
  const buy = order.side === "buy";
  const after = new Map([[booked.spent.currency, booked.spent.balance], [booked.received.currency, booked.received.balance]]);
  const entries = new Map([[booked.spent.currency, booked.entryIds[0]], [booked.received.currency, booked.entryIds[1]]]);
  const legs: { currency: string; amount: Money; fees: Money; verb: string }[] = [
    { currency: order.base, amount: terms.quantity, fees: money(0), verb: buy ? "Bought" : "Sold" },
    { currency: order.quote, amount: terms.total, fees: terms.fees, verb: buy ? "Paid" : "Received" },
  ];
  return legs.map((leg) => {
    const address = addresses.find((a) => a.currency === leg.currency);
    return {
      currency: leg.currency,
      network: address?.network ?? "",
      address: address?.address ?? "",
      amount: leg.amount.toFixed(),
      fees: leg.fees.toFixed(),
      netProceeds: leg.amount.toFixed(),
      price: terms.price.toFixed(),
      balanceAfter: (after.get(leg.currency) as Money).toFixed(),
      description: `${leg.verb} ${format8(leg.amount)} ${leg.currency.toUpperCase()}: order ${order.orderId}, ${order.side} ${format8(terms.quantity)} ${order.symbol} at ${format8(terms.price)}`,
      journalEntryId: entries.get(leg.currency) ?? null,
    };
  });
}
