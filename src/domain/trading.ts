/**
 * Pure rules of trading: firm quotes and the orders that execute them (docs/decisions/trading.md;
 * spec/platform/trading.tsp). A user converts between two currencies of one wallet at a quote.
 *
 * Terms of a quote for `quantity` units of the pair's base currency:
 * - the execution `price` (quote currency per base unit) is the provider's mid price moved by half
 *   the spread against the user (up on a buy, down on a sell), rounded to 8 decimals against the
 *   user (up on a buy, down on a sell);
 * - `notional` = quantity × price, exact;
 * - `fees` = notional × fee rate, rounded up to the quote currency's precision;
 * - `total`, in the quote currency: on a buy what the user pays, notional + fees rounded up; on a
 *   sell what the user receives, notional − fees rounded down, both to the quote currency's precision.
 * So the user never pays less, nor receives more, than the exact amount (docs/decisions/trading.md
 * "Rounding"). Every amount is a decimal.js `Money`; no JavaScript number touches one.
 *
 * Refusals (all 400; DomainError with the code of the reference's trading group): `INVALID_SIDE`,
 * `QUANTITY_REQUIRED`, `QUANTITY_MUST_BE_POSITIVE`, `INVALID_AMOUNT` (more decimals than the base
 * currency's precision), `MARKET_CLOSED`, `LIQUIDITY_INSUFFICIENT` (the provider's answers),
 * `MINIMUM_ORDER_NOT_MET`, `MAXIMUM_ORDER_EXCEEDED` (notional outside the pair's bounds); a
 * market order's price guard `PRICE_CHANGED` (docs/decisions/trading.md "Market orders").
 */
import { DomainError, quote } from "./errors.js";
import { Money, format8, money } from "./money.js";

/** Side of a quote: `buy` spends the quote currency for the base, `sell` the base for the quote. */
export type Side = "buy" | "sell";

/** Decimals of the execution price. */
export const PRICE_DECIMALS = 8;

/** What the provider says about a pair at an instant (src/providers/provider.ts `quotePair`). */
export interface PairMarket {
  /** Mid price, quote currency per base unit, positive. */
  mid: Money;
  /** Spread in basis points (1/10 000), split evenly around the mid. */
  spreadBps: number;
  /** Fee rate in basis points of the notional. */
  feeBps: number;
  /** Order bounds on the notional, in the quote currency. */
  minNotional: Money;
  maxNotional: Money;
}

/** The two currencies of a pair and their precisions (decimals). */
export interface PairCurrencies {
  base: { code: string; precision: number };
  quote: { code: string; precision: number };
}

/** The terms of a firm quote, amounts exact decimal values (module note). */
export interface QuoteTerms {
  side: Side;
  quantity: Money;
  price: Money;
  notional: Money;
  fees: Money;
  total: Money;
}

/**
 * The side as sent, checked: `buy` or `sell` (case-sensitive, as the reference writes them).
 * @throws DomainError INVALID_SIDE (400, field `side`).
 */
export function parseSide(side: unknown): Side {
  if (side === "buy" || side === "sell") return side;
  throw new DomainError("INVALID_SIDE", `side must be buy or sell, got ${typeof side === "string" ? quote(side) : "nothing"}.`, "side");
}

/**
 * The quantity as sent (the exact JSON text as a Money, or undefined when absent), checked against
 * the base currency's precision.
 * @throws DomainError QUANTITY_REQUIRED, QUANTITY_MUST_BE_POSITIVE, INVALID_AMOUNT (400, field `quantity`).
 */
export function checkQuantity(quantity: Money | undefined, basePrecision: number): Money {
  if (quantity === undefined) throw new DomainError("QUANTITY_REQUIRED", "quantity is required: the amount of the base currency to buy or sell.", "quantity");
  if (!quantity.isFinite() || quantity.lte(0)) throw new DomainError("QUANTITY_MUST_BE_POSITIVE", "quantity must be greater than zero.", "quantity");
  if (quantity.decimalPlaces() > basePrecision) {
    throw new DomainError("INVALID_AMOUNT", `quantity has more decimals than the base currency allows (${basePrecision}).`, "quantity");
  }
  return quantity;
}

/** `value` rounded to `decimals` places up (`up`) or down, exact. */
function roundTo(value: Money, decimals: number, up: boolean): Money {
  return value.toDecimalPlaces(decimals, up ? Money.ROUND_UP : Money.ROUND_DOWN);
}

/**
 * The terms of a quote (module note). `quantity` is checked already (`checkQuantity`).
 * @throws DomainError MINIMUM_ORDER_NOT_MET, MAXIMUM_ORDER_EXCEEDED (400, field `quantity`) when the
 *   notional is outside the market's bounds.
 */
