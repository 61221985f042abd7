/**
 * Creating end users over HTTP on a real PostgreSQL (reference: "Users (owner API key)", "User",
 * "`individual` object", "States and transitions › User", "Authentication", the User codes,
 * "Limits"; docs/decisions/customers-users-and-wallets.md):
 * createUser's success path, every validation and conflict it answers, concurrent creates and the
 * fields a create ignores. The other users operations: users-*.test.ts.
 */
import { describe, expect, it } from "vitest";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { fieldsOf, useUsersScene, UUID_V4, yearsAgo } from "../support/users-scene.js";

const users = useUsersScene();
const { api, nextPhone, body, tenant, createUser, newUser, getUser, updateUser, deleteUser, listUsers } = users;

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

  it("answers another customer's user_id exactly as its own taken id: the other customer's user stays invisible (docs/decisions/customers-users-and-wallets.md#users)", async () => {
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
    const email = `Unique.Person.${users.customerSeq}@Example.com`;
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
    ["email", () => ({ email: `race.${users.customerSeq}@example.com` }), "EMAIL_ALREADY_EXISTS"],
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
