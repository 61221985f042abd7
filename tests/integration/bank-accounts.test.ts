/**
 * Users' bank accounts over HTTP on a real PostgreSQL (docs/decisions/fiat.md "Bank accounts"):
 * Add (eur with an IBAN of a SEPA country and an optional BIC, usd with an account and an ABA
 * routing number), each refused field named in a 400 INVALID_BANK_ACCOUNT, duplicates refused with
 * 409 (also under concurrent adds), List (newest first, paged, masked), Delete (soft: the account
 * may be added again), who may call, the numbers sealed at rest and never answered, and the check
 * a fiat withdrawal makes of the account it names. Every response is validated against the contract.
 */
import { describe, expect, it } from "vitest";
import type { DomainError } from "../../src/domain/errors.js";
import { bankAccountPage } from "../../src/modules/bank-accounts/repository.js";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { clockPast } from "../support/wait.js";
import { Api, apiKey, bearer, UNKNOWN_ID, UUID, type Cred } from "../support/withdrawals-scene.js";

const t = useTestApp();
const api = () => new Api(t);

const accounts = (userId: string) => `${BASE}/users/${userId}/bank-accounts`;
type Account = { bank_account_id: string; user_id: string; currency: string; holder_name: string; label: string | null; account_mask: string; created_at: string };

/** Published example numbers of the schemes. */
const IBAN_DE = "DE89370400440532013000";
const IBAN_FR = "FR1420041010050500013M02606";
const IBAN_NL = "NL91ABNA0417164300";
const ROUTING = "021000021";
const ACCOUNT = "000123456789";
const SEPA = { currency: "eur", holder_name: "Jane Doe", iban: IBAN_DE } as const;
const ACH = { currency: "usd", holder_name: "John Smith", routing_number: ROUTING, account_number: ACCOUNT } as const;

/** A customer with its owner key and an active user with a token. */
async function scene(prefix: string): Promise<{ customerId: string; key: string; userId: string; token: string }> {
  const a = api();
  const { customerId, key } = await a.tenant(prefix);
  const user = await a.user(key);
  return { customerId, key, userId: user.userId, token: user.token };
}

/** Add Bank Account with `cred`. */
const add = (cred: Cred, userId: string, body: Record<string, unknown>) => cred(api().http().post(accounts(userId))).send(body);

