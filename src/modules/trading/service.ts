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
 * The hot path runs plain SQL, not entities (src/modules/trading/repository.ts; docs/performance.md
 * "Trading"): a quote is its caller's read (user and wallet together), the provider's price and one
 * INSERT; an order is its user's read, the key, then in its transaction the quote's lock, its
 * orders and addresses, the ledger's `trade` and one INSERT of the order with its two wallet
 * transactions. The checks on what is read run here, in the order of the users' and wallets'
 * services they replace.
 */
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { components } from "../../../generated/types/platform.js";
import type { Db, Tx } from "../../db/sql.js";
import { DomainError, quote } from "../../domain/errors.js";
import { isUuid, isUuidV4, walletIdOf } from "../../domain/ids.js";
import { format8, money, type Money } from "../../domain/money.js";
import type { PageRequest } from "../../domain/paging.js";
import { PRICE_DECIMALS, checkQuantity, orderLegs, parseSide, quoteLive, quoteTerms, type PairCurrencies, type QuoteTerms } from "../../domain/trading.js";
import type { CataloguePair, CustodyProvider } from "../../providers/provider.js";
import { keyCaller, priorResult, requestFingerprint, runOnce, type IdempotentRequest, type KeyCaller } from "../idempotency/service.js";
import type { LedgerService } from "../ledger/service.js";
import { assertGoodStanding } from "../users/repository.js";
import type { UserService } from "../users/service.js";
import type { WalletService } from "../wallets/service.js";
import { TradeOrder } from "./entities.js";
import { insertQuote, lockQuote, orderCaller, ordersAndAddresses, quoteCaller, writeOrder, type OrderRecord, type QuoteCaller, type QuoteRecord } from "./repository.js";
import { orderView, quoteView, tradeTransactions } from "./views.js";

