/**
 * The upstream custody provider (decisions.md §3): everything the service asks upstream goes
 * through this interface; nothing outside src/providers knows which provider is active.
 * Issue 2 needs the customer registry; vaults, addresses, catalogue and withdrawal execution join
 * this interface with the wallets and withdrawals issues.
 */
import type { BusinessProfile } from "../modules/identity/entities.js";

/** A customer record as the upstream registry holds it. */
export interface UpstreamCustomer {
  customerId: string;
  accountType: "individual" | "corporation";
  accountRole: "client" | "partner";
  accountPurpose: string;
  firstName: string;
  lastName: string;
  phoneCountryCode: string;
  phoneNumber: string;
  /** Full business profile; `entity_name` and `incorporation_country` are always present. */
  business: BusinessProfile;
  /** Whether a custody vault is configured upstream (else wallets answer `CLIENT_NO_SUPPLIER_ID`). */
  hasVault: boolean;
}

/** The provider interface. Implementations throw `DomainError("BAD_GATEWAY")` when upstream fails. */
export interface CustodyProvider {
  /** `sandbox` for the built-in provider. */
  readonly name: string;
  /** The upstream record of `customerId`, or null when upstream does not know it. */
  lookupCustomer(customerId: string): Promise<UpstreamCustomer | null>;
}
