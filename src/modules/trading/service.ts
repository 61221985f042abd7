/**
 * Trading: firm quotes and the orders that execute them (docs/decisions/trading.md;
 * spec/platform/trading.tsp). A user converts between two currencies of one of its wallets at a
 * quote that is firm for `QUOTE_TTL_S` seconds. The terms are src/domain/trading.ts; prices come
 * through the provider (`CustodyProvider.pairMarket`); the money moves as the ledger's two `trade`
 * entries (`LedgerService.trade`).
 *
 * Exactly once: Create Order locks the quote's row (`FOR UPDATE`) and writes at most one order per
 * quote (unique `quote_id`), so the same quote sent many times at once fills once; its
 * Idempotency-Key is the shared mechanism (docs/idempotency.md, scope `order`, per caller). The order, both
 * ledger entries and both wallet transactions commit together. Nothing tenant-wide is locked: the
 * quote's row and the wallet's two available accounts.
 * Amounts are exact decimals (decimal.js) end to end; they leave as 8-decimal strings.
 *
 * Market orders (docs/decisions/trading.md "Market orders"): Create Order without a quote runs
 * Create Quote's caller read and checks (`priced`, whose `liveCaller` is the one wallet lookup of
 * quotes and market orders), prices the order at the provider's market of the moment, applies the
 * price guard, and is booked by the same `book` as a quoted order, with the provider's fill
 * (`CustodyProvider.fillMarketOrder`) between the ledger entries and the order's row. Both forms
 * share the Idempotency-Key scope `order`.
 *
 * The hot path runs plain SQL, not entities (src/modules/trading/repository.ts; docs/performance.md
 * "Trading"): a quote is its caller's read (user and wallet together), the provider's price and one
 * INSERT; an order is its user's read, the key, then in its transaction the quote's lock, its
 * orders and addresses, the ledger's `trade` and one INSERT of the order with its two wallet
 * transactions. The checks on what is read run here, in the order of the users' and wallets'
 * services they replace.
 */
import { assertMovable } from "../../domain/wallet-states.js";
import { guardMovements } from "../wallets/states.js";
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { components } from "../../../generated/types/platform.js";
import type { Db, Tx } from "../../db/sql.js";
import { DomainError, quote } from "../../domain/errors.js";
import { isUuid, isUuidV4, walletIdOf } from "../../domain/ids.js";
import { format8, money, type Money } from "../../domain/money.js";
import type { PageRequest } from "../../domain/paging.js";
import { PRICE_DECIMALS, assertPriceGuard, checkQuantity, orderLegs, parseSide, quoteLive, quoteTerms, type PairCurrencies, type QuoteTerms, type Side } from "../../domain/trading.js";
import type { CatalogueCurrency, CataloguePair, CustodyProvider } from "../../providers/provider.js";
import { keyCaller, priorResult, requestFingerprint, runOnce, type IdempotentRequest, type KeyCaller } from "../idempotency/service.js";
import type { LedgerService } from "../ledger/service.js";
import { assertGoodStanding, type StandingRefusalCode } from "../users/repository.js";
import type { UserService } from "../users/service.js";
import type { WalletService } from "../wallets/service.js";
import { TradeOrder } from "./entities.js";
import { marketFingerprintParts, orderForm, priceGuardOf, type CreateOrderInput, type MarketOrderInput } from "./market.js";
import { insertQuote, lockQuote, orderCaller, ordersAndAddresses, quoteCaller, writeOrder, type OrderRecord, type QuoteCaller, type QuoteRecord, type TradeAddress } from "./repository.js";
import { orderView, quoteView, tradeTransactions } from "./views.js";

type Schemas = components["schemas"];
/** Schema `Quote`. */
export type QuoteView = Schemas["Quote"];
/** Schema `Order`. */
export type OrderView = Schemas["Order"];
/** Schema `CreateQuoteRequest`, `quantity` exactly as the client wrote it (number or decimal text). */
export type CreateQuoteInput = Omit<Schemas["CreateQuoteRequest"], "quantity"> & { quantity?: number | string };

/** The codes of a user not in good standing (users module: src/modules/users/repository.ts `assertGoodStanding`). */
type StandingCodes = { deleted: StandingRefusalCode; inactive: StandingRefusalCode };

