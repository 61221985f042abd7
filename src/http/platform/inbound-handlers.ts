/**
 * Platform handlers of the customer's inbound webhook (docs/decisions/withdrawals.md "PINs pushed
 * by the provider"): its secret, by a session token on its own customer (path scope check), and
 * the receipt of a pushed PIN, authenticated by its signature (access `signature`,
 * src/http/surface.ts): verified over the raw bytes first, then parsed, then received.
 */
import type { operations } from "../../../generated/types/platform.js";
import type { InboundBody, InboundWebhookService } from "../../modules/inbound/service.js";
import { parseJsonBytes } from "../json-body.js";
import type { HandlerMap } from "../types.js";

/** Handlers of the inbound webhook operations. */
export function inboundHandlers(inbound: InboundWebhookService): HandlerMap<operations> {
  return {
    createInboundWebhook: async ({ em, params }) => ({ status: 201, data: await inbound.create(em, params.customer_id) }),
    getInboundWebhook: async ({ em, params }) => ({ status: 200, data: await inbound.get(em, params.customer_id) }),
    deleteInboundWebhook: async ({ em, params }) => {
      await inbound.delete(em, params.customer_id);
      return { status: 204 };
    },
    receiveInboundPin: async ({ params, headers, rawBody }) => {
      const raw = rawBody ?? Buffer.alloc(0);
      const webhookId = await inbound.verify(params.customer_id, headers, raw);
      const parsed = parseJsonBytes(raw);
      const body: InboundBody = "status" in parsed ? { notJson: parsed.message } : { json: parsed.body as Record<string, unknown> };
      return { status: 200, data: await inbound.receive(params.customer_id, webhookId, body) };
    },
  };
}
