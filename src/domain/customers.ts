/**
 * Vocabulary of customers (tenants) shared by the identity module, its entities and the custody
 * provider (reference: "Customer", "`business` object"; docs/decisions/customers-users-and-wallets.md).
 * The contract's schema `CustomerBusiness` has the same shape; the identity service passes one to the
 * other, so the compiler keeps them in step.
 */

/**
 * A customer's business profile as stored (the `customer.business` JSONB column) and as the
 * upstream registry holds it: `entity_name` and `incorporation_country` always present, the rest
 * optional; further keys the caller sent are kept as they are. Countries are ISO 3166-1 alpha-2,
 * `incorporation_date` is `YYYY-MM-DD`.
 */
export interface BusinessProfile {
  entity_name: string;
  incorporation_country: string;
  incorporation_state?: string;
  incorporation_date?: string;
  organization_type?: string;
  business_type?: string;
  registration_number?: string;
  description?: string;
  accredited_investor?: boolean;
  non_agent_intermediary?: boolean;
  principal_place_country?: string;
  principal_place_state?: string;
  principal_place_address?: string;
  principal_place_city?: string;
  principal_place_postal_code?: string;
  [key: string]: unknown;
}
