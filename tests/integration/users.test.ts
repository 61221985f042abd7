/**
 * End users over HTTP on a real PostgreSQL (reference: "Users (owner API key)", "User",
 * "`individual` object", "States and transitions › User", "Authentication", the User codes,
 * "Limits"; decisions.md §2): every operation's success path and every error the reference lists.
 */
import { readFileSync } from "node:fs";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, startTestApp, type TestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError, userBody } from "../support/fixtures.js";

let t: TestApp;
let walk: Walk;
let operator: string;

beforeAll(async () => {
  t = await startTestApp();
  walk = new Walk(t.express);
  operator = await walk.operatorToken();
});
afterAll(async () => {
  await t.dispose();
});

const api = () => request(t.express);

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UNKNOWN_USER = "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e";

/** A customer id no other test uses. */
let customerSeq = 0;
const customerId = (prefix: string) => `u-${prefix}-${++customerSeq}`;

/** US mobile numbers (202-55x-xxxx) no other user of this file has, so tests never collide. */
let phoneSeq = 0;
const nextPhone = () => `20255${String(++phoneSeq * 7).padStart(5, "0")}`;

/** A valid Create User body with a unique email and phone. */
const body = (overrides: Record<string, unknown> = {}, individual: Record<string, unknown> = {}) =>
  userBody({ phone_number: nextPhone(), ...overrides }, individual);

/** A fresh tenant with its owner key. */
const tenant = (prefix: string) => walk.tenant(customerId(prefix));

const createUser = (key: string, overrides: Record<string, unknown> = {}, individual: Record<string, unknown> = {}) =>
  api().post(`${BASE}/users`).set("x-api-key", key).send(body(overrides, individual));

/** A user record as the API shows it. */
type UserRecord = { user_id: string; email: string; phone_number: string; updated_at: string; individual: Record<string, unknown>; [field: string]: unknown };

/** Creates a user and returns its record (asserting 201). */
async function newUser(key: string, overrides: Record<string, unknown> = {}, individual: Record<string, unknown> = {}) {
  const res = await createUser(key, overrides, individual);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as UserRecord;
}

const getUser = (key: string, id: string) => api().get(`${BASE}/users/${id}`).set("x-api-key", key);
const updateUser = (key: string, id: string, patch: Record<string, unknown>) => api().put(`${BASE}/users/${id}`).set("x-api-key", key).send(patch);
const deleteUser = (key: string, id: string) => api().delete(`${BASE}/users/${id}`).set("x-api-key", key);
const activateUser = (key: string, id: string) => api().post(`${BASE}/users/${id}/activate`).set("x-api-key", key);
const deactivateUser = (key: string, id: string) => api().post(`${BASE}/users/${id}/deactivate`).set("x-api-key", key);
const issueToken = (key: string, id: string) => api().post(`${BASE}/users/${id}/token`).set("x-api-key", key);
const listUsers = (key: string, query = "") => api().get(`${BASE}/users${query}`).set("x-api-key", key);

async function activated(key: string, id: string) {
  const res = await activateUser(key, id);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}
