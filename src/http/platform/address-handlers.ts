/**
 * Platform handlers of users' withdrawal allowlists (docs/decisions/limits-and-allowlist.md
 * "Destination allowlist"): the owner key, or the user's own token (the path scope check answers
 * 403 for another user's).
 */
import type { operations } from "../../../generated/types/platform.js";
import type { AllowlistService } from "../../modules/allowlist/service.js";
import { buildPagination } from "../envelope.js";
import type { HandlerMap } from "../types.js";
import { filterPage } from "./handlers.js";
import { walletCaller } from "./wallet-handlers.js";

/** Handlers of addAddress, listAddresses and deleteAddress. */
export function addressHandlers(allowlist: AllowlistService): HandlerMap<operations> {
  return {
    addAddress: async ({ em, principal, params, body }) => ({
      status: 201,
      data: await allowlist.add(em, walletCaller(principal).customerId, params.user_id, body),
    }),
    listAddresses: async ({ em, principal, params, query }) => {
      const page = filterPage(query);
      const { items, total } = await allowlist.list(em, walletCaller(principal).customerId, params.user_id, page);
      return { status: 200, data: items, pagination: buildPagination(`/users/${params.user_id}/addresses`, page, total) };
    },
    deleteAddress: async ({ em, principal, params }) => {
      await allowlist.delete(em, walletCaller(principal).customerId, params.user_id, params.address_id);
      return { status: 204 };
    },
  };
}