/** Default of `QUOTE_TTL_S`: seconds a quote stays firm. */
export const DEFAULT_QUOTE_TTL_S = 15;

/** Quotes and orders of the customers' users. */
export class TradingService {
  /**
   * @param deps.statements where the statements and the orders' transactions run (src/db/sql.ts `Db`:
   *   named, or unnamed with `DATABASE_POOL_MODE=transaction`).
   */
  constructor(
    private readonly deps: { ledger: LedgerService; wallets: WalletService; users: UserService; provider: CustodyProvider; statements: Db },
    private readonly options: { quoteTtlS: number } = { quoteTtlS: DEFAULT_QUOTE_TTL_S },
  ) {}

  /**
   * Create Quote for user `userId` of customer `customerId`. Checks, in order: `wallet_id` a UUID
   * (400 INVALID_WALLET_ID), the user (404
   * USER_NOT_FOUND: unknown; RESOURCE_NOT_FOUND: deleted; USER_NOT_FOUND: not VERIFIED and
   * active), the wallet (404 WALLET_NOT_FOUND: not that user's), `side` (INVALID_SIDE), `symbol`
   * (INVALID_CURRENCY_PAIR, PAIR_NOT_AVAILABLE), the wallet holds both currencies
   * (UNSUPPORTED_CURRENCY), `quantity` (QUANTITY_REQUIRED,
   * QUANTITY_MUST_BE_POSITIVE, INVALID_AMOUNT), the provider's market (MARKET_CLOSED,
   * LIQUIDITY_INSUFFICIENT), the order bounds (MINIMUM_ORDER_NOT_MET, MAXIMUM_ORDER_EXCEEDED): all 400.
   * @returns the stored quote, firm until `expires_at` (now + `QUOTE_TTL_S`).
   */
  async createQuote(em: EntityManager, customerId: string, userId: string, input: CreateQuoteInput): Promise<QuoteView> {
    const statements = this.deps.statements;
    const walletId = walletIdOf(input.wallet_id, "wallet_id");
    const caller = isUuidV4(userId) ? await quoteCaller(statements, customerId, userId.toLowerCase(), walletId) : null;
    const { user, wallet, side, pair, terms } = await this.priced(customerId, userId, caller, input, { deleted: "RESOURCE_NOT_FOUND", inactive: "USER_NOT_FOUND" });
    const createdAt = new Date();
    const row: QuoteRecord = {
      quoteId: randomUUID(),
      customerId,
      userId: user.userId,
      walletId: wallet.walletId,
      symbol: symbolOf(pair),
      base: pair.base,
      quote: pair.quote,
      side,
      ...amounts(terms),
      expiresAt: new Date(createdAt.getTime() + this.options.quoteTtlS * 1000),
      createdAt,
    };
    await insertQuote(statements, row);
    return quoteView(row);
  }

  /**
   * Create Order in either form of its body (module src/modules/trading/market.ts): a quoted order
   * ({@link createOrder}) or a market order ({@link createMarketOrder}), in one Idempotency-Key space.
   * @throws ValidationFailed (422) for a body of neither form; what the form's method throws.
   */
  async submitOrder(em: EntityManager, customerId: string, userId: string, body: CreateOrderInput, idempotencyKey?: string, by?: KeyCaller | null): Promise<OrderView> {
    const form = orderForm(body);
    return "quoteId" in form
      ? this.createOrder(em, customerId, userId, form.quoteId, idempotencyKey, by)
      : this.createMarketOrder(em, customerId, userId, form.market, idempotencyKey, by);
  }

