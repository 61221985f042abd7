/**
 * Reading a withdrawal PIN out of an email (docs/decisions/withdrawals.md "The email poller": a message that names a
 * withdrawal id of this customer and carries a 4–8 digit PIN). Pure: takes the parsed subject and text.
 *
 * The rule, in order:
 * 1. the withdrawal id is the first UUID of the subject, else of the text;
 * 2. UUIDs are then removed, so their all-digit groups are never taken for a PIN;
 * 3. the PIN is the first 4–8 digit number that follows a label (`PIN`, `code`, `OTP`, `passcode`,
 *    `one-time password`, `verification code`) within 20 non-digit characters;
 * 4. without a label, the only 4–8 digit number of the message (not part of a date, time, amount
 *    or longer number) is the PIN; with several candidates and no label, there is none.
 */

/** What a message carries: the withdrawal it names and the PIN, when both are found. */
export interface ExtractedPin {
  /** Lowercase UUID. */
  withdrawalId: string;
  /** 4–8 digits. */
  pin: string;
}

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const LABELLED = /\b(?:pin|code|otp|passcode|one[- ]time (?:password|code)|verification code)\b\D{0,20}?(?<![\d.,:/-])(\d{4,8})(?![\d.,:/-]\d)\b/i;
const STANDALONE = /(?<![\d.,:/-])\b\d{4,8}\b(?![.,:/-]?\d)/g;

/** Text of an HTML body, for messages without a plain-text part: tags dropped, entities of digits kept as they are. */
export function htmlToText(html: string): string {
  return html.replace(/<(script|style)[\s\S]*?<\/\1>/gi, " ").replace(/<[^>]+>/g, " ").replace(/&nbsp;/g, " ");
}

/**
 * Finds the withdrawal id and PIN of a message (see the module docs for the rule).
 * @param subject the message's subject (may be empty)
 * @param text its plain text (or {@link htmlToText} of its HTML)
 * @returns both, or null when either is missing or the PIN is ambiguous.
 */
export function extractPin(subject: string, text: string): ExtractedPin | null {
  const bounded = `${subject.slice(0, 1000)}\n${text.slice(0, 20_000)}`;
  const ids = bounded.match(UUID);
  if (!ids || ids.length === 0) return null;
  const withdrawalId = (ids[0] as string).toLowerCase();
  const rest = bounded.replace(UUID, " ");
  const labelled = LABELLED.exec(rest);
  if (labelled) return { withdrawalId, pin: labelled[1] as string };
  const candidates = new Set(rest.match(STANDALONE) ?? []);
  if (candidates.size !== 1) return null;
  return { withdrawalId, pin: [...candidates][0] as string };
}