async function deactivated(key: string, id: string) {
  const res = await deactivateUser(key, id);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The sorted `field`s of a 422 answer, asserting each entry is an UNPROCESSABLE_ENTITY item. */
function fieldsOf(res: request.Response): string[] {
  expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
  for (const e of res.body.errors) {
    expect(e.code).toBe("UNPROCESSABLE_ENTITY");
    expect(typeof e.message).toBe("string");
  }
  return (res.body.errors as { field: string }[]).map((e) => e.field).sort();
}

/** The UTC calendar date `years` years and `days` days before today, as YYYY-MM-DD. */
function yearsAgo(years: number, days = 0): string {
  const now = new Date();
  const d = new Date(Date.UTC(now.getUTCFullYear() - years, now.getUTCMonth(), now.getUTCDate() - days));
  return d.toISOString().slice(0, 10);
}

const ids = (res: request.Response): string[] => (res.body.data as { user_id: string }[]).map((u) => u.user_id);

describe("POST /users (createUser)", () => {
  it("creates a PENDING, inactive user with a generated UUID v4 and echoes every field", async () => {
    const { key, customerId: cid } = await tenant("create");
    const sent = body({ first_name: "Grace", last_name: "Hopper", account_purpose: "investing" });
    const before = Date.now();
    const res = await api().post(`${BASE}/users`).set("x-api-key", key).send(sent);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.meta).toMatchObject({ version: "v1", trace_id: expect.any(String) });
    const user = res.body.data;
    expect(user.user_id).toMatch(UUID_V4);
    expect(user).toMatchObject({
      customer_id: cid,
      account_type: "individual",
      account_role: "third",
      account_purpose: "investing",
      first_name: "Grace",
      last_name: "Hopper",
      email: sent.email,
      phone_country_code: "US",
      phone_number: sent.phone_number,
      status: "PENDING",
      is_active: false,
      verification_status: "pending",
    });
    expect(user.individual).toEqual(sent.individual);
    expect(Date.parse(user.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(user.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(user.updated_at).toBe(user.created_at);

    const read = await getUser(key, user.user_id);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(user);
  });

  it("generates a distinct UUID v4 for every user", async () => {
    const { key } = await tenant("gen-ids");
    const a = await newUser(key);
    const b = await newUser(key);
    expect(a.user_id).toMatch(UUID_V4);
    expect(b.user_id).toMatch(UUID_V4);
    expect(a.user_id).not.toBe(b.user_id);
  });

  it("keeps a supplied UUID v4 user_id", async () => {
    const { key } = await tenant("own-id");
    const userId = "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f";
    const user = await newUser(key, { user_id: userId });
    expect(user.user_id).toBe(userId);
    expect((await getUser(key, userId)).body.data.user_id).toBe(userId);
    // an upper-case id is the same UUID: kept in canonical lower case, found by either spelling
    const upper = "ABCDEF12-3456-4789-8ABC-DEF123456789";
    const second = await newUser(key, { user_id: upper });
    expect(second.user_id).toBe(upper.toLowerCase());
    expect((await getUser(key, upper)).body.data.user_id).toBe(upper.toLowerCase());
    expectPlatformError(await createUser(key, { user_id: upper.toLowerCase() }), 409, "RESOURCE_CONFLICT");
  });

  it("answers 409 RESOURCE_CONFLICT for a user_id that already exists, and creates nothing", async () => {
    const { key } = await tenant("dup-id");
    const userId = "1d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a";
    await newUser(key, { user_id: userId, first_name: "First" });
    const dup = await createUser(key, { user_id: userId, first_name: "Second" });
    expectPlatformError(dup, 409, "RESOURCE_CONFLICT");
    expect((await getUser(key, userId)).body.data.first_name).toBe("First");
    expect((await listUsers(key)).body.meta.pagination.records.total).toBe(1);
  });

  it("answers another customer's user_id exactly as its own taken id: the other customer's user stays invisible (issue 8)", async () => {
    const mine = await tenant("id-probe-mine");
    const theirs = await tenant("id-probe-theirs");
    const ownId = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";
    const theirId = "4d5e6f7a-8b9c-4d0e-9f1a-2b3c4d5e6f7a";
    await newUser(mine.key, { user_id: ownId });
    await newUser(theirs.key, { user_id: theirId, first_name: "Theirs" });
    const own = await createUser(mine.key, { user_id: ownId });
    const other = await createUser(mine.key, { user_id: theirId });
    expectPlatformError(own, 409, "RESOURCE_CONFLICT");
    expectPlatformError(other, 409, "RESOURCE_CONFLICT");
    // the same answer but for the id itself, which the caller sent
    expect(other.body.errors).toEqual(JSON.parse(JSON.stringify(own.body.errors).replaceAll(ownId, theirId)));
    expect(Object.keys(other.headers).sort()).toEqual(Object.keys(own.headers).sort());
    // and nothing of the other customer's user is reachable
    expectPlatformError(await getUser(mine.key, theirId), 404, "USER_NOT_FOUND");
    expect((await getUser(theirs.key, theirId)).body.data.first_name).toBe("Theirs");
  });

  it("answers 422 on user_id for a user_id that is not a UUID v4", async () => {
    const { key } = await tenant("bad-id");
    for (const userId of ["not-a-uuid", "6f1c2d3e-4b5a-1c6d-8e7f-9a0b1c2d3e4f" /* v1 */, "6f1c2d3e-4b5a-4c6d-0e7f-9a0b1c2d3e4f" /* bad variant */, ""]) {
      const res = await createUser(key, { user_id: userId });
      expect(fieldsOf(res), userId).toEqual(["user_id"]);
    }
    expect((await listUsers(key)).body.data).toEqual([]);
  });

  it("answers 422 with one errors[] entry per missing top-level field, named by field", async () => {
    const { key } = await tenant("required");
    const res = await api().post(`${BASE}/users`).set("x-api-key", key).send({});
    expect(fieldsOf(res)).toEqual(
      ["account_purpose", "account_role", "account_type", "email", "first_name", "individual", "last_name", "phone_country_code", "phone_number"].sort(),
    );
    for (const e of res.body.errors) expect(e.message).toBe(`${e.field} is required.`);
  });

  it("answers 422 with one entry per missing individual field", async () => {
    const { key } = await tenant("required-ind");
    const res = await api().post(`${BASE}/users`).set("x-api-key", key).send({ ...body(), individual: {} });
    expect(fieldsOf(res)).toEqual(
      [
        "individual.dob",
        "individual.id_country_code",
        "individual.id_number",
        "individual.id_type",
        "individual.residential_address",
        "individual.residential_city",
        "individual.residential_country_code",
        "individual.residential_postal_code",
        "individual.residential_state",
      ].sort(),
    );
  });

  it("names exactly the fields that are missing or malformed", async () => {
    const { key } = await tenant("some-missing");
    const sent = body();
    delete sent.email;
    delete (sent.individual as Record<string, unknown>).dob;
    expect(fieldsOf(await api().post(`${BASE}/users`).set("x-api-key", key).send(sent))).toEqual(["email", "individual.dob"]);

    const malformed = await createUser(
      key,
      { email: "not-an-email", phone_country_code: "us", first_name: "J".repeat(101), phone_number: "2".repeat(21) },
      { id_type: "driver_license", residential_country_code: "USA", dob: "2001-02-30" },
    );
    expect(fieldsOf(malformed)).toEqual(
      ["email", "first_name", "individual.dob", "individual.id_type", "individual.residential_country_code", "phone_country_code", "phone_number"].sort(),
    );
    expect((await listUsers(key)).body.data).toEqual([]);
  });

  it("accepts names of exactly 100 characters", async () => {
    const { key } = await tenant("len-100");
    const user = await newUser(key, { first_name: "A".repeat(100), last_name: "B".repeat(100) });
    expect(user.first_name).toHaveLength(100);
    expect(fieldsOf(await createUser(key, { last_name: "B".repeat(101) }))).toEqual(["last_name"]);
  });

  it.each([
    ["account_type", "corporate", "INVALID_ACCOUNT_TYPE"],
    ["account_type", "corporation", "INVALID_ACCOUNT_TYPE"],
    ["account_role", "client", "INVALID_ACCOUNT_ROLE"],
    ["account_role", "partner", "INVALID_ACCOUNT_ROLE"],
    ["account_purpose", "savings", "INVALID_ACCOUNT_PURPOSE"],
  ])("answers 400 %s=%j with %s and creates nothing", async (field, value, code) => {
    const { key } = await tenant("enum");
    const res = await createUser(key, { [field]: value });
    expectPlatformError(res, 400, code);
    expect(res.body.errors).toHaveLength(1);
    expect((await listUsers(key)).body.data).toEqual([]);
  });

  it("accepts account_type business", async () => {
    const { key } = await tenant("business");
    const user = await newUser(key, { account_type: "business" });
    expect(user.account_type).toBe("business");
  });

  it("answers 400 INVALID_AGE under 18 (17 years 364 days, future dob) and accepts exactly 18 today", async () => {
    const { key } = await tenant("age");
    const young = await createUser(key, {}, { dob: yearsAgo(18, -1) });
    expectPlatformError(young, 400, "INVALID_AGE");
    expect(young.body.errors[0].field).toBe("individual.dob");
    expectPlatformError(await createUser(key, {}, { dob: yearsAgo(10) }), 400, "INVALID_AGE");
    expectPlatformError(await createUser(key, {}, { dob: yearsAgo(-1) }), 400, "INVALID_AGE");
    expect((await listUsers(key)).body.data).toEqual([]);
    const adult = await newUser(key, {}, { dob: yearsAgo(18) });
    expect(adult.individual.dob).toBe(yearsAgo(18));
  });

  it("rejects script-like input with 422, one entry per field, without storing or truncating anything", async () => {
    const { key } = await tenant("script");
    const res = await createUser(
      key,
      { first_name: "<script>alert(1)</script>", last_name: "Doe`whoami`" },
      {
        residential_address: "1 Main St <img src=x onerror=alert(1)>",
        residential_city: "javascript:alert(1)",
        residential_state: "{{7*7}}",
      },
    );
    expect(fieldsOf(res)).toEqual(
      ["first_name", "individual.residential_address", "individual.residential_city", "individual.residential_state", "last_name"].sort(),
    );
    expect((await listUsers(key)).body.data).toEqual([]);
  });

  it("rejects zero-width and bidirectional-control characters in first and last names with 422 naming the field, on create and update", async () => {
    const { key } = await tenant("bidi");
    const created = await createUser(key, { first_name: "Jane\u202e", last_name: "Do\u200be" });
    expect(fieldsOf(created)).toEqual(["first_name", "last_name"]);
    for (const e of created.body.errors as { message: string }[]) expect(e.message).toMatch(/zero-width or bidirectional-control/);
    expect((await listUsers(key)).body.data).toEqual([]);
    const user = await newUser(key);
    const updated = await updateUser(key, user.user_id as string, { first_name: "\u2066Jane", last_name: "Doe\ufeff" });
    expect(fieldsOf(updated)).toEqual(["first_name", "last_name"]);
    expect((await getUser(key, user.user_id as string)).body.data).toMatchObject({ first_name: user.first_name, last_name: user.last_name });
  });

  it("rejects a first or last name mixing Latin with Cyrillic or Greek letters inside one word (\"Mаin\" with a Cyrillic а) with 422 naming the field, on create and update (docs/security.md \"Names people compare\")", async () => {
    const { key } = await tenant("mixed-script");
    const created = await createUser(key, { first_name: "J\u0430ne", last_name: "D\u03bfe" }); // Cyrillic а, Greek ο
    expect(fieldsOf(created)).toEqual(["first_name", "last_name"]);
    for (const e of created.body.errors as { message: string }[]) expect(e.message).toMatch(/mix Latin, Cyrillic or Greek letters/);
    expect((await listUsers(key)).body.data).toEqual([]);
    const user = await newUser(key);
    const updated = await updateUser(key, user.user_id as string, { first_name: "\u0418v\u0430n" }); // Cyrillic И and а around a Latin v
    expect(fieldsOf(updated)).toEqual(["first_name"]);
    expect((await getUser(key, user.user_id as string)).body.data).toMatchObject({ first_name: user.first_name });
    // single-script names in Cyrillic or Greek, and words of different scripts side by side, stay accepted
    const russian = await newUser(key, { first_name: "Иван", last_name: "Петров-Водкин" });
    expect(russian).toMatchObject({ first_name: "Иван", last_name: "Петров-Водкин" });
    expect(await newUser(key, { first_name: "Ἀλέξανδρος", last_name: "Παπαδόπουλος" })).toMatchObject({ first_name: "Ἀλέξανδρος" });
    expect(await newUser(key, { first_name: "Anna Мария", last_name: "O'Brien" })).toMatchObject({ first_name: "Anna Мария" });
  });

  it("rejects control characters and blank names with 422", async () => {
    const { key } = await tenant("control");
    expect(fieldsOf(await createUser(key, { first_name: "Jane\u0007" }))).toEqual(["first_name"]);
    expect(fieldsOf(await createUser(key, { last_name: "   " }))).toEqual(["last_name"]);
    expect(fieldsOf(await createUser(key, {}, { residential_city: "Spring\nfield" }))).toEqual(["individual.residential_city"]);
    expect((await listUsers(key)).body.data).toEqual([]);
  });

  it("accepts and stores unchanged names and addresses with apostrophes, hyphens, accents and address punctuation", async () => {
    const { key } = await tenant("safe-text");
    const user = await newUser(
      key,
      { first_name: "Zoë José", last_name: "O'Brien-Smith" },
      { residential_address: "742 Evergreen Terrace, Apt #4", residential_city: "St. Louis", residential_state: "Jean-Luc's" },
    );
    expect(user).toMatchObject({ first_name: "Zoë José", last_name: "O'Brien-Smith" });
    expect(user.individual).toMatchObject({ residential_address: "742 Evergreen Terrace, Apt #4", residential_city: "St. Louis" });
    const other = await newUser(key, {}, { residential_address: "1/2 Main St." });
    expect(other.individual.residential_address).toBe("1/2 Main St.");
  });

  it("accepts valid GB, ES and MX mobiles", async () => {
    const { key } = await tenant("mobiles");
    for (const [country, number] of [["GB", "07400 123456"], ["ES", "612345678"], ["MX", "5512345678"]]) {
      const user = await newUser(key, { phone_country_code: country, phone_number: number });
      expect(user).toMatchObject({ phone_country_code: country, phone_number: number });
    }
  });

  it.each([
    ["a Spanish landline", "ES", "912345678"],
    ["a US number sent as GB", "GB", "2025550143"],
    ["a UK mobile sent as US", "US", "07400123456"],
    ["letters", "US", "call-me-maybe"],
    ["too few digits", "US", "12345"],
  ])("answers 422 on phone_number for %s", async (_label, country, number) => {
    const { key } = await tenant("bad-phone");
    const res = await createUser(key, { phone_country_code: country, phone_number: number });
    expect(fieldsOf(res)).toEqual(["phone_number"]);
    expect(res.body.errors[0].message).toMatch(new RegExp(`mobile number for "${country}"`));
  });

  it("keeps email unique per customer, case-insensitively (409 EMAIL_ALREADY_EXISTS); another customer may reuse it", async () => {
    const a = await tenant("email-a");
    const b = await tenant("email-b");
    const email = `Unique.Person.${customerSeq}@Example.com`;
    await newUser(a.key, { email });
    expectPlatformError(await createUser(a.key, { email }), 409, "EMAIL_ALREADY_EXISTS");
    expectPlatformError(await createUser(a.key, { email: email.toLowerCase() }), 409, "EMAIL_ALREADY_EXISTS");
    expectPlatformError(await createUser(a.key, { email: email.toUpperCase() }), 409, "EMAIL_ALREADY_EXISTS");
    expect((await listUsers(a.key)).body.meta.pagination.records.total).toBe(1);
    const other = await newUser(b.key, { email });
    expect(other.email).toBe(email);
  });

  it("keeps the phone unique per customer whatever its formatting (409 PHONE_ALREADY_EXISTS); another customer may reuse it", async () => {
    const a = await tenant("phone-a");
    const b = await tenant("phone-b");
    const phone = nextPhone();
    await newUser(a.key, { phone_number: phone });
    expectPlatformError(await createUser(a.key, { phone_number: phone }), 409, "PHONE_ALREADY_EXISTS");
    const formatted = `(${phone.slice(0, 3)}) ${phone.slice(3, 6)}-${phone.slice(6)}`;
    expectPlatformError(await createUser(a.key, { phone_number: formatted }), 409, "PHONE_ALREADY_EXISTS");
    expectPlatformError(await createUser(a.key, { phone_number: `+1${phone}` }), 409, "PHONE_ALREADY_EXISTS");
    expect((await listUsers(a.key)).body.meta.pagination.records.total).toBe(1);
    const other = await newUser(b.key, { phone_number: phone });
    expect(other.phone_number).toBe(phone);
  });

  it("lets a soft-deleted user's email and phone be used again", async () => {
    const { key } = await tenant("reuse");
    const first = await newUser(key);
    expect((await deleteUser(key, first.user_id)).status).toBe(204);
    const again = await newUser(key, { email: first.email, phone_number: first.phone_number });
    expect(again.user_id).not.toBe(first.user_id);
    expect(again).toMatchObject({ email: first.email, phone_number: first.phone_number, status: "PENDING" });
  });
});

describe("POST /users under concurrency and with extra fields", () => {
  it("ignores status, activity, customer_id and timestamps sent on create", async () => {
    const { key, customerId: cid } = await tenant("mass-assign");
    const other = await tenant("mass-assign-other");
    const user = await newUser(key, {
      status: "VERIFIED",
      is_active: true,
      verification_status: "verified",
      customer_id: other.customerId,
      created_at: "2000-01-01T00:00:00Z",
    });
    expect(user).toMatchObject({ status: "PENDING", is_active: false, verification_status: "pending", customer_id: cid });
    expect(user.created_at).not.toBe("2000-01-01T00:00:00.000Z");
    expect((await listUsers(other.key)).body.data).toEqual([]);
  });

  it.each([
    ["email", () => ({ email: `race.${customerSeq}@example.com` }), "EMAIL_ALREADY_EXISTS"],
    ["phone", () => ({ phone_number: nextPhone() }), "PHONE_ALREADY_EXISTS"],
    ["user_id", () => ({ user_id: "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b" }), "RESOURCE_CONFLICT"],
  ])("lets exactly one of five concurrent creates with the same %s win; the others answer 409", async (_label, same, code) => {
    const { key } = await tenant("race");
    const shared = same();
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => createUser(key, shared)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) expectPlatformError(r, 409, code);
    expect((await listUsers(key)).body.meta.pagination.records.total).toBe(1);
  });
});

describe("GET /users/{user_id} (getUser)", () => {
  it("reads a user of the caller's customer", async () => {
    const { key } = await tenant("get");
    const user = await newUser(key, { first_name: "Ada" });
    const res = await getUser(key, user.user_id);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toEqual(user);
  });

  it("answers 404 USER_NOT_FOUND for an unknown id or one that is not a UUID", async () => {
    const { key } = await tenant("get-404");
    expectPlatformError(await getUser(key, UNKNOWN_USER), 404, "USER_NOT_FOUND");
    expectPlatformError(await getUser(key, "not-a-uuid"), 404, "USER_NOT_FOUND");
  });

  it.each(["------------------------------------", "0123456789abcdef0123456789abcdef0123", "0123456789abcdef-0123456789abcdef-01"])(
    "answers 404 USER_NOT_FOUND (never 500) for the 36-character non-UUID id %s on every by-id operation",
    async (id) => {
      const { key } = await tenant("get-36");
      expectPlatformError(await getUser(key, id), 404, "USER_NOT_FOUND");
      expectPlatformError(await updateUser(key, id, { first_name: "X" }), 404, "USER_NOT_FOUND");
      expectPlatformError(await deleteUser(key, id), 404, "USER_NOT_FOUND");
      expectPlatformError(await activateUser(key, id), 404, "USER_NOT_FOUND");
      expectPlatformError(await deactivateUser(key, id), 404, "USER_NOT_FOUND");
      expectPlatformError(await issueToken(key, id), 404, "USER_NOT_FOUND");
    },
  );

  it("answers 404 RESOURCE_NOT_FOUND for a deleted user", async () => {
    const { key } = await tenant("get-deleted");
    const user = await newUser(key);
    expect((await deleteUser(key, user.user_id)).status).toBe(204);
    expectPlatformError(await getUser(key, user.user_id), 404, "RESOURCE_NOT_FOUND");
  });
});

describe("PUT /users/{user_id} (updateUser)", () => {
  it("updates partially: omitted fields keep their values, flat individual fields merge into individual", async () => {
    const { key } = await tenant("update");
    const user = await newUser(key);
    await new Promise((r) => setTimeout(r, 5));
    const res = await updateUser(key, user.user_id, { first_name: "Janet", residential_city: "Shelbyville", residential_postal_code: "62565" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const updated = res.body.data;
    expect(updated).toMatchObject({
      user_id: user.user_id,
      first_name: "Janet",
      last_name: user.last_name,
      email: user.email,
      phone_number: user.phone_number,
      account_purpose: user.account_purpose,
      status: "PENDING",
      created_at: user.created_at,
    });
    expect(updated.individual).toEqual({ ...user.individual, residential_city: "Shelbyville", residential_postal_code: "62565" });
    expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(user.updated_at));
    expect((await getUser(key, user.user_id)).body.data).toEqual(updated);
  });

  it("changes email, phone, account_purpose, dob and the identity document", async () => {
    const { key } = await tenant("update-all");
    const user = await newUser(key);
    const patch = {
      last_name: "Smith",
      email: `changed.${customerSeq}@example.org`,
      phone_country_code: "ES",
      phone_number: "612345678",
      account_purpose: "investing",
      dob: "1980-01-31",
      residential_country_code: "ES",
      residential_address: "Calle Mayor 5, 3º",
      residential_state: "Madrid",
      id_type: "passport",
      id_number: "X1234567",
      id_country_code: "ES",
    };
    const res = await updateUser(key, user.user_id, patch);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      last_name: "Smith",
      email: patch.email,
      phone_country_code: "ES",
      phone_number: "612345678",
      account_purpose: "investing",
      account_type: "individual",
      account_role: "third",
    });
    expect(res.body.data.individual).toEqual({
      ...user.individual,
      dob: "1980-01-31",
      residential_country_code: "ES",
      residential_address: "Calle Mayor 5, 3º",
      residential_state: "Madrid",
      id_type: "passport",
      id_number: "X1234567",
      id_country_code: "ES",
    });
  });

  it("answers 200 with nothing changed for an empty body", async () => {
    const { key } = await tenant("update-empty");
    const user = await newUser(key);
    const res = await updateUser(key, user.user_id, {});
    expect(res.status).toBe(200);
    expect({ ...res.body.data, updated_at: user.updated_at }).toEqual(user);
  });

  it.each(["status", "is_active", "account_type", "account_role", "verification_status", "user_id"])(
    "answers 422 on %s, a field Update User cannot change, and changes nothing",
    async (field) => {
      const { key } = await tenant("immutable");
      const user = await newUser(key);
      const value = { status: "VERIFIED", is_active: true, account_type: "business", account_role: "third", verification_status: "verified", user_id: UNKNOWN_USER }[field];
      const res = await updateUser(key, user.user_id, { first_name: "Changed", [field]: value });
      expect(fieldsOf(res)).toEqual([field]);
      expect((await getUser(key, user.user_id)).body.data).toEqual(user);
    },
  );

  it("answers 422 naming fields Update User does not accept, such as a nested individual or customer_id", async () => {
    const { key } = await tenant("upd-unknown");
    const user = await newUser(key);
    const res = await updateUser(key, user.user_id as string, { individual: { residential_city: "Shelbyville" }, customer_id: "other" });
    expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
    expect(fieldsOf(res).sort()).toEqual(["customer_id", "individual"]);
    const unchanged = await getUser(key, user.user_id as string);
    expect(unchanged.body.data.individual.residential_city).toBe((user.individual as { residential_city: string }).residential_city);
  });

  it("answers 422 with one entry per immutable field sent together", async () => {
    const { key } = await tenant("immutable-all");
    const user = await newUser(key);
    const res = await updateUser(key, user.user_id, { status: "SUSPENDED", is_active: false, account_type: "individual", account_role: "third" });
    expect(fieldsOf(res)).toEqual(["account_role", "account_type", "is_active", "status"]);
  });

  it("applies the create rules to what is sent: purpose, age, script-like text, mobile number, formats", async () => {
    const { key } = await tenant("update-rules");
    const user = await newUser(key);
    expectPlatformError(await updateUser(key, user.user_id, { account_purpose: "gambling" }), 400, "INVALID_ACCOUNT_PURPOSE");
    const young = await updateUser(key, user.user_id, { dob: yearsAgo(18, -1) });
    expectPlatformError(young, 400, "INVALID_AGE");
    expect(young.body.errors[0].field).toBe("dob");
    expect(fieldsOf(await updateUser(key, user.user_id, { residential_address: "<b>1 Main</b>", first_name: "x onerror=alert(1)" }))).toEqual([
      "first_name",
      "residential_address",
    ]);
    expect(fieldsOf(await updateUser(key, user.user_id, { phone_country_code: "ES", phone_number: "912345678" }))).toEqual(["phone_number"]);
    // changing only the country re-checks the stored number against it
    expect(fieldsOf(await updateUser(key, user.user_id, { phone_country_code: "GB" }))).toEqual(["phone_number"]);
    expect(fieldsOf(await updateUser(key, user.user_id, { email: "nope", id_type: "visa" }))).toEqual(["email", "id_type"]);
    expect((await getUser(key, user.user_id)).body.data).toEqual(user);
  });

  it("answers 409 when the email (any case) or phone belongs to another user of the customer", async () => {
    const { key } = await tenant("update-dup");
    const a = await newUser(key);
    const b = await newUser(key);
    expectPlatformError(await updateUser(key, b.user_id, { email: (a.email as string).toUpperCase() }), 409, "EMAIL_ALREADY_EXISTS");
    expectPlatformError(await updateUser(key, b.user_id, { phone_number: a.phone_number }), 409, "PHONE_ALREADY_EXISTS");
    expect((await getUser(key, b.user_id)).body.data).toEqual(b);
    // the user's own email in another case is not a conflict
    const own = await updateUser(key, a.user_id, { email: (a.email as string).toUpperCase(), phone_number: a.phone_number });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.data.email).toBe((a.email as string).toUpperCase());
  });

  it("answers 400 CANNOT_UPDATE_DELETED_USER for a deleted user and 404 USER_NOT_FOUND for an unknown one", async () => {
    const { key } = await tenant("update-404");
    const user = await newUser(key);
    expect((await deleteUser(key, user.user_id)).status).toBe(204);
    expectPlatformError(await updateUser(key, user.user_id, { first_name: "Ghost" }), 400, "CANNOT_UPDATE_DELETED_USER");
    expectPlatformError(await updateUser(key, UNKNOWN_USER, { first_name: "Nobody" }), 404, "USER_NOT_FOUND");
  });
});

