/**
 * The trading module's SQL on the hot path of Create Quote and Create Order (docs/performance.md
 * "Trading"): what a quote and an order read and write, in as few statements as the checks allow,
 * without the ORM's query building, identity map, hydration and unit of work.
 *
 * Before a transaction, {@link QUOTE_CALLER}, {@link ORDER_CALLER} and {@link INSERT_QUOTE} run
 * on the pool (src/db/sql.ts `Db`: named, or unnamed with `DATABASE_POOL_MODE=transaction`); the
 * others in the order's transaction (`Tx`), as the ledger's do. {@link QUOTE_CALLER} and
 * {@link ORDER_CALLER} read the users module's
 * `app_user` with its rule of a user in good standing (src/modules/users/repository.ts), the former also
 * the wallets module's `wallet`; {@link ordersAndAddresses} reads the wallets module's `wallet_address`, and
 * {@link writeOrder} inserts into the wallets module's `wallet_transaction`, directly: the checks on
 * what they read stay in src/modules/trading/service.ts, in the order of the users' and wallets'
 * own services. Amounts are exact decimal strings (numeric as text); instants are UTC.
 */
import type { WalletStatus } from "../../domain/wallet-states.js";
import type { Db, PreparedStatement, Sql } from "../../db/sql.js";
import { goodStandingSql, userOfCustomerSql, type UserStanding } from "../users/repository.js";
import type { WalletNetworkEntry } from "../wallets/entities.js";
import type { Side } from "../../domain/trading.js";

/** What Create Quote reads of its caller in one round trip: the user's standing and, when it is the user's, the wallet. */
export interface QuoteCaller extends UserStanding {
  /** Lower-case UUID. */
  userId: string;
  /** The wallet of the request with its state, when the customer has it and it is this user's; null otherwise. */
  wallet: { walletId: string; networks: WalletNetworkEntry[]; status: WalletStatus; statusReason: string | null } | null;
}

/** A row of {@link QUOTE_CALLER}. */
interface QuoteCallerRow {
  user_id: string;
  deleted: boolean;
  good_standing: boolean;
  wallet_id: string | null;
  networks: WalletNetworkEntry[] | null;
  status: WalletStatus | null;
  status_reason: string | null;
}

/**
 * User `$1` (lower-case UUID) of customer `$2` and its standing, by the users module's rule (a user
 * in good standing: src/modules/users/repository.ts), with its wallet `$3` (lower-case UUID, or null:
 * then none) when the customer has it and it is that user's (as `WalletService.visibleWallet`
 * finds a wallet for the user). No row when no such user. The bench's trading baseline
 * (scripts/bench/baseline-trading.ts) runs this same text.
 */
export const QUOTE_CALLER: PreparedStatement = {
  name: "trading_quote_caller",
  text: `select u.user_id, u.deleted_at is not null as deleted, ${goodStandingSql("u")} as good_standing, w.wallet_id, w.networks, w.status, w.status_reason
           from app_user u
           left join wallet w on w.wallet_id = $3 and w.customer_id = u.customer_id and w.user_id = u.user_id
          where ${userOfCustomerSql("u", "$1", "$2")}`,
};

/**
 * User `$1` (lower-case UUID) of customer `$2` and its standing, by the users module's rule (as
 * {@link QUOTE_CALLER} reads it, without a wallet): no row when no such user.
 */
export const ORDER_CALLER: PreparedStatement = {
  name: "trading_order_caller",
  text: `select u.user_id, u.deleted_at is not null as deleted, ${goodStandingSql("u")} as good_standing
           from app_user u
          where ${userOfCustomerSql("u", "$1", "$2")}`,
};

