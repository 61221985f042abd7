/**
 * The checks of a withdrawal destination that Initiate Withdrawal and Add Address share
 * (docs/decisions/withdrawals.md "Initiate", docs/decisions/limits-and-allowlist.md "Destination
 * allowlist"): the currency must be withdrawable, and the address valid on one of its networks as
 * the provider decodes it.
 */
import { DomainError, quote } from "../../domain/errors.js";
import type { CatalogueCurrency, CustodyProvider } from "../../providers/provider.js";
import type { WalletService } from "../wallets/service.js";
import type { WithdrawalType } from "../../domain/withdrawals.js";

/**
 * The catalogue entry of currency `code` (case-insensitive), which must be withdrawable.
 * @throws DomainError INVALID_CURRENCY (400, unknown), UNSUPPORTED_CURRENCY (400, not withdrawable: fiat, or no network).
 */
export async function withdrawableCurrency(wallets: Pick<WalletService, "currency">, code: string): Promise<CatalogueCurrency> {
  const currency = await wallets.currency(code);
  if (!currency.canWithdraw || currency.networks.length === 0) {
    throw new DomainError("UNSUPPORTED_CURRENCY", `${currency.code} cannot be withdrawn.`, "currency");
  }
  return currency;
}

/**
 * The catalogue entry of currency `code` (case-insensitive) for a withdrawal on the `type` path:
 * a fiat currency only on the fiat path, a crypto currency only on the crypto path
 * (docs/decisions/fiat.md "Fiat withdrawals"), then withdrawable as {@link withdrawableCurrency}.
 * @throws DomainError INVALID_CURRENCY (400: unknown, or of the other path), UNSUPPORTED_CURRENCY (400, not withdrawable).
 */
export async function pathCurrency(wallets: Pick<WalletService, "currency">, code: string, type: WithdrawalType): Promise<CatalogueCurrency> {
  const currency = await wallets.currency(code);
  if (currency.isFiat !== (type === "fiat")) {
    const path = type === "fiat" ? "a crypto currency: use the crypto withdrawals" : "a fiat currency: use the fiat withdrawals";
    throw new DomainError("INVALID_CURRENCY", `${currency.code} is ${path}.`, "currency");
  }
  return withdrawableCurrency(wallets, currency.code);
}

/**
 * The networks of `currency` on which `address` is a valid destination (the provider's
 * `isValidAddress`; checksums included, no trimming).
 * @throws DomainError INVALID_CRYPTO_ADDRESS (400, field `address`) when there is none.
 */
export function destinationNetworks(provider: Pick<CustodyProvider, "isValidAddress">, currency: CatalogueCurrency, address: string): string[] {
  const networks = currency.networks.filter((n) => provider.isValidAddress(n, address));
  if (networks.length === 0) {
    throw new DomainError("INVALID_CRYPTO_ADDRESS", `${quote(address)} is not a valid ${currency.code} address on ${currency.networks.join(" or ")}.`, "address");
  }
  return networks;
}
