/**
 * Create Quote and Create Order of the benchmark's trading rows (scripts/bench/trading.ts), on bare
 * `node:http` + a raw `pg.Pool`: NOT a minimum but the very statements the service runs for one
 * pair (src/modules/trading/service.ts, the ledger's `trade`, the idempotency claim; captured with
 * `npx tsx scripts/bench/capture-trading.ts`, which compares the two sequences), in the same order
 * and transactions, taking the same row locks, with bound parameters where MikroORM inlines literals.
 *
 * Quote (4): the owner key's credential (the service's prepared statement); the user with the
 * wallet (one statement); the customer's sandbox price of the pair; INSERT of the quote (no
 * transaction of its own: one statement).
 * Order (12): the credential; the user; the Idempotency-Key's row (scope `order`; none is sent, so
 * a fresh key as the service generates); BEGIN; INSERT of the key row (`on conflict do nothing`);
 * the quote `FOR UPDATE`; the count of its orders with the wallet's addresses of both currencies;
 * one statement locking the wallet's two available accounts (`FOR UPDATE`, in id order) and reading
 * the liquidity, fees and held accounts; one statement per entry (spent currency, then received)
 * writing the entry, its postings and the cached balance; INSERT of both wallet transactions (base
 * currency first) and of the order, in one statement; COMMIT.
 *
 * It answers the service's `Quote` and `Order`. What the service does beyond this: the OpenAPI
 * validation, express, the exact reading of `quantity` from the JSON text, the catalogue's pair and
 * currency look-ups, the ORM's entities, identity map, unit of work and change sets. It serves what
 * the benchmark sends: BTCUSDT with the owner key, within the bounds, a live quote; anything else
 * answers 409 `BENCH_UNSUPPORTED` (a short balance 400 `INSUFFICIENT_BALANCE`, as the service).
 */