describe("user lifecycle (activateUser, deactivateUser, deleteUser)", () => {
  it("activate: PENDING → VERIFIED; VERIFIED → VERIFIED (no-op); deactivate: VERIFIED → SUSPENDED; activate: SUSPENDED → VERIFIED", async () => {
    const { key } = await tenant("lifecycle");
    const user = await newUser(key);
    const state = async () => {
      const { status, is_active, verification_status } = (await getUser(key, user.user_id)).body.data;
      return { status, is_active, verification_status };
    };

    const a1 = await activateUser(key, user.user_id);
    expect(a1.status).toBe(200);
    expect(a1.body.data).toEqual({ message: expect.any(String) });
    expect(await state()).toEqual({ status: "VERIFIED", is_active: true, verification_status: "verified" });

    const a2 = await activateUser(key, user.user_id);
    expect(a2.status).toBe(200);
    expect(a2.body.data.message).toEqual(expect.any(String));
    expect(await state()).toEqual({ status: "VERIFIED", is_active: true, verification_status: "verified" });

    const d1 = await deactivateUser(key, user.user_id);
    expect(d1.status).toBe(200);
    expect(d1.body.data).toEqual({ message: expect.any(String) });
    expect(await state()).toEqual({ status: "SUSPENDED", is_active: false, verification_status: "verified" });

    const d2 = await deactivateUser(key, user.user_id);
    expect(d2.status).toBe(200);
    expect(await state()).toMatchObject({ status: "SUSPENDED", is_active: false });

    expect((await activateUser(key, user.user_id)).status).toBe(200);
    expect(await state()).toEqual({ status: "VERIFIED", is_active: true, verification_status: "verified" });
  });

  it("keeps the user's data across deactivation", async () => {
    const { key } = await tenant("keep-data");
    const user = await newUser(key);
    await activated(key, user.user_id);
    await deactivated(key, user.user_id);
    const read = (await getUser(key, user.user_id)).body.data;
    expect({ ...read, status: "PENDING", is_active: false, verification_status: "pending", updated_at: user.updated_at }).toEqual(user);
  });

  it("deactivating a PENDING user (never activated) answers 400 BAD_REQUEST and leaves it PENDING", async () => {
    const { key } = await tenant("deact-pending");
    const user = await newUser(key);
    expectPlatformError(await deactivateUser(key, user.user_id), 400, "BAD_REQUEST");
    expect((await getUser(key, user.user_id)).body.data.status).toBe("PENDING");
  });

  it("refuses to delete an active user with 400 CANNOT_DELETE_ACTIVE_USER", async () => {
    const { key } = await tenant("del-active");
    const user = await newUser(key);
    await activated(key, user.user_id);
    expectPlatformError(await deleteUser(key, user.user_id), 400, "CANNOT_DELETE_ACTIVE_USER");
    expect((await getUser(key, user.user_id)).body.data).toMatchObject({ status: "VERIFIED", is_active: true });
    expect(ids(await listUsers(key))).toContain(user.user_id);
  });

  it("deletes PENDING and SUSPENDED users (204, empty body); they leave the list and answer 404 RESOURCE_NOT_FOUND", async () => {
    const { key } = await tenant("del");
    const pending = await newUser(key);
    const suspended = await newUser(key);
    const kept = await newUser(key);
    await activated(key, suspended.user_id);
    await deactivated(key, suspended.user_id);

    for (const user of [pending, suspended]) {
      const res = await deleteUser(key, user.user_id);
      expect(res.status).toBe(204);
      expect(res.text).toBe("");
      expectPlatformError(await getUser(key, user.user_id), 404, "RESOURCE_NOT_FOUND");
    }
    const list = await listUsers(key);
    expect(ids(list)).toEqual([kept.user_id]);
    expect(list.body.meta.pagination.records.total).toBe(1);
  });

  it("answers 404 RESOURCE_NOT_FOUND when a deleted user is deleted, activated, deactivated or given a token", async () => {
    const { key } = await tenant("deleted-ops");
    const user = await newUser(key);
    expect((await deleteUser(key, user.user_id)).status).toBe(204);
    expectPlatformError(await deleteUser(key, user.user_id), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await activateUser(key, user.user_id), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await deactivateUser(key, user.user_id), 404, "RESOURCE_NOT_FOUND");
    expectPlatformError(await issueToken(key, user.user_id), 404, "RESOURCE_NOT_FOUND");
  });

  it("answers 404 USER_NOT_FOUND for an unknown user on every lifecycle operation", async () => {
    const { key } = await tenant("unknown-ops");
    expectPlatformError(await activateUser(key, UNKNOWN_USER), 404, "USER_NOT_FOUND");
    expectPlatformError(await deactivateUser(key, UNKNOWN_USER), 404, "USER_NOT_FOUND");
    expectPlatformError(await deleteUser(key, UNKNOWN_USER), 404, "USER_NOT_FOUND");
    expectPlatformError(await issueToken(key, UNKNOWN_USER), 404, "USER_NOT_FOUND");
  });
});

