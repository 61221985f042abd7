/**
 * Handlers of the cards on credit wallets (docs/decisions/cards.md; spec/credit/cards.tsp): Issue
 * (201, the only answer with `pan` and `cvv`), Read, List, Update and Authorize Card (201 for an
 * approval and for a decline). The caller's tenant is the
 * owner API key's customer; the rules live in src/modules/credit/cards/service.ts.
 */
import type { operations } from "../../../generated/types/credit.js";
import type { CreditCardService } from "../../modules/credit/cards/service.js";
import type { HandlerMap } from "../types.js";
import { tenantOf } from "./handlers.js";

/** Handlers of the card operations. */
export function creditCardHandlers(cards: CreditCardService): HandlerMap<operations> {
  return {
    issueCard: async (call) => ({ status: 201, data: await cards.issue(tenantOf(call), call.params.walletId, call.body) }),
    getCard: async (call) => ({ status: 200, data: await cards.get(call.em, tenantOf(call), call.params.cardId) }),
    updateCard: async (call) => ({ status: 200, data: await cards.update(call.em, tenantOf(call), call.params.cardId, call.body) }),
    authorizeCard: async (call) => ({ status: 201, data: await cards.authorize(tenantOf(call), call.params.cardId, call.body) }),
    listWalletCards: async (call) => {
      const limit = call.query.limit ?? 20;
      const offset = call.query.offset ?? 0;
      const { items, total } = await cards.list(call.em, tenantOf(call), call.params.walletId, { limit, skip: offset });
      return { status: 200, data: { items, total, limit, offset } };
    },
  };
}
