/**
 * Sessions, customers and credentials over HTTP on a real PostgreSQL (reference: "Customer
 * management"; docs/decisions/credentials-and-tokens.md, docs/decisions/customers-users-and-wallets.md
 * "Customers", docs/decisions/provider-and-sandbox.md "Customer registry"): every success path and every error row.
 */
import request from "supertest";
import { beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, useTestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError } from "../support/fixtures.js";

const t = useTestApp();
let walk: Walk;
let operator: string;

beforeAll(async () => {
  walk = new Walk(t.express);
  operator = await walk.operatorToken();
});

const api = t.api;
const asOperator = (r: request.Test) => r.set("Authorization", `Bearer ${operator}`);

describe("POST /sessions", () => {
  it("opens an operator session with the master key in x-master-api-key or x-api-key", async () => {
    for (const header of ["x-master-api-key", "x-api-key"]) {
      const res = await api().post(`${BASE}/sessions`).set(header, TEST_MASTER_KEY);
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ token_type: "Bearer", scope: "operator", customer_id: null });
      const ttl = Date.parse(res.body.data.expires_at) - Date.now();
      expect(ttl).toBeGreaterThan(3500_000);
      expect(ttl).toBeLessThanOrEqual(3600_000);
    }
  });

  it("opens a customer session with customer_id and customer_secret, limited to that customer", async () => {
    const a = await walk.tenant("sess-a");
    await walk.tenant("sess-b");
    const res = await api().post(`${BASE}/sessions`).send({ customer_id: "sess-a", customer_secret: a.key });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ scope: "customer", customer_id: "sess-a" });
    const session = res.body.data.token as string;
    const own = await api().get(`${BASE}/customers/sess-a`).set("Authorization", `Bearer ${session}`);
    expect(own.status).toBe(200);
    expectPlatformError(await api().get(`${BASE}/customers/sess-b`).set("Authorization", `Bearer ${session}`), 403, "FORBIDDEN");
    expectPlatformError(
      await api().post(`${BASE}/customers`).set("Authorization", `Bearer ${session}`).send({ customer_id: "sess-c", email: "a@b.example", entity_name: "C" }),
      403,
      "FORBIDDEN",
    );
  });

  it("refuses a wrong master key, wrong customer secrets and an empty request with 401", async () => {
    expectPlatformError(await api().post(`${BASE}/sessions`).set("x-master-api-key", "x".repeat(40)), 401, "UNAUTHORIZED");
    const a = await walk.tenant("sess-d");
    expectPlatformError(await api().post(`${BASE}/sessions`).send({ customer_id: "sess-a", customer_secret: a.key }), 401, "UNAUTHORIZED");
    expectPlatformError(await api().post(`${BASE}/sessions`).send({ customer_id: "sess-d", customer_secret: "sk_nope" }), 401, "UNAUTHORIZED");
    expectPlatformError(await api().post(`${BASE}/sessions`), 401, "UNAUTHORIZED");
  });

  it("answers 403 to an owner API key, a valid credential that cannot open sessions", async () => {
    const a = await walk.tenant("sess-e");
    expectPlatformError(await api().post(`${BASE}/sessions`).set("x-api-key", a.key), 403, "FORBIDDEN");
  });
});

