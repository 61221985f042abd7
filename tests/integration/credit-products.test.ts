/**
 * Credit products over HTTP on a real PostgreSQL (reference: "Credit product (credit core)",
 * "Credit core error envelope", "Limits"; docs/decisions/credentials-and-tokens.md, docs/decisions/credit.md): the operator creates and
 * updates a tenant's products with the master key, a tenant lists and reads its own with its owner
 * API key. Each field's bounds answer 422 `VALIDATION_ERROR` naming the camelCase field; both
 * spellings of the accrual method are accepted and the short one is returned; a used code is 409;
 * the wrong kind of credential is 403; another tenant's product is 404. Every response is checked
 * against the credit document by the test app (a mismatch would answer 500).
 */
import type request from "supertest";
import { describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, useTestApp } from "../support/app.js";
import { BASE, Walk } from "../support/fixtures.js";
import { goldenProductBody } from "../support/credit-golden.js";
import { clockPast } from "../support/wait.js";

const t = useTestApp();
let seq = 0;

const PRODUCTS = "/v2/credit-products";
const api = t.api;
const asMaster = (r: request.Test) => r.set("x-api-key", TEST_MASTER_KEY);

/** A new tenant (customer with an owner API key). */
async function tenant(): Promise<{ customerId: string; key: string }> {
  const { customerId, key } = await new Walk(t.express).tenant(`cp-${++seq}-${Date.now().toString(36)}`);
  return { customerId, key };
}


/** Creates a product as the operator; expects 201 and returns `data`. */
async function create(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await asMaster(api().post(PRODUCTS)).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as Record<string, unknown>;
}

/** Expects a credit 422 `VALIDATION_ERROR` whose errors name `field`. */
function expectInvalid(res: request.Response, field: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.success).toBe(false);
  expect(res.body.meta.version).toBe("v2");
  expect(res.body.errors.every((e: { code: string }) => e.code === "VALIDATION_ERROR")).toBe(true);
  expect(res.body.errors.map((e: { field?: string }) => e.field)).toContain(field);
}

/** Expects a credit error with `status` and `code`. */
function expectCreditError(res: request.Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ success: false, errors: [{ code }], meta: { version: "v2" } });
  expect(res.headers["x-trace-id"]).toBe(res.body.meta.traceId);
}

