/**
 * Platform handlers of internal transfers (docs/decisions/limits-and-allowlist.md "Transfers"):
 * Create Transfer, Get Transfer and List Wallet Transfers, for the owner API key or a user token.
 */
import { exactNumber } from "../json-numbers.js";
import type { operations } from "../../../generated/types/platform.js";
import { header } from "../../modules/identity/auth.js";
import type { TransferService } from "../../modules/transfers/service.js";
import { buildPagination } from "../envelope.js";
import type { HandlerMap } from "../types.js";
import { filterPage } from "./handlers.js";
import { walletCaller } from "./wallet-handlers.js";

/** Handlers of the transfer operations. */
export function transferHandlers(transfers: TransferService): HandlerMap<operations> {
  return {
    createTransfer: async ({ em, principal, body, headers }) => ({
      status: 201,
      data: await transfers.create(em, walletCaller(principal), { ...body, amount: exactNumber(body, "amount") }, header(headers, "idempotency-key"), principal),
    }),
    getTransfer: async ({ em, principal, params }) => ({
      status: 200,
      data: await transfers.get(em, walletCaller(principal), params.transfer_id),
    }),
    listWalletTransfers: async ({ em, principal, params, query }) => {
      const page = filterPage(query);
      const { items, total } = await transfers.listForWallet(em, walletCaller(principal), params.wallet_id, page);
      return { status: 200, data: items, pagination: buildPagination(`/wallets/${params.wallet_id}/transfers`, page, total) };
    },
  };
}