  /**
   * Create Order of a quote: executes quote `quoteId` of user `userId` once, atomically (module
   * note). A repeat of an Idempotency-Key by the same caller `by` with the same body answers the
   * first order, `is_duplicate: true` (docs/idempotency.md; absent, the tenant's key space of
   * callers not named: src/modules/idempotency/service.ts `keyCaller`).
   * @throws DomainError USER_NOT_FOUND (404: unknown, deleted, or not `VERIFIED` and active: the
   *   users module's rule of a user in good standing, src/modules/users/repository.ts), QUOTE_NOT_FOUND
   *   (404: unknown, or another customer's); QUOTE_INVALID (400: another user's, or already
   *   executed), QUOTE_EXPIRED (400: at or after `expires_at`), INSUFFICIENT_BALANCE (400);
   *   IDEMPOTENCY_KEY_REUSED (409).
   */
  async createOrder(em: EntityManager, customerId: string, userId: string, quoteId: string, idempotencyKey?: string, by?: KeyCaller | null): Promise<OrderView> {
    // As UserService.find reads a user (a UUID v4 of the customer's), then in good standing (docs/decisions/trading.md "Check orders").
    const caller = isUuidV4(userId) ? await orderCaller(this.deps.statements, customerId, userId.toLowerCase()) : null;
    assertGoodStanding(userId, caller, ORDER_STANDING);
    const request = orderRequest(customerId, idempotencyKey ?? randomUUID(), [caller.userId, quoteId.toLowerCase()], by);
    const prior = await priorResult(this.deps.statements, request);
    if (prior) return duplicateOf(em, prior);
    // The switches are read before the transaction: their refresh takes a pool connection, and a
    // transaction must never wait for a second one (docs/architecture.md "Reaching the database").
    const catalogue = await this.deps.wallets.switches.currencies();
    // The order's transaction runs on a connection of its own, its statements named (docs/performance.md "Trading").
    const outcome = await runOnce(this.deps.statements, request, (tx, orderId) => this.placeOrder(tx, customerId, caller.userId, quoteId, orderId, request.key, catalogue));
    return outcome.duplicate ? duplicateOf(em, outcome.resultId) : orderView(outcome.value, false);
  }

  /**
   * Create Order without a quote (docs/decisions/trading.md "Market orders"): `input.quantity` of
   * the pair's base currency bought or sold in wallet `input.wallet_id` of user `userId` at once, at
   * the price the provider gives now (the terms a quote would give at this instant, spread and fees
   * included), booked as a quoted order is ({@link book}); `quote_id` of the answer is null. The
   * Idempotency-Key is as {@link createOrder}'s, in the same key space.
   * Checks, in order: `wallet_id` a UUID (400 INVALID_WALLET_ID); the user (404 USER_NOT_FOUND:
   * unknown, deleted, or not VERIFIED and active); a repeated key; then Create Quote's checks
   * (WALLET_NOT_FOUND 404; INVALID_SIDE, INVALID_CURRENCY_PAIR, PAIR_NOT_AVAILABLE,
   * UNSUPPORTED_CURRENCY, QUANTITY_REQUIRED, QUANTITY_MUST_BE_POSITIVE, INVALID_AMOUNT,
   * MARKET_CLOSED, LIQUIDITY_INSUFFICIENT, MINIMUM_ORDER_NOT_MET, MAXIMUM_ORDER_EXCEEDED: 400); the
   * price guard (PRICE_CHANGED 400, src/domain/trading.ts `assertPriceGuard`); in the order's
   * transaction the balance (INSUFFICIENT_BALANCE 400), then the provider's fill (ORDER_FAILED 400).
   * A refusal moves nothing. @throws DomainError those codes; IDEMPOTENCY_KEY_REUSED (409).
   */
  async createMarketOrder(em: EntityManager, customerId: string, userId: string, input: MarketOrderInput, idempotencyKey?: string, by?: KeyCaller | null): Promise<OrderView> {
    const statements = this.deps.statements;
    const walletId = walletIdOf(input.wallet_id, "wallet_id");
    const caller = isUuidV4(userId) ? await quoteCaller(statements, customerId, userId.toLowerCase(), walletId) : null;
    assertGoodStanding(userId, caller, ORDER_STANDING);
    const request = orderRequest(customerId, idempotencyKey ?? randomUUID(), marketFingerprintParts(caller.userId, input), by);
    const prior = await priorResult(statements, request);
    if (prior) return duplicateOf(em, prior);
    const { wallet, side, pair, currencies, terms } = await this.priced(customerId, userId, caller, input, ORDER_STANDING);
    assertPriceGuard(side, terms.price, priceGuardOf(input), pair.quote);
    const outcome = await runOnce(statements, request, async (tx, orderId) => {
      const order = orderRecord({ orderId, quoteId: null, customerId, userId: caller.userId, walletId: wallet.walletId, symbol: symbolOf(pair), base: pair.base, quote: pair.quote, key: request.key }, terms);
      const { addresses } = await ordersAndAddresses(tx, order);
      const fill = () => this.deps.provider.fillMarketOrder(tx, { customerId, pair, side, quantity: terms.quantity, price: terms.price });
      return this.book(tx, order, terms, currencies, addresses, fill);
    });
    return outcome.duplicate ? duplicateOf(em, outcome.resultId) : orderView(outcome.value, false);
  }