describe("customers", () => {
  it("creates a customer from the upstream registry, filling the business profile", async () => {
    const res = await asOperator(api().post(`${BASE}/customers`)).send({ customer_id: "acme-corp", email: "ops@acme.example", entity_name: "Acme Corp" });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      customer_id: "acme-corp",
      email: "ops@acme.example",
      status: "VERIFIED",
      business: { entity_name: "Acme Corp", incorporation_country: expect.stringMatching(/^[A-Z]{2}$/) },
    });
    expect(res.body.data.business.registration_number).toMatch(/^REG-/);
  });

  it("answers 404 for an id upstream does not know, 409 for an existing id, 422 for bad fields", async () => {
    expectPlatformError(
      await asOperator(api().post(`${BASE}/customers`)).send({ customer_id: "unknown-co", email: "a@b.example", entity_name: "X" }),
      404,
      "CUSTOMER_NOT_FOUND",
    );
    await walk.customer("dup-co", operator);
    expectPlatformError(
      await asOperator(api().post(`${BASE}/customers`)).send({ customer_id: "dup-co", email: "a@b.example", entity_name: "X" }),
      409,
      "CUSTOMER_ALREADY_EXISTS",
    );
    const bad = await asOperator(api().post(`${BASE}/customers`)).send({ customer_id: "x".repeat(49), email: "not-an-email", entity_name: "y".repeat(256) });
    expectPlatformError(bad, 422, "UNPROCESSABLE_ENTITY");
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(["customer_id", "email", "entity_name"]);
  });

  it("needs a session: 401 without one, 403 with a master key or owner key", async () => {
    expectPlatformError(await api().post(`${BASE}/customers`).send({ customer_id: "zz", email: "a@b.example", entity_name: "Z" }), 401, "UNAUTHORIZED");
    expectPlatformError(
      await api().post(`${BASE}/customers`).set("x-master-api-key", TEST_MASTER_KEY).send({ customer_id: "zz", email: "a@b.example", entity_name: "Z" }),
      403,
      "FORBIDDEN",
    );
    expectPlatformError(await api().get(`${BASE}/customers/acme-corp`).set("Authorization", "Bearer not.a.jwt"), 401, "UNAUTHORIZED");
    expectPlatformError(await api().get(`${BASE}/customers/acme-corp`).set("Authorization", "Basic abc"), 401, "UNAUTHORIZED");
  });

  it("reads a customer, and 404 for one that does not exist", async () => {
    await walk.customer("read-co", operator);
    const res = await asOperator(api().get(`${BASE}/customers/read-co`));
    expect(res.status).toBe(200);
    expect(res.body.data.customer_id).toBe("read-co");
    expectPlatformError(await asOperator(api().get(`${BASE}/customers/nobody-here`)), 404, "CUSTOMER_NOT_FOUND");
  });

  it("updates partially, merging nested business fields, and enforces the business required fields", async () => {
    const before = await walk.customer("upd-co", operator);
    const res = await asOperator(api().put(`${BASE}/customers/upd-co`)).send({
      first_name: "Ada",
      business: { entity_name: "Upd Co Renamed", incorporation_country: "GB", description: "new" },
    });
    expect(res.status).toBe(200);
    const business = before.business as Record<string, unknown>;
    expect(res.body.data).toMatchObject({
      first_name: "Ada",
      last_name: before.last_name,
      email: before.email,
      business: { ...business, entity_name: "Upd Co Renamed", incorporation_country: "GB", description: "new" },
    });
    const missing = await asOperator(api().put(`${BASE}/customers/upd-co`)).send({ business: { description: "x" } });
    expectPlatformError(missing, 422, "UNPROCESSABLE_ENTITY");
    expect(missing.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(["business.entity_name", "business.incorporation_country"]);
    expectPlatformError(await asOperator(api().put(`${BASE}/customers/upd-co`)).send({ account_type: "alien" }), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await asOperator(api().put(`${BASE}/customers/none-co`)).send({ first_name: "A" }), 404, "CUSTOMER_NOT_FOUND");
  });

  it("lists customers newest first with the master key and pagination, 401 without it", async () => {
    for (const id of ["list-1", "list-2", "list-3"]) await walk.customer(id, operator);
    const res = await api().get(`${BASE}/customers?filter[limit]=2&filter[skip]=0`).set("x-master-api-key", TEST_MASTER_KEY);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.data[0].customer_id).toBe("list-3");
    expect(res.body.data[1].customer_id).toBe("list-2");
    const { records, navigation } = res.body.meta.pagination;
    expect(records).toMatchObject({ skip: 0, limit: 2, has_previous: false, has_next: true });
    expect(navigation.next).toBe("/customers?filter[limit]=2&filter[skip]=2");
    expect(navigation.previous).toBeNull();
    const viaApiKey = await api().get(`${BASE}/customers`).set("x-api-key", TEST_MASTER_KEY);
    expect(viaApiKey.status).toBe(200);
    expectPlatformError(await api().get(`${BASE}/customers`), 401, "UNAUTHORIZED");
    expectPlatformError(await api().get(`${BASE}/customers`).set("x-master-api-key", "y".repeat(40)), 401, "UNAUTHORIZED");
    expectPlatformError(await api().get(`${BASE}/customers?filter[limit]=101`).set("x-master-api-key", TEST_MASTER_KEY), 422, "UNPROCESSABLE_ENTITY");
  });

  it("soft-deletes a customer: its API keys and sessions stop working at once", async () => {
    const tenant = await walk.tenant("del-co");
    const session = (await api().post(`${BASE}/sessions`).send({ customer_id: "del-co", customer_secret: tenant.key })).body.data.token;
    expect((await api().get(`${BASE}/users`).set("x-api-key", tenant.key)).status).toBe(200);
    const del = await asOperator(api().delete(`${BASE}/customers/del-co`));
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expectPlatformError(await api().get(`${BASE}/users`).set("x-api-key", tenant.key), 401, "UNAUTHORIZED");
    expectPlatformError(await api().get(`${BASE}/customers/del-co`).set("Authorization", `Bearer ${session}`), 401, "UNAUTHORIZED");
    expectPlatformError(await asOperator(api().get(`${BASE}/customers/del-co`)), 404, "CUSTOMER_NOT_FOUND");
    expectPlatformError(await asOperator(api().delete(`${BASE}/customers/del-co`)), 404, "CUSTOMER_NOT_FOUND");
    const list = await api().get(`${BASE}/customers?filter[limit]=100`).set("x-master-api-key", TEST_MASTER_KEY);
    expect(list.body.data.map((c: { customer_id: string }) => c.customer_id)).not.toContain("del-co");
  });
});

