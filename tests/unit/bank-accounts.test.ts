/**
 * The rules of a bank account (src/domain/bank-accounts.ts; docs/decisions/fiat.md "Bank
 * accounts"), on the schemes' published example numbers: eur takes a valid IBAN of a SEPA country
 * and an optional BIC, usd an account number of 4–17 digits and an ABA routing number with a valid
 * checksum; each invalid value is refused on its own field. Also the normalisation, the mask and
 * the identity two spellings of one account share.
 */
import { describe, expect, it } from "vitest";
import {
  accountIdentity, accountMask, assertBankAccount, bankAccountProblem, checkBankAccount, normaliseIban, type BankAccountInput,
} from "../../src/domain/bank-accounts.js";
import { DomainError } from "../../src/domain/errors.js";

const eur = (fields: Partial<BankAccountInput>): BankAccountInput => ({ currency: "eur", holder_name: "Jane Doe", ...fields });
const usd = (fields: Partial<BankAccountInput>): BankAccountInput => ({ currency: "usd", holder_name: "Jane Doe", ...fields });

describe("valid accounts", () => {
  it.each([
    ["GB82WEST12345698765432", "GB82WEST12345698765432"],
    ["DE89370400440532013000", "DE89370400440532013000"],
    ["FR1420041010050500013M02606", "FR1420041010050500013M02606"],
    ["NL91ABNA0417164300", "NL91ABNA0417164300"],
    ["CH9300762011623852957", "CH9300762011623852957"],
    ["de89 3704 0044 0532 0130 00", "DE89370400440532013000"],
    [" nl91 abna 0417 1643 00 ", "NL91ABNA0417164300"],
  ])("accepts the IBAN %j, kept as %s", (iban, normalised) => {
    expect(checkBankAccount(eur({ iban }))).toEqual({ holderName: "Jane Doe", numbers: { currency: "eur", iban: normalised, bic: null } });
  });

  it.each([["DEUTDEFF", "DEUTDEFF"], ["NEDSZAJJXXX", "NEDSZAJJXXX"], ["cobadeffxxx", "COBADEFFXXX"], ["  DEUTDEFF500 ", "DEUTDEFF500"]])("accepts the BIC %j, kept as %s", (bic, kept) => {
    expect(checkBankAccount(eur({ iban: "DE89370400440532013000", bic }))).toEqual({ holderName: "Jane Doe", numbers: { currency: "eur", iban: "DE89370400440532013000", bic: kept } });
  });

  it.each(["011000015", "021000021", "111000025", "026009593", "121000358"])("accepts the ABA routing number %s", (routing) => {
    expect(checkBankAccount(usd({ routing_number: routing, account_number: "000123456789" }))).toEqual({
      holderName: "Jane Doe",
      numbers: { currency: "usd", routingNumber: routing, accountNumber: "000123456789" },
    });
  });

  it.each(["1234", "12345678901234567", "0000000001"])("accepts the account number %s (4–17 digits)", (accountNumber) => {
    expect(bankAccountProblem(usd({ routing_number: "011000015", account_number: accountNumber }))).toBeNull();
  });

  it("reads the currency case-insensitively and trims the holder's name", () => {
    expect(checkBankAccount({ currency: " EUR", holder_name: "  José Ñúñez ", iban: "NL91ABNA0417164300" })).toEqual({
      holderName: "José Ñúñez",
      numbers: { currency: "eur", iban: "NL91ABNA0417164300", bic: null },
    });
    expect(bankAccountProblem(usd({ currency: "USD", holder_name: "x".repeat(140), routing_number: "021000021", account_number: "9876543210" }))).toBeNull();
    expect(bankAccountProblem(eur({ holder_name: "李小龍", iban: "NL91ABNA0417164300" }))).toBeNull();
  });
});

