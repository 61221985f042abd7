/**
 * Reading a JSON request body's text once, in one linear pass, before `JSON.parse` (docs/security.md,
 * "Money stays exact" and "Before authentication"):
 *
 * - nesting deeper than the limit is refused before the parser sees it (`JSON.parse` of a 1 MiB
 *   `[[[[…` costs ~0.1 s of CPU; this pass, a millisecond);
 * - the keys are counted, so that a key given twice in one object (`{"amount":1,"amount":2}`:
 *   `JSON.parse` keeps the last one silently, a proxy or a log reader may keep the first) shows as
 *   fewer keys after parsing than in the text ({@link duplicateKeyOf} then names it);
 * - the source text of the numbers at the paths an operation declares as numeric is kept, so an
 *   amount is read as the client wrote it: `JSON.parse` turns `0.99999999999999999999` into the
 *   double `1` and `2.00000000000000001` into `2`.
 *
 * Only the declared fields are looked at: a body of 250 000 numbers costs the same single pass as
 * one of 250 000 spaces. Nothing here builds a Decimal or an object per value.
 */
import { Decimal } from "decimal.js";
import { quote, type FieldProblem } from "../domain/errors.js";

/** Kind of a declared numeric field: JSON Schema `integer` (cents, days, ports) or `number` (decimal amounts, rates). */
export type NumericKind = "integer" | "number";

/**
 * The numeric fields of one operation's request body, by path (object keys joined with
 * {@link PATH_SEPARATOR}; fields inside arrays are not declared by either document).
 */
export type NumericFields = ReadonlyMap<string, NumericKind>;

/** Separator of the keys of a path in {@link NumericFields}: NUL, which no accepted key holds. */
export const PATH_SEPARATOR = "\u0000";

/** Deepest path {@link scanJson} tracks: no numeric field of either document lies deeper. */
const MAX_TRACKED_PATH = 3;

/** What one pass over a JSON text found. */
export interface JsonScan {
  /** Nesting deeper than the limit was found (the scan stopped there). */
  tooDeep: boolean;
  /** Keys of all objects, duplicates included. */
  keys: number;
  /** Source text of each declared numeric field present, by path. */
  numbers: Map<string, string>;
}

interface Frame {
  object: boolean;
  /** This container's own path (root: ""), or null when it lies in an array or deeper than tracked. */
  path: string | null;
  depth: number;
  /** Key of the value being read (objects). */
  key: string | null;
  expectKey: boolean;
}

/**
 * One pass over `text` (a JSON text; invalid text is scanned without error, `JSON.parse` refuses it
 * afterwards): nesting depth, the number of keys, and the source text of the `declared` numeric
 * fields. Linear in the length of `text`; strings are skipped without decoding unless they are keys
 * of an object shallow enough to hold a declared field.
 * @param maxDepth deepest nesting of arrays and objects accepted (the root container is depth 1).
 */
export function scanJson(text: string, declared: NumericFields, maxDepth: number): JsonScan {
  const numbers = new Map<string, string>();
  let keys = 0;
  const stack: Frame[] = [];
  const n = text.length;
  let i = 0;
  /** Path of the value about to be read, or null when not tracked. */
  const valuePath = (): string | null => {
    const top = stack[stack.length - 1];
    if (!top || !top.object || top.path === null || top.key === null || top.depth > MAX_TRACKED_PATH) return null;
    return top.path === "" ? top.key : `${top.path}${PATH_SEPARATOR}${top.key}`;
  };
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const j = closingQuote(text, i);
      const top = stack[stack.length - 1];
      if (top?.object && top.expectKey) {
        keys++;
        top.key = top.path === null || top.depth > MAX_TRACKED_PATH ? "" : decodeKey(text, i, j);
        top.expectKey = false;
      }
      i = j + 1;
    } else if (c === 0x7b || c === 0x5b) {
      const depth = stack.length + 1;
      if (depth > maxDepth) return { tooDeep: true, keys, numbers };
      const path = stack.length === 0 ? "" : c === 0x7b ? valuePath() : null;
      stack.push({ object: c === 0x7b, path, depth, key: null, expectKey: c === 0x7b });
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      i++;
    } else if (c === 0x2c) {
      const top = stack[stack.length - 1];
      if (top?.object) {
        top.expectKey = true;
        top.key = null;
      }
      i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      while (j < n) {
        const d = text.charCodeAt(j);
        if ((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) j++;
        else break;
      }
      const path = valuePath();
      if (path !== null && declared.has(path)) numbers.set(path, text.slice(i, j));
      i = j;
    } else {
      i++; // whitespace, ':', and the letters of true, false and null
    }
  }
  return { tooDeep: false, keys, numbers };
}

