/**
 * The SEPA payout file: one UTC day's euro payouts of a customer as an ISO 20022
 * `pain.001.001.03` customer credit transfer initiation, the XML a bank takes to execute them
 * (docs/decisions/fiat.md, "The SEPA payout file").
 *
 * The XML is written by the maintained `sepa` library, never by hand: this module only checks and
 * prepares what it is given (identifiers, amounts, names, dates) so that the library writes a
 * document the schema and the EPC rules accept. It is pure: no database, no clock, no I/O.
 */
import { Document } from "sepa";
import { transliterate } from "transliteration";
import { electronicFormatIBAN, isValidBIC, isValidIBAN } from "ibantools";
import { money, type Money } from "../../domain/money.js";

/** The ISO 20022 message the file is: customer credit transfer initiation, version 3. */
export const SEPA_PAIN_FORMAT = "pain.001.001.03";

/** Longest identifier SEPA carries (`Max35Text`: message, payment and end-to-end ids). */
export const SEPA_ID_MAX = 35;
/** Longest party name the EPC implementation guidelines allow (the schema's 140 is cut to 70). */
export const SEPA_NAME_MAX = 70;
/** Longest unstructured remittance text (`Ustrd`, `Max140Text`). */
export const SEPA_REMITTANCE_MAX = 140;

