/**
 * The rules of a user's bank account (docs/decisions/fiat.md "Bank accounts"): which fields each
 * currency takes, how each is checked and normalised, the mask shown instead of the number, and
 * the key two spellings of one account share. Pure; no I/O.
 *
 * IBANs and BICs are checked by `ibantools` (ISO 13616 checksum, each country's BBAN format and,
 * where a country has one, its national check digits; ISO 9362 BICs), the SEPA scheme's countries
 * by its `isSEPACountry`; ABA routing numbers by `abavalidator` (the 3-7-1 weighted checksum).
 */
import { validate as isValidAbaRouting } from "abavalidator";
import { isSEPACountry, isValidBIC, validateIBAN, ValidationErrorsIBAN } from "ibantools";
import { DomainError } from "./errors.js";
import { hasMixedScriptWord, INVISIBLE_CHARACTERS } from "./text.js";

/** The currencies a bank account may be in: `eur` (a SEPA account) and `usd` (an ACH account). */
export const BANK_ACCOUNT_CURRENCIES = ["eur", "usd"] as const;
/** `eur` or `usd`. */
export type BankAccountCurrency = (typeof BANK_ACCOUNT_CURRENCIES)[number];

/** Longest `holder_name`, in characters (code points) once trimmed. */
export const HOLDER_NAME_MAX = 140;

/** The body fields of Add Bank Account that {@link checkBankAccount} reads, as sent. */
export interface BankAccountInput {
  currency: string;
  holder_name?: string;
  iban?: string;
  bic?: string;
  account_number?: string;
  routing_number?: string;
}

/** A field {@link bankAccountProblem} can name. */
export type BankAccountField = "currency" | "holder_name" | "iban" | "bic" | "account_number" | "routing_number";

/** The first invalid or missing field of a bank account, and why (answered 400 `INVALID_BANK_ACCOUNT`). */
export interface BankAccountProblem {
  field: BankAccountField;
  message: string;
}

/** The numbers of an `eur` account: the IBAN normalised (no spaces, upper case) and the BIC (upper case) or null. */
export interface SepaNumbers {
  currency: "eur";
  iban: string;
  bic: string | null;
}

/** The numbers of a `usd` account: the 9-digit ABA routing number and the 4–17 digit account number. */
export interface AchNumbers {
  currency: "usd";
  routingNumber: string;
  accountNumber: string;
}

/** The numbers of a bank account, by currency. */
export type BankAccountNumbers = SepaNumbers | AchNumbers;

/** A bank account as the rules accept it: the holder's name trimmed, and the numbers normalised. */
export interface CheckedBankAccount {
  holderName: string;
  numbers: BankAccountNumbers;
}

const DIGITS_ACCOUNT = /^\d{4,17}$/;
const DIGITS_ROUTING = /^\d{9}$/;
const CONTROL = /\p{Cc}/u;
const WHITE_SPACE = /\s+/gu;

/** Why ibantools refused an IBAN, in words, for the first error code it gave. */
const IBAN_ERRORS: Partial<Record<ValidationErrorsIBAN, string>> = {
  [ValidationErrorsIBAN.NoIBANCountry]: "does not start with a known IBAN country code",
  [ValidationErrorsIBAN.WrongBBANLength]: "has the wrong length for its country",
  [ValidationErrorsIBAN.WrongBBANFormat]: "does not have its country's national format",
  [ValidationErrorsIBAN.ChecksumNotNumber]: "has check digits that are not digits",
  [ValidationErrorsIBAN.WrongIBANChecksum]: "has a wrong checksum",
  [ValidationErrorsIBAN.WrongAccountBankBranchChecksum]: "has wrong national check digits",
  [ValidationErrorsIBAN.QRIBANNotAllowed]: "is a QR-IBAN, which takes only QR-bill payments",
};

/** `iban` as it is kept and compared: white space removed, upper case ("de89 3704 …" → "DE893704…"). */
export function normaliseIban(iban: string): string {
  return iban.replace(WHITE_SPACE, "").toUpperCase();
}

/** The problem of a holder name (as sent), or null: 1–140 characters once trimmed, no control, invisible or mixed-script text. */
function holderNameProblem(value: string | undefined): string | null {
  if (value === undefined || value.trim() === "") return "holder_name is required";
  if ([...value.trim()].length > HOLDER_NAME_MAX) return `holder_name must be at most ${HOLDER_NAME_MAX} characters`;
  if (CONTROL.test(value)) return "holder_name must not contain control characters";
  if (INVISIBLE_CHARACTERS.test(value)) return "holder_name must not contain zero-width or bidirectional-control characters";
  if (hasMixedScriptWord(value)) return "holder_name must not mix Latin, Cyrillic or Greek letters within one word";
  return null;
}

