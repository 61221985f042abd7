/**
 * Pure rules of end users (src/domain/users.ts), table-driven, no database (reference: "User",
 * "`individual` object", "States and transitions › User", the User group of the error codes).
 */
import { describe, expect, it } from "vitest";
import {
  INITIAL_USER_STATE,
  MINIMUM_AGE_YEARS,
  activate,
  ageInYears,
  assertAdult,
  assertDeletable,
  assertUserEnums,
  deactivate,
  parseMobileNumber,
  sanitisationProblem,
  type LifecycleState,
  type TextKind,
} from "../../src/domain/users.js";
import { SandboxProvider } from "../../src/providers/sandbox.js";
import { expectDomainError } from "../support/assertions.js";


const utc = (iso: string): Date => new Date(iso);

describe("ageInYears", () => {
  it.each([
    // [dob, today (instant), whole years]
    ["2007-06-15", "2025-06-15T00:00:00Z", 18], // birthday today, first instant of the day
    ["2007-06-15", "2025-06-15T23:59:59Z", 18], // birthday today, last instant of the day
    ["2007-06-16", "2025-06-15T12:00:00Z", 17], // 17 years 364 days: birthday tomorrow
    ["2007-06-14", "2025-06-15T12:00:00Z", 18], // birthday was yesterday
    ["2007-07-01", "2025-06-30T12:00:00Z", 17], // earlier month than the birth month
    ["2007-05-31", "2025-06-01T12:00:00Z", 18], // later month than the birth month
    ["1990-05-17", "2025-06-15T12:00:00Z", 35],
    ["2000-02-29", "2018-02-28T12:00:00Z", 17], // 29 February births: not yet 18 on 28 February of a common year
    ["2000-02-29", "2018-03-01T00:00:00Z", 18], // … 18 on 1 March
    ["2000-02-29", "2020-02-28T12:00:00Z", 19], // leap year: the day before the birthday
    ["2000-02-29", "2020-02-29T12:00:00Z", 20], // leap year: the birthday itself
    ["2025-06-15", "2025-06-15T12:00:00Z", 0], // born today
    ["2030-01-01", "2025-06-15T12:00:00Z", -5], // future date of birth
  ])("dob %s on %s → %i", (dob, today, years) => {
    expect(ageInYears(dob, utc(today))).toBe(years);
  });

  it("reads today's calendar date in UTC, not in local time", () => {
    // 23:30 at UTC-02:00 on 14 June is 01:30 UTC on 15 June: the 18th birthday has been reached.
    expect(ageInYears("2007-06-15", new Date("2025-06-14T23:30:00-02:00"))).toBe(18);
    // 00:30 at UTC+02:00 on 15 June is still 14 June in UTC.
    expect(ageInYears("2007-06-15", new Date("2025-06-15T00:30:00+02:00"))).toBe(17);
  });
});

describe("assertAdult", () => {
  it("requires 18 whole years", () => {
    expect(MINIMUM_AGE_YEARS).toBe(18);
  });

  it.each([
    ["exactly 18 today", "2007-06-15", "2025-06-15T08:00:00Z"],
    ["18 years and one day", "2007-06-14", "2025-06-15T08:00:00Z"],
    ["born 29 February, 18 on 1 March of a common year", "2004-02-29", "2022-03-01T00:00:00Z"],
    ["born 29 February, on the birthday in a later leap year", "2000-02-29", "2020-02-29T00:00:00Z"],
    ["an older adult", "1950-01-01", "2025-06-15T08:00:00Z"],
  ])("accepts %s", (_label, dob, today) => {
    expect(() => assertAdult(dob, utc(today))).not.toThrow();
  });

  it.each([
    ["17 years 364 days (18 tomorrow)", "2007-06-16", "2025-06-15T23:59:59Z"],
    ["born 29 February, on 28 February of the year they turn 18", "2004-02-29", "2022-02-28T23:59:59Z"],
    ["born today", "2025-06-15", "2025-06-15T08:00:00Z"],
    ["a future date of birth", "2031-01-01", "2025-06-15T08:00:00Z"],
  ])("rejects %s with INVALID_AGE on individual.dob", (_label, dob, today) => {
    const error = expectDomainError(() => assertAdult(dob, utc(today)), "INVALID_AGE", "individual.dob");
    expect(error.message).toMatch(/18/);
  });

  it.each([
    ["30 February", "2001-02-30"],
    ["29 February of a common year", "2001-02-29"],
    ["31 April", "2001-04-31"],
    ["month 13", "1990-13-01"],
    ["month 00", "1990-00-10"],
    ["day 00", "1990-05-00"],
    ["unpadded month", "1990-5-17"],
    ["day-first form", "17/05/1990"],
    ["a timestamp", "1990-05-17T00:00:00Z"],
    ["garbage", "abcd"],
    ["empty", ""],
  ])("rejects a dob that is not a real YYYY-MM-DD date (%s) with INVALID_AGE", (_label, dob) => {
    expectDomainError(() => assertAdult(dob, utc("2025-06-15T08:00:00Z")), "INVALID_AGE", "individual.dob");
  });

  it("names the field it is given (Update User sends a flat dob)", () => {
    expectDomainError(() => assertAdult("2020-01-01", utc("2025-06-15T08:00:00Z"), "dob"), "INVALID_AGE", "dob");
    expectDomainError(() => assertAdult("2001-02-30", utc("2025-06-15T08:00:00Z"), "dob"), "INVALID_AGE", "dob");
  });
});

