/**
 * Exact JSON numbers (issue 8). `JSON.parse` turns `2.00000000000000001` into the double `2`, so
 * an amount with more decimals than its currency allows would pass once the extra digits lie
 * beyond a double's precision. The body parser's reviver reads each number's source text (Node 24:
 * the reviver's `context.source`) and keeps it when the double lost digits; amounts are then read
 * with {@link exactNumber} instead of the parsed value.
 */
import { Decimal } from "decimal.js";

/** Source texts of the numbers a double could not hold exactly, by holder object and key. */
const lossy = new WeakMap<object, Map<string, string>>();

/**
 * Reviver for `JSON.parse` (express.json's `reviver`): records the source text of every number
 * whose decimal value differs from the double it became. Returns every value unchanged.
 */
export function keepExactNumbers(this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== "number" || context?.source === undefined || typeof this !== "object" || this === null) return value;
  const source = context.source;
  if (Number.isFinite(value) && (source === String(value) || new Decimal(source).eq(String(value)))) return value;
  let texts = lossy.get(this);
  if (!texts) lossy.set(this, (texts = new Map()));
  texts.set(key, source);
  return value;
}

/**
 * The number `holder[key]` exactly as the client wrote it: its JSON source text when the parsed
 * double lost digits (a decimal string such as `"2.00000000000000001"`), else the parsed number.
 * Values that did not come from a JSON body are returned as they are.
 */
export function exactNumber(holder: object, key: string): number | string {
  const text = lossy.get(holder)?.get(key);
  return text ?? ((holder as Record<string, unknown>)[key] as number);
}