describe("create (operator, master key)", () => {
  it("creates the golden product for a tenant: 201 in the credit envelope with every field", async () => {
    const { customerId } = await tenant();
    const res = await asMaster(api().post(PRODUCTS)).send(goldenProductBody(customerId));
    expect(res.status).toBe(201);
    expect(res.headers["x-trace-id"]).toBe(res.body.meta.traceId);
    expect(res.body).toMatchObject({ success: true, meta: { version: "v2" } });
    const { createdAt, updatedAt, ...rest } = res.body.data as Record<string, unknown>;
    expect(rest).toEqual(goldenProductBody(customerId));
    expect(createdAt).toBe(updatedAt);
    expect(Number.isNaN(Date.parse(createdAt as string))).toBe(false);
  });

  it("accepts both spellings of the accrual method and always returns the short one", async () => {
    const { customerId, key } = await tenant();
    const cases: [string, string, string][] = [
      ["101", "ADB", "ADB"],
      ["102", "average_daily_balance", "ADB"],
      ["103", "BAC", "BAC"],
      ["104", "balance_at_cut", "BAC"],
    ];
    for (const [code, sent, returned] of cases) {
      const data = await create(goldenProductBody(customerId, { creditProductCode: code, interestAccrualMethod: sent }));
      expect(data.interestAccrualMethod, sent).toBe(returned);
      const read = await api().get(`${PRODUCTS}/${code}`).set("x-api-key", key);
      expect(read.body.data.interestAccrualMethod, sent).toBe(returned);
    }
    const updated = await asMaster(api().patch(`${PRODUCTS}/103`)).send({ customerId, interestAccrualMethod: "average_daily_balance" });
    expect(updated.status).toBe(200);
    expect(updated.body.data.interestAccrualMethod).toBe("ADB");
    expectInvalid(await asMaster(api().post(PRODUCTS)).send(goldenProductBody(customerId, { creditProductCode: "105", interestAccrualMethod: "adb" })), "interestAccrualMethod");
  });

  it("accepts every bound itself: gracePeriod 1 and 365, rates 0 and 1000, minimum rate 100, split 99, 4 decimals, cents 10^9, divisor 365", async () => {
    const { customerId } = await tenant();
    const low = { fixedInterestAmount: 0, baseInterestRate: 0, baseMinimumPaymentRate: 0, fixedMinimumPaymentAmount: 0, capitalInterestSplit: 0, gracePeriod: 1, morosidadRate: 0, baseInterestMorosidad: 0, dailyRateDivisor: 365 };
    const high = { fixedInterestAmount: 1e9, baseInterestRate: 1000, baseMinimumPaymentRate: 100, fixedMinimumPaymentAmount: 1e9, capitalInterestSplit: 99, gracePeriod: 365, morosidadRate: 1000, baseInterestMorosidad: 1e9 };
    const fine = { baseInterestRate: 36.1234, baseMinimumPaymentRate: 99.9999, capitalInterestSplit: 0.0001, morosidadRate: 12.5 };
    for (const [code, values] of [["201", low], ["202", high], ["203", fine]] as const) {
      const data = await create(goldenProductBody(customerId, { creditProductCode: code, ...values }));
      expect(data).toMatchObject(values);
    }
  });

  const outOfBounds: [string, unknown][] = [
    ["gracePeriod", 0],
    ["gracePeriod", -3],
    ["gracePeriod", 366],
    ["gracePeriod", 1.5],
    ["baseMinimumPaymentRate", 100.0001],
    ["baseMinimumPaymentRate", -1],
    ["capitalInterestSplit", 99.0001],
    ["capitalInterestSplit", 100],
    ["dailyRateDivisor", 364],
    ["dailyRateDivisor", 366],
    ["baseInterestRate", 1000.0001],
    ["baseInterestRate", -0.5],
    ["baseInterestRate", 36.12345],
    ["morosidadRate", 1001],
    ["morosidadRate", 12.00001],
    ["capitalInterestSplit", 50.00001],
    ["fixedInterestAmount", -1],
    ["fixedInterestAmount", 1_000_000_001],
    ["fixedInterestAmount", 1.5],
    ["fixedMinimumPaymentAmount", 1_000_000_001],
    ["fixedMinimumPaymentAmount", -1],
    ["baseInterestMorosidad", 1_000_000_001],
    ["baseInterestMorosidad", -1],
    ["creditProductCode", "12"],
    ["creditProductCode", "1234"],
    ["creditProductCode", "abc"],
    ["customerId", ""],
    ["customerId", "x".repeat(49)],
    ["customerId", "bad id!"],
    ["cutFrequency", "fortnight"],
    ["revolving", "maybe"],
    ["compound", 7],
  ];
  it.each(outOfBounds)("answers 422 on %s = %j", async (field, value) => {
    const { customerId } = await tenant();
    const body = goldenProductBody(customerId, { [field]: value });
    expectInvalid(await asMaster(api().post(PRODUCTS)).send(body), field);
  });

  it("answers 422 on a rate with more than 4 decimals that a double cannot tell from an allowed one", async () => {
    const { customerId } = await tenant();
    const text = JSON.stringify(goldenProductBody(customerId)).replace('"baseMinimumPaymentRate":10', '"baseMinimumPaymentRate":10.000000000000000001');
    const res = await asMaster(api().post(PRODUCTS)).set("content-type", "application/json").send(text);
    expectInvalid(res, "baseMinimumPaymentRate");
  });

  it("an update answers 422 on such a rate too, and changes nothing", async () => {
    const { customerId } = await tenant();
    await create(goldenProductBody(customerId));
    const text = `{"customerId":${JSON.stringify(customerId)},"morosidadRate":12.000000000000000001}`;
    expectInvalid(await asMaster(api().patch(`${PRODUCTS}/001`)).set("content-type", "application/json").send(text), "morosidadRate");
    const read = await asMaster(api().patch(`${PRODUCTS}/001`)).send({ customerId });
    expect(read.body.data.morosidadRate).toBe(goldenProductBody(customerId).morosidadRate);
  });

  it("answers 422 naming each missing field, and on an unknown key", async () => {
    const { customerId } = await tenant();
    for (const field of Object.keys(goldenProductBody(customerId))) {
      const body = goldenProductBody(customerId);
      delete body[field];
      expectInvalid(await asMaster(api().post(PRODUCTS)).send(body), field);
    }
    expectInvalid(await asMaster(api().post(PRODUCTS)).send(goldenProductBody(customerId, { creditLimit: 5 })), "creditLimit");
  });

  it("answers one 422 item per invalid field", async () => {
    const { customerId } = await tenant();
    const res = await asMaster(api().post(PRODUCTS)).send(goldenProductBody(customerId, { gracePeriod: 0, capitalInterestSplit: 100, dailyRateDivisor: 364 }));
    expectInvalid(res, "gracePeriod");
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(["capitalInterestSplit", "dailyRateDivisor", "gracePeriod"]);
  });

  it("answers 422 on customerId for a customer that does not exist or is deleted", async () => {
    expectInvalid(await asMaster(api().post(PRODUCTS)).send(goldenProductBody("no-such-customer")), "customerId");
    const { customerId } = await tenant();
    const operator = await new Walk(t.express).operatorToken();
    const del = await api().delete(`${BASE}/customers/${customerId}`).set("Authorization", `Bearer ${operator}`);
    expect(del.status).toBe(204);
    expectInvalid(await asMaster(api().post(PRODUCTS)).send(goldenProductBody(customerId)), "customerId");
  });

  it("answers 409 CONFLICT for a code the tenant already uses; another tenant may use it", async () => {
    const a = await tenant();
    const b = await tenant();
    await create(goldenProductBody(a.customerId, { creditProductCode: "007" }));
    expectCreditError(await asMaster(api().post(PRODUCTS)).send(goldenProductBody(a.customerId, { creditProductCode: "007", gracePeriod: 5 })), 409, "CONFLICT");
    const other = await create(goldenProductBody(b.customerId, { creditProductCode: "007" }));
    expect(other.customerId).toBe(b.customerId);
  });

  it("creates a code once under concurrent requests: one 201, the others 409", async () => {
    const { customerId } = await tenant();
    const answers = await Promise.all(Array.from({ length: 5 }, () => asMaster(api().post(PRODUCTS)).send(goldenProductBody(customerId, { creditProductCode: "300" }))));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
  });
});

