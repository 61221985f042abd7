/**
 * The SEPA payout file (src/modules/payouts/sepa-file.ts; docs/decisions/fiat.md "The SEPA payout
 * file"): files built from payouts are parsed back with an XML parser and checked field by field —
 * the pain.001.001.03 namespace, the group header's count and exact control sum, each transfer's
 * IBAN, amount, end-to-end id and creditor name, the debtor, the execution date; sums that binary
 * floats get wrong; names transliterated and shortened; the empty day; the refusals. Files with
 * payouts are also validated against the pain.001.001.03 schema (tests/support/iso20022/README.md
 * says where it comes from) with libxml2 compiled to WebAssembly (xmllint-wasm).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { XMLParser } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { validateXML } from "xmllint-wasm";
import { money } from "../../src/domain/money.js";
import { sepaCreditTransferFile, type SepaFileInput, type SepaPayout } from "../../src/modules/payouts/sepa-file.js";

const NAMESPACE = "urn:iso:std:iso:20022:tech:xsd:pain.001.001.03";

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  parseTagValue: false,
  isArray: (name) => name === "CdtTrfTxInf" || name === "PmtInf",
});

interface Transfer {
  PmtId: { InstrId: string; EndToEndId: string };
  Amt: { InstdAmt: { "#text": string; "@Ccy": string } };
  CdtrAgt?: { FinInstnId: { BIC: string } };
  Cdtr: { Nm: string };
  CdtrAcct: { Id: { IBAN: string } };
  RmtInf: { Ustrd: string };
}
interface PaymentInfo {
  PmtInfId: string;
  PmtMtd: string;
  NbOfTxs: string;
  CtrlSum: string;
  PmtTpInf: { SvcLvl: { Cd: string } };
  ReqdExctnDt: string;
  Dbtr: { Nm: string };
  DbtrAcct: { Id: { IBAN: string } };
  DbtrAgt: { FinInstnId: { BIC?: string; Othr?: { Id: string } } };
  ChrgBr: string;
  CdtTrfTxInf: Transfer[];
}
interface Parsed {
  Document: {
    "@xmlns": string;
    CstmrCdtTrfInitn: {
      GrpHdr: { MsgId: string; CreDtTm: string; NbOfTxs: string; CtrlSum: string; InitgPty: { Nm: string } };
      PmtInf?: PaymentInfo[];
    };
  };
}

function parse(xml: string): Parsed["Document"] {
  expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
  return (parser.parse(xml) as Parsed).Document;
}

const day = (payouts: SepaPayout[], fields: Partial<SepaFileInput> = {}): SepaFileInput => ({
  messageId: "SEPA-20261128-CUS1",
  createdAt: new Date("2026-11-29T06:30:05Z"),
  executionDate: "2026-11-30",
  debtor: { name: "Acme Custody GmbH", iban: "DE89370400440532013000" },
  payouts,
  ...fields,
});

const payout = (endToEndId: string, amount: string, name = "Jane Doe", iban = "NL91ABNA0417164300"): SepaPayout => ({
  endToEndId,
  amount,
  creditor: { name, iban },
});

/** The ISO 20022 schema of pain.001.001.03 (tests/support/iso20022/). */
const SCHEMA = readFileSync(join(import.meta.dirname, "..", "support", "iso20022", "pain.001.001.03.xsd"), "utf8");

/** libxml2's schema validation of `xml` against {@link SCHEMA}: its errors (none when valid). */
async function schemaErrors(xml: string): Promise<string[]> {
  const result = await validateXML({ xml: [{ fileName: "payouts.xml", contents: xml }], schema: [SCHEMA] });
  return result.errors.map((e) => e.rawMessage);
}

