/**
 * Pure rules of end users (reference: "User", "`individual` object", "States and transitions ›
 * User", error codes of the User group). No I/O: the users service asks these functions.
 */
import { parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js/max";
import { DomainError, quote, type FieldProblem } from "./errors.js";

/**
 * The `individual` object of a user as stored (the `app_user.individual` JSONB column; reference:
 * "`individual` object", schema `UserIndividual` of the contract, which has the same shape):
 * `dob` is `YYYY-MM-DD`, the country codes ISO 3166-1 alpha-2, `id_type` the kind of identity
 * document.
 */
export interface IndividualProfile {
  dob: string;
  residential_country_code: string;
  residential_address: string;
  residential_city: string;
  residential_state: string;
  residential_postal_code: string;
  id_type: "ssn" | "passport";
  id_number: string;
  id_country_code: string;
}

/** Allowed `account_type` on create (reference: User). Others → 400 `INVALID_ACCOUNT_TYPE`. */
export const USER_ACCOUNT_TYPES = ["individual", "business"] as const;
/** Allowed `account_role` (must be `third`). Others → 400 `INVALID_ACCOUNT_ROLE`. */
export const USER_ACCOUNT_ROLES = ["third"] as const;
/** Allowed `account_purpose`. Others → 400 `INVALID_ACCOUNT_PURPOSE`. */
export const USER_ACCOUNT_PURPOSES = ["trading", "investing"] as const;
/** Minimum age in whole years at the date of the request (UTC). */
export const MINIMUM_AGE_YEARS = 18;

const includes = (list: readonly string[], value: string): boolean => list.includes(value);

/**
 * Checks the enumerated attributes that have their own error codes.
 * @throws DomainError INVALID_ACCOUNT_TYPE | INVALID_ACCOUNT_ROLE | INVALID_ACCOUNT_PURPOSE (400).
 */
export function assertUserEnums(input: { account_type?: string; account_role?: string; account_purpose?: string }): void {
  if (input.account_type !== undefined && !includes(USER_ACCOUNT_TYPES, input.account_type)) {
    throw new DomainError("INVALID_ACCOUNT_TYPE", `account_type must be one of: ${USER_ACCOUNT_TYPES.join(", ")}.`, "account_type");
  }
  if (input.account_role !== undefined && !includes(USER_ACCOUNT_ROLES, input.account_role)) {
    throw new DomainError("INVALID_ACCOUNT_ROLE", "account_role must be 'third'.", "account_role");
  }
  if (input.account_purpose !== undefined && !includes(USER_ACCOUNT_PURPOSES, input.account_purpose)) {
    throw new DomainError("INVALID_ACCOUNT_PURPOSE", `account_purpose must be one of: ${USER_ACCOUNT_PURPOSES.join(", ")}.`, "account_purpose");
  }
}

/**
 * Whole years between `dob` (YYYY-MM-DD) and `today` (UTC calendar date). A birthday on 29 February
 * is reached on 1 March in common years.
 */
export function ageInYears(dob: string, today: Date): number {
  const [y, m, d] = dob.split("-").map(Number) as [number, number, number];
  const ty = today.getUTCFullYear();
  const tm = today.getUTCMonth() + 1;
  const td = today.getUTCDate();
  let age = ty - y;
  if (tm < m || (tm === m && td < d)) age -= 1;
  return age;
}

/**
 * @throws DomainError INVALID_AGE (400) when the holder is under {@link MINIMUM_AGE_YEARS} on `today`
 * or `dob` is not a real calendar date.
 */
export function assertAdult(dob: string, today: Date, field = "individual.dob"): void {
  const parsed = new Date(`${dob}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(dob) || Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== dob) {
    throw new DomainError("INVALID_AGE", "dob must be a real date in YYYY-MM-DD form.", field);
  }
  if (ageInYears(dob, today) < MINIMUM_AGE_YEARS) {
    throw new DomainError("INVALID_AGE", `The account holder must be at least ${MINIMUM_AGE_YEARS} years old.`, field);
  }
}

/** Characters and sequences that mark input as script-like or markup (rejected, never stripped). */
const SCRIPT_LIKE = /[<>`{}\\|^~$]|\b(?:javascript|vbscript|data):|\bon[a-z]+\s*=|&#|&[a-z]+;/i;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
/** A personal name: letters and combining marks, with spaces, apostrophes (' and ’), hyphens and periods between. */
const NAME = /^[\p{L}\p{M}][\p{L}\p{M}'\u2019 .-]*$/u;
/** A place name (city, state): letters, digits, spaces and `' . , - ( )`. */
const PLACE = /^[\p{L}\p{M}\p{N}][\p{L}\p{M}\p{N}'\u2019 .,\-()]*$/u;
/** An address line: letters, digits, spaces and `' . , - # / ( ) : °` and `&`. */
const ADDRESS = /^[\p{L}\p{M}\p{N}#][\p{L}\p{M}\p{N}'\u2019 .,\-#/():°&]*$/u;

/** Kinds of sanitised text (reference: "sanitized", "sanitized as an address"). */
export type TextKind = "name" | "place" | "address";

/**
 * Returns a problem when `value` holds unsafe or script-like characters for its kind; input is
 * rejected, not truncated or cleaned (reference: User).
 */
export function sanitisationProblem(field: string, value: string, kind: TextKind): FieldProblem | null {
  const shape = kind === "name" ? NAME : kind === "place" ? PLACE : ADDRESS;
  if (value.trim() === "") return { field, message: `${field} must not be blank.` };
  if (CONTROL.test(value) || SCRIPT_LIKE.test(value) || !shape.test(value.trim())) {
    return { field, message: `${field} contains characters that are not allowed in a ${kind === "address" ? "street address" : kind}.` };
  }
  return null;
}

/** Longest `phone_number` (reference: User › phone_number, max 20; the customer's follows it). */
export const PHONE_NUMBER_MAX = 20;

/**
 * Parses `phoneNumber` as a mobile number of `countryCode` (ISO 3166-1 alpha-2) with
 * libphonenumber's full metadata. A number longer than {@link PHONE_NUMBER_MAX} characters, or a
 * country code that is not two letters, is refused before libphonenumber sees it (callers that
 * bypass the schema stay bounded).
 * @returns the E.164 form, or a problem naming `field`.
 */
export function parseMobileNumber(
  phoneNumber: string,
  countryCode: string,
  field = "phone_number",
): { e164: string } | { problem: FieldProblem } {
  if (phoneNumber.length > PHONE_NUMBER_MAX) {
    return { problem: { field, message: `${field} must be at most ${PHONE_NUMBER_MAX} characters.` } };
  }
  const parsed = /^[A-Z]{2}$/.test(countryCode) ? parsePhoneNumberFromString(phoneNumber, countryCode as CountryCode) : undefined;
  const type = parsed?.getType();
  if (!parsed || !parsed.isValid() || parsed.country !== countryCode || (type !== "MOBILE" && type !== "FIXED_LINE_OR_MOBILE")) {
    return { problem: { field, message: `${field} must be a valid mobile number for ${quote(countryCode)}.` } };
  }
  return { e164: parsed.number };
}

/** A user's lifecycle state: status, active flag and verification attribute. */
export interface LifecycleState {
  status: "PENDING" | "VERIFIED" | "SUSPENDED";
  isActive: boolean;
  verificationStatus: "verified" | "unverified" | "pending";
}

/** The state of a newly created user: PENDING, inactive, verification pending. */
export const INITIAL_USER_STATE: LifecycleState = { status: "PENDING", isActive: false, verificationStatus: "pending" };

/** Activate User: PENDING or SUSPENDED → VERIFIED (active, verified); VERIFIED stays (no-op). */
export function activate(_state: LifecycleState): LifecycleState {
  return { status: "VERIFIED", isActive: true, verificationStatus: "verified" };
}

/**
 * Deactivate User: VERIFIED → SUSPENDED (inactive; data kept); SUSPENDED stays (no-op).
 * @throws DomainError BAD_REQUEST (400) for a PENDING user, who was never activated.
 */
export function deactivate(state: LifecycleState): LifecycleState {
  if (state.status === "PENDING") {
    throw new DomainError("BAD_REQUEST", "A PENDING user has not been activated and cannot be deactivated.");
  }
  return { status: "SUSPENDED", isActive: false, verificationStatus: state.verificationStatus };
}

/** @throws DomainError CANNOT_DELETE_ACTIVE_USER (400) when the user is active. */
export function assertDeletable(state: LifecycleState): void {
  if (state.isActive) {
    throw new DomainError("CANNOT_DELETE_ACTIVE_USER", "An active user cannot be deleted; deactivate the user first.");
  }
}