describe("GET /users (listUsers)", () => {
  it("lists newest first with page/limit and meta.pagination in filter[limit]/filter[skip] form", async () => {
    const { key } = await tenant("list");
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      created.push((await newUser(key, { first_name: `Person${"abcde"[i]}` })).user_id);
      await new Promise((r) => setTimeout(r, 3));
    }
    const newestFirst = [...created].reverse();

    const all = await listUsers(key);
    expect(all.status).toBe(200);
    expect(all.body.success).toBe(true);
    expect(ids(all)).toEqual(newestFirst);
    expect(all.body.meta.pagination).toEqual({
      records: { skip: 0, has_next: false, has_previous: false, total: 5, limit: 20 },
      navigation: { first: "/users?filter[limit]=20&filter[skip]=0", last: "/users?filter[limit]=20&filter[skip]=0", previous: null, next: null },
    });

    const p1 = await listUsers(key, "?limit=2");
    expect(ids(p1)).toEqual(newestFirst.slice(0, 2));
    expect(p1.body.meta.pagination).toEqual({
      records: { skip: 0, has_next: true, has_previous: false, total: 5, limit: 2 },
      navigation: {
        first: "/users?filter[limit]=2&filter[skip]=0",
        last: "/users?filter[limit]=2&filter[skip]=4",
        previous: null,
        next: "/users?filter[limit]=2&filter[skip]=2",
      },
    });

    const p2 = await listUsers(key, "?page=2&limit=2");
    expect(ids(p2)).toEqual(newestFirst.slice(2, 4));
    expect(p2.body.meta.pagination.records).toEqual({ skip: 2, has_next: true, has_previous: true, total: 5, limit: 2 });
    expect(p2.body.meta.pagination.navigation.previous).toBe("/users?filter[limit]=2&filter[skip]=0");
    expect(p2.body.meta.pagination.navigation.next).toBe("/users?filter[limit]=2&filter[skip]=4");

    const p3 = await listUsers(key, "?page=3&limit=2");
    expect(ids(p3)).toEqual(newestFirst.slice(4));
    expect(p3.body.meta.pagination.records).toMatchObject({ skip: 4, has_next: false, has_previous: true });
    expect(p3.body.meta.pagination.navigation.next).toBeNull();

    // the navigation links can be followed as they are
    const followed = await listUsers(key, (p1.body.meta.pagination.navigation.next as string).replace("/users", ""));
    expect(followed.status).toBe(200);
    expect(ids(followed)).toEqual(newestFirst.slice(2, 4));
    expect(followed.body.meta.pagination.navigation.next).toBe("/users?filter[limit]=2&filter[skip]=4");
    const filtered = await listUsers(key, "?status=PENDING&limit=2");
    expect(filtered.body.meta.pagination.navigation.next).toBe("/users?status=PENDING&filter[limit]=2&filter[skip]=2");
    const followedFiltered = await listUsers(key, (filtered.body.meta.pagination.navigation.next as string).replace("/users", ""));
    expect(ids(followedFiltered)).toEqual(newestFirst.slice(2, 4));

    const beyond = await listUsers(key, "?page=9&limit=2");
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta.pagination.records.total).toBe(5);
  });

  it("answers an empty page for a customer without users", async () => {
    const { key } = await tenant("list-empty");
    const res = await listUsers(key);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.pagination.records).toEqual({ skip: 0, has_next: false, has_previous: false, total: 0, limit: 20 });
  });

  it("filters by status, is_active and verification_status", async () => {
    const { key } = await tenant("list-filter");
    const pending = await newUser(key);
    const verified = await newUser(key);
    const suspended = await newUser(key);
    await activated(key, verified.user_id);
    await activated(key, suspended.user_id);
    await deactivated(key, suspended.user_id);

    expect(ids(await listUsers(key, "?status=PENDING"))).toEqual([pending.user_id]);
    expect(ids(await listUsers(key, "?status=VERIFIED"))).toEqual([verified.user_id]);
    expect(ids(await listUsers(key, "?status=SUSPENDED"))).toEqual([suspended.user_id]);
    expect(ids(await listUsers(key, "?is_active=true"))).toEqual([verified.user_id]);
    expect(ids(await listUsers(key, "?is_active=false")).sort()).toEqual([pending.user_id, suspended.user_id].sort());
    expect(ids(await listUsers(key, "?verification_status=pending"))).toEqual([pending.user_id]);
    expect(ids(await listUsers(key, "?verification_status=verified")).sort()).toEqual([verified.user_id, suspended.user_id].sort());
    expect(ids(await listUsers(key, "?verification_status=unverified"))).toEqual([]);
    expect(ids(await listUsers(key, "?status=SUSPENDED&is_active=true"))).toEqual([]);

    const filtered = await listUsers(key, "?status=PENDING&limit=1");
    expect(filtered.body.meta.pagination.records.total).toBe(1);
    expect(filtered.body.meta.pagination.navigation.first).toBe("/users?status=PENDING&filter[limit]=1&filter[skip]=0");
  });

  it("filters by user_type; any other user_type answers 400 INVALID_USER_TYPE", async () => {
    const { key } = await tenant("list-type");
    const person = await newUser(key, { account_type: "individual" });
    const company = await newUser(key, { account_type: "business" });
    expect(ids(await listUsers(key, "?user_type=individual"))).toEqual([person.user_id]);
    expect(ids(await listUsers(key, "?user_type=business"))).toEqual([company.user_id]);
    expectPlatformError(await listUsers(key, "?user_type=corporate"), 400, "INVALID_USER_TYPE");
    expectPlatformError(await listUsers(key, "?user_type=Individual"), 400, "INVALID_USER_TYPE");
  });

  it("searches first name, last name and email, case-insensitively", async () => {
    const { key } = await tenant("list-search");
    const marty = await newUser(key, { first_name: "Marty", last_name: "McFly", email: `marty.${customerSeq}@hill-valley.example` });
    const doc = await newUser(key, { first_name: "Emmett", last_name: "Brown", email: `doc.${customerSeq}@Hill-Valley.example` });
    const biff = await newUser(key, { first_name: "Biff", last_name: "Tannen", email: `biff.${customerSeq}@tannen.example` });

    expect(ids(await listUsers(key, "?search=MARTY"))).toEqual([marty.user_id]);
    expect(ids(await listUsers(key, "?search=mcfly"))).toEqual([marty.user_id]);
    expect(ids(await listUsers(key, "?search=bRoWn"))).toEqual([doc.user_id]);
    expect(ids(await listUsers(key, "?search=HILL-VALLEY")).sort()).toEqual([marty.user_id, doc.user_id].sort());
    expect(ids(await listUsers(key, "?search=tannen"))).toEqual([biff.user_id]);
    expect(ids(await listUsers(key, "?search=nobody"))).toEqual([]);
    // LIKE wildcards in the search text are literal
    expect(ids(await listUsers(key, "?search=%25"))).toEqual([]);
    expect(ids(await listUsers(key, "?search=_"))).toEqual([]);
    expect(ids(await listUsers(key, "?search=")).length).toBe(3);
  });

  it("excludes deleted users and other customers' users", async () => {
    const a = await tenant("list-own-a");
    const b = await tenant("list-own-b");
    const mine = await newUser(a.key);
    const gone = await newUser(a.key);
    await newUser(b.key);
    expect((await deleteUser(a.key, gone.user_id)).status).toBe(204);
    const res = await listUsers(a.key);
    expect(ids(res)).toEqual([mine.user_id]);
    expect(res.body.meta.pagination.records.total).toBe(1);
    expect(ids(await listUsers(a.key, `?search=${encodeURIComponent(gone.email)}`))).toEqual([]);
  });

  it.each(["?limit=101", "?limit=0", "?page=0", "?limit=abc", "?status=DELETED", "?verification_status=done", "?is_active=maybe"])(
    "answers 422 for %s",
    async (query) => {
      const { key } = await tenant("list-422");
      const res = await listUsers(key, query);
      expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
      expect(res.body.errors).toHaveLength(1);
    },
  );

  it("answers the largest page number the contract allows without a server error", async () => {
    const { key } = await tenant("list-huge-page");
    await newUser(key);
    const res = await listUsers(key, "?page=2147483647&limit=100");
    expect(res.status, JSON.stringify(res.body)).not.toBe(500);
    expect([200, 422]).toContain(res.status);
    if (res.status === 200) {
      expect(res.body.data).toEqual([]);
      expect(res.body.meta.pagination.records).toMatchObject({ total: 1, has_next: false, has_previous: true });
    }
  });

  it("accepts limit=100", async () => {
    const { key } = await tenant("list-100");
    const res = await listUsers(key, "?limit=100");
    expect(res.status).toBe(200);
    expect(res.body.meta.pagination.records.limit).toBe(100);
  });
});