describe("credentials", () => {
  it("answers 403 FORBIDDEN to a tenant key on create and update, before validating the body", async () => {
    const { customerId, key } = await tenant();
    await create(goldenProductBody(customerId));
    expectCreditError(await api().post(PRODUCTS).set("x-api-key", key).send(goldenProductBody(customerId, { creditProductCode: "002" })), 403, "FORBIDDEN");
    expectCreditError(await api().post(PRODUCTS).set("x-api-key", key).send({ gracePeriod: 0 }), 403, "FORBIDDEN");
    expectCreditError(await api().patch(`${PRODUCTS}/001`).set("x-api-key", key).send({ customerId, gracePeriod: 20 }), 403, "FORBIDDEN");
    const unchanged = await api().get(`${PRODUCTS}/001`).set("x-api-key", key);
    expect(unchanged.body.data.gracePeriod).toBe(10);
  });

  it("answers 403 FORBIDDEN to the master key on list and read (tenant operations), 401 without a key", async () => {
    const { customerId } = await tenant();
    await create(goldenProductBody(customerId));
    expectCreditError(await asMaster(api().get(PRODUCTS)), 403, "FORBIDDEN");
    expectCreditError(await asMaster(api().get(`${PRODUCTS}/001`)), 403, "FORBIDDEN");
    expectCreditError(await api().get(PRODUCTS), 401, "UNAUTHORIZED");
    expectCreditError(await api().post(PRODUCTS).send(goldenProductBody(customerId)), 401, "UNAUTHORIZED");
    expectCreditError(await api().get(PRODUCTS).set("x-api-key", "sk_not-a-key"), 401, "UNAUTHORIZED");
  });
});

