/**
 * The API shapes of the limits operations (spec/platform/limits.tsp; docs/decisions/limits-and-allowlist.md
 * "Limits"): amounts as 8-decimal strings, currencies sorted by code.
 */
import type { components } from "../../../generated/types/platform.js";
import { MOVEMENT_KINDS, effectiveCaps, type CapSet, type CapTable, type MovementKind } from "../../domain/limits.js";
import { format8 } from "../../domain/money.js";

type Schemas = components["schemas"];
/** Schema `CustomerLimits`: Get and Set Limits. */
export type CustomerLimitsView = Schemas["CustomerLimits"];
/** Schema `UserLimits`: Get User Limits. */
export type UserLimitsView = Schemas["UserLimits"];
/** Schema `SetLimitsRequest`: the body of Set Limits. */
export type SetLimitsInput = Schemas["SetLimitsRequest"];

/** A cap set as answered (schema `CapSet`): 8-decimal strings. */
export function capSetView(caps: CapSet): Schemas["CapSet"] {
  return { per_transaction: format8(caps.perTransaction), daily: format8(caps.daily), monthly: format8(caps.monthly) };
}

/** `caps` as answered, keyed by currency code in code order. */
function capTableView(caps: CapTable): Record<string, Schemas["CapSet"]> {
  return Object.fromEntries(Object.keys(caps).sort().map((code) => [code, capSetView(caps[code] as CapSet)]));
}

/**
 * Get and Set Limits' answer: the caps in force per kind (`overrides` over `defaults`), the
 * policy, and which currencies the customer set itself (`customized`).
 */
export function customerLimitsView(
  customerId: string,
  allowlistRequired: boolean,
  defaults: Readonly<Record<MovementKind, CapTable>>,
  overrides: Readonly<Record<MovementKind, CapTable>>,
): CustomerLimitsView {
  const [withdrawal, transfer] = MOVEMENT_KINDS.map((kind) => capTableView(effectiveCaps(defaults[kind], overrides[kind])));
  return {
    customer_id: customerId,
    allowlist_required: allowlistRequired,
    withdrawal: withdrawal ?? {},
    transfer: transfer ?? {},
    customized: { withdrawal: Object.keys(overrides.withdrawal).sort(), transfer: Object.keys(overrides.transfer).sort() },
  };
}