describe("the pain.001.001.03 schema", () => {
  it("accepts a day of payouts, with and without BICs, long and foreign names", async () => {
    const payouts: SepaPayout[] = [
      { endToEndId: "PO-0001", amount: "1250.00", creditor: { name: "Jean Dupont", iban: "FR1420041010050500013M02606", bic: "BNPAFRPP" }, remittance: "Payout 0001" },
      { endToEndId: "PO-0002", amount: "0.99", creditor: { name: "Иван Петров ".repeat(10), iban: "NL91ABNA0417164300" } },
      { endToEndId: "X".repeat(35), amount: "999999999.99", creditor: { name: "Zoë & Söhne", iban: "DE89370400440532013000", bic: "COBADEFFXXX" } },
    ];
    expect(await schemaErrors(sepaCreditTransferFile(day(payouts)))).toEqual([]);
  });

  it("catches what breaks the schema: a file whose amount lost its currency", async () => {
    const broken = sepaCreditTransferFile(day([payout("PO-1", "1.00")])).replace(' Ccy="EUR"', "");
    expect((await schemaErrors(broken)).join("\n")).toContain("Ccy");
  });

  it("refuses the empty day's file, which no bank takes: it has no payment block (docs/decisions/fiat.md)", async () => {
    expect((await schemaErrors(sepaCreditTransferFile(day([])))).join("\n")).toContain("PmtInf");
  });
});

describe("a day of payouts", () => {
  const payouts: SepaPayout[] = [
    { endToEndId: "PO-0001", amount: "1250.00", creditor: { name: "Jean Dupont", iban: "FR1420041010050500013M02606", bic: "BNPAFRPP" }, remittance: "Payout 0001" },
    { endToEndId: "PO-0002", amount: "0.99", creditor: { name: "Anna de Vries", iban: "NL91 ABNA 0417 1643 00" } },
    { endToEndId: "PO-0003", amount: "333.33", creditor: { name: "Max Mustermann", iban: "DE89370400440532013000", bic: "cobadeffxxx" } },
    { endToEndId: "PO-0004", amount: "999999999.99", creditor: { name: "Big Payee SA", iban: "FR1420041010050500013M02606" } },
  ];
  const document = parse(sepaCreditTransferFile(day(payouts, { debtor: { name: "Acme Custody GmbH", iban: "DE89370400440532013000", bic: "COBADEFFXXX" } })));
  const header = document.CstmrCdtTrfInitn.GrpHdr;
  const info = document.CstmrCdtTrfInitn.PmtInf?.[0];

  it("is a pain.001.001.03 customer credit transfer initiation", () => {
    expect(document["@xmlns"]).toBe(NAMESPACE);
    expect(document.CstmrCdtTrfInitn.PmtInf).toHaveLength(1);
  });

  it("counts the payouts and sums them exactly in the group header and the payment block", () => {
    const sum = payouts.reduce((total, p) => total.plus(p.amount), money(0)).toFixed(2);
    expect(sum).toBe("1000001584.31");
    expect(header).toMatchObject({ MsgId: "SEPA-20261128-CUS1", CreDtTm: "2026-11-29T06:30:05", NbOfTxs: "4", CtrlSum: sum });
    expect(info).toMatchObject({ NbOfTxs: "4", CtrlSum: sum });
  });

  it("pays from the debtor's account on the requested execution date", () => {
    expect(header.InitgPty.Nm).toBe("Acme Custody GmbH");
    expect(info).toMatchObject({
      PmtInfId: "SEPA-20261128-CUS1",
      PmtMtd: "TRF",
      PmtTpInf: { SvcLvl: { Cd: "SEPA" } },
      ReqdExctnDt: "2026-11-30",
      Dbtr: { Nm: "Acme Custody GmbH" },
      DbtrAcct: { Id: { IBAN: "DE89370400440532013000" } },
      DbtrAgt: { FinInstnId: { BIC: "COBADEFFXXX" } },
      ChrgBr: "SLEV",
    });
  });

  it("writes each payout's IBAN, amount in euros, end-to-end id and creditor name, in order", () => {
    const transfers = info?.CdtTrfTxInf ?? [];
    expect(transfers.map((t) => [t.PmtId.EndToEndId, t.Amt.InstdAmt["#text"], t.Amt.InstdAmt["@Ccy"], t.Cdtr.Nm, t.CdtrAcct.Id.IBAN])).toEqual([
      ["PO-0001", "1250.00", "EUR", "Jean Dupont", "FR1420041010050500013M02606"],
      ["PO-0002", "0.99", "EUR", "Anna de Vries", "NL91ABNA0417164300"],
      ["PO-0003", "333.33", "EUR", "Max Mustermann", "DE89370400440532013000"],
      ["PO-0004", "999999999.99", "EUR", "Big Payee SA", "FR1420041010050500013M02606"],
    ]);
    expect(transfers.map((t) => t.PmtId.InstrId)).toEqual(["PO-0001", "PO-0002", "PO-0003", "PO-0004"]);
  });

  it("names the creditor's bank when a BIC is given, and uses the end-to-end id as remittance text when none is", () => {
    const transfers = info?.CdtTrfTxInf ?? [];
    expect(transfers.map((t) => t.CdtrAgt?.FinInstnId.BIC ?? null)).toEqual(["BNPAFRPP", null, "COBADEFFXXX", null]);
    expect(transfers.map((t) => t.RmtInf.Ustrd)).toEqual(["Payout 0001", "PO-0002", "PO-0003", "PO-0004"]);
  });
});

