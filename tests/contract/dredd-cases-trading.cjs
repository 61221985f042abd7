/**
 * Dredd cases of trading (docs/decisions/trading.md): Create Quote, Create Order, Get Order, List
 * Orders and the sandbox's Set Sandbox Price, merged into the platform hookfile's CASES
 * (tests/contract/dredd-hooks.cjs, which documents what a case is). The seeding
 * (tests/contract/support-dredd-fixtures-trading.ts) gave the example user's wallet (f.walletId,
 * usdt on ethereum and btc on bitcoin) 5000 usdt on top of the btc of the movements' seeding, and
 * executed one buy of 0.01 btc with its own `Idempotency-Key` (f.seededOrder).
 *
 * Quotes are firm for `QUOTE_TTL_S` (15 s by default): an order case that needs a live quote asks
 * for it in its precondition, just before the request. Deactivate User runs before the trading
 * paths, so every case that reaches the example user's checks activates it first. Set Sandbox Price
 * runs before them too and sets BTCUSDT to the sandbox's default mid (65000), so the quotes keep
 * the figures of the decision page (buy 0.01 btc: price 65065, fees 0.65065, total 651.30065).
 * Market orders (Create Order without `quote_id`) trade at those same figures; their ORDER_FAILED
 * case runs on the seeding's market user (f.marketUserId, f.marketWalletId, holding eth).
 */

/** The `Idempotency-Key` example of Create Order, which Dredd sends with every create (the seeding never uses it). */
const EXAMPLE_ORDER_KEY = "ord-2026-01-15-0001";
/** A path value of 37 characters: one past the `maxLength` of the order id. */
const TOO_LONG_ID = "0".repeat(37);
/** The sandbox's default BTCUSDT mid price (docs/decisions/trading.md "The sandbox"). */
const DEFAULT_BTCUSDT_MID = 65000;
/** The decision page's worked figures of a buy of 0.01 btc at that mid. */
const BUY_FIGURES = { quantity: { const: "0.01000000" }, price: { const: "65065.00000000" }, fees: { const: "0.65065000" }, total: { const: "651.30065000" } };

/** `data` of an answer must match `properties`. */
const dataOf = (properties) => ({ properties: { data: { properties } } });
/** A list answer with at least one item. */
const someItems = { properties: { data: { minItems: 1 } } };
/** The case on the example user, activated first (Deactivate User ran before). */
const onExampleUser = (c) => c.ensureActive(c.f.userId);
/** The Create Quote example on the seeded wallet (the example's `wallet_id` cannot exist). */
const quoteBody = (c, changes = {}) => ({ ...c.example(), wallet_id: c.f.walletId, ...changes });
/** Create Quote on the seeded wallet with `changes` to the example, the example user activated first. */
const quote = (c, changes) => onExampleUser(c).body(quoteBody(c, changes));
/** Path of an order of `userId` (the example user unless given). */
const orderPath = (c, orderId, userId = c.f.userId) => c.path(`/users/${userId}/orders/${orderId}`);

/**
 * Sends, as the body of Create Order, a quote of the example user asked for with the owner key just
 * before the request (`terms` override the 0.01 btc buy of BTCUSDT on the seeded wallet).
 */
function withFreshQuote(c, terms = {}) {
  return onExampleUser(c).before(async () => {
    const res = await fetch(`${c.contract.baseUrl}/users/${c.f.userId}/quotes`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": c.f.ownerKey },
      body: JSON.stringify({ wallet_id: c.f.walletId, symbol: "BTCUSDT", side: "buy", quantity: 0.01, ...terms }),
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`A quote for ${c.f.userId} answered ${res.status}: ${text}`);
    c.body({ quote_id: JSON.parse(text).data.quote_id });
  });
}
/**
 * Create Order as a market order (no `quote_id`) of the example user on the seeded wallet, a 0.01
 * btc buy of BTCUSDT unless `changes` say otherwise, without an `Idempotency-Key` (see {@link order}).
 */
const marketOrder = (c, changes = {}) =>
  onExampleUser(c).header("Idempotency-Key", undefined).body({ wallet_id: c.f.walletId, symbol: "BTCUSDT", side: "buy", quantity: 0.01, ...changes });
/** Create Order without an `Idempotency-Key`: the service answers a known key first, and the example's is taken once the success case ran. */
const order = (c) => c.header("Idempotency-Key", undefined);