describe("credentials", () => {
  it("generates a secret shown once, lists it masked, and revokes it at once", async () => {
    await walk.customer("cred-co", operator);
    const gen = await asOperator(api().post(`${BASE}/customers/cred-co/credentials`));
    expect(gen.status).toBe(201);
    const secret = gen.body.data.customer_secret as string;
    expect(secret).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    const other = await walk.ownerKey("cred-co", operator);

    const list = await asOperator(api().get(`${BASE}/customers/cred-co/credentials`));
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(2);
    for (const c of list.body.data) {
      expect(c.customer_secret).toMatch(/^sk_.{5}\.\.\.$/);
      expect(c).toMatchObject({ customer_id: "cred-co", is_owner: true, is_active: true, user_email: "ops@cred-co.example" });
    }
    expect(JSON.stringify(list.body)).not.toContain(secret);

    expect((await api().get(`${BASE}/users`).set("x-api-key", secret)).status).toBe(200);
    const del = await asOperator(api().delete(`${BASE}/customers/cred-co/credentials/${gen.body.data.credential_id}`));
    expect(del.status).toBe(204);
    expectPlatformError(await api().get(`${BASE}/users`).set("x-api-key", secret), 401, "UNAUTHORIZED");
    expect((await api().get(`${BASE}/users`).set("x-api-key", other.secret)).status).toBe(200);
    const after = await asOperator(api().get(`${BASE}/customers/cred-co/credentials`));
    const revoked = after.body.data.find((c: { credential_id: string }) => c.credential_id === gen.body.data.credential_id);
    expect(revoked.is_active).toBe(false);
  });

  it("answers 404 for an unknown customer or credential", async () => {
    await walk.customer("cred-404", operator);
    expectPlatformError(await asOperator(api().post(`${BASE}/customers/none-404/credentials`)), 404, "CUSTOMER_NOT_FOUND");
    expectPlatformError(await asOperator(api().get(`${BASE}/customers/none-404/credentials`)), 404, "CUSTOMER_NOT_FOUND");
    expectPlatformError(
      await asOperator(api().delete(`${BASE}/customers/cred-404/credentials/8d0c3f55-1111-4a4a-9b9b-000000000000`)),
      404,
      "CREDENTIAL_NOT_FOUND",
    );
    expectPlatformError(await asOperator(api().delete(`${BASE}/customers/cred-404/credentials/not-a-uuid`)), 404, "CREDENTIAL_NOT_FOUND");
  });

  it("does not let one customer's session revoke another customer's credential", async () => {
    const a = await walk.tenant("cred-a");
    const b = await walk.tenant("cred-b");
    const sessionA = (await api().post(`${BASE}/sessions`).send({ customer_id: "cred-a", customer_secret: a.key })).body.data.token;
    expectPlatformError(
      await api().delete(`${BASE}/customers/cred-b/credentials/${b.credentialId}`).set("Authorization", `Bearer ${sessionA}`),
      403,
      "FORBIDDEN",
    );
    expectPlatformError(
      await asOperator(api().delete(`${BASE}/customers/cred-a/credentials/${b.credentialId}`)),
      404,
      "CREDENTIAL_NOT_FOUND",
    );
    expect((await api().get(`${BASE}/users`).set("x-api-key", b.key)).status).toBe(200);
  });
});