/** Characters outside the SEPA basic Latin set. */
const OUTSIDE_SEPA_SET = /[^A-Za-z0-9/\-?:().,'+ ]/g;
/** One payout's amount: euros with at most 2 decimals, at most 999,999,999.99 (the SEPA maximum). */
const EURO_AMOUNT = /^\d{1,9}(\.\d{1,2})?$/;
/** A calendar date as the API writes it. */
const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A party of a transfer: the debtor (the customer paying out) or a creditor (a payee). */
export interface SepaParty {
  /** The account holder's name, any script: written transliterated to the SEPA set, cut to 70 characters. */
  name: string;
  /** The account's IBAN; spaces are removed and letters upper-cased before it is checked. */
  iban: string;
  /** The bank's BIC (8 or 11 characters), optional: SEPA routes by the IBAN alone without one. */
  bic?: string | null;
}

/** One payout of the day. */
export interface SepaPayout {
  /** The payout's end-to-end reference, unique within the customer's payouts: 1–35 SEPA characters, not starting with `/`, without `//`. */
  endToEndId: string;
  /** Euros as a decimal string with at most 2 decimals, 0.01–999999999.99 (e.g. `"1250.00"`). */
  amount: string;
  /** Who receives it. */
  creditor: SepaParty;
  /** Text the payee sees on the statement (transliterated, cut to 140); the end-to-end id when absent or blank. */
  remittance?: string | null;
}

/** What the file of one day holds. */
export interface SepaFileInput {
  /** The message's id (`GrpHdr/MsgId`), unique per file: 1–35 SEPA characters, not starting with `/`, without `//`. */
  messageId: string;
  /** When the file was made; written in UTC (`CreDtTm`, without a zone designator). */
  createdAt: Date;
  /** The day the bank is asked to execute the transfers (`ReqdExctnDt`), `YYYY-MM-DD`. */
  executionDate: string;
  /** The customer's settlement account the payouts are paid from; also the initiating party. */
  debtor: SepaParty;
  /** The day's payouts, in the order they are written; may be empty. */
  payouts: readonly SepaPayout[];
}

/**
 * The `pain.001.001.03` XML document (UTF-8, with its XML declaration) of one UTC day's euro
 * payouts, paid from `input.debtor`'s account.
 *
 * - One group header (`GrpHdr`): `MsgId` = `messageId`, `CreDtTm` = `createdAt` in UTC,
 *   `NbOfTxs` = the number of payouts, `CtrlSum` = their exact sum in euros (2 decimals, summed
 *   with decimal.js), `InitgPty/Nm` = the debtor's name.
 * - When there are payouts, one payment information block (`PmtInf`, id = `messageId`, method
 *   `TRF`, service level `SEPA`, charges `SLEV`, no batch booking) with the requested execution
 *   date, the debtor (name, IBAN, BIC or `NOTPROVIDED`) and one `CdtTrfTxInf` per payout:
 *   `InstrId` and `EndToEndId` = `endToEndId`, `InstdAmt Ccy="EUR"`, the creditor's BIC (when
 *   given), name and IBAN, and `RmtInf/Ustrd`.
 * - An empty day is the group header alone, with `NbOfTxs` 0 and `CtrlSum` 0.00: the schema asks
 *   for at least one payment block with at least one transfer, so that file says "nothing to
 *   pay" but is not one a bank would execute.
 * - Names and remittance text are transliterated to the SEPA character set (`Ærø Straße` →
 *   `AEro Strasse`, Cyrillic and Greek to Latin letters, `&` → `+`, anything else outside the set
 *   → `.`), white space collapsed, then cut to 70 (names) or 140 (remittance) characters.
 * - A BIC whose country (characters 5–6) is not the IBAN's is left out: SEPA routes by the IBAN
 *   alone, and the library refuses such a pair.
 *
 * Raises `RangeError` (not a `DomainError`: the caller passes stored, already-checked data, so a
 * failure here is a defect and answers 500) naming the field when: an id is empty, longer than 35,
 * uses characters outside the SEPA set, starts with `/` or contains `//`; an amount is not a
 * decimal with at most 2 decimals in 0.01–999999999.99; an IBAN or BIC is invalid; a name is
 * blank once transliterated; `createdAt` is not a valid date or `executionDate` not a real
 * `YYYY-MM-DD` day; two payouts share an end-to-end id.
 */
export function sepaCreditTransferFile(input: SepaFileInput): string {
  const messageId = sepaId(input.messageId, "messageId");
  const createdAt = utcFields(input.createdAt, "createdAt");
  const executionDate = calendarDay(input.executionDate, "executionDate");
  const debtor = party(input.debtor, "debtor");

  const seen = new Set<string>();
  const payouts = input.payouts.map((payout, index) => {
    const field = `payouts[${index}]`;
    const endToEndId = sepaId(payout.endToEndId, `${field}.endToEndId`);
    if (seen.has(endToEndId)) throw new RangeError(`${field}.endToEndId ${endToEndId} appears twice in the file`);
    seen.add(endToEndId);
    const remittance = sepaText(payout.remittance ?? "", SEPA_REMITTANCE_MAX);
    return {
      endToEndId,
      amount: euroAmount(payout.amount, `${field}.amount`),
      creditor: party(payout.creditor, `${field}.creditor`),
      remittance: remittance === "" ? endToEndId : remittance,
    };
  });
  const controlSum = payouts.reduce((sum, payout) => sum.plus(payout.amount), money(0));

  const document = new ExactSumDocument(controlSum);
  document.grpHdr.id = messageId;
  document.grpHdr.created = createdAt;
  document.grpHdr.initiatorName = debtor.name;

  if (payouts.length > 0) {
    const info = document.createPaymentInfo();
    info.requestedExecutionDate = executionDate;
    info.batchBooking = false;
    info.debtorName = debtor.name;
    info.debtorIBAN = debtor.iban;
    info.debtorBIC = debtor.bic;
    document.addPaymentInfo(info);
    // The library prefixes ids with their parent's when added; set after adding, they stay ≤ 35.
    info.id = messageId;
    for (const payout of payouts) {
      const transaction = info.createTransaction();
      transaction.end2endId = payout.endToEndId;
      transaction.amount = exactNumber(payout.amount);
      transaction.currency = "EUR";
      transaction.creditorName = payout.creditor.name;
      transaction.creditorIBAN = payout.creditor.iban;
      transaction.creditorBIC = payout.creditor.bic;
      transaction.remittanceInfo = payout.remittance;
      info.addTransaction(transaction);
      transaction.id = payout.endToEndId;
    }
    document.paymentInfo = info;
  }
  return document.toString();
}

/**
 * The library's document with exact control sums: it adds amounts as binary floats, so after its
 * own normalisation the sums are replaced by the decimal.js ones.
 */
class ExactSumDocument extends Document {
  paymentInfo: ReturnType<Document["createPaymentInfo"]> | null = null;

  constructor(private readonly exactControlSum: Money) {
    super(SEPA_PAIN_FORMAT);
  }

  override normalize(): void {
    super.normalize();
    const sum = exactNumber(this.exactControlSum);
    this.grpHdr.controlSum = sum;
    if (this.paymentInfo) this.paymentInfo.controlSum = sum;
  }
}

/**
 * `amount` (euros, 2 decimals) as the number the library prints with `toFixed(2)`: checked to
 * print back exactly (true up to 15 significant digits, i.e. below 10 000 000 000 000 euros).
 */
function exactNumber(amount: Money): number {
  const text = amount.toFixed(2);
  const value = Number(text);
  if (value.toFixed(2) !== text) throw new RangeError(`amount ${text} is too large for a SEPA file`);
  return value;
}

/** A Date whose local-time getters answer in UTC: the library writes dates with the local getters. */
class UtcFieldsDate extends Date {
  override getFullYear(): number {
    return this.getUTCFullYear();
  }
  override getMonth(): number {
    return this.getUTCMonth();
  }
  override getDate(): number {
    return this.getUTCDate();
  }
  override getHours(): number {
    return this.getUTCHours();
  }
  override getMinutes(): number {
    return this.getUTCMinutes();
  }
  override getSeconds(): number {
    return this.getUTCSeconds();
  }
}

function utcFields(value: Date, field: string): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new RangeError(`${field} is not a valid date`);
  return new UtcFieldsDate(value.getTime());
}

