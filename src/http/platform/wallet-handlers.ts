/**
 * Platform handlers of wallets, balances, transactions, currencies and the sandbox deposit helper
 * (docs/decisions/customers-users-and-wallets.md "Wallets"). Each resolves who is asking, calls the wallets service and returns the envelope's data.
 */
import { exactNumber } from "../json-numbers.js";
import type { operations } from "../../../generated/types/platform.js";
import { DomainError } from "../../domain/errors.js";
import { header, type Principal } from "../../modules/identity/auth.js";
import type { WalletCaller, WalletService } from "../../modules/wallets/service.js";
import type { StateCaller, WalletStates } from "../../modules/wallets/states.js";
import type { CurrencySwitches } from "../../modules/currencies/service.js";
import type { CatalogueCurrency, CataloguePair, CustodyProvider } from "../../providers/provider.js";
import { buildPagination } from "../envelope.js";
import { frozenOnce } from "../send-json.js";
import type { HandlerMap } from "../types.js";
import { filterPage, filtersOf } from "./handlers.js";

/** Page size limit of the transaction list; above it the reference answers 400 (not 422). */
export const TRANSACTIONS_MAX_LIMIT = 100;

/** The wallet caller of an owner key (any user of its customer) or a user token (its own user). */
export function walletCaller(principal: Principal | null): WalletCaller {
  if (principal?.kind === "owner") return { customerId: principal.customerId };
  if (principal?.kind === "user") return { customerId: principal.customerId, userId: principal.userId };
  throw new DomainError("FORBIDDEN", "This operation needs the owner API key or a user token.");
}

/** Sandbox helpers answer only while the provider is the sandbox (docs/decisions/provider-and-sandbox.md "Test helpers"). @throws DomainError NOT_FOUND (404). */
export function sandboxOnly(provider: CustodyProvider): void {
  if (provider.name !== "sandbox") throw new DomainError("NOT_FOUND", "Sandbox helpers exist only while the provider is the sandbox.");
}

type CurrencyItem = operations["listCurrencies"]["responses"][200]["content"]["application/json"]["data"][number];
type PairItem = operations["listTradingPairs"]["responses"][200]["content"]["application/json"]["data"][number];

/** The owner key's customer, or the operator (any customer's wallet), as a wallet state call's caller. */
function stateCaller(principal: Principal | null): StateCaller {
  if (principal?.kind === "owner") return { customerId: principal.customerId };
  if (principal?.kind === "operator-session") return { operator: true };
  throw new DomainError("FORBIDDEN", "This operation needs another kind of credential.");
}

/** The switched currency catalogue as the API lists it, built and serialized once per catalogue (src/http/send-json.ts). */
const currencyItems = frozenOnce((currencies: readonly CatalogueCurrency[]): CurrencyItem[] => currencies.map(currencyItem));

/** A catalogue entry as the API shows it (schema `Currency`). */
function currencyItem(c: CatalogueCurrency): CurrencyItem {
  return {
      id: c.id,
      symbol: c.symbol,
      name: c.name,
      code: c.code,
      currency: c.code,
      precision: c.precision,
      ascii_sign: c.asciiSign,
      can_deposit: c.canDeposit,
      can_withdraw: c.canWithdraw,
      min_withdrawal: Number(c.minWithdrawal),
      is_fiat: c.isFiat,
      is_confirmations_needed: c.isConfirmationsNeeded,
      is_custody_enabled: c.isCustodyEnabled,
      is_trading_enabled: c.isTradingEnabled,
  };
}

/** The provider's trading pairs as the API lists them, built and serialized once per list. */
const pairItems = frozenOnce(
  (pairs: readonly CataloguePair[]): PairItem[] =>
    pairs.map((p) => ({
      formatted: `${p.base.toUpperCase()}/${p.quote.toUpperCase()}`,
      symbol: `${p.base.toUpperCase()}${p.quote.toUpperCase()}`,
      base: p.base,
      quote: p.quote,
    })),
);

