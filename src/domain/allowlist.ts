/**
 * The withdrawal allowlist (address book) of a user (docs/decisions/limits-and-allowlist.md
 * "Destination allowlist"): pure rules of an entry's cooldown, of when two addresses are the same
 * destination, and of what Initiate Withdrawal answers under the customer's `allowlist_required`.
 */
import { DomainError, quote } from "./errors.js";

/** Status of an entry: `PENDING` during its cooldown, then `ACTIVE`. */
export type AllowlistStatus = "PENDING" | "ACTIVE";

/** Default `ALLOWLIST_COOLDOWN_S`: one day. */
export const DEFAULT_ALLOWLIST_COOLDOWN_S = 86_400;
/** Largest `ALLOWLIST_COOLDOWN_S`: 30 days. */
export const MAX_ALLOWLIST_COOLDOWN_S = 2_592_000;

/** When an entry added at `createdAt` becomes `ACTIVE`: `createdAt` + `cooldownS` seconds. */
export function activationOf(createdAt: Date, cooldownS: number): Date {
  return new Date(createdAt.getTime() + cooldownS * 1000);
}

/** An entry's status at `now`: `ACTIVE` from `activatesAt` on (inclusive), `PENDING` before. */
export function allowlistStatus(activatesAt: Date, now: Date): AllowlistStatus {
  return now.getTime() >= activatesAt.getTime() ? "ACTIVE" : "PENDING";
}

/**
 * The key under which two spellings of one destination compare equal (the unique index of a
 * user's list, and the match of Initiate Withdrawal): hex (`0x…`, EIP-55 checksum case) and
 * bech32 (`tb1…`, `bc1…`) addresses are case-insensitive, so they are lower-cased; base58
 * addresses (bitcoin legacy, tron, solana) are case-sensitive and kept as given.
 */
export function addressKey(address: string): string {
  if (/^0x[0-9a-f]{40}$/i.test(address) || /^(tb|bc)1[0-9a-z]+$/i.test(address)) return address.toLowerCase();
  return address;
}

/**
 * Initiate Withdrawal under `allowlist_required` (docs/decisions/limits-and-allowlist.md
 * "Destination allowlist"): `entry` is the user's entry of `currency` for `address` (matched by
 * {@link addressKey}), or null when there is none; it must be `ACTIVE` at `now`.
 * @throws DomainError INVALID_ADDRESS (400, field `address`) saying whether the address is absent
 *   from the list or still cooling down, and until when (ISO 8601 UTC).
 */
export function assertAllowlisted(entry: { activatesAt: Date } | null, currency: string, address: string, now: Date): void {
  if (!entry) {
    throw new DomainError(
      "INVALID_ADDRESS",
      `This customer accepts only allowlisted destinations: ${quote(address)} is not on the user's ${currency} allowlist (add it with Add Address; it becomes usable after its cooldown).`,
      "address",
    );
  }
  if (allowlistStatus(entry.activatesAt, now) === "PENDING") {
    throw new DomainError(
      "INVALID_ADDRESS",
      `This customer accepts only allowlisted destinations: ${quote(address)} is on the user's ${currency} allowlist but still cooling down until ${entry.activatesAt.toISOString()}.`,
      "address",
    );
  }
}
