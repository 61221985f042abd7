/**
 * Names refuse zero-width and bidirectional-control characters and words mixing Latin, Cyrillic
 * or Greek letters; unique names compare by their NFKC, case-folded key (src/domain/text.ts;
 * docs/security.md "Names people compare").
 */
import { describe, expect, it } from "vitest";
import { hasInvisibleCharacters, hasMixedScriptWord, invisibleCharacterProblem, mixedScriptProblem, nameKey, unsafeNameProblem, unsafeNameProblems } from "../../src/domain/text.js";

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
    expect(unsafeNameProblems({ first_name: "A\u200bda", last_name: "Lovelace", entity_name: undefined, name: "\u2066x", city: "M\u0430in" })).toEqual([
      { field: "first_name", message: expect.stringMatching(/zero-width/) },
      { field: "name", message: expect.stringMatching(/zero-width/) },
      { field: "city", message: expect.stringMatching(/mix Latin, Cyrillic or Greek/) },
    ]);
    expect(unsafeNameProblems({})).toEqual([]);
  });
});

describe("words mixing Latin, Cyrillic and Greek letters", () => {
  it.each([
    ["Latin with a Cyrillic а", "M\u0430in"],
    ["Latin with a Greek ο", "Dοe"],
    ["Cyrillic with a Latin a", "Ив\u0061н"],
    ["Cyrillic with Greek", "Пα"],
    ["in the second word only", "My \u0441ash"],
    ["across a hyphen or an apostrophe inside the word", "Jean-Пьер"],
    ["with digits between", "a1\u04302"],
    ["a fullwidth Latin letter with Cyrillic", "\uff2d\u0430in"],
    ["a mathematical bold M with Cyrillic", "\u{1d40c}\u0430in"],
    ["the micro sign (Greek once normalised) with Latin", "\u00b5g"],
  ])("refuses %s", (_label, value) => {
    expect(hasMixedScriptWord(value)).toBe(true);
    expect(mixedScriptProblem("name", value)).toEqual({ field: "name", message: "name must not mix Latin, Cyrillic or Greek letters within one word." });
  });

  it.each([
    ["Latin", "O'Brien-Smith"],
    ["Latin with accents and combining marks", "Jose\u0301 Ñúñez"],
    ["Cyrillic", "Петров-Водкин"],
    ["Greek with polytonic accents", "Ἀλέξανδρος Παπαδόπουλος"],
    ["words of different scripts side by side", "Anna Мария Σοφία"],
    ["words split by other white space", "Main\u00a0кошелёк\tΚύριο"],
    ["digits and punctuation with one script", "BTC-2024 (cold) №1 Кошелёк-2"],
    ["scripts that mix within words legitimately", "東京タワー iPhone用"],
    ["emoji", "Wallet 💸"],
    ["nothing", ""],
  ])("accepts %s", (_label, value) => {
    expect(hasMixedScriptWord(value)).toBe(false);
    expect(unsafeNameProblem("name", value)).toBeNull();
  });

  it("reports the invisible character first when a name has both", () => {
    expect(unsafeNameProblem("name", "M\u0430\u200bin")?.message).toMatch(/zero-width/);
  });

  it("stays linear: a 100 000-character word is read in one pass", () => {
    expect(hasMixedScriptWord("a".repeat(100_000))).toBe(false);
    expect(hasMixedScriptWord(`${"a".repeat(100_000)}\u0430`)).toBe(true);
  });
});

describe("the comparison key of unique names", () => {
  it.each([
    ["Main", ["main", "MAIN", " mAiN ", "\uff2d\uff41\uff49\uff4e", "\uff4d\uff41\uff49\uff4e"]],
    ["Straße", ["STRASSE", "strasse", "STRAẞE"]],
    ["Σίσυφος", ["ΣΊΣΥΦΟΣ", "σίσυφοσ"]],
    ["ﬁle", ["FILE", "file"]],
    ["ᾳ", ["ᾼ", "αι", "ΑΙ"]],
    ["José", ["JOSE\u0301", "jos\u00e9"]],
    ["㍿", ["株式会社"]],
  ])("gives %s the key of its look-alikes", (name, others) => {
    for (const other of others) expect(nameKey(other), other).toBe(nameKey(name));
  });

  it("keeps different names apart, Cyrillic look-alikes included (those are refused by the mixed-script rule instead)", () => {
    expect(nameKey("Main")).not.toBe(nameKey("Savings"));
    expect(nameKey("Main")).not.toBe(nameKey("M\u0430in"));
    expect(nameKey("Main 1")).not.toBe(nameKey("Main 2"));
  });

  it("is its own fixed point: the key of a key is the key", () => {
    for (const name of ["Main", "STRAẞE", "ΣΊΣΥΦΟΣ", "İstanbul", "ǅemal", "ŉ", "Ꭰ", "ᾼ"]) expect(nameKey(nameKey(name)), name).toBe(nameKey(name));
  });
});
