/**
 * Names refuse zero-width and bidirectional-control characters (src/domain/text.ts; issue 8).
 */
import { describe, expect, it } from "vitest";
import { hasInvisibleCharacters, invisibleCharacterProblem, invisibleCharacterProblems } from "../../src/domain/text.js";

/** Every character the rule refuses, by code point. */
const REFUSED = [0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c];

describe("invisible characters in names", () => {
  it.each(REFUSED.map((cp) => [`U+${cp.toString(16).toUpperCase().padStart(4, "0")}`, String.fromCodePoint(cp)]))("refuses %s at the start, middle and end", (_name, ch) => {
    for (const value of [`${ch}Acme`, `Ac${ch}me`, `Acme${ch}`, ch]) expect(hasInvisibleCharacters(value)).toBe(true);
  });

  it("accepts ordinary names in any script, with accents, apostrophes, hyphens, digits and emoji", () => {
    for (const value of ["Acme Corp", "O’Brien-Smith", "José Ñúñez", "محمد", "李小龍", "Ῥόδος", "Wallet 2 💸", "👩‍💻"]) {
      // "👩‍💻" holds U+200D (ZWJ) inside an emoji sequence: refused too, as the rule says (names, not emoji art)
      expect(hasInvisibleCharacters(value), value).toBe(value.includes("\u200d"));
    }
    // characters next to the refused ranges stay allowed
    for (const cp of [0x200a, 0x2010, 0x2029, 0x202f, 0x205f, 0x206a, 0xfefe, 0x061b]) {
      expect(hasInvisibleCharacters(`a${String.fromCodePoint(cp)}b`), cp.toString(16)).toBe(false);
    }
  });

  it("names the field in the problem and returns null for a clean value", () => {
    expect(invisibleCharacterProblem("first_name", "Ada")).toBeNull();
    expect(invisibleCharacterProblem("business.entity_name", "Acme\u202eCorp")).toEqual({
      field: "business.entity_name",
      message: expect.stringMatching(/^business\.entity_name must not contain zero-width or bidirectional-control characters\.$/),
    });
  });

  it("collects one problem per offending field, skipping absent ones", () => {
    expect(invisibleCharacterProblems({ first_name: "A\u200bda", last_name: "Lovelace", entity_name: undefined, name: "\u2066x" })).toEqual([
      { field: "first_name", message: expect.any(String) },
      { field: "name", message: expect.any(String) },
    ]);
    expect(invisibleCharacterProblems({})).toEqual([]);
  });
});
