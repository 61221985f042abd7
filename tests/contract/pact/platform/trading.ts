/**
 * Platform pact, consumer cases of trading (docs/decisions/trading.md): a firm quote and its 400
 * for an unknown side, an order executing a live quote with an `Idempotency-Key`, the 400 for a
 * quote already executed and the 404 for an unknown one, an order read and the user's orders listed
 * with `meta.pagination`, and the sandbox's Set Sandbox Price (docs/contract.md). Every quote is a
 * buy of 0.01 btc at the sandbox's default BTCUSDT mid (the trading states set it), so the figures
 * are the decision page's: price 65065, fees 0.65065, total 651.30065 usdt.
 */
import { MatchersV3 } from "@pact-foundation/pact";
import { expect } from "vitest";
import { createOrder, createQuote, getOrder, listOrders, setSandboxPrice } from "../../../../generated/client/platform/sdk.gen.js";
import type { CreateQuoteRequest } from "../../../../generated/client/platform/types.gen.js";
import { PlatformApiError, data, listed, platformClient } from "./client.js";
import {
  EXAMPLE_ORDER,
  EXAMPLE_OWNER_KEY,
  EXAMPLE_QUOTE,
  EXAMPLE_WALLET,
  STATE,
  UNKNOWN_QUOTE,
  UUID_PATTERN,
  VERIFIED_USER,
  failure,
  fromState,
  meta,
  ok,
  ownerKey,
  stateWalletId,
  timestamp,
  type ConsumerCase,
} from "./setup.js";

const { like, eachLike, regex, uuid, integer, equal, boolean, iso8601DateTimeWithMillis } = MatchersV3;

/** The `Idempotency-Key` of the create interaction (the order of the executed-order state has a generated one). */
const ORDER_KEY = "pact-order-0001";
const QUOTES = `/api/v1/users/${VERIFIED_USER}/quotes`;
const ORDERS = `/api/v1/users/${VERIFIED_USER}/orders`;
const ownerClient = (url: string) => platformClient(url, { apiKey: EXAMPLE_OWNER_KEY });
/** The Create Quote body the consumer sends: 0.01 btc bought with usdt. */
const BUY: CreateQuoteRequest = { wallet_id: EXAMPLE_WALLET, symbol: "BTCUSDT", side: "buy", quantity: 0.01 };
/** The quote id of the provider state, in a body. */
const stateQuoteId = () => fromState("${quoteId}", `^${UUID_PATTERN}$`, EXAMPLE_QUOTE);

/** The terms of a buy of 0.01 btc at mid 65000 (spread 20 bps, fee 10 bps), pinned; `equal` keeps them exact inside an `eachLike`. */
const buyTerms = () => ({
  wallet_id: uuid(EXAMPLE_WALLET),
  user_id: equal(VERIFIED_USER),
  symbol: equal("BTCUSDT"),
  base: equal("btc"),
  quote: equal("usdt"),
  side: equal("buy"),
  quantity: equal("0.01000000"),
  price: equal("65065.00000000"),
  fees: equal("0.65065000"),
  total: equal("651.30065000"),
});

/** An order executing such a quote. */
const order = (over: { idempotency_key?: unknown } = {}) => ({
  order_id: uuid(EXAMPLE_ORDER),
  quote_id: uuid(EXAMPLE_QUOTE),
  trade_id: uuid("9e0f1a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"),
  ...buyTerms(),
  status: equal("FILLED"),
  idempotency_key: over.idempotency_key ?? like("0d1e2f3a-4b5c-4d6e-8f7a-8b9c0d1e2f3a"),
  is_duplicate: equal(false),
  created_at: timestamp(),
});

/** The case's call answers a PlatformApiError with `status` and `code`. */
async function refused(call: Promise<unknown>, status: number, code: string): Promise<void> {
  const error = await call.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PlatformApiError);
  expect(error).toMatchObject({ status, code });
}