type Schemas = components["schemas"];
/** Schema `Quote`. */
export type QuoteView = Schemas["Quote"];
/** Schema `Order`. */
export type OrderView = Schemas["Order"];
/** Schema `CreateQuoteRequest`, `quantity` exactly as the client wrote it (number or decimal text). */
export type CreateQuoteInput = Omit<Schemas["CreateQuoteRequest"], "quantity"> & { quantity?: number | string };

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
    const { user, wallet } = liveCaller(caller, userId, input.wallet_id);
    const side = parseSide(input.side);
    const pair = await this.pair(input.symbol);
    await this.deps.provider.assertTradable(pair);
    const holds = new Set(wallet.networks.map((n) => n.currency));
    for (const code of [pair.base, pair.quote]) {
      if (!holds.has(code)) throw new DomainError("UNSUPPORTED_CURRENCY", `The wallet does not hold ${code}.`, "wallet_id");
    }
    const currencies = await this.currencies(pair);
    const quantity = checkQuantity(input.quantity === undefined ? undefined : money(input.quantity), currencies.base.precision);
    const market = await this.deps.provider.pairMarket(this.deps.statements, customerId, pair, quantity);
    const terms = quoteTerms(side, quantity, market, currencies);
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
   * Create Order: executes quote `quoteId` of user `userId` once, atomically (module note). A repeat
   * of an Idempotency-Key by the same caller `by` with the same body answers the first order,
   * `is_duplicate: true` (docs/idempotency.md; absent, the tenant's key space of callers not named:
   * src/modules/idempotency/service.ts `keyCaller`).
   * @throws DomainError USER_NOT_FOUND (404: unknown, deleted, or not `VERIFIED` and active: the
   *   users module's rule of a user in good standing, src/modules/users/repository.ts), QUOTE_NOT_FOUND
   *   (404: unknown, or another customer's); QUOTE_INVALID (400: another user's, or already
   *   executed), QUOTE_EXPIRED (400: at or after `expires_at`), INSUFFICIENT_BALANCE (400);
   *   IDEMPOTENCY_KEY_REUSED (409).
   */
  async createOrder(em: EntityManager, customerId: string, userId: string, quoteId: string, idempotencyKey?: string, by?: KeyCaller | null): Promise<OrderView> {
    // As UserService.find reads a user (a UUID v4 of the customer's), then in good standing (docs/decisions/trading.md "Check orders").
    const caller = isUuidV4(userId) ? await orderCaller(this.deps.statements, customerId, userId.toLowerCase()) : null;
    assertGoodStanding(userId, caller, { deleted: "USER_NOT_FOUND", inactive: "USER_NOT_FOUND" });
    const user = { userId: caller.userId };
    const key = idempotencyKey ?? randomUUID();
    const request: IdempotentRequest = {
      customerId,
      scope: "order",
      caller: keyCaller(by),
      key,
      fingerprint: requestFingerprint([user.userId, quoteId.toLowerCase()]),
      reused: () => new DomainError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was already used with a different request."),
    };
    const statements = this.deps.statements;
    const prior = await priorResult(statements, request);
    if (prior) return orderView(await em.fork().findOneOrFail(TradeOrder, { orderId: prior }), true);
    // The order's transaction runs on a connection of its own, its statements named (docs/performance.md "Trading").
    const outcome = await runOnce(statements, request, (tx, orderId) => this.placeOrder(tx, customerId, user.userId, quoteId, orderId, key));
    if (outcome.duplicate) return orderView(await em.fork().findOneOrFail(TradeOrder, { orderId: outcome.resultId }), true);
    return orderView(outcome.value, false);
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
   * In `tx`, after the key was claimed: the checks on the locked quote, the ledger, then the order
   * and its two wallet transactions in one statement (src/modules/trading/repository.ts).
   */
  private async placeOrder(tx: Tx, customerId: string, userId: string, quoteId: string, orderId: string, key: string): Promise<OrderRecord> {
    const q = await this.lockedQuote(tx, customerId, quoteId);
    if (q.userId !== userId) throw new DomainError("QUOTE_INVALID", `Quote ${quote(quoteId)} belongs to another user.`, "quote_id");
    const { orders, addresses } = await ordersAndAddresses(tx, q);
    if (orders > 0) throw new DomainError("QUOTE_INVALID", `Quote ${quote(quoteId)} was already executed.`, "quote_id");
    const now = new Date();
    if (!quoteLive(q.expiresAt, now)) throw new DomainError("QUOTE_EXPIRED", `Quote ${quote(quoteId)} expired at ${q.expiresAt.toISOString()}.`, "quote_id");
    const currencies = await this.currencies({ base: q.base, quote: q.quote });
    const terms: QuoteTerms = { side: q.side, quantity: money(q.quantity), price: money(q.price), notional: money(q.quantity).times(q.price), fees: money(q.fees), total: money(q.total) };
    const legs = orderLegs(terms, currencies);
    const booked = await this.deps.ledger.trade(tx, { walletId: q.walletId, spent: legs.spent, received: legs.received, fees: legs.fees, feeCurrency: q.quote, reference: `order:${orderId}` });
    const order: OrderRecord = {
      orderId,
      quoteId: q.quoteId,
      tradeId: randomUUID(),
      customerId,
      userId,
      walletId: q.walletId,
      symbol: q.symbol,
      base: q.base,
      quote: q.quote,
      side: q.side,
      quantity: q.quantity,
      price: q.price,
      fees: q.fees,
      total: q.total,
      status: "FILLED",
      idempotencyKey: key,
      createdAt: now,
    };
    await writeOrder(tx, order, tradeTransactions(order, terms, booked, addresses));
    return order;
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
 * The caller of a Create Quote: the user in good standing (the users module's rule,
 * src/modules/users/repository.ts), then the wallet as `WalletService.visibleWallet` checks it.
 * @throws DomainError USER_NOT_FOUND (404: unknown, or not VERIFIED and active), RESOURCE_NOT_FOUND
 *   (404: deleted), WALLET_NOT_FOUND (404: not the customer's, or not this user's).
 */
function liveCaller(caller: QuoteCaller | null, userId: string, walletId: string): { user: QuoteCaller; wallet: NonNullable<QuoteCaller["wallet"]> } {
  assertGoodStanding(userId, caller, { deleted: "RESOURCE_NOT_FOUND", inactive: "USER_NOT_FOUND" });
  if (!caller.wallet) throw new DomainError("WALLET_NOT_FOUND", `Wallet ${quote(walletId)} not found.`);
  return { user: caller, wallet: caller.wallet };
}

/** The amount columns of quote terms, exact decimal text. */
function amounts(terms: QuoteTerms): { quantity: string; price: string; fees: string; total: string } {
  const text = (m: Money) => m.toFixed();
  return { quantity: text(terms.quantity), price: text(terms.price), fees: text(terms.fees), total: text(terms.total) };
}
