/** Identifier formats the service checks before touching the database (ids are stored lower-case). */
import { DomainError, quote } from "./errors.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID of any version (case-insensitive). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** Whether `value` is a UUID v4 (case-insensitive): user ids, trace ids of the credit core. */
export function isUuidV4(value: string): boolean {
  return UUID_V4.test(value);
}

/**
 * `value` as a wallet id: a UUID of any version and case, lower-cased
 * (docs/decisions/customers-users-and-wallets.md "Wallets").
 * @param field the body field that carried it (`wallet_id`, `from_wallet_id`…); absent for a path.
 * @throws DomainError INVALID_WALLET_ID (400) when `value` is not a UUID.
 */
export function walletIdOf(value: string, field?: string): string {
  if (!UUID.test(value)) throw new DomainError("INVALID_WALLET_ID", `${quote(value)} is not a wallet id (a UUID).`, field);
  return value.toLowerCase();
}
