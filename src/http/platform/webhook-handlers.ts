/** Platform handlers of the customer webhook and its delivery log (issue 7). SKELETON. */
import type { operations } from "../../../generated/types/platform.js";
import type { WebhookService } from "../../modules/webhooks/service.js";
import type { HandlerMap } from "../types.js";

/** Handlers of the webhook operations. */
export function webhookHandlers(_webhooks: WebhookService): HandlerMap<operations> {
  return {};
}