/** Handlers of the wallet operations. */
export function walletHandlers(wallets: WalletService, states: WalletStates, switches: CurrencySwitches, provider: CustodyProvider): HandlerMap<operations> {
  return {
    createWallet: async ({ em, principal, params, body }) => ({
      status: 201,
      data: await wallets.create(em, walletCaller(principal).customerId, params.user_id, body),
    }),
    listWallets: async ({ em, principal, params, query }) => {
      const page = filterPage(query);
      const { items, total } = await wallets.list(em, walletCaller(principal).customerId, params.user_id, page);
      return { status: 200, data: items, pagination: buildPagination(`/users/${params.user_id}/wallets`, page, total) };
    },
    getWalletBalance: async ({ principal, params }) => ({
      status: 200,
      data: await wallets.balance(walletCaller(principal), params.wallet_id),
    }),
    listWalletTransactions: async ({ em, principal, params, query }) => {
      const page = filterPage(query);
      if (page.limit > TRANSACTIONS_MAX_LIMIT) {
        throw new DomainError("BAD_REQUEST", `filter[limit] must be at most ${TRANSACTIONS_MAX_LIMIT}.`, "filter[limit]");
      }
      const types = query["filter[where][type]"]?.split(",").map((t) => t.trim().toLowerCase()).filter((t) => t !== "");
      const filter = {
        sort: query["filter[sort]"] ?? "DESC",
        ...(types && { types }),
        ...(query["filter[where][currency]"] !== undefined && { currency: query["filter[where][currency]"] }),
        ...(query["filter[where][status]"] !== undefined && { status: query["filter[where][status]"] }),
        ...(query["filter[where][from]"] !== undefined && { from: Number(query["filter[where][from]"]) }),
        ...(query["filter[where][to]"] !== undefined && { to: Number(query["filter[where][to]"]) }),
        ...(query["filter[where][amount][gte]"] !== undefined && { amountGte: String(query["filter[where][amount][gte]"]) }),
        ...(query["filter[where][amount][lte]"] !== undefined && { amountLte: String(query["filter[where][amount][lte]"]) }),
      } as const;
      const { items, total } = await wallets.transactions(em, walletCaller(principal), params.wallet_id, page, filter);
      return { status: 200, data: items, pagination: buildPagination(`/wallets/${params.wallet_id}/transactions`, page, total, filtersOf(query)) };
    },
    lockWallet: async ({ em, principal, params, body }) => ({ status: 200, data: await states.change(em, stateCaller(principal), params.wallet_id, "lock", body.reason) }),
    unlockWallet: async ({ em, principal, params }) => ({ status: 200, data: await states.change(em, stateCaller(principal), params.wallet_id, "unlock") }),
    suspendWallet: async ({ em, principal, params, body }) => ({ status: 200, data: await states.change(em, stateCaller(principal), params.wallet_id, "suspend", body.reason) }),
    reinstateWallet: async ({ em, principal, params }) => ({ status: 200, data: await states.change(em, stateCaller(principal), params.wallet_id, "reinstate") }),
    deactivateWallet: async ({ em, principal, params }) => ({ status: 200, data: await states.change(em, stateCaller(principal), params.wallet_id, "deactivate") }),
    listCurrencies: async () => ({ status: 200, data: currencyItems(await switches.currencies()) }),
    updateCurrency: async ({ params, body }) => {
      const change = {
        ...(body.can_deposit !== undefined && { canDeposit: body.can_deposit }),
        ...(body.can_withdraw !== undefined && { canWithdraw: body.can_withdraw }),
        ...(body.is_custody_enabled !== undefined && { isCustodyEnabled: body.is_custody_enabled }),
        ...(body.is_trading_enabled !== undefined && { isTradingEnabled: body.is_trading_enabled }),
      };
      return { status: 200, data: currencyItem(await switches.update(params.code, change)) };
    },
    listTradingPairs: async () => ({ status: 200, data: pairItems(await switches.pairs()) }),
    createSandboxDeposit: async ({ em, principal, body, headers }) => {
      sandboxOnly(provider);
      // one deposit per Idempotency-Key (docs/idempotency.md): generated when the client sends none
      const input = { ...body, amount: exactNumber(body, "amount") };
      return { status: 201, data: await wallets.sandboxDeposit(em, walletCaller(principal).customerId, input, header(headers, "idempotency-key"), principal) };
    },
  };
}
