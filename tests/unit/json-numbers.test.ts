/**
 * The one-pass reading of a JSON body's text (src/http/json-numbers.ts; docs/security.md "Before
 * authentication" and "Money stays exact"): depth, key count, the source text of declared numeric
 * fields, duplicate keys, integers written with a fraction.
 */
import { describe, expect, it } from "vitest";
import { PATH_SEPARATOR, applyExactNumbers, duplicateKeyOf, exactNumber, scanJson, type NumericFields } from "../../src/http/json-numbers.js";

const fields = (entries: [string[], "integer" | "number"][]): NumericFields => new Map(entries.map(([path, kind]) => [path.join(PATH_SEPARATOR), kind]));

describe("scanJson", () => {
  it("keeps the source text of declared fields only, at their paths, not inside arrays", () => {
    const declared = fields([[["amount"], "integer"], [["imap", "port"], "integer"], [["rate"], "number"]]);
    const text = `{"amount": 1.0, "other": 2.5, "imap": {"port": 993.0, "amount": 7}, "list": [{"amount": 3}], "rate": 0.1000000000000000001}`;
    const scan = scanJson(text, declared, 32);
    expect(scan.tooDeep).toBe(false);
    expect(Object.fromEntries(scan.numbers)).toEqual({ amount: "1.0", [`imap${PATH_SEPARATOR}port`]: "993.0", rate: "0.1000000000000000001" });
    expect(scan.keys).toBe(8);
  });

  it("stops at the first container deeper than the limit, strings not counted", () => {
    expect(scanJson(`${"[".repeat(33)}${"]".repeat(33)}`, new Map(), 32).tooDeep).toBe(true);
    expect(scanJson(`${"[".repeat(32)}${"]".repeat(32)}`, new Map(), 32).tooDeep).toBe(false);
    expect(scanJson(`{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}`, new Map(), 2).tooDeep).toBe(false);
  });

  it("reads escaped keys as their text and skips escaped quotes inside strings", () => {
    const scan = scanJson(`{"a\\"b":"x\\"y","\\u0061mount":5}`, fields([[["amount"], "integer"]]), 32);
    expect(scan.numbers.get("amount")).toBe("5");
    expect(scan.keys).toBe(2);
  });
});

describe("duplicateKeyOf", () => {
  it("names a key given twice in one object, escaped spellings included", () => {
    expect(duplicateKeyOf(`{"amount":1,"amount":2}`)).toBe("amount");
    expect(duplicateKeyOf(`{"amount":1,"\\u0061mount":2}`)).toBe("amount");
    expect(duplicateKeyOf(`{"a":{"x":1,"y":{"x":2}},"b":[{"x":1},{"x":2}]}`)).toBeNull();
    expect(duplicateKeyOf(`{"a":{"x":1,"x":2}}`)).toBe("x");
  });
});

describe("applyExactNumbers and exactNumber", () => {
  it("refuses integers written with a fraction or an exponent, naming the dotted path", () => {
    const declared = fields([[["amount"], "integer"], [["imap", "port"], "integer"]]);
    for (const [written, refused] of [["1", false], ["-12", false], ["0", false], ["1.0", true], ["1e2", true], ["0.99999999999999999999", true], ["-0.0", true]] as const) {
      const text = `{"amount":${written},"imap":{"port":993}}`;
      const problems = applyExactNumbers(JSON.parse(text), scanJson(text, declared, 32), declared);
      expect(problems.map((p) => p.field), written).toEqual(refused ? ["amount"] : []);
    }
    const nested = `{"imap":{"port":993.5}}`;
    expect(applyExactNumbers(JSON.parse(nested), scanJson(nested, declared, 32), declared)).toEqual([{ field: "imap.port", message: expect.stringContaining("whole number") }]);
  });

  it("keeps the text of a decimal a double cannot hold, and only then", () => {
    const declared = fields([[["amount"], "number"]]);
    const text = `{"amount":2.00000000000000001}`;
    const body = JSON.parse(text) as { amount: number };
    applyExactNumbers(body, scanJson(text, declared, 32), declared);
    expect(exactNumber(body, "amount")).toBe("2.00000000000000001");
    const plain = JSON.parse(`{"amount":0.5}`) as object;
    applyExactNumbers(plain, scanJson(`{"amount":0.5}`, declared, 32), declared);
    expect(exactNumber(plain, "amount")).toBe(0.5);
  });
});
