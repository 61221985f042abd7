/**
 * Bank rails of the sandbox provider (docs/decisions/fiat.md "Rails and virtual accounts"): usd is
 * held on `networks/ach` and eur on `networks/sepa`, listed by wallets like any chain network. A
 * wallet's deposit "address" on a rail is a virtual account: a bank account number unique to the
 * wallet, to which an incoming bank transfer credits that wallet.
 *
 * - `networks/sepa`: a German IBAN `DEkk 9999 9999 nnnn nnnn nn` — the sandbox bank code
 *   {@link SANDBOX_SEPA_BANK_CODE} and a 10-digit account number that is the rail's derivation
 *   index, zero-padded; the check digits `kk` are ISO 13616 mod-97 ones (ibantools `composeIBAN`).
 * - `networks/ach`: `<routing_number>/<account_number>` — the sandbox routing number
 *   {@link SANDBOX_ACH_ROUTING_NUMBER} and a 12-digit account number, `80` followed by the
 *   derivation index zero-padded to 10 digits.
 *
 * An index below 2^31 (the bound of every sandbox derivation index) fits 10 digits, so distinct
 * indexes give distinct accounts: one index per wallet per rail makes the account unique per wallet.
 *
 * Pure and offline: nothing here reads the clock, the seed or the network.
 */
import { createHash } from "node:crypto";
import { composeIBAN } from "ibantools";

/** The bank rails, as vault network identifiers (reference: Wallet › networks[].name). */
export const RAILS = ["networks/ach", "networks/sepa"] as const;

/** One of {@link RAILS}. */
export type RailId = (typeof RAILS)[number];

/** Whether `value` is one of {@link RAILS} (exact, case-sensitive match). */
export function isRailId(value: string): value is RailId {
  return (RAILS as readonly string[]).includes(value);
}

/** Country of the sandbox's virtual IBANs: Germany (BBAN = 8-digit bank code ‖ 10-digit account number). */
export const SANDBOX_SEPA_COUNTRY = "DE";

/**
 * Bank code (Bankleitzahl) of the sandbox's virtual IBANs. Its first digit, 9, is outside the
 * German clearing areas (1–8), so it is not meant to name a real bank; no check of a German IBAN
 * that ibantools or the bank-account rules make depends on the bank code.
 */
export const SANDBOX_SEPA_BANK_CODE = "99999999";

/**
 * ABA routing number of the sandbox's virtual ACH accounts: `110000000`, the routing number
 * payment providers publish for test mode (checksum 3·(1+0+0) + 7·(1+0+0) + 1·(0+0+0) = 10 ≡ 0 mod 10).
 */
export const SANDBOX_ACH_ROUTING_NUMBER = "110000000";

/** First digits of the sandbox's virtual ACH account numbers (then 10 digits of the index). */
const ACH_ACCOUNT_PREFIX = "80";

/** Largest index + 1 (the bound of the sandbox's derivation indexes; 10 digits hold it). */
const INDEX_LIMIT = 0x8000_0000;

/**
 * The virtual account number `index` (0, 1, 2, …) of `rail`. Deterministic and injective: the same
 * `(rail, index)` always gives the same account, and two indexes never give the same one.
 *
 * @param index a non-negative integer below 2^31 (the rail's derivation index)
 * @returns `address`: on `networks/sepa` the IBAN in electronic format (22 characters, no spaces,
 *   e.g. `DE23999999990000000000` for index 0); on `networks/ach` `<routing>/<account>` (9 + 1 + 12
 *   characters, e.g. `110000000/800000000000`); and `path`, what the sandbox records as the
 *   address's derivation (`virtual-account/<index>`)
 * @throws RangeError when `index` is not an integer in [0, 2^31)
 */
export function virtualAccount(rail: RailId, index: number): { address: string; path: string } {
  if (!Number.isInteger(index) || index < 0 || index >= INDEX_LIMIT) {
    throw new RangeError(`virtual account index must be an integer in [0, 2^31), got ${index}`);
  }
  const digits = String(index).padStart(10, "0");
  const path = `virtual-account/${index}`;
  if (rail === "networks/ach") return { address: `${SANDBOX_ACH_ROUTING_NUMBER}/${ACH_ACCOUNT_PREFIX}${digits}`, path };
  const iban = composeIBAN({ countryCode: SANDBOX_SEPA_COUNTRY, bban: `${SANDBOX_SEPA_BANK_CODE}${digits}` });
  if (iban === null) throw new Error(`ibantools composed no IBAN for index ${index}`); // unreachable: the BBAN has DE's format
  return { address: iban, path };
}

/** ODFI identification of the sandbox's ACH trace numbers: the first 8 digits of its routing number. */
const ACH_ODFI = SANDBOX_ACH_ROUTING_NUMBER.slice(0, 8);

/**
 * The reference of one bank transfer on `rail`, from 32 bytes of entropy (the sandbox's bank
 * deposits; its `hash`). Same entropy → same reference.
 *
 * - `networks/sepa`: an end-to-end identification of 35 characters (the ISO 20022 `EndToEndId`
 *   maximum): `E2E` followed by 32 upper-case hex digits (the first 16 bytes).
 * - `networks/ach`: a 15-digit trace number: the 8-digit ODFI identification `11000000` (the sandbox
 *   routing number's first 8 digits) followed by a 7-digit sequence number (the entropy modulo 10^7).
 *
 * @throws RangeError when `entropy` is not exactly 32 bytes
 */
export function railReference(rail: RailId, entropy: Uint8Array): string {
  if (entropy.length !== 32) throw new RangeError(`rail reference entropy must be 32 bytes, got ${entropy.length}`);
  const hex = Buffer.from(entropy).toString("hex");
  if (rail === "networks/sepa") return `E2E${hex.slice(0, 32).toUpperCase()}`;
  const sequence = (BigInt(`0x${hex}`) % 10_000_000n).toString().padStart(7, "0");
  return `${ACH_ODFI}${sequence}`;
}

/**
 * Bank code of the sandbox's customer settlement accounts: another made-up German bank code (first
 * digit 9, outside the clearing areas), so no settlement account is ever a wallet's virtual account.
 */
export const SANDBOX_SETTLEMENT_BANK_CODE = "99999998";

/**
 * The sandbox's settlement IBAN of customer `customerId`: the account its eur payouts are paid
 * from, the debtor of its SEPA payout file (docs/decisions/fiat.md "The SEPA payout file"). A
 * German IBAN of bank code {@link SANDBOX_SETTLEMENT_BANK_CODE} whose 10-digit account number is
 * the first 64 bits of SHA-256 of the customer id, modulo 10^10: the same customer always has the
 * same account.
 */
export function settlementIban(customerId: string): string {
  const digest = createHash("sha256").update(customerId).digest();
  const account = (digest.readBigUInt64BE(0) % 10_000_000_000n).toString().padStart(10, "0");
  const iban = composeIBAN({ countryCode: SANDBOX_SEPA_COUNTRY, bban: `${SANDBOX_SETTLEMENT_BANK_CODE}${account}` });
  if (iban === null) throw new Error(`ibantools composed no IBAN for customer ${customerId}`); // unreachable: the BBAN has DE's format
  return iban;
}
