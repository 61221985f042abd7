/**
 * Rules of displayed text shared by every slice (docs/security.md "Names people compare"): names
 * shown to people (customer first and last names and business name, user first and last names,
 * wallet names) must not carry invisible characters that change how the text reads, nor words that
 * mix Latin, Cyrillic and Greek letters; names that must be unique are compared by their
 * {@link nameKey}. Pure; no I/O.
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

const LATIN = /\p{Script=Latin}/u;
const CYRILLIC = /\p{Script=Cyrillic}/u;
const GREEK = /\p{Script=Greek}/u;
const SPACE = /\s/u;

/**
 * Whether a word of `value` (a run between white space) holds letters of more than one of the
 * Latin, Cyrillic and Greek scripts, as "Mаin" with a Cyrillic а does: the scripts whose letters
 * look alike. The value is read in NFKC form, so compatibility forms count as the letters they
 * stand for (fullwidth Ｍ, mathematical 𝐌 and the micro sign µ are Latin, Latin and Greek).
 * Characters of no script (digits, punctuation, emoji, combining marks) are ignored, and so are
 * other scripts, whose words legitimately mix (Japanese Han with kana, Latin brand names in CJK
 * text). One pass over the code points: linear in the length of `value`.
 */
export function hasMixedScriptWord(value: string): boolean {
  let scripts = 0; // bit set of the scripts seen in the current word: 1 Latin, 2 Cyrillic, 4 Greek
  for (const ch of value.normalize("NFKC")) {
    if (SPACE.test(ch)) {
      scripts = 0;
      continue;
    }
    scripts |= LATIN.test(ch) ? 1 : CYRILLIC.test(ch) ? 2 : GREEK.test(ch) ? 4 : 0;
    if ((scripts & (scripts - 1)) !== 0) return true; // two bits set
  }
  return false;
}

/**
 * The problem of a name with a word mixing Latin, Cyrillic or Greek letters ({@link
 * hasMixedScriptWord}), naming `field` (answered 422 with the field); null otherwise. The value is
 * refused, never cleaned.
 */
export function mixedScriptProblem(field: string, value: string): FieldProblem | null {
  if (!hasMixedScriptWord(value)) return null;
  return { field, message: `${field} must not mix Latin, Cyrillic or Greek letters within one word.` };
}

/**
 * The problem of a name people read (docs/security.md "Names people compare"): a zero-width or
 * bidirectional-control character ({@link invisibleCharacterProblem}), else a word mixing Latin,
 * Cyrillic or Greek letters ({@link mixedScriptProblem}); null for a safe name. Answered 422
 * `UNPROCESSABLE_ENTITY` naming `field`.
 */
export function unsafeNameProblem(field: string, value: string): FieldProblem | null {
  return invisibleCharacterProblem(field, value) ?? mixedScriptProblem(field, value);
}

/**
 * The problems of the names in `values` (field → value; undefined values are skipped), one per
 * unsafe field ({@link unsafeNameProblem}).
 */
export function unsafeNameProblems(values: Record<string, string | undefined>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [field, value] of Object.entries(values)) {
    const problem = value === undefined ? null : unsafeNameProblem(field, value);
    if (problem) problems.push(problem);
  }
  return problems;
}

/**
 * The key under which a name that must be unique is compared (wallet names per user;
 * docs/security.md "Names people compare"): `value` trimmed, in NFKC form, case-folded, in NFKC
 * form again. "Main", "MAIN", " main " and fullwidth "Ｍａｉｎ" all give "main".
 *
 * Case folding: JavaScript has no full case folding, so it is approximated by lower-, upper- then
 * lower-casing (the locale-independent full mappings). Unlike `toLowerCase()` alone this folds
 * "ß", "ẞ" and "SS" to "ss", final and medial sigma together, and "ᾳ" to "αι", as full case
 * folding does; it also folds the dotless ı with i (full folding keeps them apart), which errs on
 * the side of calling two names the same. The result follows the Unicode version of the running
 * Node.js.
 */
export function nameKey(value: string): string {
  return value.trim().normalize("NFKC").toLowerCase().toUpperCase().toLowerCase().normalize("NFKC");
}