  /** Get Order: an order of user `userId`. @throws DomainError USER_NOT_FOUND, NOT_FOUND (404). */
  async getOrder(em: EntityManager, customerId: string, userId: string, orderId: string): Promise<OrderView> {
    const user = await this.deps.users.find(em, customerId, userId);
    const row = isUuid(orderId) ? await em.findOne(TradeOrder, { orderId: orderId.toLowerCase(), userId: user.userId, customerId }) : null;
    if (!row) throw new DomainError("NOT_FOUND", `Order ${quote(orderId)} not found.`);
    return orderView(row, false);
  }

  /** List Orders of user `userId`, newest first; one page and the total. @throws DomainError USER_NOT_FOUND (404). */
  async listOrders(em: EntityManager, customerId: string, userId: string, page: PageRequest): Promise<{ items: OrderView[]; total: number }> {
    const user = await this.deps.users.find(em, customerId, userId);
    const [rows, total] = await em.findAndCount(TradeOrder, { userId: user.userId, customerId }, { orderBy: { createdAt: "desc", orderId: "desc" }, limit: page.limit, offset: page.skip });
    return { items: rows.map((r) => orderView(r, false)), total };
  }

  /**
   * Set Sandbox Price: customer `customerId`'s mid price of `symbol` from now on (the provider's test mode).
   * @throws DomainError INVALID_CURRENCY_PAIR, PAIR_NOT_AVAILABLE, INVALID_AMOUNT (400: more than 8
   *   decimals, the precision prices are shown and used at); NOT_FOUND (404: no test mode).
   */
  async setSandboxPrice(em: EntityManager, customerId: string, symbol: string, price: number | string): Promise<{ symbol: string; price: string; updated_at: string }> {
    const pair = await this.pair(symbol);
    const value = money(price);
    if (value.decimalPlaces() > PRICE_DECIMALS) throw new DomainError("INVALID_AMOUNT", `price has more than ${PRICE_DECIMALS} decimals.`, "price");
    const at = await this.deps.provider.setTestPrice(this.deps.statements, customerId, pair, value);
    return { symbol: symbolOf(pair), price: format8(value), updated_at: at.toISOString() };
  }

  /**
   * In `tx`, after the key was claimed: the checks on the locked quote, then its booking ({@link book}).
   * @param catalogue the currencies under the operator's switches, read before the transaction.
   */
  private async placeOrder(tx: Tx, customerId: string, userId: string, quoteId: string, orderId: string, key: string, catalogue: readonly CatalogueCurrency[]): Promise<OrderRecord> {
    const q = await this.lockedQuote(tx, customerId, quoteId);
    if (q.userId !== userId) throw new DomainError("QUOTE_INVALID", `Quote ${quote(quoteId)} belongs to another user.`, "quote_id");
    const { orders, addresses } = await ordersAndAddresses(tx, q);
    if (orders > 0) throw new DomainError("QUOTE_INVALID", `Quote ${quote(quoteId)} was already executed.`, "quote_id");
    const now = new Date();
    if (!quoteLive(q.expiresAt, now)) throw new DomainError("QUOTE_EXPIRED", `Quote ${quote(quoteId)} expired at ${q.expiresAt.toISOString()}.`, "quote_id");
    assertTradingOn({ base: q.base, quote: q.quote }, catalogue);
    const currencies = await this.currencies({ base: q.base, quote: q.quote });
    const terms: QuoteTerms = { side: q.side, quantity: money(q.quantity), price: money(q.price), notional: money(q.quantity).times(q.price), fees: money(q.fees), total: money(q.total) };
    const order = orderRecord({ orderId, quoteId: q.quoteId, customerId, userId, walletId: q.walletId, symbol: q.symbol, base: q.base, quote: q.quote, key, createdAt: now }, terms);
    return this.book(tx, order, terms, currencies, addresses);
  }

