/**
 * Reading and updating end users over HTTP on a real PostgreSQL (reference: "Users (owner API key)", "User",
 * "`individual` object", "States and transitions › User", "Authentication", the User codes,
 * "Limits"; docs/decisions/customers-users-and-wallets.md):
 * getUser and updateUser, their success paths and every error they answer.
 */
import { describe, expect, it } from "vitest";
import { expectPlatformError } from "../support/fixtures.js";
import { fieldsOf, UNKNOWN_USER, useUsersScene, yearsAgo } from "../support/users-scene.js";
import { clockPast } from "../support/wait.js";

const users = useUsersScene();
const { tenant, newUser, getUser, updateUser, deleteUser, activateUser, deactivateUser, issueToken } = users;

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
    await clockPast(user.updated_at); // the update's updated_at is a later millisecond
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
      email: `changed.${users.customerSeq}@example.org`,
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
