/**
 * Platform handlers of the email poller (reference: "Email poller"; docs/decisions/withdrawals.md
 * "The email poller"). A
 * customer session acts only on its own customer (path scope check).
 */
import type { operations } from "../../../generated/types/platform.js";
import type { EmailPollerService } from "../../modules/poller/service.js";
import type { HandlerMap } from "../types.js";

/** Handlers of the email poller operations. */
export function pollerHandlers(pollers: EmailPollerService): HandlerMap<operations> {
  return {
    createEmailPoller: async ({ em, params, body }) => ({ status: 201, data: await pollers.create(em, params.customer_id, body) }),
    getEmailPoller: async ({ em, params }) => ({ status: 200, data: await pollers.get(em, params.customer_id) }),
    updateEmailPoller: async ({ em, params, body }) => ({ status: 200, data: await pollers.update(em, params.customer_id, body) }),
    deleteEmailPoller: async ({ em, params }) => {
      await pollers.delete(em, params.customer_id);
      return { status: 204 };
    },
    verifyEmailPoller: async ({ em, params }) => ({ status: 200, data: await pollers.verify(em, params.customer_id) }),
    enableEmailPoller: async ({ em, params }) => ({ status: 200, data: await pollers.setEnabled(em, params.customer_id, params.poller_id, true) }),
    disableEmailPoller: async ({ em, params }) => ({ status: 200, data: await pollers.setEnabled(em, params.customer_id, params.poller_id, false) }),
  };
}