import { createHash, createHmac, createSecretKey, hkdfSync, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type pg from "pg";
import type { Decimal } from "decimal.js";
import { D, first, ok, readJson, Refusal, refuse } from "./baseline-http.js";
import { accountsValues, entryValues, KEY_CALLER, SQL } from "./baseline-sql.js";
import { INSERT_KEY, SELECT_KEY } from "../../src/modules/idempotency/repository.js";
import { OWN_PRICE } from "../../src/providers/repository.js";
import { INSERT_QUOTE, LOCK_QUOTE, ORDER_CALLER, ORDERS_AND_ADDRESSES, QUOTE_CALLER, WRITE_ORDER } from "../../src/modules/trading/repository.js";
import { SHARE_WALLET_STATES } from "../../src/modules/wallets/repository.js";

/** The statements, as the service's (scripts/bench/capture-trading.ts checks their shapes). */
export const TRADING_SQL = {
  credential: SQL.authCredentialByHash,
  quoteCaller: QUOTE_CALLER.text,
  /** The movement guard: the wallet's state, share-locked (src/modules/wallets/states.ts). */
  walletStates: SHARE_WALLET_STATES.text,
  // the sandbox provider's price read (src/providers/repository.ts)
  price: OWN_PRICE.text,
  insertQuote: INSERT_QUOTE.text,
  orderCaller: ORDER_CALLER.text,
  keyByAddress: SELECT_KEY.text,
  insertKey: INSERT_KEY.text,
  quoteForUpdate: LOCK_QUOTE.text,
  ordersAndAddresses: ORDERS_AND_ADDRESSES.text,
  accounts: SQL.accountsOfPost(5),
  writeOrder: WRITE_ORDER.text,
} as const;

/** The sandbox's BTCUSDT (src/providers/sandbox-trading.ts; docs/decisions/trading.md "The sandbox"). */
const MARKET = { mid: "65000", spreadBps: 20, feeBps: 10, min: 1, max: 1_000_000, basePrecision: 8, quotePrecision: 6 } as const;
const unsupported = (what: string): Refusal => new Refusal(409, "BENCH_UNSUPPORTED", what);
const f8 = (v: Decimal.Value): string => D(v).toFixed(8);
type Row = Record<string, unknown>;

/** The service's `Quote` of a stored row. */
const quoteView = (q: Row): string =>
  JSON.stringify({
    quote_id: q.quote_id, wallet_id: q.wallet_id, user_id: q.user_id, symbol: q.symbol, base: q.base, quote: q.quote, side: q.side,
    quantity: f8(q.quantity as string), price: f8(q.price as string), fees: f8(q.fees as string), total: f8(q.total as string),
    expires_at: (q.expires_at as Date).toISOString(), created_at: (q.created_at as Date).toISOString(),
  });

/**
 * The listener: `POST /api/v1/users/:user/quotes` and `…/orders` (201) with the owner key;
 * `secretsKey` the service's `SECRETS_KEY` (the credential's keyed hash). `QUOTE_TTL_S` 15.
 */
export function tradingBaselineListener(pool: pg.Pool, secretsKey: string): (req: IncomingMessage, res: ServerResponse) => void {
  const hashKey = createSecretKey(Buffer.from(hkdfSync("sha256", Buffer.from(secretsKey, "utf8"), "platform", "keyed-hash/v1", 32)));

  /** The owner key's customer. */
  async function customerOf(req: IncomingMessage): Promise<string> {
    const key = first(req.headers["x-api-key"]);
    if (key === undefined) throw new Refusal(401, "UNAUTHORIZED", "Missing credentials.");
    const hash = createHmac("sha256", hashKey).update(key, "utf8").digest("hex");
    const row = (await pool.query<{ customer_id: string; credential_active: boolean; customer_active: boolean | null }>({ ...TRADING_SQL.credential, values: [hash] })).rows[0];
    if (!row?.credential_active || row.customer_active !== true) throw new Refusal(401, "UNAUTHORIZED", "Invalid API key.");
    return row.customer_id;
  }

  async function createQuote(req: IncomingMessage, userId: string): Promise<string> {
    const body = await readJson(req);
    const customerId = await customerOf(req);
    type CallerRow = { good_standing: boolean; wallet_id: string | null; networks: { currency: string }[] | null };
    const caller = (await pool.query<CallerRow>({ name: "t_caller", text: TRADING_SQL.quoteCaller, values: [userId, customerId, body.wallet_id] })).rows[0];
    if (!caller?.good_standing) throw new Refusal(404, "USER_NOT_FOUND", "User not found.");
    if (caller.wallet_id === null || caller.networks === null) throw new Refusal(404, "WALLET_NOT_FOUND", "Wallet not found.");
    const wallet = { networks: caller.networks };
    const side = body.side;
    if ((side !== "buy" && side !== "sell") || String(body.symbol).toUpperCase() !== "BTCUSDT") throw unsupported("not a BTCUSDT buy or sell");
    const holds = new Set(wallet.networks.map((n) => n.currency));
    if (!holds.has("btc") || !holds.has("usdt")) throw unsupported("the wallet does not hold btc and usdt");
    const quantity = D(String(body.quantity));
    if (!(quantity.gt(0) && quantity.decimalPlaces() <= MARKET.basePrecision)) throw unsupported("quantity");
    const own = (await pool.query<{ price: string }>({ name: "t_price", text: TRADING_SQL.price, values: [customerId, "btc/usdt"] })).rows[0];
    const buy = side === "buy";
    const half = D(MARKET.spreadBps).div(20_000);
    const price = D(own?.price ?? MARKET.mid).times(buy ? D(1).plus(half) : D(1).minus(half)).toDecimalPlaces(8, buy ? D.ROUND_UP : D.ROUND_DOWN);
    const notional = quantity.times(price);
    if (notional.lt(MARKET.min) || notional.gt(MARKET.max)) throw unsupported("outside the bounds");
    const fees = notional.times(MARKET.feeBps).div(10_000).toDecimalPlaces(MARKET.quotePrecision, D.ROUND_UP);
    const total = buy ? notional.plus(fees).toDecimalPlaces(MARKET.quotePrecision, D.ROUND_UP) : notional.minus(fees).toDecimalPlaces(MARKET.quotePrecision, D.ROUND_DOWN);
    const createdAt = new Date();
    const row: Row = {
      quote_id: randomUUID(), customer_id: customerId, user_id: userId, wallet_id: body.wallet_id, symbol: "BTCUSDT", base: "btc", quote: "usdt", side,
      quantity: quantity.toFixed(), price: price.toFixed(), fees: fees.toFixed(), total: total.toFixed(), expires_at: new Date(createdAt.getTime() + 15_000), created_at: createdAt,
    };
    await pool.query({ name: "t_quote", text: TRADING_SQL.insertQuote, values: Object.values(row) });
    return quoteView(row);
  }

  /** The ledger's `trade` (src/modules/ledger/service.ts `bookEntries`) on the quote `q`: both entries' ids, and the wallet's balance of each currency after. */
  async function book(c: pg.PoolClient, q: Row, orderId: string): Promise<{ entries: Map<string, string>; after: Map<string, Decimal> }> {
    const w = q.wallet_id as string;
    const buy = q.side === "buy";
    const quantity = D(q.quantity as string);
    const total = D(q.total as string);
    const fees = D(q.fees as string);
    const [spent, received] = buy ? [{ currency: "usdt", amount: total }, { currency: "btc", amount: quantity }] : [{ currency: "btc", amount: quantity }, { currency: "usdt", amount: total }];
    const code = (bucket: string, currency: string): string => `wallet:${w}:${bucket}:${currency}`;
    const lock = [code("available", "btc"), code("available", "usdt")];
    const read = ["fees:usdt", "liquidity:btc", "liquidity:usdt", code("held", spent.currency), code("held", received.currency)];
    const rows = (await c.query<{ id: string; code: string; balance: string | null }>({ name: "t_accounts", text: TRADING_SQL.accounts, values: accountsValues(lock, read) })).rows;
    const byCode = new Map(rows.map((r) => [r.code, r]));
    const id = (c0: string): string => {
      const r = byCode.get(c0);
      if (!r) throw unsupported(`no ledger account ${c0}`);
      return r.id;
    };
    const entries = new Map<string, string>();
    const after = new Map<string, Decimal>();
    for (const [leg, wallet] of [[spent, spent.amount.neg()], [received, received.amount]] as const) {
      const fee = leg.currency === "usdt" ? fees : D(0);
      const available = D(byCode.get(code("available", leg.currency))?.balance ?? "0").plus(wallet);
      if (available.isNegative()) throw new Refusal(400, "INSUFFICIENT_BALANCE", `Insufficient available ${leg.currency} balance for this amount.`);
      const postings: [string, string, string][] = [[id(code("available", leg.currency)), leg.currency, wallet.toFixed()], [id(`liquidity:${leg.currency}`), leg.currency, wallet.neg().minus(fee).toFixed()]];
      if (!fee.isZero()) postings.push([id("fees:usdt"), "usdt", fee.toFixed()]);
      const values = entryValues(["trade", w, "trading", leg.currency, leg.amount.toFixed(), `order:${orderId}`], postings, [[code("available", leg.currency), available.toFixed()]]);
      const entry = (await c.query<{ id: string }>({ name: "t_entry", text: SQL.postEntry, values })).rows[0];
      entries.set(leg.currency, String(entry?.id));
      after.set(leg.currency, available.plus(byCode.get(code("held", leg.currency))?.balance ?? "0"));
    }
    return { entries, after };
  }

  async function createOrder(req: IncomingMessage, userId: string): Promise<string> {
    const body = await readJson(req);
    const customerId = await customerOf(req);
    if ((await pool.query({ name: "t_user", text: TRADING_SQL.orderCaller, values: [userId, customerId] })).rows.length === 0) throw new Refusal(404, "USER_NOT_FOUND", "User not found.");
    const quoteId = String(body.quote_id).toLowerCase();
    const key = first(req.headers["idempotency-key"]) ?? randomUUID();
    if ((await pool.query({ name: "t_key", text: TRADING_SQL.keyByAddress, values: [customerId, "order", KEY_CALLER, key] })).rows.length > 0) throw unsupported("a repeated key");
    const orderId = randomUUID();
    const client = await pool.connect();
    try {
      await client.query("begin");
      const fingerprint = createHash("sha256").update(JSON.stringify([userId, quoteId])).digest("hex");
      if ((await client.query({ name: "t_claim", text: TRADING_SQL.insertKey, values: [customerId, "order", KEY_CALLER, key, fingerprint, orderId] })).rows.length === 0) throw unsupported("a repeated key");
      const q = (await client.query<Row>({ name: "t_lockq", text: TRADING_SQL.quoteForUpdate, values: [quoteId, customerId] })).rows[0];
      if (!q) throw new Refusal(404, "QUOTE_NOT_FOUND", "Quote not found.");
      if (q.user_id !== userId) throw new Refusal(400, "QUOTE_INVALID", "Quote of another user.");
      type Seen = { orders: string; addresses: { currency: string; network: string; address: string }[] };
      const seen = (await client.query<Seen>({ name: "t_seen", text: TRADING_SQL.ordersAndAddresses, values: [quoteId, q.wallet_id, q.base, q.quote] })).rows[0];
      if (Number(seen?.orders) > 0) throw new Refusal(400, "QUOTE_INVALID", "Already executed.");
      const addresses = seen?.addresses ?? [];
      const now = new Date();
      if (now.getTime() >= (q.expires_at as Date).getTime()) throw new Refusal(400, "QUOTE_EXPIRED", "Quote expired.");
      await client.query({ name: "t_guard", text: TRADING_SQL.walletStates, values: [[q.wallet_id]] }); // the movement guard (every wallet of the bench is ACTIVE)
      const { entries, after } = await book(client, q, orderId);
      const tradeId = randomUUID();
      const buy = q.side === "buy";
      const price = D(q.price as string);
      const legs = [
        { currency: "btc", amount: D(q.quantity as string), fees: D(0), verb: buy ? "Bought" : "Sold" },
        { currency: "usdt", amount: D(q.total as string), fees: D(q.fees as string), verb: buy ? "Paid" : "Received" },
      ];
      const txValues = legs.flatMap((leg) => {
        const a = addresses.find((x) => x.currency === leg.currency);
        const description = `${leg.verb} ${f8(leg.amount)} ${leg.currency.toUpperCase()}: order ${orderId}, ${q.side as string} ${f8(q.quantity as string)} BTCUSDT at ${f8(price)}`;
        return [q.wallet_id, customerId, a?.network ?? "", a?.address ?? "", "trade", "done", leg.currency, leg.amount.toFixed(), leg.fees.toFixed(), leg.amount.toFixed(), price.toFixed(),
          (after.get(leg.currency) as Decimal).toFixed(), "", "", description, orderId, "BTCUSDT", tradeId, key, entries.get(leg.currency), now];
      });
      const order: Row = {
        order_id: orderId, quote_id: q.quote_id, trade_id: tradeId, customer_id: customerId, user_id: userId, wallet_id: q.wallet_id, symbol: q.symbol, base: q.base, quote: q.quote,
        side: q.side, quantity: q.quantity, price: q.price, fees: q.fees, total: q.total, status: "FILLED", idempotency_key: key, created_at: now,
      };
      await client.query({ name: "t_write", text: TRADING_SQL.writeOrder, values: [...txValues, ...Object.values(order)] });
      await client.query("commit");
      return JSON.stringify({
        order_id: orderId, quote_id: q.quote_id, trade_id: tradeId, wallet_id: q.wallet_id, user_id: userId, symbol: q.symbol, base: q.base, quote: q.quote, side: q.side,
        quantity: f8(q.quantity as string), price: f8(price), fees: f8(q.fees as string), total: f8(q.total as string), status: "FILLED", idempotency_key: key, is_duplicate: false, created_at: now.toISOString(),
      });
    } catch (error) {
      await client.query("rollback").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  return (req, res) => {
    const traceId = randomUUID();
    const m = /^\/api\/v1\/users\/([0-9a-f-]{36})\/(quotes|orders)$/.exec(req.url ?? "");
    const answer = async (): Promise<void> => {
      if (req.method !== "POST" || !m?.[1]) throw new Refusal(404, "NOT_FOUND", "Not found.");
      ok(res, 201, m[2] === "quotes" ? await createQuote(req, m[1]) : await createOrder(req, m[1]), traceId);
    };
    answer().catch((error: unknown) => refuse(res, error instanceof Refusal ? error : new Refusal(500, "INTERNAL", String(error)), traceId));
  };
}
