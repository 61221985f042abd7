/**
 * Rules of displayed text shared by every slice (issue 8): names shown to people (customer first
 * and last names and business name, user first and last names, wallet names) must not carry
 * invisible characters that change how the text reads. Pure; no I/O.
 */
import type { FieldProblem } from "./errors.js";

/**
 * Zero-width characters (U+200B ZERO WIDTH SPACE, U+200C ZWNJ, U+200D ZWJ, U+2060 WORD JOINER,
 * U+FEFF ZERO WIDTH NO-BREAK SPACE / BOM) and bidirectional controls (U+202A–U+202E embeddings and
 * overrides, U+2066–U+2069 isolates, U+200E/U+200F marks, U+061C ARABIC LETTER MARK): they make
 * two different names look alike, or one name read backwards ("Trojan Source").
 */
export const INVISIBLE_CHARACTERS = /[\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\u061c]/u;

/** Whether `value` holds a zero-width or bidirectional-control character ({@link INVISIBLE_CHARACTERS}). */
export function hasInvisibleCharacters(value: string): boolean {
  return INVISIBLE_CHARACTERS.test(value);
}

/**
 * The problem of a name that holds a zero-width or bidirectional-control character, naming `field`
 * (answered 422 with the field); null when the name has none. The value is refused, never cleaned.
 */
export function invisibleCharacterProblem(field: string, value: string): FieldProblem | null {
  if (!hasInvisibleCharacters(value)) return null;
  return { field, message: `${field} must not contain zero-width or bidirectional-control characters.` };
}

/**
 * The problems of the names in `values` (field → value; undefined values are skipped), one per
 * field that holds a zero-width or bidirectional-control character.
 */
export function invisibleCharacterProblems(values: Record<string, string | undefined>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [field, value] of Object.entries(values)) {
    const problem = value === undefined ? null : invisibleCharacterProblem(field, value);
    if (problem) problems.push(problem);
  }
  return problems;
}