describe("read and list (tenant, owner API key)", () => {
  it("reads its own product and answers 404 NOT_FOUND for another tenant's code or an unknown one", async () => {
    const a = await tenant();
    const b = await tenant();
    const created = await create(goldenProductBody(a.customerId, { creditProductCode: "042" }));
    const own = await api().get(`${PRODUCTS}/042`).set("x-api-key", a.key);
    expect(own.status).toBe(200);
    expect(own.body.data).toEqual(created);
    expectCreditError(await api().get(`${PRODUCTS}/042`).set("x-api-key", b.key), 404, "NOT_FOUND");
    expectCreditError(await api().get(`${PRODUCTS}/043`).set("x-api-key", a.key), 404, "NOT_FOUND");
    expectInvalid(await api().get(`${PRODUCTS}/42`).set("x-api-key", a.key), "creditProductCode");
    const listB = await api().get(PRODUCTS).set("x-api-key", b.key);
    expect(listB.body.data).toEqual({ items: [], total: 0, limit: 20, offset: 0 });
  });

  it("lists only the tenant's products, ordered by code, paged by limit and offset", async () => {
    const a = await tenant();
    const b = await tenant();
    for (const code of ["005", "001", "004", "002", "003"]) await create(goldenProductBody(a.customerId, { creditProductCode: code }));
    await create(goldenProductBody(b.customerId, { creditProductCode: "000" }));
    const all = await api().get(PRODUCTS).set("x-api-key", a.key);
    expect(all.status).toBe(200);
    expect(all.body.data).toMatchObject({ total: 5, limit: 20, offset: 0 });
    expect(all.body.data.items.map((p: { creditProductCode: string }) => p.creditProductCode)).toEqual(["001", "002", "003", "004", "005"]);
    expect(all.body.data.items.every((p: { customerId: string }) => p.customerId === a.customerId)).toBe(true);
    // the list's items are the products as Get Credit Product shows them, every field and timestamp alike
    for (const item of all.body.data.items as { creditProductCode: string }[]) {
      const one = await api().get(`${PRODUCTS}/${item.creditProductCode}`).set("x-api-key", a.key);
      expect(item).toEqual(one.body.data);
    }
    const pages: string[][] = [];
    for (const offset of [0, 2, 4, 6]) {
      const page = await api().get(`${PRODUCTS}?limit=2&offset=${offset}`).set("x-api-key", a.key);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.body.data).toMatchObject({ total: 5, limit: 2, offset });
      pages.push(page.body.data.items.map((p: { creditProductCode: string }) => p.creditProductCode));
    }
    expect(pages).toEqual([["001", "002"], ["003", "004"], ["005"], []]);
    expectInvalid(await api().get(`${PRODUCTS}?limit=0`).set("x-api-key", a.key), "limit");
    expectInvalid(await api().get(`${PRODUCTS}?limit=101`).set("x-api-key", a.key), "limit");
    expectInvalid(await api().get(`${PRODUCTS}?offset=-1`).set("x-api-key", a.key), "offset");
  });
});

