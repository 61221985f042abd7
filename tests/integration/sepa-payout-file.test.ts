/**
 * Get SEPA Payout File over HTTP on a real PostgreSQL (docs/decisions/fiat.md "The SEPA payout
 * file"; spec/platform/payouts.tsp): eur fiat withdrawals confirmed today, one of them returned
 * by the bank, are downloaded as a pain.001.001.03 file and parsed back — count, control sum,
 * IBANs, amounts, end-to-end ids against the withdrawals' payouts — and the file validates against
 * the ISO 20022 schema; a usd payout, a pending withdrawal and another customer's payouts stay out;
 * an empty day, a missing or impossible date, and who may download.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { XMLParser } from "fast-xml-parser";
import { beforeAll, describe, expect, it } from "vitest";
import { validateXML } from "xmllint-wasm";
import { money } from "../../src/domain/money.js";
import { settlementIban } from "../../src/providers/virtual-accounts.js";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { waitFor } from "../support/wait.js";
import { Api, apiKey, codeIn, type Cred, type Net, type Scene } from "../support/withdrawals-scene.js";

const EUR: Net = { name: "networks/sepa", currency: "eur" };
const USD: Net = { name: "networks/ach", currency: "usd" };

const t = useTestApp({ PAYOUT_INTERVAL_S: "1" });
const api = () => new Api(t);

const SCHEMA = readFileSync(join(import.meta.dirname, "..", "support", "iso20022", "pain.001.001.03.xsd"), "utf8");
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@", parseTagValue: false, isArray: (name) => name === "CdtTrfTxInf" || name === "PmtInf" });

type Transfer = { PmtId: { EndToEndId: string }; Amt: { InstdAmt: { "#text": string; "@Ccy": string } }; Cdtr: { Nm: string }; CdtrAcct: { Id: { IBAN: string } } };
type FileDoc = { CstmrCdtTrfInitn: { GrpHdr: { NbOfTxs: string; CtrlSum: string }; PmtInf?: { DbtrAcct: { Id: { IBAN: string } }; CdtTrfTxInf: Transfer[] }[] } };

const fiatBase = (userId: string) => `${BASE}/users/${userId}/accounts/fiat/withdrawals`;
const file = (cred: Cred, customerId: string, date?: string) => {
  const r = cred(api().http().get(`${BASE}/customers/${customerId}/payouts/sepa`));
  return date === undefined ? r : r.query({ date });
};

/** Adds a bank account of the scene's user (asserting 201); returns its id. */
async function addAccount(s: Scene, body: Record<string, unknown>): Promise<string> {
  const res = await api().http().post(`${BASE}/users/${s.userId}/bank-accounts`).set("x-api-key", s.key).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.bank_account_id as string;
}

/** Initiates a fiat withdrawal and confirms it with its emailed code (asserting 201 and 200); returns its id. */
async function paidOut(s: Scene, body: Record<string, unknown>, confirmIt = true): Promise<string> {
  const res = await api().http().post(fiatBase(s.userId)).set("x-api-key", s.key).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const id = res.body.data.id as string;
  if (!confirmIt) return id;
  const mails = await api().mailsOf(s, id);
  const confirmed = await api().http().post(`${fiatBase(s.userId)}/${id}/confirm`).set("x-api-key", s.key).send({ code: codeIn(mails[0]!, id) });
  expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  return id;
}

let operator: string;
let s: Scene;
let other: Scene;
const today = new Date().toISOString().slice(0, 10);
/** The confirmed eur withdrawals of `s`, as Get Fiat Withdrawal shows them once their payouts moved. */
let confirmed: { id: string; amount: number; payout: { reference: string; state: string } }[];
const IBANS = { jane: "DE89370400440532013000", jean: "FR1420041010050500013M02606" };