describe("sanitisationProblem", () => {
  const accepted: [TextKind, string][] = [
    ["name", "O'Brien"],
    ["name", "Jean-Luc"],
    ["name", "José"],
    ["name", "Zoë"], // precomposed ë
    ["name", "Zoe\u0308"], // e + combining diaeresis
    ["name", "Mary Ann"],
    ["name", "d'Artagnan"],
    ["name", "Jr."],
    ["name", "Ñandú"],
    ["place", "St. Louis"],
    ["place", "Winston-Salem"],
    ["place", "Coeur d'Alene"],
    ["place", "São Paulo"],
    ["place", "München"],
    ["place", "IL"],
    ["address", "742 Evergreen Terrace, Apt #4"],
    ["address", "1/2 Main St."],
    ["address", "742 Evergreen Terrace"],
    ["address", "P.O. Box 123"],
    ["address", "Calle Mayor 5, 3º"],
    ["address", "Nordstraße 12"],
    ["address", "Suite 100 (rear)"],
    ["address", "Smith & Sons Building"],
    ["name", "O\u2019Brien"], // typographic apostrophe
    ["address", "Metadata: 5 Data Lane"], // "data:" inside a word is not a URL scheme
  ];
  it.each(accepted)("accepts %s %j", (kind, value) => {
    expect(sanitisationProblem("f", value, kind)).toBeNull();
  });

  const scriptLike = [
    "<script>alert(1)</script>",
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "x onerror=alert(1)",
    "x onload =alert(1)",
    "`whoami`",
    "Jane`",
    "{{7*7}}",
    "${name}",
    "Jane}",
    "&#60;script&#62;",
    "&lt;b&gt;",
    "data:text/html,hi",
    "a|b",
    "a\\b",
  ];
  const control = ["Jane\u0000", "Jane\nDoe", "Jane\rDoe", "Jane\tDoe", "\u0007Jane", "Jane\u001b[31m", "Jane\u007f"];
  const kinds: TextKind[] = ["name", "place", "address"];

  it.each(kinds.flatMap((kind) => scriptLike.map((value) => [kind, value] as const)))(
    "rejects script-like %s %j (rejected, never cleaned)",
    (kind, value) => {
      const problem = sanitisationProblem("individual.residential_city", value, kind);
      expect(problem).not.toBeNull();
      expect(problem?.field).toBe("individual.residential_city");
      expect(problem?.message).toMatch(/not allowed/);
    },
  );

  it.each(kinds.flatMap((kind) => control.map((value) => [kind, value] as const)))("rejects control characters in %s %j", (kind, value) => {
    expect(sanitisationProblem("first_name", value, kind)).toMatchObject({ field: "first_name", message: expect.stringMatching(/not allowed/) });
  });

  it.each(kinds.flatMap((kind) => ["", " ", "   ", "\u00a0"].map((value) => [kind, value] as const)))("rejects blank %s %j", (kind, value) => {
    expect(sanitisationProblem("last_name", value, kind)).toEqual({ field: "last_name", message: "last_name must not be blank." });
  });

  it.each([
    ["name", "Robert'); DROP TABLE users;--"],
    ["name", "Jane2"], // digits are not part of a personal name
    ["name", "-Jane"], // must start with a letter
    ["name", "Jane/Doe"],
    ["name", "Jane, Doe"],
    ["place", "Springfield; rm -rf"],
    ["place", "Spring/field"],
    ["address", "1 Main St); DROP TABLE users;--"],
    ["address", "1 Main St \"quoted\""],
    ["address", "-1 Main St"],
  ] as const)("rejects %s %j whose characters do not fit its kind", (kind, value) => {
    expect(sanitisationProblem("f", value, kind)).not.toBeNull();
  });

  it("names the kind in the message", () => {
    expect(sanitisationProblem("f", "<b>", "name")?.message).toMatch(/name/);
    expect(sanitisationProblem("f", "<b>", "place")?.message).toMatch(/place/);
    expect(sanitisationProblem("f", "<b>", "address")?.message).toMatch(/street address/);
  });
});