describe("Update Credit Product Settings (operator, master key)", () => {
  it("changes only the fields sent and returns the whole product; a read shows the change", async () => {
    const { customerId, key } = await tenant();
    const created = await create(goldenProductBody(customerId));
    await clockPast(created.updatedAt as string);
    const res = await asMaster(api().patch(`${PRODUCTS}/001`)).send({ customerId, gracePeriod: 15, baseInterestRate: 24.5, cutFrequency: "biweekly", revolving: false });
    expect(res.status).toBe(200);
    const { updatedAt, ...rest } = res.body.data as Record<string, unknown>;
    const { updatedAt: before, ...createdRest } = created;
    expect(rest).toEqual({ ...createdRest, gracePeriod: 15, baseInterestRate: 24.5, cutFrequency: "biweekly", revolving: false });
    expect(Date.parse(updatedAt as string)).toBeGreaterThan(Date.parse(before as string));
    const read = await api().get(`${PRODUCTS}/001`).set("x-api-key", key);
    expect(read.body.data).toEqual(res.body.data);
  });

  it("a body with customerId alone changes nothing, updatedAt included", async () => {
    const { customerId } = await tenant();
    const created = await create(goldenProductBody(customerId));
    const res = await asMaster(api().patch(`${PRODUCTS}/001`)).send({ customerId });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(created);
  });

  it("applies the creation bounds to each field sent (422 naming it) and changes nothing then", async () => {
    const { customerId, key } = await tenant();
    const created = await create(goldenProductBody(customerId));
    const cases: [string, unknown][] = [
      ["gracePeriod", 0],
      ["baseMinimumPaymentRate", 101],
      ["capitalInterestSplit", 99.5],
      ["dailyRateDivisor", 364],
      ["baseInterestRate", 1000.5],
      ["morosidadRate", 1.23456],
      ["fixedInterestAmount", 1_000_000_001],
      ["creditProductCode", "002"],
      ["interestAccrualMethod", "XYZ"],
    ];
    for (const [field, value] of cases) {
      expectInvalid(await asMaster(api().patch(`${PRODUCTS}/001`)).send({ customerId, [field]: value }), field);
    }
    expectInvalid(await asMaster(api().patch(`${PRODUCTS}/001`)).send({ gracePeriod: 5 }), "customerId");
    expectInvalid(await asMaster(api().patch(`${PRODUCTS}/001`)).send({ customerId: "no-such-customer", gracePeriod: 5 }), "customerId");
    expectInvalid(await asMaster(api().patch(`${PRODUCTS}/001`)).send({ customerId, gracePeriod: null }), "gracePeriod");
    const read = await api().get(`${PRODUCTS}/001`).set("x-api-key", key);
    expect(read.body.data).toEqual(created);
  });

  it("answers 404 NOT_FOUND for a code the named tenant does not have (another tenant's included)", async () => {
    const a = await tenant();
    const b = await tenant();
    await create(goldenProductBody(a.customerId, { creditProductCode: "010" }));
    expectCreditError(await asMaster(api().patch(`${PRODUCTS}/010`)).send({ customerId: b.customerId, gracePeriod: 3 }), 404, "NOT_FOUND");
    expectCreditError(await asMaster(api().patch(`${PRODUCTS}/011`)).send({ customerId: a.customerId, gracePeriod: 3 }), 404, "NOT_FOUND");
    const read = await api().get(`${PRODUCTS}/010`).set("x-api-key", a.key);
    expect(read.body.data.gracePeriod).toBe(10);
  });

  it("states in the contract that an update applies to the tenant's wallets from their next cut", async () => {
    const res = await api().get("/openapi/credit.json");
    expect(res.status).toBe(200);
    const description = (res.body.paths["/v2/credit-products/{creditProductCode}"].patch.description as string).replace(/\s+/g, " ");
    expect(description).toContain("from that wallet's next cut");
    expect(description).not.toContain("keep the interest");
  });
});