function calendarDay(value: string, field: string): Date {
  const parts = CALENDAR_DATE.exec(value);
  const day = parts ? new UtcFieldsDate(Date.UTC(Number(parts[1]), Number(parts[2]) - 1, Number(parts[3]))) : null;
  if (!day || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value) {
    throw new RangeError(`${field} must be a real day written YYYY-MM-DD`);
  }
  return day;
}

/** An identifier as SEPA takes it: 1–35 characters of the set, not starting with `/`, without `//`. */
function sepaId(value: string, field: string): string {
  if (value.length === 0 || value.length > SEPA_ID_MAX) throw new RangeError(`${field} must be 1–${SEPA_ID_MAX} characters`);
  if (value.match(OUTSIDE_SEPA_SET)) throw new RangeError(`${field} has characters outside the SEPA character set`);
  if (value.startsWith("/") || value.includes("//")) throw new RangeError(`${field} must not start with "/" nor contain "//"`);
  return value;
}

function euroAmount(value: string, field: string): Money {
  if (!EURO_AMOUNT.test(value)) throw new RangeError(`${field} must be euros with at most 2 decimals, at most 999999999.99`);
  const amount = money(value);
  if (amount.lt("0.01")) throw new RangeError(`${field} must be at least 0.01`);
  return amount;
}

/**
 * `value` in the SEPA character set (EPC basic Latin: letters, digits, space and `/ - ? : ( ) . , ' +`):
 * transliterated to Latin, `&` read as `+`, any other character outside the set replaced by `.`,
 * white space collapsed and trimmed, then cut to `maxLength` characters.
 */
function sepaText(value: string, maxLength: number): string {
  const latin = transliterate(value.normalize("NFC"), { unknown: "." });
  const text = latin.replace(/&/g, "+").replace(/\s+/g, " ").replace(OUTSIDE_SEPA_SET, ".").trim();
  return text.slice(0, maxLength).trimEnd();
}

function party(value: SepaParty, field: string): { name: string; iban: string; bic: string } {
  const name = sepaText(value.name, SEPA_NAME_MAX);
  if (name === "") throw new RangeError(`${field}.name is blank`);
  const iban = electronicFormatIBAN(value.iban) ?? "";
  if (!isValidIBAN(iban)) throw new RangeError(`${field}.iban is not a valid IBAN`);
  const bic = (value.bic ?? "").trim().toUpperCase();
  if (bic !== "" && !isValidBIC(bic)) throw new RangeError(`${field}.bic is not a valid BIC`);
  return { name, iban, bic: bic.slice(4, 6) === iban.slice(0, 2) ? bic : "" };
}
