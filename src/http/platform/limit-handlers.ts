/**
 * Platform handlers of customer limits and user limit usage (docs/decisions/limits-and-allowlist.md
 * "Limits"). Get and Set Limits take a session (a customer session acts only on its own customer:
 * the path scope check); Get User Limits the owner key or the user's own token.
 */
import type { operations } from "../../../generated/types/platform.js";
import type { LimitsService } from "../../modules/limits/service.js";
import type { HandlerMap } from "../types.js";
import { walletCaller } from "./wallet-handlers.js";

/** Handlers of getLimits, setLimits and getUserLimits. */
export function limitHandlers(limits: LimitsService): HandlerMap<operations> {
  return {
    getLimits: async ({ em, params }) => ({ status: 200, data: await limits.get(em, params.customer_id) }),
    setLimits: async ({ em, params, body }) => ({ status: 200, data: await limits.set(em, params.customer_id, body) }),
    getUserLimits: async ({ em, principal, params }) => ({
      status: 200,
      data: await limits.forUser(em, walletCaller(principal).customerId, params.user_id),
    }),
  };
}
