/**
 * Handlers of the credit wallet operations (docs/decisions/credit.md "Wallets"; spec/credit/wallets.tsp, charges.tsp,
 * payments.tsp, statements.tsp, events.tsp): create, read, list, PayOutCredit, ReportPayCredit,
 * ChangeWalletLimit, ChangeInterestCreditCapital, block, unblock, dissolve, statements and events.
 * The caller's tenant is the owner API key's customer (docs/decisions/credit.md "Operations and who calls them"); the rules live in
 * src/modules/credit/accounts/service.ts. The override's rates go to the service as the client wrote
 * them (./exact-rates.ts).
 */
import type { operations } from "../../../generated/types/credit.js";
import { header } from "../../modules/identity/auth.js";
import { OVERRIDE_RATE_FIELDS, type CreditWalletService } from "../../modules/credit/accounts/service.js";
import type { HandlerMap } from "../types.js";
import { withExactRates } from "./exact-rates.js";
import { tenantOf } from "./handlers.js";

/** `limit`/`offset` of a credit list (spec `CreditPageQuery`: default 20 and 0). */
function pageOf(call: { query: { limit?: number; offset?: number } }): { limit: number; offset: number } {
  return { limit: call.query.limit ?? 20, offset: call.query.offset ?? 0 };
}

/** Handlers of the credit wallet operations. */
export function creditWalletHandlers(wallets: CreditWalletService): HandlerMap<operations> {
  return {
    createCreditWallet: async (call) => ({ status: 201, data: await wallets.create(call.em, tenantOf(call), call.body) }),
    getCreditWallet: async (call) => ({ status: 200, data: await wallets.get(call.em, tenantOf(call), call.params.walletId) }),
    listCreditWallets: async (call) => {
      const { limit, offset } = pageOf(call);
      const { items, total } = await wallets.list(call.em, tenantOf(call), { limit, skip: offset });
      return { status: 200, data: { items, total, limit, offset } };
    },
    payOutCredit: async (call) => ({
      status: 201,
      data: await wallets.charge(call.em, tenantOf(call), call.params.walletId, call.body, header(call.headers, "idempotency-key"), call.principal),
    }),
    reportPayCredit: async (call) => ({
      status: 201,
      data: await wallets.pay(call.em, tenantOf(call), call.params.walletId, call.body, header(call.headers, "idempotency-key"), call.principal),
    }),
    changeWalletLimit: async (call) => ({ status: 200, data: await wallets.changeLimit(call.em, tenantOf(call), call.params.walletId, call.body.limit) }),
    changeInterestCreditCapital: async (call) => ({
      status: 200,
      data: await wallets.changeInterest(call.em, tenantOf(call), call.params.walletId, withExactRates(call.body, OVERRIDE_RATE_FIELDS)),
    }),
    blockCreditWallet: async (call) => ({ status: 200, data: await wallets.block(call.em, tenantOf(call), call.params.walletId) }),
    unblockCreditWallet: async (call) => ({ status: 200, data: await wallets.unblock(call.em, tenantOf(call), call.params.walletId) }),
    dissolveCreditWallet: async (call) => ({ status: 200, data: await wallets.dissolve(call.em, tenantOf(call), call.params.walletId) }),
    listCreditWalletStatements: async (call) => {
      const { limit, offset } = pageOf(call);
      const { items, total } = await wallets.statements(call.em, tenantOf(call), call.params.walletId, { limit, skip: offset });
      return { status: 200, data: { items, total, limit, offset } };
    },
    listCreditWalletEvents: async (call) => {
      const { limit, offset } = pageOf(call);
      const { items, total } = await wallets.events(call.em, tenantOf(call), call.params.walletId, { limit, skip: offset });
      return { status: 200, data: { items, total, limit, offset } };
    },
  };
}
