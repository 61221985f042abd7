/**
 * Platform handlers of the customer webhook and its delivery log (reference: "Customer webhook";
 * docs/decisions/notifications.md "The PIN webhook"). A customer session acts only on its own customer (path scope check).
 */
import type { operations } from "../../../generated/types/platform.js";
import type { WebhookService } from "../../modules/webhooks/service.js";
import { buildPagination } from "../envelope.js";
import type { HandlerMap } from "../types.js";
import { filterPage, filtersOf } from "./handlers.js";

/** Handlers of the webhook operations. */
export function webhookHandlers(webhooks: WebhookService): HandlerMap<operations> {
  return {
    createWebhook: async ({ em, params, body }) => {
      const { message, url, signing_secret } = await webhooks.put(em, params.customer_id, body, "create");
      return { status: 201, data: { message, url, signing_secret: signing_secret as string } };
    },
    getWebhook: async ({ em, params }) => ({ status: 200, data: await webhooks.get(em, params.customer_id) }),
    updateWebhook: async ({ em, params, body }) => {
      const { message, url } = await webhooks.put(em, params.customer_id, body, "update");
      return { status: 200, data: { message, url } };
    },
    deleteWebhook: async ({ em, params }) => {
      await webhooks.delete(em, params.customer_id);
      return { status: 204 };
    },
    verifyWebhook: async ({ em, params }) => ({ status: 200, data: await webhooks.verify(em, params.customer_id) }),
    rotateWebhookSecret: async ({ em, params }) => ({ status: 200, data: await webhooks.rotateSecret(em, params.customer_id) }),
    listWebhookDeliveries: async ({ em, params, query }) => {
      const page = filterPage(query);
      const { items, total } = await webhooks.listDeliveries(em, params.customer_id, page, query["filter[where][status]"]);
      return {
        status: 200,
        data: items,
        pagination: buildPagination(`/customers/${params.customer_id}/webhooks/deliveries`, page, total, filtersOf(query)),
      };
    },
    retryWebhookDelivery: async ({ em, params }) => ({
      status: 200,
      data: await webhooks.retry(em, params.customer_id, params.delivery_id),
    }),
    recoverWebhookDeliveries: async ({ em, params, body }) => ({
      status: 200,
      data: await webhooks.recover(em, params.customer_id, body.since),
    }),
  };
}