describe("POST /users/{user_id}/token (createUserToken)", () => {
  it("issues a Bearer token for a VERIFIED user, valid for 900 seconds, that the wallet endpoints accept", async () => {
    const { key } = await tenant("token");
    const user = await newUser(key);
    await activated(key, user.user_id);
    const res = await issueToken(key, user.user_id);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toEqual({ token: expect.any(String), token_type: "Bearer", expires_at: expect.any(String), user_id: user.user_id });
    expect(res.body.data.token.length).toBeGreaterThan(20);
    const ttl = Date.parse(res.body.data.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(890_000);
    expect(ttl).toBeLessThanOrEqual(900_000);
    // a valid user token passes authentication on its own wallets path (a user without wallets: 404 WALLET_NOT_FOUND)
    const wallets = await api().get(`${BASE}/users/${user.user_id}/wallets`).set("Authorization", `Bearer ${res.body.data.token}`);
    expectPlatformError(wallets, 404, "WALLET_NOT_FOUND");
  });

  it("answers 404 RESOURCE_NOT_FOUND for a PENDING user and for a SUSPENDED user", async () => {
    const { key } = await tenant("token-inactive");
    const pending = await newUser(key);
    expectPlatformError(await issueToken(key, pending.user_id), 404, "RESOURCE_NOT_FOUND");
    const suspended = await newUser(key);
    await activated(key, suspended.user_id);
    await deactivated(key, suspended.user_id);
    expectPlatformError(await issueToken(key, suspended.user_id), 404, "RESOURCE_NOT_FOUND");
  });

  it("answers 404 for a deleted user", async () => {
    const { key } = await tenant("token-deleted");
    const user = await newUser(key);
    await activated(key, user.user_id);
    await deactivated(key, user.user_id);
    expect((await deleteUser(key, user.user_id)).status).toBe(204);
    expectPlatformError(await issueToken(key, user.user_id), 404, "RESOURCE_NOT_FOUND");
  });
});

describe("authentication and access to the users endpoints", () => {
  /** Every users operation, on a given user id, with a valid body where one is needed. */
  const operations = (userId: string): [string, () => request.Test][] => [
    ["createUser", () => api().post(`${BASE}/users`).send(body())],
    ["listUsers", () => api().get(`${BASE}/users`)],
    ["getUser", () => api().get(`${BASE}/users/${userId}`)],
    ["updateUser", () => api().put(`${BASE}/users/${userId}`).send({ first_name: "Mallory" })],
    ["deleteUser", () => api().delete(`${BASE}/users/${userId}`)],
    ["activateUser", () => api().post(`${BASE}/users/${userId}/activate`)],
    ["deactivateUser", () => api().post(`${BASE}/users/${userId}/deactivate`)],
    ["createUserToken", () => api().post(`${BASE}/users/${userId}/token`)],
  ];

  it("answers 401 UNAUTHORIZED without a credential or with an invalid one, on every operation", async () => {
    const { key } = await tenant("auth-401");
    const user = await newUser(key);
    for (const [name, call] of operations(user.user_id)) {
      const none = await call();
      expectPlatformError(none, 401, "UNAUTHORIZED");
      expect(none.body.errors[0].message, name).toMatch(/missing/i);
      expectPlatformError(await call().set("x-api-key", "sk_not_a_real_key_0123456789"), 401, "UNAUTHORIZED");
      expectPlatformError(await call().set("Authorization", "Bearer not.a.token"), 401, "UNAUTHORIZED");
    }
    expect((await getUser(key, user.user_id)).body.data).toEqual(user);
    expect((await listUsers(key)).body.meta.pagination.records.total).toBe(1);
  });

  it("answers 401 to a revoked owner key while the customer's other keys keep working", async () => {
    const { key, credentialId, customerId: cid } = await tenant("auth-revoked");
    const other = await walk.ownerKey(cid, operator);
    const user = await newUser(key);
    const revoke = await api().delete(`${BASE}/customers/${cid}/credentials/${credentialId}`).set("Authorization", `Bearer ${operator}`);
    expect(revoke.status).toBe(204);
    for (const [name, call] of operations(user.user_id)) {
      const res = await call().set("x-api-key", key);
      expectPlatformError(res, 401, "UNAUTHORIZED");
      expect(res.body.errors[0].message, name).toMatch(/revoked/i);
    }
    expect((await getUser(other.secret, user.user_id)).body.data).toEqual(user);
  });

  it("answers 403 FORBIDDEN to operator and customer sessions, the master key and user tokens, on every operation", async () => {
    const { key, customerId: cid } = await tenant("auth-403");
    const target = await newUser(key);
    const session = await api().post(`${BASE}/sessions`).send({ customer_id: cid, customer_secret: key });
    expect(session.status).toBe(201);
    const holder = await walk.activeUserWithToken(key);

    const credentials: [string, (r: request.Test) => request.Test][] = [
      ["operator session", (r) => r.set("Authorization", `Bearer ${operator}`)],
      ["customer session", (r) => r.set("Authorization", `Bearer ${session.body.data.token}`)],
      ["master key (x-master-api-key)", (r) => r.set("x-master-api-key", TEST_MASTER_KEY)],
      ["master key (x-api-key)", (r) => r.set("x-api-key", TEST_MASTER_KEY)],
      ["user token", (r) => r.set("Authorization", `Bearer ${holder.token}`)],
    ];
    for (const [credential, set] of credentials) {
      for (const userId of [target.user_id, holder.userId]) {
        for (const [name, call] of operations(userId)) {
          const res = await set(call());
          expect(res.status, `${credential} → ${name}: ${JSON.stringify(res.body)}`).toBe(403);
          expectPlatformError(res, 403, "FORBIDDEN");
        }
      }
    }
    // nothing changed
    expect((await getUser(key, target.user_id)).body.data).toEqual(target);
    expect((await getUser(key, holder.userId)).body.data).toMatchObject({ status: "VERIFIED", is_active: true });
    expect((await listUsers(key)).body.meta.pagination.records.total).toBe(2);
  });

  it("never shows one customer's users to another customer's key: 404 USER_NOT_FOUND by id, absent from the list", async () => {
    const a = await tenant("iso-a");
    const b = await tenant("iso-b");
    const theirs = await newUser(b.key);
    const theirsActive = await newUser(b.key);
    await activated(b.key, theirsActive.user_id);
    await newUser(a.key);

    expectPlatformError(await getUser(a.key, theirs.user_id), 404, "USER_NOT_FOUND");
    expectPlatformError(await updateUser(a.key, theirs.user_id, { first_name: "Mallory" }), 404, "USER_NOT_FOUND");
    expectPlatformError(await deleteUser(a.key, theirs.user_id), 404, "USER_NOT_FOUND");
    expectPlatformError(await activateUser(a.key, theirs.user_id), 404, "USER_NOT_FOUND");
    expectPlatformError(await deactivateUser(a.key, theirsActive.user_id), 404, "USER_NOT_FOUND");
    expectPlatformError(await issueToken(a.key, theirsActive.user_id), 404, "USER_NOT_FOUND");

    const listA = await listUsers(a.key);
    expect(listA.body.meta.pagination.records.total).toBe(1);
    expect(ids(listA)).not.toContain(theirs.user_id);
    expect(ids(listA)).not.toContain(theirsActive.user_id);
    expect(ids(await listUsers(a.key, `?search=${encodeURIComponent(theirs.email)}`))).toEqual([]);

    // B's users are untouched
    expect((await getUser(b.key, theirs.user_id)).body.data).toEqual(theirs);
    expect((await getUser(b.key, theirsActive.user_id)).body.data).toMatchObject({ status: "VERIFIED", is_active: true });
  });

  it("stops a user token at once when its user is deactivated (401), and refuses it on another user's path (403)", async () => {
    const { key } = await tenant("token-life");
    const holder = await walk.activeUserWithToken(key);
    const other = await walk.activeUserWithToken(key);
    const wallets = (userId: string, token: string) => api().get(`${BASE}/users/${userId}/wallets`).set("Authorization", `Bearer ${token}`);

    expectPlatformError(await wallets(holder.userId, holder.token), 404, "WALLET_NOT_FOUND");
    expectPlatformError(await wallets(other.userId, holder.token), 403, "FORBIDDEN");
    // the owner key may act on any of its users
    expectPlatformError(await api().get(`${BASE}/users/${other.userId}/wallets`).set("x-api-key", key), 404, "WALLET_NOT_FOUND");

    await deactivated(key, holder.userId);
    const after = await wallets(holder.userId, holder.token);
    expectPlatformError(after, 401, "UNAUTHORIZED");
    expect(after.body.errors[0].message).toMatch(/inactive/i);
    // the other user's token is unaffected
    expectPlatformError(await wallets(other.userId, other.token), 404, "WALLET_NOT_FOUND");
  });

  it("keeps a deactivated user's old tokens dead after re-activation; a new token works", async () => {
    const { key } = await tenant("token-reactivate");
    const holder = await walk.activeUserWithToken(key);
    const wallets = (token: string) => api().get(`${BASE}/users/${holder.userId}/wallets`).set("Authorization", `Bearer ${token}`);
    await deactivated(key, holder.userId);
    await activated(key, holder.userId);
    const old = await wallets(holder.token);
    expectPlatformError(old, 401, "UNAUTHORIZED");
    expect(old.body.errors[0].message).toMatch(/revoked/i);
    const fresh = await issueToken(key, holder.userId);
    expect(fresh.status).toBe(201);
    expectPlatformError(await wallets(fresh.body.data.token), 404, "WALLET_NOT_FOUND");
  });

  it("accepts a token issued in the same second as a deactivation and re-activation, and keeps refusing a token issued before the deactivation (docs/security.md \"Tokens and rate-limit headers\")", async () => {
    const { key } = await tenant("token-same-second");
    const holder = await walk.activeUserWithToken(key);
    const wallets = (token: string) => api().get(`${BASE}/users/${holder.userId}/wallets`).set("Authorization", `Bearer ${token}`);
    // JWT issue times are whole seconds: the steps must fall in one second to show the case, so
    // start just after a second begins and try again when a slow machine straddled a boundary.
    let fresh: string | undefined;
    let older = holder.token;
    for (let attempt = 0; attempt < 5 && fresh === undefined; attempt++) {
      await new Promise((done) => setTimeout(done, 1000 - (Date.now() % 1000) + 5));
      const second = Math.floor(Date.now() / 1000);
      const before = await issueToken(key, holder.userId);
      expect(before.status).toBe(201);
      await deactivated(key, holder.userId);
      await activated(key, holder.userId);
      const issued = await issueToken(key, holder.userId);
      expect(issued.status).toBe(201);
      if (Math.floor(Date.now() / 1000) === second) {
        fresh = issued.body.data.token as string;
        older = before.body.data.token as string;
      }
    }
    expect(fresh, "four calls within one second").toBeDefined();
    expectPlatformError(await wallets(fresh as string), 404, "WALLET_NOT_FOUND");
    for (const token of [older, holder.token]) {
      const refused = await wallets(token);
      expectPlatformError(refused, 401, "UNAUTHORIZED");
      expect(refused.body.errors[0].message).toMatch(/revoked when its user was deactivated/);
    }
  });

  it("stops a user token when its user is deleted or its owner key is revoked", async () => {
    const { key, credentialId, customerId: cid } = await tenant("token-revoke");
    const holder = await walk.activeUserWithToken(key);
    const wallets = () => api().get(`${BASE}/users/${holder.userId}/wallets`).set("Authorization", `Bearer ${holder.token}`);
    expectPlatformError(await wallets(), 404, "WALLET_NOT_FOUND");
    expect((await api().delete(`${BASE}/customers/${cid}/credentials/${credentialId}`).set("Authorization", `Bearer ${operator}`)).status).toBe(204);
    expectPlatformError(await wallets(), 401, "UNAUTHORIZED");

    const second = await tenant("token-delete");
    const doomed = await walk.activeUserWithToken(second.key);
    await deactivated(second.key, doomed.userId);
    expect((await deleteUser(second.key, doomed.userId)).status).toBe(204);
    expectPlatformError(await api().get(`${BASE}/users/${doomed.userId}/wallets`).set("Authorization", `Bearer ${doomed.token}`), 401, "UNAUTHORIZED");
  });
});

describe("the contract declares every status the users endpoints answer", () => {
  const doc = JSON.parse(readFileSync(new URL("../../generated/openapi/platform.openapi.json", import.meta.url), "utf8")) as {
    paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
  };
  const declared = (operationId: string): string[] => {
    for (const item of Object.values(doc.paths)) for (const op of Object.values(item)) if (op.operationId === operationId) return Object.keys(op.responses);
    throw new Error(`no operation ${operationId}`);
  };
  // the statuses this file observes for each operation
  it.each([
    ["createUser", ["201", "400", "401", "403", "409", "422"]],
    ["listUsers", ["200", "400", "401", "403", "422"]],
    ["getUser", ["200", "401", "403", "404"]],
    ["updateUser", ["200", "400", "401", "403", "404", "409", "422"]],
    ["deleteUser", ["204", "400", "401", "403", "404"]],
    ["activateUser", ["200", "401", "403", "404"]],
    ["deactivateUser", ["200", "400", "401", "403", "404"]],
    ["createUserToken", ["201", "401", "403", "404"]],
  ])("%s declares %j", (operationId, statuses) => {
    expect(declared(operationId)).toEqual(expect.arrayContaining(statuses));
  });
});