describe("parseMobileNumber", () => {
  it.each([
    ["2025550143", "US", "+12025550143"],
    ["(202) 555-0143", "US", "+12025550143"],
    ["+1 202 555 0143", "US", "+12025550143"],
    ["4155550198", "US", "+14155550198"],
    ["07400 123456", "GB", "+447400123456"],
    ["7400123456", "GB", "+447400123456"],
    ["+447400123456", "GB", "+447400123456"],
    ["612345678", "ES", "+34612345678"],
    ["712345678", "ES", "+34712345678"],
    ["+34 612 34 56 78", "ES", "+34612345678"],
    ["5512345678", "MX", "+525512345678"],
    ["+52 55 1234 5678", "MX", "+525512345678"],
  ])("accepts %j as a %s mobile → %s", (number, country, e164) => {
    expect(parseMobileNumber(number, country)).toEqual({ e164 });
  });

  it.each([
    ["a Spanish landline", "912345678", "ES"],
    ["a UK landline", "02079460000", "GB"],
    ["a UK mobile sent as US", "07400123456", "US"],
    ["a UK mobile in E.164 sent as US (country mismatch)", "+447400123456", "US"],
    ["a Spanish mobile sent as GB", "612345678", "GB"],
    ["an unknown country", "612345678", "XX"],
    ["letters", "abc", "US"],
    ["an empty number", "", "US"],
    ["too few digits", "123", "GB"],
    ["punctuation only", "++--()", "US"],
    ["too many digits", "20255501431234", "US"],
  ])("rejects %s (%j, %s)", (_label, number, country) => {
    expect(parseMobileNumber(number, country)).toEqual({
      problem: { field: "phone_number", message: `phone_number must be a valid mobile number for "${country}".` },
    });
  });

  it("names the field it is given", () => {
    expect(parseMobileNumber("912345678", "ES", "phone")).toMatchObject({ problem: { field: "phone" } });
  });
});

describe("assertUserEnums", () => {
  it.each([
    [{ account_type: "individual", account_role: "third", account_purpose: "trading" }],
    [{ account_type: "business", account_role: "third", account_purpose: "investing" }],
    [{}],
    [{ account_purpose: "investing" }],
  ])("accepts %j", (input) => {
    expect(() => assertUserEnums(input)).not.toThrow();
  });

  it.each([
    [{ account_type: "corporate" }, "INVALID_ACCOUNT_TYPE", "account_type"],
    [{ account_type: "corporation" }, "INVALID_ACCOUNT_TYPE", "account_type"],
    [{ account_type: "Individual" }, "INVALID_ACCOUNT_TYPE", "account_type"],
    [{ account_type: "" }, "INVALID_ACCOUNT_TYPE", "account_type"],
    [{ account_role: "client" }, "INVALID_ACCOUNT_ROLE", "account_role"],
    [{ account_role: "partner" }, "INVALID_ACCOUNT_ROLE", "account_role"],
    [{ account_role: "THIRD" }, "INVALID_ACCOUNT_ROLE", "account_role"],
    [{ account_purpose: "savings" }, "INVALID_ACCOUNT_PURPOSE", "account_purpose"],
    [{ account_purpose: "Trading" }, "INVALID_ACCOUNT_PURPOSE", "account_purpose"],
    // type is checked before role, role before purpose
    [{ account_type: "x", account_role: "y", account_purpose: "z" }, "INVALID_ACCOUNT_TYPE", "account_type"],
    [{ account_type: "individual", account_role: "y", account_purpose: "z" }, "INVALID_ACCOUNT_ROLE", "account_role"],
  ])("rejects %j with %s", (input, code, field) => {
    expectDomainError(() => assertUserEnums(input), code, field);
  });

  it("lists the allowed values in the message", () => {
    expect(expectDomainError(() => assertUserEnums({ account_type: "x" }), "INVALID_ACCOUNT_TYPE").message).toMatch(/individual, business/);
    expect(expectDomainError(() => assertUserEnums({ account_role: "x" }), "INVALID_ACCOUNT_ROLE").message).toMatch(/third/);
    expect(expectDomainError(() => assertUserEnums({ account_purpose: "x" }), "INVALID_ACCOUNT_PURPOSE").message).toMatch(/trading, investing/);
  });
});