describe("bad input on customers (docs/decisions/requests-and-validation.md)", () => {
  it("a business object nested 20 000 levels deep answers 400; stray keys and __proto__ in business answer 422", async () => {
    await walk.customer("deep-co", operator);
    const nested = '{"a":'.repeat(20_000) + '"x"' + "}".repeat(20_000);
    const deep = await api().put(`${BASE}/customers/deep-co`).set("Authorization", `Bearer ${operator}`).set("content-type", "application/json")
      .send(`{"business":{"entity_name":"Deep","incorporation_country":"US","extra":${nested}}}`);
    expectPlatformError(deep, 400, "BAD_REQUEST");
    expect(deep.body.errors[0].message).toMatch(/nested deeper than 32/);
    for (const business of ['{"entity_name":"P","incorporation_country":"US","__proto__":{"admin":true}}', '{"entity_name":"P","incorporation_country":"US","stray":"y"}']) {
      const res = await api().put(`${BASE}/customers/deep-co`).set("Authorization", `Bearer ${operator}`).set("content-type", "application/json").send(`{"business":${business}}`);
      expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
      expect(res.body.errors[0].field).toMatch(/^business\.(__proto__|stray)$/);
    }
  });
});

describe("customer phone and names follow the user's rules (docs/decisions/customers-users-and-wallets.md#customers, docs/decisions/names.md)", () => {
  /** A mobile number of each country the sandbox registry fills customers with (its own numbers). */
  const MOBILE: Record<string, string> = { US: "2025550143", GB: "7400123456", MX: "5512345678", ES: "612345678" };
  const put = (id: string, body: Record<string, unknown>) => asOperator(api().put(`${BASE}/customers/${id}`)).send(body);
  const get = async (id: string) => (await asOperator(api().get(`${BASE}/customers/${id}`))).body.data as Record<string, unknown>;
  const fieldsOf = (res: request.Response) => (res.body.errors as { field: string }[]).map((e) => e.field).sort();

  it("the registry's phone is a valid mobile of its country, so updating other fields never trips on it", async () => {
    const created = await walk.customer("phone-reg-co", operator);
    const country = created.phone_country_code as string;
    expect(Object.keys(MOBILE)).toContain(country);
    expect(created.phone_number).toBe(MOBILE[country]);
    const res = await put("phone-reg-co", { first_name: "Grace", account_purpose: "custody" });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ phone_country_code: country, phone_number: MOBILE[country] });
  });

  it.each([
    ["letters", { phone_number: "abc" }],
    ["too few digits", { phone_number: "12345" }],
    ["a Spanish landline", { phone_country_code: "ES", phone_number: "912345678" }],
    ["a US number sent as GB", { phone_country_code: "GB", phone_number: "2025550143" }],
    ["an unknown country", { phone_country_code: "XX", phone_number: "2025550143" }],
  ])("answers 422 on phone_number for %s and changes nothing", async (_label, body) => {
    const id = `phone-bad-${Math.random().toString(36).slice(2, 10)}`;
    const before = await walk.customer(id, operator);
    const res = await put(id, { ...body, first_name: "Changed" });
    expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
    expect(fieldsOf(res)).toEqual(["phone_number"]);
    expect(res.body.errors[0].message).toMatch(/valid mobile number/);
    expect(await get(id)).toMatchObject({ first_name: before.first_name, phone_country_code: before.phone_country_code, phone_number: before.phone_number });
  });

  it("checks a country sent alone against the stored (registry) number, and a number sent alone against the stored country", async () => {
    const created = await walk.customer("phone-pair-co", operator);
    const country = created.phone_country_code as string;
    const other = Object.keys(MOBILE).find((c) => c !== country) as string;
    // the registry's number is not a mobile of another country
    const moved = await put("phone-pair-co", { phone_country_code: other });
    expectPlatformError(moved, 422, "UNPROCESSABLE_ENTITY");
    expect(fieldsOf(moved)).toEqual(["phone_number"]);
    // another country's number alone is not a mobile of the stored country
    const foreign = await put("phone-pair-co", { phone_number: MOBILE[other] });
    expectPlatformError(foreign, 422, "UNPROCESSABLE_ENTITY");
    expect(fieldsOf(foreign)).toEqual(["phone_number"]);
    // both together: accepted and stored as sent; then a number alone of that country
    const both = await put("phone-pair-co", { phone_country_code: other, phone_number: MOBILE[other] });
    expect(both.status).toBe(200);
    expect(both.body.data).toMatchObject({ phone_country_code: other, phone_number: MOBILE[other] });
    const formatted = other === "US" ? "(202) 555-0188" : MOBILE[other];
    const alone = await put("phone-pair-co", { phone_number: formatted });
    expect(alone.status, JSON.stringify(alone.body)).toBe(200);
    expect(await get("phone-pair-co")).toMatchObject({ phone_country_code: other, phone_number: formatted });
  });

  it("refuses a phone_country_code that is not ISO alpha-2 and a phone_number over 20 characters (schema, 422)", async () => {
    await walk.customer("phone-schema-co", operator);
    for (const body of [{ phone_country_code: "usa" }, { phone_country_code: "us" }, { phone_number: "2".repeat(21) }]) {
      const res = await put("phone-schema-co", body);
      expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
      expect(fieldsOf(res)).toEqual(Object.keys(body));
    }
  });

  it("refuses zero-width and bidirectional-control characters in entity_name on create, and in first_name, last_name and business.entity_name on update, naming each field", async () => {
    const created = await asOperator(api().post(`${BASE}/customers`)).send({ customer_id: "bidi-co", email: "ops@bidi.example", entity_name: "Acme\u202eroC" });
    expectPlatformError(created, 422, "UNPROCESSABLE_ENTITY");
    expect(fieldsOf(created)).toEqual(["entity_name"]);
    expect(created.body.errors[0].message).toMatch(/zero-width or bidirectional-control/);
    // nothing was created: the id is still free
    const before = await walk.customer("bidi-co", operator);
    const res = await put("bidi-co", {
      first_name: "Ada\u202e",
      last_name: "Love\u200blace",
      business: { entity_name: "\u2066Bidi Co", incorporation_country: "US" },
    });
    expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
    expect(fieldsOf(res)).toEqual(["business.entity_name", "first_name", "last_name"]);
    expect(await get("bidi-co")).toMatchObject({ first_name: before.first_name, last_name: before.last_name, business: before.business });
    for (const ch of ["\u200c", "\u200d", "\u2060", "\ufeff", "\u202a", "\u2069", "\u200e", "\u200f", "\u061c"]) {
      const one = await put("bidi-co", { first_name: `Ada${ch}` });
      expectPlatformError(one, 422, "UNPROCESSABLE_ENTITY");
      expect(fieldsOf(one)).toEqual(["first_name"]);
    }
    expect((await put("bidi-co", { first_name: "José", last_name: "Núñez-O’Brien" })).status).toBe(200);
  });
});
