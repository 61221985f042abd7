/**
 * Platform handlers of two-step withdrawals, crypto and fiat (docs/decisions/withdrawals.md,
 * docs/decisions/fiat.md "Fiat withdrawals"), and the sandbox mail outbox.
 * A user token acts only on its own account (the path scope check answers 403 otherwise).
 */
import { exactNumber } from "../json-numbers.js";
import type { operations } from "../../../generated/types/platform.js";
import type { MailService } from "../../modules/mail/service.js";
import type { WithdrawalFilter, WithdrawalService } from "../../modules/withdrawals/service.js";
import type { CustodyProvider } from "../../providers/provider.js";
import { buildPagination } from "../envelope.js";
import type { HandlerMap } from "../types.js";
import { filterPage, filtersOf } from "./handlers.js";
import { sandboxOnly, walletCaller } from "./wallet-handlers.js";
import { header } from "../../modules/identity/auth.js";

/** Handlers of the withdrawal operations and of `GET /sandbox/mail`. */
export function withdrawalHandlers(withdrawals: WithdrawalService, mail: MailService, provider: CustodyProvider): HandlerMap<operations> {
  return {
    initiateWithdrawal: async ({ em, principal, params, body, headers }) => ({
      status: 201,
      data: await withdrawals.initiate(
        em,
        walletCaller(principal).customerId,
        params.user_id,
        { ...body, amount: exactNumber(body, "amount") },
        header(headers, "idempotency-key"),
        principal,
      ),
    }),
    confirmWithdrawal: async ({ em, principal, params, body }) => ({
      status: 200,
      data: await withdrawals.confirm(em, walletCaller(principal).customerId, params.user_id, params.withdrawal_id, body.code),
    }),
    resendWithdrawalCode: async ({ em, principal, params }) => ({
      status: 200,
      data: await withdrawals.resendCode(em, walletCaller(principal).customerId, params.user_id, params.withdrawal_id),
    }),
    cancelWithdrawal: async ({ em, principal, params }) => {
      await withdrawals.cancel(em, walletCaller(principal).customerId, params.user_id, params.withdrawal_id);
      return { status: 204 };
    },
    getWithdrawal: async ({ em, principal, params }) => ({
      status: 200,
      data: await withdrawals.get(em, walletCaller(principal).customerId, params.user_id, params.withdrawal_id),
    }),
    listWithdrawals: async ({ em, principal, params, query }) => {
      const page = filterPage(query);
      const { items, total } = await withdrawals.list(em, walletCaller(principal).customerId, params.user_id, page, listFilter(query));
      return {
        status: 200,
        data: items,
        pagination: buildPagination(`/users/${params.user_id}/accounts/crypto/withdrawals`, page, total, filtersOf(query)),
      };
    },
    initiateFiatWithdrawal: async ({ em, principal, params, body, headers }) => ({
      status: 201,
      data: await withdrawals.initiateFiat(
        em,
        walletCaller(principal).customerId,
        params.user_id,
        { ...body, amount: exactNumber(body, "amount") },
        header(headers, "idempotency-key"),
        principal,
      ),
    }),
    confirmFiatWithdrawal: async ({ em, principal, params, body }) => ({
      status: 200,
      data: await withdrawals.confirm(em, walletCaller(principal).customerId, params.user_id, params.withdrawal_id, body.code, "fiat"),
    }),
    resendFiatWithdrawalCode: async ({ em, principal, params }) => ({
      status: 200,
      data: await withdrawals.resendCode(em, walletCaller(principal).customerId, params.user_id, params.withdrawal_id, "fiat"),
    }),
    cancelFiatWithdrawal: async ({ em, principal, params }) => {
      await withdrawals.cancel(em, walletCaller(principal).customerId, params.user_id, params.withdrawal_id, "fiat");
      return { status: 204 };
    },
    getFiatWithdrawal: async ({ em, principal, params }) => ({
      status: 200,
      data: await withdrawals.get(em, walletCaller(principal).customerId, params.user_id, params.withdrawal_id, "fiat"),
    }),
    listFiatWithdrawals: async ({ em, principal, params, query }) => {
      const page = filterPage(query);
      const { items, total } = await withdrawals.list(em, walletCaller(principal).customerId, params.user_id, page, listFilter(query), "fiat");
      return {
        status: 200,
        data: items,
        pagination: buildPagination(`/users/${params.user_id}/accounts/fiat/withdrawals`, page, total, filtersOf(query)),
      };
    },
    listSandboxMail: async ({ principal, query }) => {
      sandboxOnly(provider);
      return { status: 200, data: await mail.listSandbox(walletCaller(principal).customerId, query.to) };
    },
  };
}

/** The filters of List Withdrawals and List Fiat Withdrawals (the same query). */
function listFilter(query: operations["listWithdrawals"]["parameters"]["query"]): WithdrawalFilter {
  return {
    sort: query?.["filter[sort]"] ?? "DESC",
    ...(query?.["filter[where][status]"] !== undefined && { status: query["filter[where][status]"] }),
    ...(query?.["filter[where][currency]"] !== undefined && { currency: query["filter[where][currency]"] }),
  };
}
