/**
 * The API shapes of the allowlist (spec/platform/addresses.tsp) and the data of its `address.added`
 * notification (docs/decisions/limits-and-allowlist.md "Destination allowlist"; instants ISO 8601 UTC).
 */
import type { components } from "../../../generated/types/platform.js";
import { allowlistStatus } from "../../domain/allowlist.js";
import type { AllowlistAddress } from "./entities.js";

type Schemas = components["schemas"];
/** Schema `AllowlistAddress`. */
export type AllowlistAddressView = Schemas["AllowlistAddress"];
/** Schema `AddAddressRequest`: the body of Add Address. */
export type AddAddressInput = Schemas["AddAddressRequest"];

/** An entry as answered, its status computed at `now`. */
export function allowlistAddressView(row: AllowlistAddress, now: Date): AllowlistAddressView {
  return {
    address_id: row.id,
    user_id: row.userId,
    currency: row.currency,
    address: row.address,
    label: row.label,
    status: allowlistStatus(row.activatesAt, now),
    created_at: row.createdAt.toISOString(),
    activates_at: row.activatesAt.toISOString(),
  };
}

/**
 * `data` of an `address.added` notification: `{address_id, user_id, customer_id, currency,
 * address, label, created_at, activates_at}`.
 */
export function addressAddedData(row: AllowlistAddress): Record<string, unknown> {
  return {
    address_id: row.id,
    user_id: row.userId,
    customer_id: row.customerId,
    currency: row.currency,
    address: row.address,
    label: row.label,
    created_at: row.createdAt.toISOString(),
    activates_at: row.activatesAt.toISOString(),
  };
}
