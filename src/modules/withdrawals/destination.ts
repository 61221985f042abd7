/**
 * The checks of a withdrawal destination that Initiate Withdrawal and Add Address share
 * (docs/decisions/withdrawals.md "Initiate", docs/decisions/limits-and-allowlist.md "Destination
 * allowlist"): the currency must be withdrawable, and the address valid on one of its networks as
 * the provider decodes it.
 */
import { DomainError, quote } from "../../domain/errors.js";
import type { CatalogueCurrency, CustodyProvider } from "../../providers/provider.js";
import type { WalletService } from "../wallets/service.js";

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