/**
 * The cases of the five trading operations. `ids` holds the hookfile's unknown user.
 * @param {{ unknownUserId: string }} ids
 */
function tradingCases({ unknownUserId }) {
  return {
    createQuote: {
      201: [
        (c) => quote(c).expect(dataOf({ user_id: { const: c.f.userId }, wallet_id: { const: c.f.walletId }, symbol: { const: "BTCUSDT" }, side: { const: "buy" }, ...BUY_FIGURES })),
        (c) => quote(c, { symbol: "btcusdt", side: "sell" }).asUserOf(c.f.userId).expect(dataOf({ symbol: { const: "BTCUSDT" }, side: { const: "sell" }, price: { const: "64935.00000000" }, total: { const: "648.70065000" } })),
      ],
      400: [
        (c) => quote(c, { wallet_id: "not-a-uuid" }).error("INVALID_WALLET_ID"),
        (c) => quote(c, { side: "hold" }).error("INVALID_SIDE"),
        (c) => quote(c, { symbol: "ETHUSDT" }).error("UNSUPPORTED_CURRENCY"), // the wallet holds no eth
        (c) => quote(c, { quantity: 0.00001 }).error("MINIMUM_ORDER_NOT_MET"), // a notional of 0.65 usdt, under 1
      ],
      401: (c) => c.as("none").body(quoteBody(c)).error("UNAUTHORIZED"),
      403: [
        (c) => c.as("user").body(quoteBody(c)).error("FORBIDDEN"), // a user token of another user
        (c) => c.as("customerSession").body(quoteBody(c)).error("FORBIDDEN"),
      ],
      404: [
        (c) => c.path(`/users/${unknownUserId}/quotes`).body(quoteBody(c)).error("USER_NOT_FOUND"),
        (c) => onExampleUser(c).error("WALLET_NOT_FOUND"), // the example's wallet id
        (c) => c.as("otherOwner").body(quoteBody(c)).error("USER_NOT_FOUND"), // a user of another customer
      ],
      422: [
        (c) => c.body({ wallet_id: "", symbol: 5, side: "buy", quantity: "lots" }).error("UNPROCESSABLE_ENTITY"),
        (c) => quote(c, { quantity: 1e13 }).error("UNPROCESSABLE_ENTITY"), // above 10^12
      ],
    },
    createOrder: {
      201: [
        // The example's Idempotency-Key, first time on this database, with a fresh quote.
        (c) =>
          withFreshQuote(c)
            .header("Idempotency-Key", EXAMPLE_ORDER_KEY)
            .expect(dataOf({ status: { const: "FILLED" }, is_duplicate: { const: false }, idempotency_key: { const: EXAMPLE_ORDER_KEY }, user_id: { const: c.f.userId }, ...BUY_FIGURES })),
        // A repeat of the seeded order (same key, same body): the first order, its quote long executed.
        (c) =>
          onExampleUser(c)
            .header("Idempotency-Key", c.f.seededOrder.idempotencyKey)
            .body(c.f.seededOrder.body)
            .expect(dataOf({ order_id: { const: c.f.seededOrder.orderId }, is_duplicate: { const: true } })),
        // A user token of the example user, no key (one is generated).
        (c) => order(withFreshQuote(c, { side: "sell" }).asUserOf(c.f.userId)).expect(dataOf({ side: { const: "sell" }, is_duplicate: { const: false } })),
        // A market sell, its price guard exactly at the execution price (64935 at the default mid): no quote.
        (c) =>
          marketOrder(c, { side: "sell", expected_price: 64935, max_slippage_bps: 0 }).expect(
            dataOf({ quote_id: { const: null }, side: { const: "sell" }, price: { const: "64935.00000000" }, total: { const: "648.70065000" }, status: { const: "FILLED" } }),
          ),
      ],
      400: [
        (c) => order(onExampleUser(c)).body({ quote_id: c.f.seededOrder.quoteId }).error("QUOTE_INVALID"), // already executed
        (c) => order(withFreshQuote(c, { quantity: 10 })).error("INSUFFICIENT_BALANCE"), // 650 650 usdt and more
        (c) => marketOrder(c, { expected_price: 60000, max_slippage_bps: 0 }).error("PRICE_CHANGED"), // a buy at 65065, above 60000
        // The sandbox's magic quantity on a market order that passes the bounds and the balance.
        (c) =>
          order(c)
            .path(`/users/${c.f.marketUserId}/orders`)
            .body({ wallet_id: c.f.marketWalletId, symbol: "ETHUSDT", side: "sell", quantity: 77.77777777 })
            .error("ORDER_FAILED"),
        (c) => marketOrder(c, { quantity: undefined }).error("QUANTITY_REQUIRED"),
      ],
      401: (c) => order(c).as("none").error("UNAUTHORIZED"),
      403: [
        (c) => order(c).as("user").error("FORBIDDEN"), // a user token of another user
        (c) => order(c).as("customerSession").error("FORBIDDEN"),
      ],
      404: [
        (c) => order(onExampleUser(c)).error("QUOTE_NOT_FOUND"), // the example's quote id
        (c) => order(c).path(`/users/${unknownUserId}/orders`).error("USER_NOT_FOUND"),
      ],
      // The seeded order's key with the example's body.
      409: (c) => onExampleUser(c).header("Idempotency-Key", c.f.seededOrder.idempotencyKey).error("IDEMPOTENCY_KEY_REUSED"),
      422: [
        (c) => order(c).body({ quote_id: "" }).error("UNPROCESSABLE_ENTITY"),
        (c) => c.header("Idempotency-Key", "k".repeat(256)).body(c.f.seededOrder.body).error("UNPROCESSABLE_ENTITY"), // longer than 255
        (c) => order(c).body({ quote_id: c.f.seededOrder.quoteId, symbol: "BTCUSDT" }).error("UNPROCESSABLE_ENTITY"), // quote_id with a market field
      ],
    },
    getOrder: {
      200: [
        (c) =>
          orderPath(onExampleUser(c), c.f.seededOrder.orderId).expect(
            dataOf({ order_id: { const: c.f.seededOrder.orderId }, quote_id: { const: c.f.seededOrder.quoteId }, status: { const: "FILLED" }, is_duplicate: { const: false }, ...BUY_FIGURES }),
          ),
        (c) => orderPath(c, c.f.seededOrder.orderId).asUserOf(c.f.userId),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("customerSession").error("FORBIDDEN")],
      404: [
        (c) => onExampleUser(c).error("NOT_FOUND"), // the example id
        (c) => orderPath(c, c.f.seededOrder.orderId, unknownUserId).error("USER_NOT_FOUND"),
        (c) => orderPath(c, c.f.seededOrder.orderId, c.f.activeUserId).error("NOT_FOUND"), // another user's
      ],
      422: (c) => orderPath(c, TOO_LONG_ID).error("UNPROCESSABLE_ENTITY"),
    },
    listOrders: {
      200: [
        (c) => onExampleUser(c).query("filter[limit]=5&filter[skip]=0").expect(someItems),
        (c) => c.asUserOf(c.f.userId).expect(someItems),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("customerSession").error("FORBIDDEN")],
      404: (c) => c.path(`/users/${unknownUserId}/orders`).error("USER_NOT_FOUND"),
      422: [(c) => c.query("filter[limit]=101").error("UNPROCESSABLE_ENTITY"), (c) => c.query("filter[skip]=-1").error("UNPROCESSABLE_ENTITY")],
    },
    setSandboxPrice: {
      // The default mid, not the example's 70000: the trading cases after it keep the decision page's figures.
      200: [
        (c) => c.body({ price: DEFAULT_BTCUSDT_MID }).expect(dataOf({ symbol: { const: "BTCUSDT" }, price: { const: "65000.00000000" } })),
        (c) => c.path("/sandbox/prices/btcusdt").body({ price: DEFAULT_BTCUSDT_MID }).expect(dataOf({ symbol: { const: "BTCUSDT" } })), // case-insensitive
      ],
      400: [
        (c) => c.path("/sandbox/prices/ZZZUSDT").error("INVALID_CURRENCY_PAIR"),
        (c) => c.path("/sandbox/prices/BTCUSD").error("PAIR_NOT_AVAILABLE"), // a fiat pair
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("customerSession").error("FORBIDDEN")],
      404: "NOT_FOUND arises only when the provider is not the sandbox, and the test app runs the sandbox",
      422: [
        (c) => c.body({ price: 0 }).error("UNPROCESSABLE_ENTITY"), // below 0.00000001
        (c) => c.path(`/sandbox/prices/${"X".repeat(33)}`).error("UNPROCESSABLE_ENTITY"), // longer than 32
      ],
    },
  };
}

module.exports = { tradingCases };