describe("amounts", () => {
  it("sums 0.10 and 0.20 to exactly 0.30", () => {
    const document = parse(sepaCreditTransferFile(day([payout("PO-1", "0.10"), payout("PO-2", "0.2")])));
    expect(document.CstmrCdtTrfInitn.GrpHdr).toMatchObject({ NbOfTxs: "2", CtrlSum: "0.30" });
    expect(document.CstmrCdtTrfInitn.PmtInf?.[0]?.CdtTrfTxInf.map((t) => t.Amt.InstdAmt["#text"])).toEqual(["0.10", "0.20"]);
  });

  it("keeps the control sum exact where adding binary floats loses a cent", () => {
    const amounts = Array.from({ length: 457 }, () => "999999999.97");
    let floatSum = 0;
    for (const amount of amounts) floatSum += Number(amount);
    expect(floatSum.toFixed(2)).toBe("456999999986.28"); // what float addition would have written

    const document = parse(sepaCreditTransferFile(day(amounts.map((amount, i) => payout(`PO-${i}`, amount)))));
    expect(document.CstmrCdtTrfInitn.GrpHdr).toMatchObject({ NbOfTxs: "457", CtrlSum: "456999999986.29" });
    expect(document.CstmrCdtTrfInitn.PmtInf?.[0]).toMatchObject({ NbOfTxs: "457", CtrlSum: "456999999986.29" });
  });
});

describe("names and text", () => {
  it("shortens a name longer than 70 characters", () => {
    const long = `Compagnie Generale des Etablissements de Paiement et de Virement ${"X".repeat(40)}`;
    const [transfer] = parse(sepaCreditTransferFile(day([payout("PO-1", "10.00", long)]))).CstmrCdtTrfInitn.PmtInf?.[0]?.CdtTrfTxInf ?? [];
    expect(transfer?.Cdtr.Nm).toBe(long.slice(0, 70));
    expect(transfer?.Cdtr.Nm).toHaveLength(70);
  });

  it("transliterates names to the SEPA character set", () => {
    const names = ["Zoë Ærøskøbing-Straße & Söhne", "Иван Петров", "Ελένη Παπαδοπούλου", "Anna\tMaria   O'Neil", "Jo @ Home_Co; \"best\""];
    const transfers = parse(sepaCreditTransferFile(day(names.map((name, i) => payout(`PO-${i}`, "1.00", name))))).CstmrCdtTrfInitn.PmtInf?.[0]?.CdtTrfTxInf ?? [];
    expect(transfers.map((t) => t.Cdtr.Nm)).toEqual([
      "Zoe AEroskobing-Strasse + Sohne",
      "Ivan Petrov",
      "Eleni Papadopoyloy", // letter by letter: υ is y
      "Anna Maria O'Neil",
      "Jo . Home.Co. .best.",
    ]);
  });

  it("transliterates and shortens the remittance text to 140 characters", () => {
    const remittance = `Auszahlung für Jürgen <${"r".repeat(200)}>`;
    const [transfer] = parse(sepaCreditTransferFile(day([{ ...payout("PO-1", "1.00"), remittance }]))).CstmrCdtTrfInitn.PmtInf?.[0]?.CdtTrfTxInf ?? [];
    expect(transfer?.RmtInf.Ustrd).toBe(`Auszahlung fur Jurgen .${"r".repeat(200)}`.slice(0, 140));
  });

  it("leaves out a BIC of another country than the IBAN, and writes NOTPROVIDED for a debtor without one", () => {
    const document = parse(sepaCreditTransferFile(day([{ ...payout("PO-1", "1.00"), creditor: { name: "Jane", iban: "NL91ABNA0417164300", bic: "DEUTDEFF" } }])));
    const info = document.CstmrCdtTrfInitn.PmtInf?.[0];
    expect(info?.CdtTrfTxInf[0]?.CdtrAgt).toBeUndefined();
    expect(info?.DbtrAgt).toEqual({ FinInstnId: { Othr: { Id: "NOTPROVIDED" } } });
  });
});

