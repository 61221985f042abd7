/**
 * The end user's lifecycle over HTTP on a real PostgreSQL (reference: "Users (owner API key)", "User",
 * "`individual` object", "States and transitions › User", "Authentication", the User codes,
 * "Limits"; docs/decisions/customers-users-and-wallets.md):
 * activateUser, deactivateUser, deleteUser and createUserToken, and the states they move between.
 */
import { describe, expect, it } from "vitest";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { ids, UNKNOWN_USER, useUsersScene } from "../support/users-scene.js";

const users = useUsersScene();
const { api, tenant, newUser, getUser, deleteUser, activateUser, deactivateUser, issueToken, listUsers, activated, deactivated } = users;

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
