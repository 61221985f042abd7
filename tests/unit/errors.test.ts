/**
 * `quote` (src/domain/errors.ts): how an error message repeats a caller's value (docs/decisions/requests-and-validation.md
 * "Validation answers", docs/decisions/names.md: error messages never echo more than a short prefix
 * of a value).
 */
import { describe, expect, it } from "vitest";
import { QUOTE_MAX, quote } from "../../src/domain/errors.js";

describe("quote", () => {
  it("JSON-quotes a short value whole", () => {
    expect(quote("acme-corp")).toBe('"acme-corp"');
    expect(quote("")).toBe('""');
    expect(quote("x".repeat(QUOTE_MAX))).toBe(`"${"x".repeat(QUOTE_MAX)}"`);
  });

  it("keeps the first 32 characters and marks the cut with … when the value is longer", () => {
    expect(QUOTE_MAX).toBe(32);
    expect(quote("x".repeat(QUOTE_MAX + 1))).toBe(`"${"x".repeat(QUOTE_MAX)}…"`);
    const huge = `tb1q${"q".repeat(160_000)}`;
    const quoted = quote(huge);
    expect(quoted).toBe(`"tb1q${"q".repeat(QUOTE_MAX - 4)}…"`);
    expect(quoted.length).toBe(QUOTE_MAX + 3);
  });

  it("counts characters, not UTF-16 units: an astral character is never split", () => {
    const quoted = quote("😀".repeat(40));
    expect(quoted).toBe(`"${"😀".repeat(QUOTE_MAX)}…"`);
    expect(JSON.parse(quoted)).toBe(`${"😀".repeat(QUOTE_MAX)}…`);
  });

  it("escapes quotes, backslashes, control, zero-width and bidirectional-control characters, so the result is a JSON string literal that displays as written", () => {
    expect(quote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(quote("line\nbreak\u0000")).toBe('"line\\nbreak\\u0000"');
    expect(quote("evil\u202egnp.exe")).toBe('"evil\\u202egnp.exe"');
    expect(quote("zero\u200bwidth\ufeff\u2066\u061c")).toBe('"zero\\u200bwidth\\ufeff\\u2066\\u061c"');
    for (const value of ['a"b\\c', "line\nbreak", "evil\u202egnp.exe", "zero\u200bwidth\ufeff"]) {
      expect(JSON.parse(quote(value))).toBe(value);
    }
  });
});