describe("dates", () => {
  it("writes the creation time in UTC and the execution day as given, whatever the process's time zone", () => {
    const zone = process.env.TZ;
    process.env.TZ = "Pacific/Kiritimati"; // UTC+14: local time is another day
    try {
      const createdAt = new Date("2026-11-29T23:30:00Z");
      expect(createdAt.getDate()).toBe(30);
      const header = parse(sepaCreditTransferFile(day([payout("PO-1", "1.00")], { createdAt, executionDate: "2026-12-01" }))).CstmrCdtTrfInitn;
      expect(header.GrpHdr.CreDtTm).toBe("2026-11-29T23:30:00");
      expect(header.PmtInf?.[0]?.ReqdExctnDt).toBe("2026-12-01");
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});

describe("an empty day", () => {
  it("is the group header alone, with no transfer and a zero control sum", () => {
    const document = parse(sepaCreditTransferFile(day([])));
    expect(document["@xmlns"]).toBe(NAMESPACE);
    expect(document.CstmrCdtTrfInitn.GrpHdr).toEqual({
      MsgId: "SEPA-20261128-CUS1",
      CreDtTm: "2026-11-29T06:30:05",
      NbOfTxs: "0",
      CtrlSum: "0.00",
      InitgPty: { Nm: "Acme Custody GmbH" },
    });
    expect(document.CstmrCdtTrfInitn.PmtInf).toBeUndefined();
  });
});

describe("refusals", () => {
  it.each<[string, SepaFileInput, RegExp]>([
    ["a message id longer than 35", day([], { messageId: "M".repeat(36) }), /messageId must be 1–35/],
    ["an end-to-end id with characters outside the set", day([payout("PO_1", "1.00")]), /payouts\[0\]\.endToEndId has characters outside/],
    ["an end-to-end id starting with /", day([payout("/PO1", "1.00")]), /must not start with "\/"/],
    ["an end-to-end id with //", day([payout("PO//1", "1.00")]), /nor contain "\/\/"/],
    ["two payouts with one end-to-end id", day([payout("PO-1", "1.00"), payout("PO-1", "2.00")]), /appears twice/],
    ["an amount with 3 decimals", day([payout("PO-1", "1.001")]), /payouts\[0\]\.amount must be euros/],
    ["a zero amount", day([payout("PO-1", "0.00")]), /at least 0\.01/],
    ["an amount over the SEPA maximum", day([payout("PO-1", "1000000000.00")]), /at most 999999999\.99/],
    ["a negative amount", day([payout("PO-1", "-1.00")]), /must be euros/],
    ["an invalid creditor IBAN", day([payout("PO-1", "1.00", "Jane", "DE89370400440532013001")]), /payouts\[0\]\.creditor\.iban is not a valid IBAN/],
    ["an invalid debtor BIC", day([], { debtor: { name: "Acme", iban: "DE89370400440532013000", bic: "DEUT" } }), /debtor\.bic is not a valid BIC/],
    ["a blank creditor name", day([payout("PO-1", "1.00", "   ")]), /payouts\[0\]\.creditor\.name is blank/],
    ["a day that does not exist", day([], { executionDate: "2026-02-30" }), /executionDate must be a real day/],
    ["an invalid creation time", day([], { createdAt: new Date("nope") }), /createdAt is not a valid date/],
  ])("refuses %s", (_case, input, message) => {
    expect(() => sepaCreditTransferFile(input)).toThrow(RangeError);
    expect(() => sepaCreditTransferFile(input)).toThrow(message);
  });
});
