/**
 * Platform handlers of users' bank accounts (docs/decisions/fiat.md "Bank accounts"): the owner
 * key, or the user's own token (the path scope check answers 403 for another user's).
 */
import type { operations } from "../../../generated/types/platform.js";
import type { BankAccountService } from "../../modules/bank-accounts/service.js";
import { buildPagination } from "../envelope.js";
import type { HandlerMap } from "../types.js";
import { filterPage } from "./handlers.js";
import { walletCaller } from "./wallet-handlers.js";

/** Handlers of addBankAccount, listBankAccounts and deleteBankAccount. */
export function bankAccountHandlers(bankAccounts: BankAccountService): HandlerMap<operations> {
  return {
    addBankAccount: async ({ em, principal, params, body }) => ({
      status: 201,
      data: await bankAccounts.add(em, walletCaller(principal).customerId, params.user_id, body),
    }),
    listBankAccounts: async ({ em, principal, params, query }) => {
      const page = filterPage(query);
      const { items, total } = await bankAccounts.list(em, walletCaller(principal).customerId, params.user_id, page);
      return { status: 200, data: items, pagination: buildPagination(`/users/${params.user_id}/bank-accounts`, page, total) };
    },
    deleteBankAccount: async ({ em, principal, params }) => {
      await bankAccounts.delete(em, walletCaller(principal).customerId, params.user_id, params.bank_account_id);
      return { status: 204 };
    },
  };
}
