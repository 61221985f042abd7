/**
 * The pure rules of cards on credit wallets (docs/decisions/cards.md): card numbers (16 digits,
 * sandbox BIN `400000`, Luhn check digit), security codes, expiry on the tenant clock, the states,
 * the spend controls' validation, and a card's own decision on an authorization ({@link cardDecline}). Randomness comes from node:crypto (`randomInt`); the
 * functions take their random source as a parameter so tests can pin it.
 */
import { randomInt } from "node:crypto";
import type { CardDeclineReason } from "./credit/authorizations.js";
import type { FieldProblem } from "./errors.js";

/** The sandbox issuer identification number every card number starts with. */
export const SANDBOX_BIN = "400000";

/** Default of `CARDS_PER_WALLET`: open cards (`ACTIVE` or `PAUSED`) a credit wallet may have. */
export const DEFAULT_CARDS_PER_WALLET = 10;

/** Years from the issue to the expiry month. */
export const CARD_VALIDITY_YEARS = 3;

/** Largest amount of a spend control, in cents (10¹², as the authorization amounts). */
export const MAX_CONTROL_CENTS = 1_000_000_000_000;

/** A card's state: `ACTIVE` and `PAUSED` are open, `CLOSED` is final. */
export type CardState = "ACTIVE" | "PAUSED" | "CLOSED";

/** The states that count as open cards toward `CARDS_PER_WALLET`. */
export const OPEN_CARD_STATES: readonly CardState[] = ["ACTIVE", "PAUSED"];

/**
 * A card's spend controls (spec `CardSpendControls`): amounts in integer cents; MCCs four-digit
 * strings; countries ISO 3166-1 alpha-2, upper case. Applied by {@link cardDecline}.
 */
export interface SpendControls {
  perTransaction?: number;
  daily?: number;
  monthly?: number;
  allowedMcc?: string[];
  blockedMcc?: string[];
  allowedCountries?: string[];
}

/** The spend control an authorization exceeded (spec `CardDeclineDetail`): cents; `used` 0 and `remaining` = `limit` for `perTransaction`. */
export interface CardDeclineDetail {
  control: "perTransaction" | "daily" | "monthly";
  limit: number;
  used: number;
  remaining: number;
}

/** A source of random integers in [0, max): node:crypto `randomInt` by default. */
export type RandomInt = (max: number) => number;

const cryptoRandom: RandomInt = (max) => randomInt(max);

/** The Luhn check digit (0–9) of `digits` (a string of decimal digits without its check digit). */
export function luhnCheckDigit(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/** Whether `number` (decimal digits, check digit last) passes the Luhn check. */
export function isLuhnValid(number: string): boolean {
  if (!/^[0-9]{2,}$/.test(number)) return false;
  return luhnCheckDigit(number.slice(0, -1)) === Number(number.slice(-1));
}

/** A new card number: `400000`, nine random digits, the Luhn check digit (16 digits). */
export function newPan(random: RandomInt = cryptoRandom): string {
  let body = SANDBOX_BIN;
  while (body.length < 15) body += String(random(10));
  return body + String(luhnCheckDigit(body));
}

/** A new security code: three random digits. */
export function newCvv(random: RandomInt = cryptoRandom): string {
  return String(random(1000)).padStart(3, "0");
}

/**
 * The expiry of a card issued at `issuedAt` (the tenant clock's instant): the same UTC month,
 * {@link CARD_VALIDITY_YEARS} years later. The card is valid through the last day of that month.
 * @returns `expMonth` 1–12 and `expYear`.
 */
export function expiryOf(issuedAt: Date): { expMonth: number; expYear: number } {
  return { expMonth: issuedAt.getUTCMonth() + 1, expYear: issuedAt.getUTCFullYear() + CARD_VALIDITY_YEARS };
}

/** ISO 3166-1 alpha-2 codes assigned today (249 officially assigned codes). */
const ASSIGNED_COUNTRIES = new Set(
  (
    "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
    "CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
    "GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
    "KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT " +
    "MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
    "SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG " +
    "UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW"
  ).split(" "),
);

/** Whether `code` is an assigned ISO 3166-1 alpha-2 code, upper case. */
export function isAssignedCountry(code: string): boolean {
  return ASSIGNED_COUNTRIES.has(code);
}

/** Problems of one amount control (`field`): a positive integer of cents up to 10¹². */
function amountProblem(value: unknown, field: string): FieldProblem[] {
  if (value === undefined) return [];
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_CONTROL_CENTS) {
    return [{ field, message: `Must be a whole number of cents from 1 to ${MAX_CONTROL_CENTS}.` }];
  }
  return [];
}

