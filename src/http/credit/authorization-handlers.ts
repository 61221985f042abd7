/**
 * Handlers of the card authorizations on credit wallets (docs/decisions/credit.md "Authorizations";
 * spec/credit/authorizations.tsp, refunds.tsp): Authorize (201 for an approval and for a decline), Capture,
 * Void, Refund (201), Read and List. The caller's tenant is the owner API key's customer; the rules live in
 * src/modules/credit/authorizations/service.ts.
 */
import type { operations } from "../../../generated/types/credit.js";
import { header } from "../../modules/identity/auth.js";
import type { CreditAuthorizationService } from "../../modules/credit/authorizations/service.js";
import type { HandlerMap } from "../types.js";
import { tenantOf } from "./handlers.js";

/** Handlers of the authorization operations. */
export function creditAuthorizationHandlers(authorizations: CreditAuthorizationService): HandlerMap<operations> {
  return {
    authorizeCredit: async (call) => ({
      status: 201,
      data: await authorizations.authorize(call.em, tenantOf(call), call.params.walletId, call.body, header(call.headers, "idempotency-key"), call.principal),
    }),
    captureCreditAuthorization: async (call) => ({
      status: 200,
      data: await authorizations.capture(call.em, tenantOf(call), call.params.walletId, call.params.authorizationId, call.body?.amount),
    }),
    refundCreditAuthorization: async (call) => ({
      status: 201,
      data: await authorizations.refund(call.em, tenantOf(call), call.params.walletId, call.params.authorizationId, call.body, header(call.headers, "idempotency-key"), call.principal),
    }),
    voidCreditAuthorization: async (call) => ({
      status: 200,
      data: await authorizations.void(call.em, tenantOf(call), call.params.walletId, call.params.authorizationId),
    }),
    getCreditAuthorization: async (call) => ({
      status: 200,
      data: await authorizations.get(call.em, tenantOf(call), call.params.walletId, call.params.authorizationId),
    }),
    listCreditAuthorizations: async (call) => {
      const limit = call.query.limit ?? 20;
      const offset = call.query.offset ?? 0;
      const { items, total } = await authorizations.list(call.em, tenantOf(call), call.params.walletId, { limit, skip: offset });
      return { status: 200, data: { items, total, limit, offset } };
    },
  };
}
