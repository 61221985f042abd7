/**
 * The sandbox provider's market (docs/decisions/trading.md "The sandbox"): a deterministic mid
 * price per pair, which a customer may replace with its own (Set Sandbox Price), a configurable
 * spread and fee rate, order bounds by notional in the quote currency, and two magic quantities
 * that give the answers a real provider would give when it cannot fill:
 * - quantity exactly 13.13131313 → `MARKET_CLOSED`;
 * - quantity exactly 66.66666666 → `LIQUIDITY_INSUFFICIENT`;
 * - a market order of quantity exactly 77.77777777 → `ORDER_FAILED`, once the order has passed
 *   every other check (validation, order bounds, balance).
 * Pairs with a fiat currency answer `PAIR_NOT_AVAILABLE`: the sandbox quotes no fiat price (wallets
 * hold usd and eur on their bank rails, docs/decisions/fiat.md, but do not trade them).
 * Prices are exact decimals (decimal.js); no JavaScript number touches one.
 */
import type { Sql } from "../db/sql.js";
import { ownPrice, upsertPrice } from "./repository.js";
import { DomainError } from "../domain/errors.js";
import { money, type Money } from "../domain/money.js";
import type { PairMarket } from "../domain/trading.js";
import type { CatalogueCurrency, CataloguePair } from "./provider.js";

/** Mid prices of the sandbox's tradable pairs, quote currency per base unit (key `base/quote`). */
export const SANDBOX_MID_PRICES: Readonly<Record<string, string>> = {
  "btc/usdt": "65000",
  "eth/usdt": "3200",
  "sol/usdt": "150",
  "trx/usdt": "0.12",
  "pol/usdt": "0.5",
  "usdc/usdt": "1",
  "eth/btc": "0.05",
};

/** Quantity (base units) the sandbox answers `MARKET_CLOSED` to. */
export const MARKET_CLOSED_QUANTITY = money("13.13131313");
/** Quantity (base units) the sandbox answers `LIQUIDITY_INSUFFICIENT` to. */
export const LIQUIDITY_INSUFFICIENT_QUANTITY = money("66.66666666");

/** Quantity (base units) of a market order the sandbox cannot fill: `ORDER_FAILED`. */
export const ORDER_FAILED_QUANTITY = money("77.77777777");

/** The sandbox's order bounds on the notional, in units of the quote currency (every pair). */
export const SANDBOX_MIN_NOTIONAL = money(1);
export const SANDBOX_MAX_NOTIONAL = money(1_000_000);

/** Spread and fee rate of the sandbox's quotes, basis points (`SANDBOX_SPREAD_BPS`, `SANDBOX_FEE_BPS`). */
export interface SandboxTradingOptions {
  spreadBps: number;
  feeBps: number;
}

/** Default spread and fee rate: 20 and 10 basis points. */
export const DEFAULT_SANDBOX_TRADING: SandboxTradingOptions = { spreadBps: 20, feeBps: 10 };


/** The catalogue key of a pair. */
const keyOf = (pair: CataloguePair): string => `${pair.base}/${pair.quote}`;

/**
 * Whether the sandbox trades `pair`: neither currency is fiat and it has a mid price.
 * @throws DomainError PAIR_NOT_AVAILABLE (400, field `symbol`) otherwise.
 */
export function assertTradable(pair: CataloguePair, currencies: readonly CatalogueCurrency[]): void {
  const fiat = [pair.base, pair.quote].filter((code) => currencies.find((c) => c.code === code)?.isFiat);
  if (fiat.length > 0) {
    throw new DomainError("PAIR_NOT_AVAILABLE", `${pair.base.toUpperCase()}/${pair.quote.toUpperCase()} cannot be traded here: the sandbox trades no fiat (${fiat.join(", ")}).`, "symbol");
  }
  if (SANDBOX_MID_PRICES[keyOf(pair)] === undefined) {
    throw new DomainError("PAIR_NOT_AVAILABLE", `${pair.base.toUpperCase()}/${pair.quote.toUpperCase()} is not tradable in the sandbox.`, "symbol");
  }
}

/**
 * The sandbox's market of a tradable `pair` for `customerId` (its own price when it set one) and an
 * order of `quantity` base units.
 * @throws DomainError MARKET_CLOSED, LIQUIDITY_INSUFFICIENT (400, field `quantity`) for the magic quantities.
 */
export async function sandboxMarket(sql: Sql, customerId: string, pair: CataloguePair, quantity: Money, options: SandboxTradingOptions): Promise<PairMarket> {
  if (quantity.eq(MARKET_CLOSED_QUANTITY)) throw new DomainError("MARKET_CLOSED", "The market of this pair is closed (sandbox magic quantity 13.13131313).", "quantity");
  if (quantity.eq(LIQUIDITY_INSUFFICIENT_QUANTITY)) {
    throw new DomainError("LIQUIDITY_INSUFFICIENT", "Not enough liquidity to fill this quantity (sandbox magic quantity 66.66666666).", "quantity");
  }
  // One plain statement (no entity: Create Quote's hot path, docs/performance.md "Trading").
  const mid = money((await ownPrice(sql, customerId, keyOf(pair))) ?? SANDBOX_MID_PRICES[keyOf(pair)] ?? "0");
  return { mid, spreadBps: options.spreadBps, feeBps: options.feeBps, minNotional: SANDBOX_MIN_NOTIONAL, maxNotional: SANDBOX_MAX_NOTIONAL };
}

/**
 * Fills a market order of `quantity` base units: the sandbox books nothing of its own (its
 * liquidity is the ledger's `liquidity:<currency>` accounts).
 * @throws DomainError ORDER_FAILED (400, field `quantity`) for the magic quantity 77.77777777.
 */
export function sandboxFill(quantity: Money): void {
  if (quantity.eq(ORDER_FAILED_QUANTITY)) throw new DomainError("ORDER_FAILED", "The order could not be filled (sandbox magic quantity 77.77777777); nothing moved.", "quantity");
}

/** Sets `customerId`'s mid price of a tradable `pair` (Set Sandbox Price). @returns when it was set (UTC). */
export async function setSandboxPrice(sql: Sql, customerId: string, pair: CataloguePair, price: Money): Promise<Date> {
  const now = new Date();
  await upsertPrice(sql, customerId, keyOf(pair), price.toFixed(), now);
  return now;
}