  /**
   * In `tx`, the booking of every order, quoted or market: the wallet's state under its share lock
   * (src/modules/wallets/states.ts `guardMovements`: WALLET_LOCKED, WALLET_SUSPENDED,
   * WALLET_INACTIVE 400), the ledger's two `trade` entries (which
   * check the balance: INSUFFICIENT_BALANCE 400), then `fill` (a market order's provider fill, which
   * may refuse: ORDER_FAILED 400, rolling the entries back), then the order and its two wallet
   * transactions in one statement (src/modules/trading/repository.ts `writeOrder`).
   * @param addresses the wallet's deposit addresses of the pair's two currencies, by network.
   */
  private async book(tx: Tx, order: OrderRecord, terms: QuoteTerms, currencies: PairCurrencies, addresses: readonly TradeAddress[], fill?: () => Promise<void>): Promise<OrderRecord> {
    await guardMovements(tx, [{ walletId: order.walletId, direction: "out", field: "wallet_id" }]);
    const legs = orderLegs(terms, currencies);
    const booked = await this.deps.ledger.trade(tx, { walletId: order.walletId, spent: legs.spent, received: legs.received, fees: legs.fees, feeCurrency: order.quote, reference: `order:${order.orderId}` });
    if (fill) await fill();
    await writeOrder(tx, order, tradeTransactions(order, terms, booked, addresses));
    return order;
  }

  /**
   * What Create Quote and a market order check and price, in order: the user in good standing
   * (`standing`: the codes of a deleted or inactive user) and the wallet (`liveCaller`), `side`,
   * `symbol`, the pair tradable, both currencies held, `quantity`, the provider's market, the terms
   * with their order bounds. @throws DomainError as {@link createQuote} lists.
   */
  private async priced(
    customerId: string,
    userId: string,
    caller: QuoteCaller | null,
    input: { wallet_id: string; symbol: string; side: string; quantity?: number | string },
    standing: StandingCodes,
  ): Promise<{ user: QuoteCaller; wallet: NonNullable<QuoteCaller["wallet"]>; side: Side; pair: CataloguePair; currencies: PairCurrencies; terms: QuoteTerms }> {
    const { user, wallet } = liveCaller(caller, userId, input.wallet_id, standing);
    const side = parseSide(input.side);
    const pair = await this.pair(input.symbol);
    await this.deps.provider.assertTradable(pair);
    assertTradingOn(pair, await this.deps.wallets.switches.currencies());
    const holds = new Set(wallet.networks.map((n) => n.currency));
    for (const code of [pair.base, pair.quote]) {
      if (!holds.has(code)) throw new DomainError("UNSUPPORTED_CURRENCY", `The wallet does not hold ${code}.`, "wallet_id");
    }
    const currencies = await this.currencies(pair);
    const quantity = checkQuantity(input.quantity === undefined ? undefined : money(input.quantity), currencies.base.precision);
    const market = await this.deps.provider.pairMarket(this.deps.statements, customerId, pair, quantity);
    return { user, wallet, side, pair, currencies, terms: quoteTerms(side, quantity, market, currencies) };
  }

  /** The customer's quote, locked for the order's transaction. @throws DomainError QUOTE_NOT_FOUND (404). */
  private async lockedQuote(tx: Tx, customerId: string, quoteId: string): Promise<QuoteRecord> {
    const found = isUuid(quoteId) ? await lockQuote(tx, customerId, quoteId.toLowerCase()) : null;
    if (!found) throw new DomainError("QUOTE_NOT_FOUND", `Quote ${quote(quoteId)} not found.`, "quote_id");
    return found;
  }

  /** The listed pair whose symbol (base + quote, any case) is `symbol`. @throws DomainError INVALID_CURRENCY_PAIR (400). */
  private async pair(symbol: string): Promise<CataloguePair> {
    const wanted = symbol.toUpperCase();
    const pair = (await this.deps.provider.listTradingPairs()).find((p) => symbolOf(p) === wanted);
    if (!pair) throw new DomainError("INVALID_CURRENCY_PAIR", `Unknown trading pair ${quote(symbol)}: see GET /currencies/pairs.`, "symbol");
    return pair;
  }

