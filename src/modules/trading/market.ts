/**
 * The two forms of Create Order's body (docs/decisions/trading.md "Market orders";
 * spec/platform/trading.tsp `CreateOrderRequest`): a quoted order sends only `quote_id`; a market
 * order sends no `quote_id` but `wallet_id`, `symbol`, `side` and `quantity`, with an optional price
 * guard (`expected_price`, `max_slippage_bps`). What the schema cannot say about them (which fields
 * go together, `expected_price` strictly positive) is checked here and answers 422, as the schema's
 * own failures do.
 */
import type { components } from "../../../generated/types/platform.js";
import { assertNoProblems, type FieldProblem } from "../../domain/errors.js";
import { money } from "../../domain/money.js";
import { DEFAULT_MAX_SLIPPAGE_BPS, type PriceGuard } from "../../domain/trading.js";

type Schemas = components["schemas"];

/**
 * Schema `CreateOrderRequest`, `quantity` and `expected_price` exactly as the client wrote them
 * (number or decimal text: src/http/json-numbers.ts `exactNumber`).
 */
export type CreateOrderInput = Omit<Schemas["CreateOrderRequest"], "quantity" | "expected_price"> & { quantity?: number | string; expected_price?: number | string };

/** A market order's fields: Create Quote's, and the optional price guard. Amounts as in {@link CreateOrderInput}. */
export interface MarketOrderInput {
  wallet_id: string;
  symbol: string;
  side: string;
  quantity?: number | string;
  expected_price?: number | string;
  /** Basis points, an integer 0–1000 (the schema's bounds); default {@link DEFAULT_MAX_SLIPPAGE_BPS}. */
  max_slippage_bps?: number;
}

/** The fields only a market order sends. */
const MARKET_FIELDS = ["wallet_id", "symbol", "side", "quantity", "expected_price", "max_slippage_bps"] as const;
/** The fields a market order must send for a 422 not to answer (`quantity` has its own 400 `QUANTITY_REQUIRED`). */
const MARKET_REQUIRED = ["wallet_id", "symbol", "side"] as const;

/**
 * Which order `body` asks for: `{ quoteId }` for a quoted order, `{ market }` for a market order.
 * @throws ValidationFailed (422 `UNPROCESSABLE_ENTITY`, one entry per field) for `quote_id` together
 *   with a market field, a market order without `wallet_id`, `symbol` or `side`, or an
 *   `expected_price` of 0.
 */
export function orderForm(body: CreateOrderInput): { quoteId: string } | { market: MarketOrderInput } {
  const problems: FieldProblem[] = [];
  if (body.quote_id !== undefined) {
    for (const field of MARKET_FIELDS) {
      if (body[field] !== undefined) problems.push({ field, message: "must not be sent with quote_id: a quoted order sends only quote_id, a market order no quote_id" });
    }
    assertNoProblems(problems);
    return { quoteId: body.quote_id };
  }
  for (const field of MARKET_REQUIRED) {
    if (body[field] === undefined) problems.push({ field, message: "is required for a market order (or send quote_id to execute a quote)" });
  }
  if (body.expected_price !== undefined && !money(body.expected_price).gt(0)) problems.push({ field: "expected_price", message: "must be greater than 0" });
  assertNoProblems(problems);
  const { wallet_id, symbol, side } = body as Required<Pick<CreateOrderInput, (typeof MARKET_REQUIRED)[number]>>;
  return { market: { wallet_id, symbol, side, quantity: body.quantity, expected_price: body.expected_price, max_slippage_bps: body.max_slippage_bps } };
}

/** A market order's price guard: none without `expected_price`; `max_slippage_bps` defaults to {@link DEFAULT_MAX_SLIPPAGE_BPS}. */
export function priceGuardOf(input: MarketOrderInput): PriceGuard | null {
  if (input.expected_price === undefined) return null;
  return { expectedPrice: money(input.expected_price), slippageBps: input.max_slippage_bps ?? DEFAULT_MAX_SLIPPAGE_BPS };
}

/**
 * What identifies a market order's request for its `Idempotency-Key` (docs/idempotency.md), in
 * the key space it shares with quoted orders (a quoted order's parts are the user and the quote):
 * the user, the wallet, the pair (any case), the side, the quantity and the guard as exact values
 * (`0.010` and `0.01` are the same), the guard's default filled in, `max_slippage_bps` dropped
 * without `expected_price` (it is ignored then).
 */
export function marketFingerprintParts(userId: string, input: MarketOrderInput): unknown[] {
  const exact = (value: number | string | undefined) => (value === undefined ? null : money(value).toFixed());
  const guard = priceGuardOf(input);
  return [userId, "market", input.wallet_id.toLowerCase(), input.symbol.toUpperCase(), input.side, exact(input.quantity), guard ? guard.expectedPrice.toFixed() : null, guard ? guard.slippageBps : null];
}