/** Problems of one list control (`field`): a non-empty list of at most `max` strings, each passing `ok`. */
function listProblem(value: unknown, field: string, max: number, ok: (item: string) => boolean, what: string): FieldProblem[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length < 1 || value.length > max) return [{ field, message: `Must be a list of 1 to ${max} ${what}.` }];
  const bad = value.find((item) => typeof item !== "string" || !ok(item));
  return bad === undefined ? [] : [{ field, message: `${JSON.stringify(bad)} is not valid: the items must be ${what}.` }];
}

/**
 * The problems of a spend controls object, each on its field (`<prefix>.perTransaction`, …):
 * amounts whole cents 1–10¹²; `allowedMcc` / `blockedMcc` 1–500 four-digit strings, not both;
 * `allowedCountries` 1–249 assigned upper-case ISO 3166-1 alpha-2 codes; no other key.
 * @returns an empty list when they are valid (422 `VALIDATION_ERROR` otherwise, one item per problem).
 */
export function spendControlProblems(controls: SpendControls, prefix = "spendControls"): FieldProblem[] {
  const mcc = (item: string): boolean => /^[0-9]{4}$/.test(item);
  const problems: FieldProblem[] = [
    ...amountProblem(controls.perTransaction, `${prefix}.perTransaction`),
    ...amountProblem(controls.daily, `${prefix}.daily`),
    ...amountProblem(controls.monthly, `${prefix}.monthly`),
    ...listProblem(controls.allowedMcc, `${prefix}.allowedMcc`, 500, mcc, "four-digit merchant category codes"),
    ...listProblem(controls.blockedMcc, `${prefix}.blockedMcc`, 500, mcc, "four-digit merchant category codes"),
    ...listProblem(controls.allowedCountries, `${prefix}.allowedCountries`, 249, isAssignedCountry, "assigned upper-case ISO 3166-1 alpha-2 country codes"),
  ];
  if (controls.allowedMcc !== undefined && controls.blockedMcc !== undefined) {
    problems.push({ field: `${prefix}.blockedMcc`, message: "Give allowedMcc or blockedMcc, not both." });
  }
  const known = new Set(["perTransaction", "daily", "monthly", "allowedMcc", "blockedMcc", "allowedCountries"]);
  for (const key of Object.keys(controls)) if (!known.has(key)) problems.push({ field: `${prefix}.${key}`, message: "Unknown spend control." });
  return problems;
}

/** The controls in a fixed key order, without absent keys (as stored and shown). */
export function normalizedControls(controls: SpendControls): SpendControls {
  const out: SpendControls = {};
  if (controls.perTransaction !== undefined) out.perTransaction = controls.perTransaction;
  if (controls.daily !== undefined) out.daily = controls.daily;
  if (controls.monthly !== undefined) out.monthly = controls.monthly;
  if (controls.allowedMcc !== undefined) out.allowedMcc = [...controls.allowedMcc];
  if (controls.blockedMcc !== undefined) out.blockedMcc = [...controls.blockedMcc];
  if (controls.allowedCountries !== undefined) out.allowedCountries = [...controls.allowedCountries];
  return out;
}

/** What a card's decision reads of the card: its state, expiry and controls (cents). */
export interface CardForDecision {
  state: CardState;
  expMonth: number;
  expYear: number;
  spendControls: SpendControls | null;
}

/** The merchant of an authorization as the processor sent it: MCC and country may be absent. */
export interface DecisionMerchant {
  mcc?: string | null;
  country?: string | null;
}