/** Add Bank Account, asserting 201; returns the account. */
async function added(cred: Cred, userId: string, body: Record<string, unknown>): Promise<Account> {
  const res = await add(cred, userId, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as Account;
}

/** List Bank Accounts, asserting 200. */
async function list(cred: Cred, userId: string, query: Record<string, number> = {}): Promise<{ items: Account[]; total: number; text: string }> {
  const res = await cred(api().http().get(accounts(userId))).query(query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { items: res.body.data as Account[], total: res.body.meta.pagination.records.total as number, text: res.text };
}

/** Delete Bank Account with `cred`. */
const del = (cred: Cred, userId: string, id: string) => cred(api().http().delete(`${accounts(userId)}/${id}`));

describe("Add and List Bank Account", () => {
  it("adds an eur and a usd account, answering only the mask, and lists them newest first", async () => {
    const s = await scene("ba-add");
    const res = await add(bearer(s.token), s.userId, { currency: "EUR", holder_name: "  Jane Doe ", label: "Main", iban: "de89 3704 0044 0532 0130 00", bic: "cobadeffxxx" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const sepa = res.body.data as Account;
    expect(sepa).toEqual({
      bank_account_id: expect.stringMatching(UUID) as string,
      user_id: s.userId,
      currency: "eur",
      holder_name: "Jane Doe",
      label: "Main",
      account_mask: "****3000",
      created_at: expect.any(String) as string,
    });
    await clockPast(sepa.created_at);
    const ach = await added(apiKey(s.key), s.userId, ACH);
    expect(ach).toMatchObject({ currency: "usd", holder_name: "John Smith", label: null, account_mask: "****6789" });

    const listed = await list(apiKey(s.key), s.userId);
    expect(listed.items).toEqual([ach, sepa]);
    expect(listed.total).toBe(2);
    // the full numbers are in no answer
    for (const text of [res.text, JSON.stringify(ach), listed.text, (await list(bearer(s.token), s.userId)).text]) {
      for (const secret of ["370400440532013000", "0532013000", "COBADEFF", "cobadeff", ROUTING, ACCOUNT, "123456789"]) expect(text).not.toContain(secret);
    }
  });

  it("lists with filter[limit] and filter[skip], leaving deleted accounts out", async () => {
    const s = await scene("ba-page");
    const one = await added(apiKey(s.key), s.userId, { ...SEPA, label: "One" });
    await clockPast(one.created_at);
    const two = await added(apiKey(s.key), s.userId, { ...SEPA, iban: IBAN_FR, label: "Two" });
    await clockPast(two.created_at);
    const three = await added(apiKey(s.key), s.userId, { ...SEPA, iban: IBAN_NL, label: "Three" });
    expect((await list(apiKey(s.key), s.userId)).items.map((x) => x.label)).toEqual(["Three", "Two", "One"]);
    const page = await list(apiKey(s.key), s.userId, { "filter[limit]": 1, "filter[skip]": 1 });
    expect({ items: page.items, total: page.total }).toEqual({ items: [two], total: 3 });
    expect((await list(apiKey(s.key), s.userId, { "filter[skip]": 5 })).items).toEqual([]);
    expect((await del(apiKey(s.key), s.userId, two.bank_account_id)).status).toBe(204);
    const after = await list(apiKey(s.key), s.userId);
    expect({ items: after.items, total: after.total }).toEqual({ items: [three, one], total: 2 });
  });

  it("keeps the numbers sealed at rest: the row read through the repository holds no plaintext, and opens to the numbers", async () => {
    const s = await scene("ba-rest");
    const sepa = await added(apiKey(s.key), s.userId, { ...SEPA, bic: "COBADEFFXXX" });
    const ach = await added(apiKey(s.key), s.userId, ACH);
    const { rows } = await bankAccountPage(t.db, s.customerId, s.userId, { limit: 10, skip: 0 });
    expect(rows).toHaveLength(2);
    const stored = JSON.stringify(rows);
    for (const secret of [IBAN_DE, "370400440532013000", "COBADEFF", ROUTING, ACCOUNT, "123456789"]) expect(stored).not.toContain(secret);
    for (const row of rows) {
      expect(row.numbersSealed).toMatch(/^v1\./);
      expect(row.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    }
    // the fingerprint is keyed: it is not a plain hash anyone could recompute from the number
    const { createHash } = await import("node:crypto");
    for (const plain of [IBAN_DE, `iban:${IBAN_DE}`, `aba:${ROUTING}/${ACCOUNT}`]) {
      expect(rows.map((r) => r.fingerprint)).not.toContain(createHash("sha256").update(plain).digest("hex"));
    }
    const bank = t.services.bankAccounts;
    expect(await bank.usableBankAccount(t.db, { customerId: s.customerId, userId: s.userId, bankAccountId: sepa.bank_account_id, currency: "eur" })).toMatchObject({
      bankAccountId: sepa.bank_account_id, currency: "eur", iban: IBAN_DE, bic: "COBADEFFXXX", holderName: "Jane Doe", accountMask: "****3000",
    });
    expect(await bank.usableBankAccount(t.db, { customerId: s.customerId, userId: s.userId, bankAccountId: ach.bank_account_id.toUpperCase(), currency: "USD" })).toMatchObject({
      bankAccountId: ach.bank_account_id, currency: "usd", routingNumber: ROUTING, accountNumber: ACCOUNT, holderName: "John Smith",
    });
  });
});

describe("refused bank accounts", () => {
  it.each<[string, Record<string, unknown>, string]>([
    ["a currency that is not usd or eur", { ...SEPA, currency: "btc" }, "currency"],
    ["no holder name", { currency: "eur", iban: IBAN_DE }, "holder_name"],
    ["an empty holder name", { ...SEPA, holder_name: " " }, "holder_name"],
    ["a holder name of 141 characters", { ...SEPA, holder_name: "x".repeat(141) }, "holder_name"],
    ["a holder name with a zero-width space", { ...SEPA, holder_name: "Jane\u200bDoe" }, "holder_name"],
    ["a holder name mixing scripts in a word", { ...SEPA, holder_name: "Jаne Doe" }, "holder_name"],
    ["eur without an IBAN", { currency: "eur", holder_name: "Jane Doe" }, "iban"],
    ["an IBAN with a wrong checksum", { ...SEPA, iban: "DE88370400440532013000" }, "iban"],
    ["an IBAN of a country outside SEPA", { ...SEPA, iban: "BR1800360305000010009795493C1" }, "iban"],
    ["an invalid BIC", { ...SEPA, bic: "DEUTDEF" }, "bic"],
    ["eur with a routing number", { ...SEPA, routing_number: ROUTING }, "routing_number"],
    ["usd without an account number", { currency: "usd", holder_name: "John Smith", routing_number: ROUTING }, "account_number"],
    ["an account number of 3 digits", { ...ACH, account_number: "123" }, "account_number"],
    ["an account number with letters", { ...ACH, account_number: "12345X" }, "account_number"],
    ["usd without a routing number", { currency: "usd", holder_name: "John Smith", account_number: ACCOUNT }, "routing_number"],
    ["a routing number with a wrong ABA checksum", { ...ACH, routing_number: "021000022" }, "routing_number"],
    ["usd with an IBAN", { ...ACH, iban: IBAN_DE }, "iban"],
  ])("refuses %s with 400 INVALID_BANK_ACCOUNT naming the field, and adds nothing", async (_label, body, field) => {
    const s = await scene("ba-bad");
    const res = await add(apiKey(s.key), s.userId, body);
    expectPlatformError(res, 400, "INVALID_BANK_ACCOUNT");
    expect(res.body.errors[0].field).toBe(field);
    expect(res.body.errors[0].message).toContain(field);
    expect((await list(apiKey(s.key), s.userId)).total).toBe(0);
  });

  it.each<[string, Record<string, unknown>]>([
    ["an IBAN that is not a string", { ...SEPA, iban: 123 }],
    ["a label of 101 characters", { ...SEPA, label: "x".repeat(101) }],
    ["a label with a zero-width character", { ...SEPA, label: "Ma\u200bin" }],
    ["no currency", { holder_name: "Jane Doe", iban: IBAN_DE }],
  ])("answers 422 to %s", async (_label, body) => {
    const s = await scene("ba-422");
    expectPlatformError(await add(apiKey(s.key), s.userId, body), 422, "UNPROCESSABLE_ENTITY");
    expect((await list(apiKey(s.key), s.userId)).total).toBe(0);
  });
});

describe("duplicates", () => {
  it("refuses the same IBAN in any spelling, or the same routing and account number, with 409 RESOURCE_CONFLICT", async () => {
    const a = api();
    const s = await scene("ba-dup");
    await added(apiKey(s.key), s.userId, SEPA);
    expectPlatformError(await add(apiKey(s.key), s.userId, { ...SEPA, iban: "de89 3704 0044 0532 0130 00", holder_name: "J. Doe", bic: "COBADEFF" }), 409, "RESOURCE_CONFLICT");
    await added(apiKey(s.key), s.userId, ACH);
    expectPlatformError(await add(bearer(s.token), s.userId, { ...ACH, label: "Again" }), 409, "RESOURCE_CONFLICT");
    // another routing number with the same account number is another account; another user may hold the same account
    await added(apiKey(s.key), s.userId, { ...ACH, routing_number: "011000015" });
    const other = await a.user(s.key);
    await added(apiKey(s.key), other.userId, SEPA);
    await added(apiKey(s.key), other.userId, ACH);
    expect((await list(apiKey(s.key), s.userId)).total).toBe(3);
  });

  it("of two concurrent adds of one IBAN, one answers 201 and the other 409", async () => {
    const s = await scene("ba-race");
    const responses = await Promise.all([add(apiKey(s.key), s.userId, { ...SEPA, label: "A" }), add(bearer(s.token), s.userId, { ...SEPA, iban: "de89370400440532013000", label: "B" })]);
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409]);
    expectPlatformError(responses.find((r) => r.status === 409)!, 409, "RESOURCE_CONFLICT");
    const many = await Promise.all(Array.from({ length: 8 }, () => add(apiKey(s.key), s.userId, ACH)));
    expect(many.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of many.filter((x) => x.status !== 201)) expectPlatformError(r, 409, "RESOURCE_CONFLICT");
    expect((await list(apiKey(s.key), s.userId)).total).toBe(2);
  });
});

describe("Delete Bank Account", () => {
  it("deletes the user's account (204), which may then be added again; a second delete, another user's account, an unknown or malformed id answer 404", async () => {
    const a = api();
    const s = await scene("ba-del");
    const other = await a.user(s.key);
    const mine = await added(apiKey(s.key), s.userId, SEPA);
    const theirs = await added(apiKey(s.key), other.userId, SEPA);
    expectPlatformError(await del(apiKey(s.key), s.userId, theirs.bank_account_id), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await del(apiKey(s.key), s.userId, UNKNOWN_ID), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await del(apiKey(s.key), s.userId, "not-a-uuid"), 404, "RESOURCE_NOT_FOUND");
    const gone = await del(bearer(s.token), s.userId, mine.bank_account_id.toUpperCase());
    expect(gone.status).toBe(204);
    expect(gone.text).toBe("");
    expectPlatformError(await del(apiKey(s.key), s.userId, mine.bank_account_id), 404, "RESOURCE_NOT_FOUND");
    expect((await list(apiKey(s.key), s.userId)).total).toBe(0);
    expect((await list(apiKey(s.key), other.userId)).items).toEqual([theirs]);
    const again = await added(apiKey(s.key), s.userId, SEPA);
    expect(again.bank_account_id).not.toBe(mine.bank_account_id);
    expectPlatformError(await add(apiKey(s.key), s.userId, SEPA), 409, "RESOURCE_CONFLICT");
  });
});

describe("who may call", () => {
  it("answers 403 to another user's token, 404 USER_NOT_FOUND to another customer's key or an unknown user, 401 without a credential", async () => {
    const a = api();
    const s = await scene("ba-access");
    const other = await a.user(s.key);
    const foreign = await scene("ba-access-foreign");
    const mine = await added(apiKey(s.key), s.userId, SEPA);
    expectPlatformError(await add(bearer(other.token), s.userId, ACH), 403, "FORBIDDEN");
    expectPlatformError(await bearer(other.token)(a.http().get(accounts(s.userId))), 403, "FORBIDDEN");
    expectPlatformError(await del(bearer(other.token), s.userId, mine.bank_account_id), 403, "FORBIDDEN");
    expectPlatformError(await add(apiKey(foreign.key), s.userId, ACH), 404, "USER_NOT_FOUND");
    expectPlatformError(await apiKey(foreign.key)(a.http().get(accounts(s.userId))), 404, "USER_NOT_FOUND");
    expectPlatformError(await del(apiKey(foreign.key), s.userId, mine.bank_account_id), 404, "USER_NOT_FOUND");
    // the foreign customer's own user cannot reach this account either
    expectPlatformError(await del(apiKey(foreign.key), foreign.userId, mine.bank_account_id), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await add(apiKey(s.key), UNKNOWN_ID, ACH), 404, "USER_NOT_FOUND");
    expectPlatformError(await a.http().post(accounts(s.userId)).send(ACH), 401, "UNAUTHORIZED");
    expect((await list(apiKey(s.key), s.userId)).items).toEqual([mine]);
  });
});

describe("usableBankAccount, the check of a fiat withdrawal", () => {
  it("answers BANK_ACCOUNT_REQUIRED without an id or an account, INVALID_BANK_ACCOUNT for another user's, a deleted or another currency's account", async () => {
    const a = api();
    const s = await scene("ba-usable");
    const other = await a.user(s.key);
    const bank = t.services.bankAccounts;
    const usable = (userId: string, bankAccountId: string | null | undefined, currency: string) =>
      bank.usableBankAccount(t.db, { customerId: s.customerId, userId, bankAccountId, currency });
    const refusal = async (promise: Promise<unknown>) => promise.then(() => "accepted", (e: DomainError) => `${e.code} ${e.field ?? ""}`.trim());

    const theirs = await added(apiKey(s.key), other.userId, SEPA);
    // no account yet: required, whatever id is given
    expect(await refusal(usable(s.userId, theirs.bank_account_id, "eur"))).toBe("BANK_ACCOUNT_REQUIRED bank_account_id");
    const sepa = await added(apiKey(s.key), s.userId, SEPA);
    const ach = await added(apiKey(s.key), s.userId, ACH);
    expect(await refusal(usable(s.userId, undefined, "eur"))).toBe("BANK_ACCOUNT_REQUIRED bank_account_id");
    expect(await refusal(usable(s.userId, null, "eur"))).toBe("BANK_ACCOUNT_REQUIRED bank_account_id");
    expect(await refusal(usable(s.userId, "", "eur"))).toBe("BANK_ACCOUNT_REQUIRED bank_account_id");
    expect(await refusal(usable(s.userId, theirs.bank_account_id, "eur"))).toBe("INVALID_BANK_ACCOUNT bank_account_id");
    expect(await refusal(usable(s.userId, UNKNOWN_ID, "eur"))).toBe("INVALID_BANK_ACCOUNT bank_account_id");
    expect(await refusal(usable(s.userId, "not-a-uuid", "eur"))).toBe("INVALID_BANK_ACCOUNT bank_account_id");
    expect(await refusal(usable(s.userId, sepa.bank_account_id, "usd"))).toBe("INVALID_BANK_ACCOUNT bank_account_id");
    expect(await refusal(usable(s.userId, ach.bank_account_id, "eur"))).toBe("INVALID_BANK_ACCOUNT bank_account_id");
    expect(await refusal(usable(s.userId, sepa.bank_account_id, "eur"))).toBe("accepted");
    // a foreign customer cannot use the account even naming the right user
    await expect(bank.usableBankAccount(t.db, { customerId: "someone-else", userId: s.userId, bankAccountId: sepa.bank_account_id, currency: "eur" }))
      .rejects.toMatchObject({ code: "BANK_ACCOUNT_REQUIRED" });

    expect((await del(apiKey(s.key), s.userId, sepa.bank_account_id)).status).toBe(204);
    const deleted = await usable(s.userId, sepa.bank_account_id, "eur").catch((e: DomainError) => e);
    expect(deleted).toMatchObject({ code: "INVALID_BANK_ACCOUNT", message: expect.stringContaining("deleted") as string });
    // inside a transaction too, on its Tx
    const inTx = await t.db.transaction((tx) => bank.usableBankAccount(tx, { customerId: s.customerId, userId: s.userId, bankAccountId: ach.bank_account_id, currency: "usd" }));
    expect(inTx).toMatchObject({ routingNumber: ROUTING, accountNumber: ACCOUNT });
    expect((await del(apiKey(s.key), s.userId, ach.bank_account_id)).status).toBe(204);
    expect(await refusal(usable(s.userId, ach.bank_account_id, "usd"))).toBe("BANK_ACCOUNT_REQUIRED bank_account_id");
  });
});