/** The cases, in the order they run. */
export const tradingCases: ConsumerCase[] = [
  {
    title: "asks for a firm quote to buy 0.01 btc with usdt",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.tradingWallet)
        .uponReceiving("a request for a quote to buy btc with usdt")
        .withRequest("POST", QUOTES, (b) => b.headers(ownerKey).jsonBody({ ...BUY, wallet_id: stateWalletId() }))
        .willRespondWith(201, (b) => b.jsonBody(ok({ quote_id: uuid(EXAMPLE_QUOTE), ...buyTerms(), expires_at: iso8601DateTimeWithMillis("2026-01-15T10:30:15.000Z"), created_at: timestamp() })))
        .executeTest(async (mock) => {
          const quote = await data(createQuote({ client: ownerClient(mock.url), path: { user_id: VERIFIED_USER }, body: BUY }));
          expect(quote).toMatchObject({ symbol: "BTCUSDT", side: "buy", quantity: "0.01000000", price: "65065.00000000", total: "651.30065000" });
          expect(Date.parse(quote.expires_at)).toBeGreaterThan(Date.parse(quote.created_at));
        });
    },
  },

  {
    title: "gets 400 INVALID_SIDE for a quote that neither buys nor sells",
    run: async (pact) => {
      const body = { ...BUY, side: "hold" };
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.tradingWallet)
        .uponReceiving("a request for a quote with an unknown side")
        .withRequest("POST", QUOTES, (b) => b.headers(ownerKey).jsonBody({ ...body, wallet_id: stateWalletId() }))
        .willRespondWith(400, (b) => b.jsonBody(failure([{ code: "INVALID_SIDE", field: "side", message: like("Side must be buy or sell.") }])))
        .executeTest(async (mock) => refused(data(createQuote({ client: ownerClient(mock.url), path: { user_id: VERIFIED_USER }, body })), 400, "INVALID_SIDE"));
    },
  },

  {
    title: "executes a live quote with an Idempotency-Key: the quote's terms, FILLED",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.liveQuote)
        .uponReceiving("a request to execute a live quote")
        .withRequest("POST", ORDERS, (b) => b.headers({ ...ownerKey, "Idempotency-Key": ORDER_KEY }).jsonBody({ quote_id: stateQuoteId() }))
        .willRespondWith(201, (b) => b.jsonBody(ok(order({ idempotency_key: equal(ORDER_KEY) }))))
        .executeTest(async (mock) => {
          const created = await data(
            createOrder({ client: ownerClient(mock.url), path: { user_id: VERIFIED_USER }, headers: { "Idempotency-Key": ORDER_KEY }, body: { quote_id: EXAMPLE_QUOTE } }),
          );
          expect(created).toMatchObject({ quote_id: EXAMPLE_QUOTE, status: "FILLED", total: "651.30065000", idempotency_key: ORDER_KEY, is_duplicate: false });
        });
    },
  },

  {
    title: "gets 400 QUOTE_INVALID for an order of a quote already executed",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.executedOrder)
        .uponReceiving("a request to execute a quote already executed")
        .withRequest("POST", ORDERS, (b) => b.headers(ownerKey).jsonBody({ quote_id: stateQuoteId() }))
        .willRespondWith(400, (b) => b.jsonBody(failure([{ code: "QUOTE_INVALID", field: "quote_id", message: like(`Quote '${EXAMPLE_QUOTE}' was already executed.`) }])))
        .executeTest(async (mock) =>
          refused(data(createOrder({ client: ownerClient(mock.url), path: { user_id: VERIFIED_USER }, body: { quote_id: EXAMPLE_QUOTE } })), 400, "QUOTE_INVALID"),
        );
    },
  },

  {
    title: "gets 404 QUOTE_NOT_FOUND for an order of an unknown quote",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.verifiedUser)
        .given(STATE.unknownQuote)
        .uponReceiving("a request to execute an unknown quote")
        .withRequest("POST", ORDERS, (b) => b.headers(ownerKey).jsonBody({ quote_id: UNKNOWN_QUOTE }))
        .willRespondWith(404, (b) => b.jsonBody(failure([{ code: "QUOTE_NOT_FOUND", field: "quote_id", message: like(`Quote '${UNKNOWN_QUOTE}' not found.`) }])))
        .executeTest(async (mock) =>
          refused(data(createOrder({ client: ownerClient(mock.url), path: { user_id: VERIFIED_USER }, body: { quote_id: UNKNOWN_QUOTE } })), 404, "QUOTE_NOT_FOUND"),
        );
    },
  },

  {
    title: "reads an order of the user",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.executedOrder)
        .uponReceiving("a request to read an order")
        .withRequest("GET", fromState(`${ORDERS}/\${orderId}`, `^${ORDERS}/${UUID_PATTERN}$`, `${ORDERS}/${EXAMPLE_ORDER}`), (b) => b.headers(ownerKey))
        .willRespondWith(200, (b) => b.jsonBody(ok(order())))
        .executeTest(async (mock) => {
          const read = await data(getOrder({ client: ownerClient(mock.url), path: { user_id: VERIFIED_USER, order_id: EXAMPLE_ORDER } }));
          expect(read).toMatchObject({ order_id: EXAMPLE_ORDER, status: "FILLED", is_duplicate: false });
        });
    },
  },

  {
    title: "lists the user's orders, newest first, with meta.pagination",
    run: async (pact) => {
      const link = regex(/^\/users\/[0-9a-f-]{36}\/orders\?filter\[limit\]=10&filter\[skip\]=0$/, `/users/${VERIFIED_USER}/orders?filter[limit]=10&filter[skip]=0`);
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.executedOrder)
        .uponReceiving("a request to list a user's orders")
        .withRequest("GET", ORDERS, (b) => b.headers(ownerKey).query({ "filter[limit]": "10" }))
        .willRespondWith(200, (b) =>
          b.jsonBody({
            success: true,
            data: eachLike(order()),
            meta: {
              ...meta(),
              pagination: {
                records: { skip: 0, limit: 10, has_previous: false, has_next: boolean(false), total: integer(1) },
                navigation: { first: link, last: link, previous: null, next: null },
              },
            },
          }),
        )
        .executeTest(async (mock) => {
          const page = await listed(listOrders({ client: ownerClient(mock.url), path: { user_id: VERIFIED_USER }, query: { "filter[limit]": 10 } }));
          expect(page.data[0]).toMatchObject({ user_id: VERIFIED_USER, status: "FILLED" });
          expect(page.pagination.records).toMatchObject({ skip: 0, limit: 10 });
        });
    },
  },

  {
    title: "sets the customer's sandbox mid price of BTCUSDT",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .uponReceiving("a request to set a sandbox mid price")
        .withRequest("PUT", "/api/v1/sandbox/prices/BTCUSDT", (b) => b.headers(ownerKey).jsonBody({ price: 65000 }))
        .willRespondWith(200, (b) => b.jsonBody(ok({ symbol: equal("BTCUSDT"), price: equal("65000.00000000"), updated_at: timestamp() })))
        .executeTest(async (mock) => {
          const set = await data(setSandboxPrice({ client: ownerClient(mock.url), path: { symbol: "BTCUSDT" }, body: { price: 65000 } }));
          expect(set).toMatchObject({ symbol: "BTCUSDT", price: "65000.00000000" });
        });
    },
  },
];
