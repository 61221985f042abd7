/**
 * Who may call the users endpoints, over HTTP on a real PostgreSQL (reference: "Users (owner API key)", "User",
 * "`individual` object", "States and transitions › User", "Authentication", the User codes,
 * "Limits"; docs/decisions/customers-users-and-wallets.md):
 * the credentials every operation takes and refuses, user tokens after deactivation, deletion and
 * revocation, and that the contract declares every status the users-*.test.ts files observe.
 */
import { readFileSync } from "node:fs";
import type request from "supertest";
import { describe, expect, it } from "vitest";
import { TEST_MASTER_KEY } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { ids, useUsersScene } from "../support/users-scene.js";
import { clockPast } from "../support/wait.js";

const users = useUsersScene();
const {
  api, body, tenant, newUser, getUser, updateUser, deleteUser, activateUser, deactivateUser,
  issueToken, listUsers, activated, deactivated,
} = users;

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
    const other = await users.walk.ownerKey(cid, users.operator);
    const user = await newUser(key);
    const revoke = await api().delete(`${BASE}/customers/${cid}/credentials/${credentialId}`).set("Authorization", `Bearer ${users.operator}`);
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
    const holder = await users.walk.activeUserWithToken(key);

    const credentials: [string, (r: request.Test) => request.Test][] = [
      ["operator session", (r) => r.set("Authorization", `Bearer ${users.operator}`)],
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
    const holder = await users.walk.activeUserWithToken(key);
    const other = await users.walk.activeUserWithToken(key);
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
    const holder = await users.walk.activeUserWithToken(key);
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
    const holder = await users.walk.activeUserWithToken(key);
    const wallets = (token: string) => api().get(`${BASE}/users/${holder.userId}/wallets`).set("Authorization", `Bearer ${token}`);
    // JWT issue times are whole seconds: the steps must fall in one second to show the case, so
    // start just after a second begins and try again when a slow machine straddled a boundary.
    let fresh: string | undefined;
    let older = holder.token;
    for (let attempt = 0; attempt < 5 && fresh === undefined; attempt++) {
      await clockPast((Math.floor(Date.now() / 1000) + 1) * 1000 + 4);
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
    const holder = await users.walk.activeUserWithToken(key);
    const wallets = () => api().get(`${BASE}/users/${holder.userId}/wallets`).set("Authorization", `Bearer ${holder.token}`);
    expectPlatformError(await wallets(), 404, "WALLET_NOT_FOUND");
    expect((await api().delete(`${BASE}/customers/${cid}/credentials/${credentialId}`).set("Authorization", `Bearer ${users.operator}`)).status).toBe(204);
    expectPlatformError(await wallets(), 401, "UNAUTHORIZED");

    const second = await tenant("token-delete");
    const doomed = await users.walk.activeUserWithToken(second.key);
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
  // the statuses the users-*.test.ts files observe for each operation
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