describe("each invalid or missing field is named", () => {
  it.each<[string, BankAccountInput, string, RegExp]>([
    ["a currency that is not usd or eur", { currency: "btc", holder_name: "Jane Doe", iban: "DE89370400440532013000" }, "currency", /usd or eur/],
    ["a currency of another fiat", { currency: "gbp", holder_name: "Jane Doe", iban: "GB82WEST12345698765432" }, "currency", /usd or eur/],
    ["no holder name", { currency: "eur", iban: "DE89370400440532013000" }, "holder_name", /required/],
    ["a blank holder name", eur({ holder_name: "   ", iban: "DE89370400440532013000" }), "holder_name", /required/],
    ["a holder name of 141 characters", eur({ holder_name: "x".repeat(141), iban: "DE89370400440532013000" }), "holder_name", /at most 140/],
    ["a holder name with a newline", eur({ holder_name: "Jane\nDoe", iban: "DE89370400440532013000" }), "holder_name", /control/],
    ["a holder name with a zero-width space", eur({ holder_name: "Jane\u200bDoe", iban: "DE89370400440532013000" }), "holder_name", /zero-width/],
    ["a holder name with a right-to-left override", eur({ holder_name: "Jane \u202eeoD", iban: "DE89370400440532013000" }), "holder_name", /bidirectional/],
    ["a holder name mixing Latin and Cyrillic in a word", eur({ holder_name: "Jаne Doe", iban: "DE89370400440532013000" }), "holder_name", /mix Latin/],
    ["eur without an IBAN", eur({}), "iban", /required/],
    ["eur with an empty IBAN", eur({ iban: "  " }), "iban", /required/],
    ["an IBAN with a wrong checksum", eur({ iban: "GB82WEST12345698765431" }), "iban", /checksum/],
    ["an IBAN with wrong check digits", eur({ iban: "DE88370400440532013000" }), "iban", /checksum/],
    ["an IBAN of the wrong length for its country", eur({ iban: "DE8937040044053201300" }), "iban", /length/],
    ["an IBAN not of its country's format", eur({ iban: "NL91ABNA04171643AA" }), "iban", /format|checksum/],
    ["an IBAN of an unknown country", eur({ iban: "XX82WEST12345698765432" }), "iban", /country/],
    ["an IBAN of a country outside SEPA", eur({ iban: "BR1800360305000010009795493C1" }), "iban", /SEPA/],
    ["an IBAN of Saudi Arabia (valid, not SEPA)", eur({ iban: "SA0380000000608010167519" }), "iban", /SEPA/],
    ["a Swiss QR-IBAN (for QR bills only)", eur({ iban: "CH4431999123000889012" }), "iban", /QR-IBAN/],
    ["a BIC of 7 characters", eur({ iban: "DE89370400440532013000", bic: "DEUTDEF" }), "bic", /valid BIC/],
    ["a BIC with an unknown country", eur({ iban: "DE89370400440532013000", bic: "DEUTXXFF" }), "bic", /valid BIC/],
    ["a BIC with punctuation", eur({ iban: "DE89370400440532013000", bic: "DEUT-DEFF" }), "bic", /valid BIC/],
    ["eur with an account number", eur({ iban: "DE89370400440532013000", account_number: "12345678" }), "account_number", /usd accounts/],
    ["eur with a routing number", eur({ iban: "DE89370400440532013000", routing_number: "011000015" }), "routing_number", /usd accounts/],
    ["usd without an account number", usd({ routing_number: "011000015" }), "account_number", /required/],
    ["an account number of 3 digits", usd({ routing_number: "011000015", account_number: "123" }), "account_number", /4 to 17 digits/],
    ["an account number of 18 digits", usd({ routing_number: "011000015", account_number: "1".repeat(18) }), "account_number", /4 to 17 digits/],
    ["an account number with letters", usd({ routing_number: "011000015", account_number: "12345ABC" }), "account_number", /4 to 17 digits/],
    ["an account number with a space", usd({ routing_number: "011000015", account_number: "1234 5678" }), "account_number", /4 to 17 digits/],
    ["usd without a routing number", usd({ account_number: "000123456789" }), "routing_number", /required/],
    ["a routing number with a wrong checksum", usd({ routing_number: "011000016", account_number: "000123456789" }), "routing_number", /checksum/],
    ["a routing number of 8 digits", usd({ routing_number: "01100001", account_number: "000123456789" }), "routing_number", /9 digits/],
    ["a routing number with spaces around it", usd({ routing_number: " 011000015", account_number: "000123456789" }), "routing_number", /9 digits/],
    ["a routing number of all zeros", usd({ routing_number: "000000000", account_number: "000123456789" }), "routing_number", /checksum/],
    ["usd with an IBAN", usd({ routing_number: "011000015", account_number: "000123456789", iban: "DE89370400440532013000" }), "iban", /eur accounts/],
    ["usd with a BIC", usd({ routing_number: "011000015", account_number: "000123456789", bic: "DEUTDEFF" }), "bic", /eur accounts/],
  ])("refuses %s on its field", (_label, input, field, message) => {
    const problem = bankAccountProblem(input);
    expect(problem?.field).toBe(field);
    expect(problem?.message).toMatch(message);
    expect(problem?.message).toContain(field);
    expect(() => assertBankAccount(input)).toThrow(expect.objectContaining({ code: "INVALID_BANK_ACCOUNT", field }) as DomainError);
  });
});

describe("normalisation, mask and identity", () => {
  it("normalises an IBAN: white space removed, upper case", () => {
    expect(normaliseIban(" fr14 2004\t1010 0505 0001 3m02 606 ")).toBe("FR1420041010050500013M02606");
  });

  it("masks all but the last four characters of the IBAN or the account number", () => {
    expect(accountMask({ currency: "eur", iban: "DE89370400440532013000", bic: null })).toBe("****3000");
    expect(accountMask({ currency: "eur", iban: "FR1420041010050500013M02606", bic: "BNPAFRPP" })).toBe("****2606");
    expect(accountMask({ currency: "usd", routingNumber: "011000015", accountNumber: "000123456789" })).toBe("****6789");
    expect(accountMask({ currency: "usd", routingNumber: "011000015", accountNumber: "1234" })).toBe("****1234");
  });

  it("gives one identity to two spellings of one account, and none to the BIC", () => {
    const spaced = assertBankAccount(eur({ iban: "de89 3704 0044 0532 0130 00", bic: "DEUTDEFF" }));
    const plain = assertBankAccount(eur({ iban: "DE89370400440532013000" }));
    expect(accountIdentity(spaced.numbers)).toBe(accountIdentity(plain.numbers));
    expect(accountIdentity(plain.numbers)).toBe("iban:DE89370400440532013000");
    const ach = assertBankAccount(usd({ routing_number: "021000021", account_number: "9876543210" }));
    expect(accountIdentity(ach.numbers)).toBe("aba:021000021/9876543210");
    const otherRouting = assertBankAccount(usd({ routing_number: "011000015", account_number: "9876543210" }));
    expect(accountIdentity(otherRouting.numbers)).not.toBe(accountIdentity(ach.numbers));
  });
});