/** Inserts a quote (a single statement: atomic without a transaction of its own). */
export const INSERT_QUOTE: PreparedStatement = {
  name: "trading_insert_quote",
  text: `insert into trade_quote (quote_id, customer_id, user_id, wallet_id, symbol, base, quote, side, quantity, price, fees, total, expires_at, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
};

/**
 * The user `userId` (lower-case UUID) of `customerId` and its standing, with the wallet `walletId`
 * (lower-case UUID, or null) when it is that user's, in one round trip; null when the customer has
 * no such user. @throws the driver's error.
 */
export async function quoteCaller(statements: Db, customerId: string, userId: string, walletId: string | null): Promise<QuoteCaller | null> {
  const [row] = await statements.rows<QuoteCallerRow>(QUOTE_CALLER, [userId, customerId, walletId]);
  if (!row) return null;
  const wallet = row.wallet_id === null ? null : { walletId: row.wallet_id, networks: row.networks ?? [], status: row.status ?? "ACTIVE", statusReason: row.status_reason };
  return { userId: row.user_id, deleted: row.deleted, goodStanding: row.good_standing, wallet };
}

/**
 * The user `userId` (lower-case UUID) of `customerId`: its id as stored (lower-case UUID) and its
 * standing, in one round trip; null when the customer has no such user. @throws the driver's error.
 */
export async function orderCaller(statements: Db, customerId: string, userId: string): Promise<(UserStanding & { userId: string }) | null> {
  const [row] = await statements.rows<{ user_id: string; deleted: boolean; good_standing: boolean }>(ORDER_CALLER, [userId, customerId]);
  return row ? { userId: row.user_id, deleted: row.deleted, goodStanding: row.good_standing } : null;
}

/** A quote's terms and ownership; amounts exact decimal text, instants UTC. */
export interface QuoteRecord {
  quoteId: string;
  customerId: string;
  userId: string;
  walletId: string;
  symbol: string;
  base: string;
  quote: string;
  side: Side;
  quantity: string;
  price: string;
  fees: string;
  total: string;
  expiresAt: Date;
  createdAt: Date;
}

/** Inserts `q` (one statement, outside any transaction). @throws the driver's error. */
export async function insertQuote(statements: Db, q: QuoteRecord): Promise<void> {
  await statements.rows(INSERT_QUOTE, [q.quoteId, q.customerId, q.userId, q.walletId, q.symbol, q.base, q.quote, q.side, q.quantity, q.price, q.fees, q.total, q.expiresAt, q.createdAt]);
}

/** A row of trade_quote (instants as PostgreSQL's text: the ORM's pool keeps them raw). */
interface QuoteRow {
  quote_id: string;
  customer_id: string;
  user_id: string;
  wallet_id: string;
  symbol: string;
  base: string;
  quote: string;
  side: Side;
  quantity: string;
  price: string;
  fees: string;
  total: string;
  expires_at: string | Date;
  created_at: string | Date;
}

/** Quote `$1` of customer `$2`, locked (Create Order's), as {@link lockQuote} runs it. */
export const LOCK_QUOTE: PreparedStatement = {
  name: "trade_lock_quote",
  text: `select quote_id, customer_id, user_id, wallet_id, symbol, base, quote, side, quantity, price, fees, total, expires_at, created_at
  from trade_quote where quote_id = $1 and customer_id = $2 for update`,
};

/**
 * In transaction `tx`: quote `quoteId` (lower-case UUID) of `customerId`, locked `FOR UPDATE` until
 * `tx` ends; null when the customer has no such quote.
 */
export async function lockQuote(tx: Sql, customerId: string, quoteId: string): Promise<QuoteRecord | null> {
  const [row] = await tx.rows<QuoteRow>(LOCK_QUOTE, [quoteId, customerId]);
  if (!row) return null;
  return {
    quoteId: row.quote_id,
    customerId: row.customer_id,
    userId: row.user_id,
    walletId: row.wallet_id,
    symbol: row.symbol,
    base: row.base,
    quote: row.quote,
    side: row.side,
    quantity: row.quantity,
    price: row.price,
    fees: row.fees,
    total: row.total,
    expiresAt: new Date(row.expires_at),
    createdAt: new Date(row.created_at),
  };
}

/** A wallet's deposit address of one currency on one network. */
export interface TradeAddress {
  currency: string;
  network: string;
  address: string;
}

/**
 * How many orders quote `$1` has, and wallet `$2`'s addresses of currencies `$3` and `$4`, by
 * network, as {@link ordersAndAddresses} runs it. A statement of its own after the quote's lock:
 * it sees an order committed while this transaction waited for the lock (READ COMMITTED).
 */
export const ORDERS_AND_ADDRESSES: PreparedStatement = {
  name: "trade_orders_addresses",
  text: `select (select count(*) from trade_order where quote_id = $1) as orders,
  coalesce((select json_agg(json_build_object('currency', a.currency, 'network', a.network, 'address', a.address) order by a.network)
              from wallet_address a where a.wallet_id = $2 and a.currency in ($3, $4)), '[]'::json) as addresses`,
};

/**
 * In transaction `tx`, after the quote's lock: how many orders `q` already has, and its wallet's
 * deposit addresses of its two currencies, by network. A market order (`quoteId` null) has no
 * quote: `orders` is 0 and only its addresses count.
 */
export async function ordersAndAddresses(tx: Sql, q: Pick<QuoteRecord, "walletId" | "base" | "quote"> & { quoteId: string | null }): Promise<{ orders: number; addresses: TradeAddress[] }> {
  const [row] = await tx.rows<{ orders: string | number; addresses: TradeAddress[] }>(ORDERS_AND_ADDRESSES, [q.quoteId, q.walletId, q.base, q.quote]);
  return { orders: Number(row?.orders ?? 0), addresses: row?.addresses ?? [] };
}

/**
 * An order as stored (status `FILLED`): its terms (a quote's, or a market order's at execution),
 * its ids and key; `quoteId` null for a market order. Amounts exact decimal text.
 */
export interface OrderRecord extends Omit<QuoteRecord, "expiresAt" | "quoteId"> {
  orderId: string;
  quoteId: string | null;
  tradeId: string;
  status: "FILLED";
  idempotencyKey: string;
}

/** A `trade` wallet transaction of an order (src/modules/trading/views.ts `tradeTransactions`); amounts exact decimal text. */
export interface TradeTransaction {
  currency: string;
  network: string;
  address: string;
  amount: string;
  fees: string;
  netProceeds: string;
  price: string;
  balanceAfter: string;
  description: string;
  journalEntryId: number | null;
}

/** Columns of a `trade` wallet transaction, in the order {@link writeOrder} sends them. */
const TRANSACTION_COLUMNS = `wallet_id, customer_id, network, address, action, status, currency, amount, fees, net_proceeds, price, balance_after, hash, memo,
  description, order_id, symbol, trade_id, idempotency_id, journal_entry_id, created_at`;
/** Columns of an order, in the order {@link writeOrder} sends them. */
const ORDER_COLUMNS = `order_id, quote_id, trade_id, customer_id, user_id, wallet_id, symbol, base, quote, side, quantity, price, fees, total, status, idempotency_key, created_at`;
/** `n` placeholders `$from…` in parentheses. */
const row = (from: number, n: number): string => `(${Array.from({ length: n }, (_, i) => `$${from + i}`).join(", ")})`;

/** An order's wallet transactions (`transactions` rows of 21 values, in order) and the order (17 values), in one statement. */
function writeOrderSql(transactions: number): string {
  return `with transactions as (
    insert into wallet_transaction (${TRANSACTION_COLUMNS}) values ${Array.from({ length: transactions }, (_, t) => row(1 + 21 * t, 21)).join(", ")}
  )
  insert into trade_order (${ORDER_COLUMNS}) values ${row(1 + 21 * transactions, 17)}`;
}

/** The write of an order with two wallet transactions, the only shape Create Order writes (one per currency). */
export const WRITE_ORDER: PreparedStatement = { name: "trade_write_order_2", text: writeOrderSql(2) };

/** {@link writeOrderSql}'s statement of `n` transactions ({@link WRITE_ORDER} for 2), built once per shape. */
const WRITE_ORDERS = new Map<number, PreparedStatement>([[2, WRITE_ORDER]]);

/**
 * In transaction `tx`: inserts `order`'s wallet transactions (action `trade`, status `done`, in the
 * order given: their ids follow it) and the order, in one statement.
 */
export async function writeOrder(tx: Sql, order: OrderRecord, transactions: readonly TradeTransaction[]): Promise<void> {
  const o = order;
  const values = transactions.flatMap((t) => [
    o.walletId, o.customerId, t.network, t.address, "trade", "done", t.currency, t.amount, t.fees, t.netProceeds, t.price, t.balanceAfter, "", "",
    t.description, o.orderId, o.symbol, o.tradeId, o.idempotencyKey, t.journalEntryId, o.createdAt,
  ]);
  values.push(o.orderId, o.quoteId, o.tradeId, o.customerId, o.userId, o.walletId, o.symbol, o.base, o.quote, o.side, o.quantity, o.price, o.fees, o.total, o.status, o.idempotencyKey, o.createdAt);
  const n = transactions.length;
  let statement = WRITE_ORDERS.get(n);
  if (statement === undefined) WRITE_ORDERS.set(n, (statement = { name: `trade_write_order_${n}`, text: writeOrderSql(n) }));
  await tx.rows(statement, values);
}