describe("lifecycle", () => {
  const PENDING: LifecycleState = { status: "PENDING", isActive: false, verificationStatus: "pending" };
  const VERIFIED: LifecycleState = { status: "VERIFIED", isActive: true, verificationStatus: "verified" };
  const SUSPENDED: LifecycleState = { status: "SUSPENDED", isActive: false, verificationStatus: "verified" };

  it("starts PENDING and inactive", () => {
    expect(INITIAL_USER_STATE).toEqual({ status: "PENDING", isActive: false, verificationStatus: "pending" });
  });

  it.each([
    ["PENDING", PENDING],
    ["SUSPENDED", SUSPENDED],
    ["VERIFIED (no-op)", VERIFIED],
  ])("activate from %s → VERIFIED, active, verified", (_label, from) => {
    const before = { ...from };
    expect(activate(from)).toEqual({ status: "VERIFIED", isActive: true, verificationStatus: "verified" });
    expect(from).toEqual(before); // pure: the input is not changed
  });

  it.each([
    ["VERIFIED", VERIFIED, { status: "SUSPENDED", isActive: false, verificationStatus: "verified" }],
    ["SUSPENDED (no-op)", SUSPENDED, SUSPENDED],
  ])("deactivate from %s → SUSPENDED, inactive, verification kept", (_label, from, to) => {
    const before = { ...from };
    expect(deactivate(from)).toEqual(to);
    expect(from).toEqual(before);
  });

  it("deactivate of a PENDING user (never activated) → BAD_REQUEST", () => {
    expectDomainError(() => deactivate(PENDING), "BAD_REQUEST");
  });

  it.each([
    ["PENDING", PENDING],
    ["SUSPENDED", SUSPENDED],
  ])("a %s user is deletable", (_label, state) => {
    expect(() => assertDeletable(state)).not.toThrow();
  });

  it("an active user is not deletable → CANNOT_DELETE_ACTIVE_USER", () => {
    expectDomainError(() => assertDeletable(VERIFIED), "CANNOT_DELETE_ACTIVE_USER");
  });

  it("walks PENDING → VERIFIED → SUSPENDED → VERIFIED", () => {
    const s1 = activate(INITIAL_USER_STATE);
    const s2 = deactivate(s1);
    const s3 = activate(s2);
    expect([s1.status, s2.status, s3.status]).toEqual(["VERIFIED", "SUSPENDED", "VERIFIED"]);
    expect([s1.isActive, s2.isActive, s3.isActive]).toEqual([true, false, true]);
    expect(() => assertDeletable(s2)).not.toThrow();
  });
});

describe("the sandbox registry's customer phones follow the user's phone rule (customers share it: docs/decisions/customers-users-and-wallets.md#customers)", () => {
  it("fills every customer with a mobile number of its phone_country_code, for every country it uses", async () => {
    const provider = new SandboxProvider("sandbox-default-seed");
    const countries = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const upstream = await provider.lookupCustomer(`registry-${i}`);
      if (!upstream) throw new Error(`registry-${i} unknown upstream`);
      countries.add(upstream.phoneCountryCode);
      expect(parseMobileNumber(upstream.phoneNumber, upstream.phoneCountryCode), `${upstream.phoneCountryCode} ${upstream.phoneNumber}`).toHaveProperty("e164");
    }
    expect([...countries].sort()).toEqual(["ES", "GB", "MX", "US"]);
  });

  it("refuses a number over 20 characters before parsing it, and a country code that is not two capital letters", () => {
    expect(parseMobileNumber(`2025550143${" ".repeat(11)}`, "US")).toEqual({ problem: { field: "phone_number", message: "phone_number must be at most 20 characters." } });
    expect(parseMobileNumber("2".repeat(160_000), "US")).toHaveProperty("problem.field", "phone_number");
    expect(parseMobileNumber("2025550143", "us")).toHaveProperty("problem.field", "phone_number");
    expect(parseMobileNumber("2025550143", "USA")).toHaveProperty("problem.field", "phone_number");
    expect(parseMobileNumber("(202) 555-0143", "US")).toEqual({ e164: "+12025550143" });
  });
});