/** Index of the quote closing the string that opens at `start` (escaped characters skipped), or the text's length. */
function closingQuote(text: string, start: number): number {
  let j = start + 1;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === 0x5c) j += 2;
    else if (d === 0x22) return j;
    else j++;
  }
  return text.length;
}

/** The key whose quotes are at `start` and `end` of `text`, decoded when it holds escapes. */
function decodeKey(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end);
  if (!raw.includes("\\")) return raw;
  try {
    return JSON.parse(text.slice(start, end + 1)) as string;
  } catch {
    return raw;
  }
}

/**
 * The first key that `text` (valid JSON) gives twice in one object, decoded; null when none. One
 * pass with a set of keys per open object: run only once a {@link scanJson} count has shown that
 * parsing lost keys.
 */
export function duplicateKeyOf(text: string): string | null {
  const stack: { keys: Set<string> | null; expectKey: boolean }[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const j = closingQuote(text, i);
      const top = stack[stack.length - 1];
      if (top?.keys && top.expectKey) {
        const key = decodeKey(text, i, j);
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = j + 1;
    } else if (c === 0x7b || c === 0x5b) {
      stack.push({ keys: c === 0x7b ? new Set() : null, expectKey: c === 0x7b });
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      i++;
    } else {
      if (c === 0x2c) {
        const top = stack[stack.length - 1];
        if (top?.keys) top.expectKey = true;
      }
      i++;
    }
  }
  return null;
}

/** A JSON integer as written without fraction or exponent: `-12`, `0`, `1000`. */
const PLAIN_INTEGER = /^-?(?:0|[1-9][0-9]*)$/;

/** Source texts of declared numbers a double could not hold exactly, by holder object and key. */
const lossy = new WeakMap<object, Map<string, string>>();

/**
 * Applies a scan to the parsed `body`: every declared `integer` field must be written as a plain
 * integer (`1.0`, `0.99999999999999999999`, `1e2` are refused, never rounded), and every declared
 * `number` field whose double lost digits keeps its source text for {@link exactNumber}.
 * @returns one problem per integer field written with a fraction or an exponent, named by its
 *   dotted path (answered 422 on that field); empty when all are fine.
 */
export function applyExactNumbers(body: unknown, scan: JsonScan, declared: NumericFields): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [path, source] of scan.numbers) {
    const keys = path.split(PATH_SEPARATOR);
    const field = keys.join(".");
    if (declared.get(path) === "integer") {
      if (!PLAIN_INTEGER.test(source)) {
        problems.push({ field, message: `${field} must be a whole number written without a fraction or an exponent (got ${quote(source)}).` });
      }
      continue;
    }
    const key = keys.pop() as string;
    let holder: unknown = body;
    for (const k of keys) holder = holder !== null && typeof holder === "object" ? (holder as Record<string, unknown>)[k] : undefined;
    if (holder === null || typeof holder !== "object") continue;
    const value = (holder as Record<string, unknown>)[key];
    if (typeof value !== "number" || (Number.isFinite(value) && (source === String(value) || new Decimal(source).eq(String(value))))) continue;
    let texts = lossy.get(holder);
    if (!texts) lossy.set(holder, (texts = new Map()));
    texts.set(key, source);
  }
  return problems;
}

/**
 * The number `holder[key]` exactly as the client wrote it: its JSON source text when the parsed
 * double lost digits (a decimal string such as `"2.00000000000000001"`), else the parsed number.
 * Values that did not come from a JSON body, or fields the operation does not declare numeric,
 * are returned as they are.
 */
export function exactNumber(holder: object, key: string): number | string {
  const text = lossy.get(holder)?.get(key);
  return text ?? ((holder as Record<string, unknown>)[key] as number);
}