beforeAll(async () => {
  operator = await api().walk.operatorToken();
  s = await api().scene("sepa-file", [EUR, USD], [[EUR, 5000], [USD, 1000]]);
  const jane = await addAccount(s, { currency: "eur", holder_name: "Jane Doe", iban: IBANS.jane });
  const jean = await addAccount(s, { currency: "eur", holder_name: "Jean Dupont", iban: IBANS.jean, bic: "BNPAFRPP" });
  const usd = await addAccount(s, { currency: "usd", holder_name: "John Smith", routing_number: "021000021", account_number: "000123456789" });
  const ids = [
    await paidOut(s, { currency: "eur", amount: 100.1, bank_account_id: jane, memo: "Rent" }),
    await paidOut(s, { currency: "eur", amount: 20.2, bank_account_id: jean }),
    await paidOut(s, { currency: "eur", amount: 66.66, bank_account_id: jane }), // the sandbox rail returns it
  ];
  await paidOut(s, { currency: "usd", amount: 50, bank_account_id: usd }); // ACH: not in the SEPA file
  await paidOut(s, { currency: "eur", amount: 10, bank_account_id: jane }, false); // pending: not paid out
  confirmed = [];
  for (const id of ids) {
    const res = await waitFor(`payout of ${id} settled, or returned (66.66)`, async () => {
      const r = await api().http().get(`${fiatBase(s.userId)}/${id}`).set("x-api-key", s.key);
      const state = r.body.data.payout?.state;
      return state === (r.body.data.amount === 66.66 ? "returned" : "settled") ? r : undefined;
    }, 10_000);
    confirmed.push(res.body.data);
  }
  other = await api().scene("sepa-other", [EUR], [[EUR, 500]]);
  const theirs = await addAccount(other, { currency: "eur", holder_name: "Other Payee", iban: IBANS.jane });
  await paidOut(other, { currency: "eur", amount: 25, bank_account_id: theirs });
});

describe("the day's file", () => {
  it("holds the customer's eur payouts confirmed that day, returned ones included, with exact count, sum, IBANs and amounts", async () => {
    const res = await file((r) => r.set("Authorization", `Bearer ${operator}`), s.customerId, today);
    expect(res.status, res.text).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/xml/);
    const doc = (parser.parse(res.text) as { Document: FileDoc }).Document;
    expect(confirmed.map((c) => c.payout.state).sort()).toEqual(["returned", "settled", "settled"]);
    const header = doc.CstmrCdtTrfInitn.GrpHdr;
    expect(header.NbOfTxs).toBe("3");
    expect(header.CtrlSum).toBe(confirmed.reduce((sum, c) => sum.plus(c.amount), money(0)).toFixed(2));
    expect(header.CtrlSum).toBe("186.96");
    const info = doc.CstmrCdtTrfInitn.PmtInf?.[0];
    expect(info?.DbtrAcct.Id.IBAN).toBe(settlementIban(s.customerId));
    const transfers = info?.CdtTrfTxInf ?? [];
    expect(transfers.map((x) => [x.PmtId.EndToEndId, x.Amt.InstdAmt["#text"], x.Amt.InstdAmt["@Ccy"], x.CdtrAcct.Id.IBAN, x.Cdtr.Nm])).toEqual([
      [confirmed[0]!.payout.reference, "100.10", "EUR", IBANS.jane, "Jane Doe"],
      [confirmed[1]!.payout.reference, "20.20", "EUR", IBANS.jean, "Jean Dupont"],
      [confirmed[2]!.payout.reference, "66.66", "EUR", IBANS.jane, "Jane Doe"],
    ]);
    const validation = await validateXML({ xml: [{ fileName: "day.xml", contents: res.text }], schema: [SCHEMA] });
    expect(validation.errors).toEqual([]);
  });

  it("is the customer's own session's to download as well; another customer's session or an owner key gets 403", async () => {
    const session = await api().http().post(`${BASE}/sessions`).send({ customer_id: s.customerId, customer_secret: s.key });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const own = await file((r) => r.set("Authorization", `Bearer ${session.body.data.token}`), s.customerId, today);
    expect(own.status).toBe(200);
    const otherSession = await api().http().post(`${BASE}/sessions`).send({ customer_id: other.customerId, customer_secret: other.key });
    expectPlatformError(await file((r) => r.set("Authorization", `Bearer ${otherSession.body.data.token}`), s.customerId, today), 403, "FORBIDDEN");
    expectPlatformError(await file(apiKey(s.key), s.customerId, today), 403, "FORBIDDEN");
  });

  it("of a day without payouts holds none; a missing or impossible date is 422; an unknown customer 404", async () => {
    const op: Cred = (r) => r.set("Authorization", `Bearer ${operator}`);
    const empty = await file(op, s.customerId, "2026-01-01");
    expect(empty.status).toBe(200);
    const doc = (parser.parse(empty.text) as { Document: FileDoc }).Document;
    expect(doc.CstmrCdtTrfInitn.GrpHdr).toMatchObject({ NbOfTxs: "0", CtrlSum: "0.00" });
    expect(doc.CstmrCdtTrfInitn.PmtInf).toBeUndefined();
    expectPlatformError(await file(op, s.customerId), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await file(op, s.customerId, "2026-02-30"), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await file(op, s.customerId, "29-11-2026"), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await file(op, "no-such-customer", today), 404, "CUSTOMER_NOT_FOUND");
  });
});
