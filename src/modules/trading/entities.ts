/**
 * Trading storage (docs/decisions/trading.md; spec/platform/trading.tsp): the firm quotes users ask
 * for, and the orders that execute them, at most one per quote (unique `quote_id`; null for a market
 * order, which has no quote). Amounts are
 * `numeric(38,18)` read and written as exact decimal strings; instants UTC. The orders'
 * Idempotency-Keys are the shared `idempotency_key` rows of scope `order`
 * (src/modules/idempotency/, docs/idempotency.md); their money moves as two ledger entries of kind
 * `trade` (src/modules/ledger/), and each writes a `trade` wallet transaction per currency.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** Amount columns: exact decimals. */
const amount = () => p.decimal("string").precision(38).scale(18);

/** The columns of a quote's terms, which its order copies (fresh builders for each entity). */
function terms() {
  return {
    /** The pair's symbol, upper case (e.g. `BTCUSDT`). */
    symbol: p.string().length(32),
    /** Lower-case codes of the pair's base and quote currencies. */
    base: p.string().length(16),
    quote: p.string().length(16),
    side: p.string().length(4).$type<"buy" | "sell">(),
    /** Base units. */
    quantity: amount(),
    /** Quote currency per base unit. */
    price: amount(),
    /** Quote currency. */
    fees: amount(),
    /** Quote currency: paid on a buy, received on a sell. */
    total: amount(),
  };
}

/** A firm quote: the terms an order of it executes at, until `expiresAt`. */
export const TradeQuote = defineEntity({
  name: "TradeQuote",
  tableName: "trade_quote",
  properties: {
    quoteId: p.uuid().primary(),
    customerId: p.string().length(48),
    userId: p.uuid(),
    walletId: p.uuid(),
    ...terms(),
    expiresAt: p.datetime(),
    createdAt: p.datetime(),
  },
});
export type TradeQuote = InferEntity<typeof TradeQuote>;

/** An executed order (status `FILLED`): of a quote, or a market order without one. */
export const TradeOrder = defineEntity({
  name: "TradeOrder",
  tableName: "trade_order",
  indexes: [{ name: "trade_order_user_created_index", properties: ["userId", "createdAt"] }],
  uniques: [{ name: "trade_order_quote_id_unique", properties: ["quoteId"] }],
  properties: {
    orderId: p.uuid().primary(),
    /** The quote executed; null for a market order (docs/decisions/trading.md "Market orders"). Quotes are never deleted: no action on delete, as before it became nullable (the ORM would default a nullable reference to set null). */
    quoteId: () => p.manyToOne(TradeQuote).mapToPk().fieldName("quote_id").nullable().deleteRule("no action"),
    tradeId: p.uuid(),
    customerId: p.string().length(48),
    userId: p.uuid(),
    walletId: p.uuid(),
    ...terms(),
    status: p.string().length(16).$type<"FILLED">(),
    idempotencyKey: p.string().length(255),
    createdAt: p.datetime(),
  },
});
export type TradeOrder = InferEntity<typeof TradeOrder>;

/** The trading module's entities, for the ORM's entity list (src/modules/entities.ts). */
export const TRADING_ENTITIES = [TradeQuote, TradeOrder];