/**
 * What the card's authorizations already count, in cents, in the windows of the authorization's
 * instant ({@link spendWindows}): approved amounts less what was voided, expired or released.
 */
export interface CardSpend {
  daily: number;
  monthly: number;
}

/** A card's decline: the reason, and for `SPEND_LIMIT_EXCEEDED` the control and what it leaves. */
export interface CardDecline {
  reason: CardDeclineReason;
  detail: CardDeclineDetail | null;
}

/**
 * The spend windows of an authorization at `at` (the tenant clock's instant, read as UTC): the
 * start of its UTC day and of its UTC calendar month. An authorization counts in the windows that
 * contain its creation instant (docs/decisions/cards.md "Spend controls").
 */
export function spendWindows(at: Date): { dayStart: Date; monthStart: Date } {
  return {
    dayStart: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate())),
    monthStart: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)),
  };
}

/** Whether a card expiring `expMonth`/`expYear` has expired at `at`: valid through the last day of that UTC month. */
export function cardExpired(card: Pick<CardForDecision, "expMonth" | "expYear">, at: Date): boolean {
  return at.getTime() >= Date.UTC(card.expYear, card.expMonth, 1);
}

/** Whether the card's spend controls count windows (a daily or monthly control): only then is the spend read. */
export function countsSpend(controls: SpendControls | null): boolean {
  return controls !== null && (controls.daily !== undefined || controls.monthly !== undefined);
}

/** The first amount control `amount` cents exceed, in the order perTransaction, daily, monthly; null when none. */
function exceeded(controls: SpendControls, amount: number, spend: CardSpend): CardDeclineDetail | null {
  if (controls.perTransaction !== undefined && amount > controls.perTransaction) {
    return { control: "perTransaction", limit: controls.perTransaction, used: 0, remaining: controls.perTransaction };
  }
  for (const control of ["daily", "monthly"] as const) {
    const limit = controls[control];
    if (limit !== undefined && spend[control] + amount > limit) return { control, limit, used: spend[control], remaining: Math.max(0, limit - spend[control]) };
  }
  return null;
}

/**
 * The card's own decision on an authorization of `amount` cents at `at` (the tenant clock's
 * instant), before the wallet's checks (docs/decisions/cards.md "Decline order"): the first reason
 * that applies, in this order, or null when the card lets it through to the wallet:
 * `CARD_CLOSED`, `CARD_PAUSED`, `CARD_EXPIRED` (past the last day of the expiry month, UTC),
 * `MCC_BLOCKED` (in `blockedMcc`, not in `allowedMcc`, or no MCC while a list is set),
 * `COUNTRY_BLOCKED` (not in `allowedCountries`, or no country while it is set),
 * `SPEND_LIMIT_EXCEEDED` (the first of `perTransaction`, `daily`, `monthly` the amount exceeds,
 * with `detail`). `spend` is what the card's authorizations already count in the windows of `at`.
 */
export function cardDecline(card: CardForDecision, at: Date, amount: number, merchant: DecisionMerchant, spend: CardSpend): CardDecline | null {
  const decline = (reason: CardDeclineReason, detail: CardDeclineDetail | null = null): CardDecline => ({ reason, detail });
  if (card.state === "CLOSED") return decline("CARD_CLOSED");
  if (card.state === "PAUSED") return decline("CARD_PAUSED");
  if (cardExpired(card, at)) return decline("CARD_EXPIRED");
  const controls = card.spendControls;
  if (controls === null) return null;
  const mcc = merchant.mcc ?? null;
  if (controls.allowedMcc !== undefined && (mcc === null || !controls.allowedMcc.includes(mcc))) return decline("MCC_BLOCKED");
  if (controls.blockedMcc !== undefined && (mcc === null || controls.blockedMcc.includes(mcc))) return decline("MCC_BLOCKED");
  const country = merchant.country ?? null;
  if (controls.allowedCountries !== undefined && (country === null || !controls.allowedCountries.includes(country))) return decline("COUNTRY_BLOCKED");
  const over = exceeded(controls, amount, spend);
  return over === null ? null : decline("SPEND_LIMIT_EXCEEDED", over);
}