  /** The codes and precisions of a pair's currencies. */
  private async currencies(pair: CataloguePair): Promise<PairCurrencies> {
    const [base, quoteCurrency] = await Promise.all([this.deps.wallets.currency(pair.base), this.deps.wallets.currency(pair.quote)]);
    return { base: { code: base.code, precision: base.precision }, quote: { code: quoteCurrency.code, precision: quoteCurrency.precision } };
  }
}

/** A pair's symbol: base and quote codes, upper case, no separator (reference "Trading pair"). */
export function symbolOf(pair: CataloguePair): string {
  return `${pair.base}${pair.quote}`.toUpperCase();
}

/**
 * The caller of a Create Quote or a market order: the user in good standing (the users module's
 * rule, src/modules/users/repository.ts), then the wallet as `WalletService.visibleWallet` checks it,
 * then its state (money may leave it: docs/decisions/customers-users-and-wallets.md "Wallet states").
 * @throws DomainError USER_NOT_FOUND (404: unknown), `standing.deleted` / `standing.inactive` (404:
 *   deleted / not VERIFIED and active), WALLET_NOT_FOUND (404: not the customer's, or not this user's);
 *   WALLET_LOCKED, WALLET_SUSPENDED, WALLET_INACTIVE (400).
 */
function liveCaller(caller: QuoteCaller | null, userId: string, walletId: string, standing: StandingCodes): { user: QuoteCaller; wallet: NonNullable<QuoteCaller["wallet"]> } {
  assertGoodStanding(userId, caller, standing);
  if (!caller.wallet) throw new DomainError("WALLET_NOT_FOUND", `Wallet ${quote(walletId)} not found.`);
  assertMovable(caller.wallet, "out", "wallet_id");
  return { user: caller, wallet: caller.wallet };
}

/**
 * Both currencies of `pair` have trading switched on by the operator and offered by the provider,
 * in `catalogue` (src/modules/currencies/service.ts `CurrencySwitches.currencies`;
 * docs/decisions/provider-and-sandbox.md "Currency switches"). @throws DomainError PAIR_NOT_AVAILABLE (400).
 */
function assertTradingOn(pair: CataloguePair, catalogue: readonly CatalogueCurrency[]): void {
  for (const code of [pair.base, pair.quote]) {
    if (catalogue.find((c) => c.code === code)?.isTradingEnabled !== true) {
      throw new DomainError("PAIR_NOT_AVAILABLE", `${pair.base.toUpperCase()}/${pair.quote.toUpperCase()} is not available: ${code} trading is switched off.`, "symbol");
    }
  }
}

/** The amount columns of quote terms, exact decimal text. */
function amounts(terms: QuoteTerms): { quantity: string; price: string; fees: string; total: string } {
  const text = (m: Money) => m.toFixed();
  return { quantity: text(terms.quantity), price: text(terms.price), fees: text(terms.fees), total: text(terms.total) };
}

/** The codes of a user not in good standing on an order (deleted or inactive: USER_NOT_FOUND), quoted or market. */
const ORDER_STANDING: StandingCodes = { deleted: "USER_NOT_FOUND", inactive: "USER_NOT_FOUND" };

/** The Idempotency-Key request of an order (scope `order`, shared by both forms), `parts` its fingerprint's. */
function orderRequest(customerId: string, key: string, parts: readonly unknown[], by: KeyCaller | null | undefined): IdempotentRequest {
  return {
    customerId,
    scope: "order",
    caller: keyCaller(by),
    key,
    fingerprint: requestFingerprint(parts),
    reused: () => new DomainError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was already used with a different request."),
  };
}

/** The stored order `orderId`, answered to a repeated Idempotency-Key (`is_duplicate: true`). */
async function duplicateOf(em: EntityManager, orderId: string): Promise<OrderView> {
  return orderView(await em.fork().findOneOrFail(TradeOrder, { orderId }), true);
}

/** A `FILLED` order of `terms` with its ids (a new `trade_id`); `createdAt` now unless given. */
function orderRecord(
  o: { orderId: string; quoteId: string | null; customerId: string; userId: string; walletId: string; symbol: string; base: string; quote: string; key: string; createdAt?: Date },
  terms: QuoteTerms,
): OrderRecord {
  const { key, createdAt, ...ids } = o;
  return { ...ids, tradeId: randomUUID(), side: terms.side, ...amounts(terms), status: "FILLED", idempotencyKey: key, createdAt: createdAt ?? new Date() };
}
