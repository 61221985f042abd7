/** Reading a withdrawal PIN out of an email (src/domain/pins.ts; docs/decisions/withdrawals.md "The email poller"). */
import { describe, expect, it } from "vitest";
import { extractPin, htmlToText } from "../../src/domain/pins.js";

const ID = "0b9d6c1e-2f3a-4b5c-8d7e-6f5a4b3c2d1e";

describe("extractPin", () => {
  it.each([
    ["labelled PIN in the text, id in the subject", `Withdrawal ${ID}`, "Your PIN is 482913.", "482913"],
    ["4 digits", `Withdrawal ${ID}`, "PIN: 4829", "4829"],
    ["8 digits", "Confirm", `Withdrawal ${ID}\nVerification code: 48291377`, "48291377"],
    ["label 'code' with punctuation", "", `Withdrawal ${ID.toUpperCase()} — code = 0042`, "0042"],
    ["OTP", `PIN for ${ID}`, "OTP 731904 (valid 10 minutes)", "731904"],
    ["the only number, without a label", `${ID}`, "Use 5521 to confirm.", "5521"],
    ["a label wins over other numbers", `${ID}`, "On 2026-11-22 at 10:15, amount 0.0100, your code is 918273.", "918273"],
  ])("%s", (_what, subject, text, pin) => {
    expect(extractPin(subject, text)).toEqual({ withdrawalId: ID, pin });
  });

  it("never takes an all-digit UUID group for a PIN", () => {
    const digits = "12345678-1234-4234-8234-123456789012";
    expect(extractPin("", `Withdrawal ${digits} code 774411`)).toEqual({ withdrawalId: digits, pin: "774411" });
    expect(extractPin("", `Withdrawal ${digits}`)).toBeNull();
  });

  it.each([
    ["no withdrawal id", "Your withdrawal", "PIN 482913"],
    ["no PIN", `Withdrawal ${ID}`, "Please confirm in the app."],
    ["a 3-digit number", `Withdrawal ${ID}`, "PIN 482"],
    ["a 9-digit number", `Withdrawal ${ID}`, "PIN 482913771"],
    ["several unlabelled numbers", `Withdrawal ${ID}`, "1234 or 5678"],
    ["only a date and a time", `Withdrawal ${ID}`, "Sent 2026-11-22 10:15"],
    ["only an amount", `Withdrawal ${ID}`, "Amount 1500.25 USDT"],
  ])("none with %s", (_what, subject, text) => {
    expect(extractPin(subject, text)).toBeNull();
  });

  it("takes the first UUID as the withdrawal id, lowercased", () => {
    const other = "11111111-2222-4333-8444-555555555555";
    expect(extractPin(`Withdrawal ${ID.toUpperCase()}`, `ref ${other}, PIN 1234`)).toEqual({ withdrawalId: ID, pin: "1234" });
  });

  it("reads HTML-only messages through htmlToText", () => {
    const text = htmlToText(`<html><style>p{}</style><body><p>Withdrawal <b>${ID}</b></p><p>PIN:&nbsp;<strong>6677</strong></p></body></html>`);
    expect(extractPin("", text)).toEqual({ withdrawalId: ID, pin: "6677" });
  });

  it("bounds the work on huge messages", () => {
    const started = performance.now();
    expect(extractPin(ID, "9".repeat(2_000_000))).toBeNull();
    expect(performance.now() - started).toBeLessThan(500);
  });
});
