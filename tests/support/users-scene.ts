/**
 * The set-up and request helpers of the users-*.test.ts files (end users over HTTP on a real
 * PostgreSQL; docs/decisions/customers-users-and-wallets.md, docs/testing.md): one test app per
 * file, an operator session, tenants with owner keys, valid Create User bodies that never collide
 * within the file, and one function per users operation.
 */
import type request from "supertest";
import { beforeAll, expect } from "vitest";
import { useTestApp, type TestAppHandle } from "./app.js";
import { BASE, Walk, expectPlatformError, userBody } from "./fixtures.js";

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const UNKNOWN_USER = "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e";

/** A user record as the API shows it. */
export type UserRecord = { user_id: string; email: string; phone_number: string; updated_at: string; individual: Record<string, unknown>; [field: string]: unknown };

type Fields = Record<string, unknown>;

/** The sorted `field`s of a 422 answer, asserting each entry is an UNPROCESSABLE_ENTITY item. */
export function fieldsOf(res: request.Response): string[] {
  expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
  for (const e of res.body.errors) {
    expect(e.code).toBe("UNPROCESSABLE_ENTITY");
    expect(typeof e.message).toBe("string");
  }
  return (res.body.errors as { field: string }[]).map((e) => e.field).sort();
}

/** The UTC calendar date `years` years and `days` days before today, as YYYY-MM-DD. */
export function yearsAgo(years: number, days = 0): string {
  const now = new Date();
  const d = new Date(Date.UTC(now.getUTCFullYear() - years, now.getUTCMonth(), now.getUTCDate() - days));
  return d.toISOString().slice(0, 10);
}

/** The `user_id`s of a list answer, in its order. */
export const ids = (res: request.Response): string[] => (res.body.data as { user_id: string }[]).map((u) => u.user_id);

/**
 * Starts the file's test app (`useTestApp`) and an operator session, and returns the helpers bound
 * to them. `walk` and `operator` are set once the file's `beforeAll` hooks ran.
 */
export function useUsersScene() {
  const t: TestAppHandle = useTestApp();
  let walk!: Walk;
  let operator!: string;
  beforeAll(async () => {
    walk = new Walk(t.express);
    operator = await walk.operatorToken();
  });
  const api = t.api;

  /** Customer ids no other test of the file uses. */
  let customerSeq = 0;
  const customerId = (prefix: string) => `u-${prefix}-${++customerSeq}`;
  /** US mobile numbers (202-55x-xxxx) no other user of the file has, so tests never collide. */
  let phoneSeq = 0;
  const nextPhone = () => `20255${String(++phoneSeq * 7).padStart(5, "0")}`;
  /** A valid Create User body with a unique email and phone. */
  const body = (overrides: Fields = {}, individual: Fields = {}) => userBody({ phone_number: nextPhone(), ...overrides }, individual);
  const createUser = (key: string, overrides: Fields = {}, individual: Fields = {}) =>
    api().post(`${BASE}/users`).set("x-api-key", key).send(body(overrides, individual));
  const activateUser = (key: string, id: string) => api().post(`${BASE}/users/${id}/activate`).set("x-api-key", key);
  const deactivateUser = (key: string, id: string) => api().post(`${BASE}/users/${id}/deactivate`).set("x-api-key", key);

  return {
    t,
    api,
    /** The file's request helpers on the test app (set once the file's `beforeAll` hooks ran). */
    get walk(): Walk {
      return walk;
    },
    /** An operator session token (set once the file's `beforeAll` hooks ran). */
    get operator(): string {
      return operator;
    },
    /** How many customer ids the file has taken so far (a counter tests use to make values unique). */
    get customerSeq(): number {
      return customerSeq;
    },
    nextPhone,
    body,
    /** A fresh tenant with its owner key. */
    tenant: (prefix: string) => walk.tenant(customerId(prefix)),
    createUser,
    /** Creates a user and returns its record (asserting 201). */
    async newUser(key: string, overrides: Fields = {}, individual: Fields = {}): Promise<UserRecord> {
      const res = await createUser(key, overrides, individual);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data as UserRecord;
    },
    getUser: (key: string, id: string) => api().get(`${BASE}/users/${id}`).set("x-api-key", key),
    updateUser: (key: string, id: string, patch: Fields) => api().put(`${BASE}/users/${id}`).set("x-api-key", key).send(patch),
    deleteUser: (key: string, id: string) => api().delete(`${BASE}/users/${id}`).set("x-api-key", key),
    activateUser,
    deactivateUser,
    issueToken: (key: string, id: string) => api().post(`${BASE}/users/${id}/token`).set("x-api-key", key),
    listUsers: (key: string, query = "") => api().get(`${BASE}/users${query}`).set("x-api-key", key),
    /** Activates user `id`, asserting 200. */
    async activated(key: string, id: string): Promise<void> {
      const res = await activateUser(key, id);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    },
    /** Deactivates user `id`, asserting 200. */
    async deactivated(key: string, id: string): Promise<void> {
      const res = await deactivateUser(key, id);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    },
  };
}