/** The problem of an IBAN normalised with {@link normaliseIban}, or null. */
function ibanProblem(iban: string): string | null {
  if (iban === "") return "iban is required for an eur account";
  const { valid, errorCodes } = validateIBAN(iban, { allowQRIBAN: false });
  if (!valid) return `iban ${IBAN_ERRORS[errorCodes[0] ?? ValidationErrorsIBAN.NoIBANCountry] ?? "is not a valid IBAN"}`;
  if (!isSEPACountry(iban.slice(0, 2))) return `iban must be of a SEPA country (${iban.slice(0, 2)} is not)`;
  return null;
}

/** The numbers of an `eur` account, or the problem of its first bad field. */
function sepaNumbers(input: BankAccountInput): SepaNumbers | BankAccountProblem {
  for (const field of ["account_number", "routing_number"] as const) {
    if (input[field] !== undefined) return { field, message: `${field} is for usd accounts; an eur account takes iban and bic` };
  }
  const iban = normaliseIban(input.iban ?? "");
  const problem = ibanProblem(iban);
  if (problem) return { field: "iban", message: problem };
  if (input.bic === undefined) return { currency: "eur", iban, bic: null };
  const bic = input.bic.trim().toUpperCase();
  if (!isValidBIC(bic)) return { field: "bic", message: "bic must be a valid BIC (8 or 11 characters: bank, country, location, branch)" };
  return { currency: "eur", iban, bic };
}

/** The numbers of a `usd` account, or the problem of its first bad field. */
function achNumbers(input: BankAccountInput): AchNumbers | BankAccountProblem {
  for (const field of ["iban", "bic"] as const) {
    if (input[field] !== undefined) return { field, message: `${field} is for eur accounts; a usd account takes account_number and routing_number` };
  }
  const accountNumber = input.account_number;
  if (accountNumber === undefined || accountNumber === "") return { field: "account_number", message: "account_number is required for a usd account" };
  if (!DIGITS_ACCOUNT.test(accountNumber)) return { field: "account_number", message: "account_number must be 4 to 17 digits" };
  const routingNumber = input.routing_number;
  if (routingNumber === undefined || routingNumber === "") return { field: "routing_number", message: "routing_number is required for a usd account" };
  if (!DIGITS_ROUTING.test(routingNumber)) return { field: "routing_number", message: "routing_number must be 9 digits" };
  if (!isValidAbaRouting(routingNumber)) return { field: "routing_number", message: "routing_number has a wrong ABA checksum" };
  return { currency: "usd", routingNumber, accountNumber };
}

/**
 * Checks and normalises a bank account as Add Bank Account receives it. Order: `currency` (`eur` or
 * `usd`, case-insensitive), `holder_name`, then the currency's numbers (`eur`: `iban`, `bic`;
 * `usd`: `account_number`, `routing_number`); a number field of the other currency is refused.
 * @returns the accepted account, or the first problem (its field and a message naming it).
 */
export function checkBankAccount(input: BankAccountInput): CheckedBankAccount | BankAccountProblem {
  const currency = input.currency.trim().toLowerCase();
  if (currency !== "eur" && currency !== "usd") return { field: "currency", message: "currency must be usd or eur" };
  const nameProblem = holderNameProblem(input.holder_name);
  if (nameProblem) return { field: "holder_name", message: nameProblem };
  const numbers = currency === "eur" ? sepaNumbers(input) : achNumbers(input);
  if ("field" in numbers) return numbers;
  return { holderName: (input.holder_name ?? "").trim(), numbers };
}

/** The first problem of `input` ({@link checkBankAccount}), or null when it is a valid bank account. */
export function bankAccountProblem(input: BankAccountInput): BankAccountProblem | null {
  const checked = checkBankAccount(input);
  return "field" in checked ? checked : null;
}

/**
 * {@link checkBankAccount}, throwing on a problem.
 * @throws DomainError INVALID_BANK_ACCOUNT (400) with the problem's message, `field` set to the field.
 */
export function assertBankAccount(input: BankAccountInput): CheckedBankAccount {
  const checked = checkBankAccount(input);
  if ("field" in checked) throw new DomainError("INVALID_BANK_ACCOUNT", `${checked.message}.`, checked.field);
  return checked;
}

/** The number the mask shows the end of: the IBAN, or the account number. */
function displayedNumber(numbers: BankAccountNumbers): string {
  return numbers.currency === "eur" ? numbers.iban : numbers.accountNumber;
}

/** `account_mask`: `****` followed by the last four characters of the IBAN (`eur`) or of the account number (`usd`). */
export function accountMask(numbers: BankAccountNumbers): string {
  return `****${displayedNumber(numbers).slice(-4)}`;
}

/**
 * The text two entries of one account share, the input of the duplicate fingerprint: `iban:<IBAN>`
 * for `eur`, `aba:<routing>/<account>` for `usd`. The BIC is left out: one IBAN is one account
 * whatever BIC is given with it.
 */
export function accountIdentity(numbers: BankAccountNumbers): string {
  return numbers.currency === "eur" ? `iban:${numbers.iban}` : `aba:${numbers.routingNumber}/${numbers.accountNumber}`;
}
