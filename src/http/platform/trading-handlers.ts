/**
 * Platform handlers of trading (docs/decisions/trading.md; spec/platform/trading.tsp): Create
 * Quote, Create Order (of a quote, or a market order), Get Order and List Orders for the owner API key or the user's own token
 * (the path scope check answers 403 for another user's), and the sandbox's Set Sandbox Price.
 */
import type { operations } from "../../../generated/types/platform.js";
import { header } from "../../modules/identity/auth.js";
import type { TradingService } from "../../modules/trading/service.js";
import { buildPagination } from "../envelope.js";
import { exactNumber } from "../json-numbers.js";
import type { HandlerMap } from "../types.js";
import { filterPage } from "./handlers.js";
import { walletCaller } from "./wallet-handlers.js";

/** Handlers of the trading operations. */
export function tradingHandlers(trading: TradingService): HandlerMap<operations> {
  return {
    createQuote: async ({ em, principal, params, body }) => ({
      status: 201,
      data: await trading.createQuote(em, walletCaller(principal).customerId, params.user_id, {
        ...body,
        ...(body.quantity === undefined ? {} : { quantity: exactNumber(body, "quantity") }),
      }),
    }),
    createOrder: async ({ em, principal, params, body, headers }) => ({
      status: 201,
      data: await trading.submitOrder(em, walletCaller(principal).customerId, params.user_id, {
        ...body,
        ...(body.quantity === undefined ? {} : { quantity: exactNumber(body, "quantity") }),
        ...(body.expected_price === undefined ? {} : { expected_price: exactNumber(body, "expected_price") }),
      }, header(headers, "idempotency-key"), principal),
    }),
    getOrder: async ({ em, principal, params }) => ({
      status: 200,
      data: await trading.getOrder(em, walletCaller(principal).customerId, params.user_id, params.order_id),
    }),
    listOrders: async ({ em, principal, params, query }) => {
      const page = filterPage(query);
      const { items, total } = await trading.listOrders(em, walletCaller(principal).customerId, params.user_id, page);
      return { status: 200, data: items, pagination: buildPagination(`/users/${params.user_id}/orders`, page, total) };
    },
    setSandboxPrice: async ({ em, principal, params, body }) => ({
      status: 200,
      data: await trading.setSandboxPrice(em, walletCaller(principal).customerId, params.symbol, exactNumber(body, "price")),
    }),
  };
}