export function quoteTerms(side: Side, quantity: Money, market: PairMarket, currencies: PairCurrencies): QuoteTerms {
  const buy = side === "buy";
  const halfSpread = money(market.spreadBps).div(20_000);
  const price = roundTo(market.mid.times(buy ? money(1).plus(halfSpread) : money(1).minus(halfSpread)), PRICE_DECIMALS, buy);
  const notional = quantity.times(price);
  const q = currencies.quote;
  if (notional.lt(market.minNotional)) {
    throw new DomainError("MINIMUM_ORDER_NOT_MET", `The order is worth ${notional.toFixed()} ${q.code}; the minimum is ${market.minNotional.toFixed()} ${q.code}.`, "quantity");
  }
  if (notional.gt(market.maxNotional)) {
    throw new DomainError("MAXIMUM_ORDER_EXCEEDED", `The order is worth ${notional.toFixed()} ${q.code}; the maximum is ${market.maxNotional.toFixed()} ${q.code}.`, "quantity");
  }
  const fees = roundTo(notional.times(market.feeBps).div(10_000), q.precision, true);
  const total = buy ? roundTo(notional.plus(fees), q.precision, true) : roundTo(notional.minus(fees), q.precision, false);
  return { side, quantity, price, notional, fees, total };
}

/**
 * What an order moves in the wallet, per currency (docs/decisions/trading.md "The ledger"):
 * `spent` leaves the wallet's available balance, `received` arrives in it; `fees` (quote currency)
 * go to the ledger's fee account, and the provider's liquidity account takes the rest of each leg.
 */
export function orderLegs(terms: QuoteTerms, currencies: PairCurrencies): { spent: { currency: string; amount: Money }; received: { currency: string; amount: Money }; fees: Money } {
  const base = currencies.base.code;
  const quoteCode = currencies.quote.code;
  return terms.side === "buy"
    ? { spent: { currency: quoteCode, amount: terms.total }, received: { currency: base, amount: terms.quantity }, fees: terms.fees }
    : { spent: { currency: base, amount: terms.quantity }, received: { currency: quoteCode, amount: terms.total }, fees: terms.fees };
}

/**
 * Whether a quote issued at `createdAt` and firm until `expiresAt` can still be executed at `now`
 * (firm while now < expiresAt).
 */
export function quoteLive(expiresAt: Date, now: Date): boolean {
  return now.getTime() < expiresAt.getTime();
}

/** Default of a market order's `max_slippage_bps` (basis points). */
export const DEFAULT_MAX_SLIPPAGE_BPS = 50;

/** A market order's price guard: the price the client expects and its tolerance in basis points (0–1000). */
export interface PriceGuard {
  /** Quote currency per base unit, positive. */
  expectedPrice: Money;
  /** Tolerance in basis points (1/10 000) of `expectedPrice`. */
  slippageBps: number;
}

/**
 * The worst execution price a market order on `side` accepts under `guard`
 * (docs/decisions/trading.md "Market orders"): on a buy expected × (1 + bps/10 000), the highest
 * price it pays; on a sell expected × (1 − bps/10 000), the lowest it takes. Exact, not rounded.
 */
export function slippageBound(side: Side, guard: PriceGuard): Money {
  const tolerance = money(guard.slippageBps).div(10_000);
  return guard.expectedPrice.times(side === "buy" ? money(1).plus(tolerance) : money(1).minus(tolerance));
}

/**
 * Whether a market order on `side` fills at execution price `price` under `guard`: a buy when
 * `price` ≤ the bound, a sell when `price` ≥ the bound ({@link slippageBound}); exactly at the bound fills.
 */
export function withinSlippage(side: Side, price: Money, guard: PriceGuard): boolean {
  const bound = slippageBound(side, guard);
  return side === "buy" ? price.lte(bound) : price.gte(bound);
}

/**
 * Refuses a market order whose execution price `price` (quote currency `quoteCode` per base unit)
 * is worse for the user than `guard` allows; no guard (no `expected_price` sent) accepts any price.
 * @throws DomainError PRICE_CHANGED (400, field `expected_price`), naming both prices and the bound.
 */
export function assertPriceGuard(side: Side, price: Money, guard: PriceGuard | null, quoteCode: string): void {
  if (guard === null || withinSlippage(side, price, guard)) return;
  const code = quoteCode.toUpperCase();
  const bound = slippageBound(side, guard);
  throw new DomainError(
    "PRICE_CHANGED",
    `The price changed: the ${side} would execute at ${format8(price)} ${code}, against the expected ${guard.expectedPrice.toFixed()} ${code} ` +
      `(${side === "buy" ? "at most" : "at least"} ${bound.toFixed()} ${code} with ${guard.slippageBps} basis points of slippage).`,
    "expected_price",
  );
}
