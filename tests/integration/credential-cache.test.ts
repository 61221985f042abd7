/**
 * The credential cache across replicas (docs/decisions/credentials-and-tokens.md "The credential
 * cache"): two apps on one database, each with its own cache and LISTEN session. A deleted
 * credential, a deleted customer and a deactivated user are refused at once by the app that made
 * the change and, through the revoking transaction's NOTIFY, by the other app well within the
 * cache's bound; a change made without a NOTIFY (SQL written directly) is refused within the bound.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { CREDENTIAL_CACHE_TTL_MS } from "../../src/modules/identity/credential-cache.js";
import { apiOf, TEST_MASTER_KEY, TEST_SECRETS_KEY, useTestApp } from "../support/app.js";
import { BASE, Walk } from "../support/fixtures.js";
import { waitFor } from "../support/wait.js";

const a = useTestApp();
let b: App;
let admin: pg.Client;

beforeAll(async () => {
  // a second replica: the same database, its own process-local cache and LISTEN session
  const config = loadConfig({
    DATABASE_URL: a.config.databaseUrl as string,
    MASTER_API_KEY: TEST_MASTER_KEY,
    SECRETS_KEY: TEST_SECRETS_KEY,
    LOG_LEVEL: "silent",
    ROLE: "api",
    RATE_LIMIT_IP: "off",
    RATE_LIMIT_CREDENTIAL: "off",
    RATE_LIMIT_AUTH_FAILURES: "off",
    RATE_LIMIT_CODES: "off",
  });
  b = await createApp(config, { validateResponses: true });
  admin = new pg.Client({ connectionString: a.config.databaseUrl as string });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await b?.close();
});

const currencies = (app: Pick<App, "express">, key: string) => apiOf(app).get(`${BASE}/currencies`).set("x-api-key", key);
const userLimits = (app: Pick<App, "express">, userId: string, token: string) =>
  apiOf(app).get(`${BASE}/users/${userId}/limits`).set("Authorization", `Bearer ${token}`);
const customer = (app: Pick<App, "express">, customerId: string, session: string) =>
  apiOf(app).get(`${BASE}/customers/${customerId}`).set("Authorization", `Bearer ${session}`);

/** How long the other app took to refuse: polled every 50 ms, at most half the cache's bound (so a refusal shows the NOTIFY, not the bound). */
async function refusedBy(what: string, probe: () => Promise<{ status: number }>): Promise<number> {
  const started = Date.now();
  await waitFor(what, async () => ((await probe()).status === 401 ? true : undefined), CREDENTIAL_CACHE_TTL_MS / 2);
  return Date.now() - started;
}

/** A customer session of `customerId` opened with its owner key `key`. */
async function customerSession(customerId: string, key: string): Promise<string> {
  const res = await apiOf(a).post(`${BASE}/sessions`).send({ customer_id: customerId, customer_secret: key });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.token as string;
}

describe("revocations reach every replica's cache", () => {
  it("a deleted credential is refused at once by the app that deleted it, and by the other app through its NOTIFY", async () => {
    const walk = new Walk(a.express);
    const { customerId, key, credentialId } = await walk.tenant("cache-credential");
    const session = await customerSession(customerId, key);
    // both apps admit, and cache, the key and the session
    for (const app of [a, b]) {
      expect((await currencies(app, key)).status).toBe(200);
      expect((await customer(app, customerId, session)).status).toBe(200);
    }
    const operator = await walk.operatorToken();
    const deleted = await apiOf(a).delete(`${BASE}/customers/${customerId}/credentials/${credentialId}`).set("Authorization", `Bearer ${operator}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBeLessThan(300);
    const refusedHere = await currencies(a, key);
    expect(refusedHere.status).toBe(401);
    expect(refusedHere.body.errors[0].message).toContain("revoked");
    expect((await customer(a, customerId, session)).status).toBe(401);
    expect(await refusedBy("the other app to refuse the key", () => currencies(b, key))).toBeLessThan(CREDENTIAL_CACHE_TTL_MS / 2);
    expect((await customer(b, customerId, session)).status).toBe(401);
  });

  it("a deleted customer's key and session are refused at once here and through the NOTIFY there", async () => {
    const walk = new Walk(a.express);
    const { customerId, key } = await walk.tenant("cache-customer");
    const session = await customerSession(customerId, key);
    for (const app of [b, a]) {
      expect((await currencies(app, key)).status).toBe(200);
      expect((await customer(app, customerId, session)).status).toBe(200);
    }
    const deleted = await apiOf(b).delete(`${BASE}/customers/${customerId}`).set("Authorization", `Bearer ${await walk.operatorToken()}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBeLessThan(300);
    expect((await currencies(b, key)).status).toBe(401);
    expect((await customer(b, customerId, session)).status).toBe(401);
    expect(await refusedBy("the other app to refuse the deleted customer's key", () => currencies(a, key))).toBeLessThan(CREDENTIAL_CACHE_TTL_MS / 2);
    const refused = await customer(a, customerId, session);
    expect(refused.status).toBe(401);
    expect(refused.body.errors[0].message).toMatch(/revoked|deleted/);
  });

  it("a deactivated user's token is refused at once here and through the NOTIFY there", async () => {
    const walk = new Walk(a.express);
    const { key } = await walk.tenant("cache-user");
    const { userId, token } = await walk.activeUserWithToken(key);
    for (const app of [a, b]) expect((await userLimits(app, userId, token)).status).toBe(200);
    const deactivated = await apiOf(a).post(`${BASE}/users/${userId}/deactivate`).set("x-api-key", key);
    expect(deactivated.status, JSON.stringify(deactivated.body)).toBe(200);
    const refused = await userLimits(a, userId, token);
    expect(refused.status).toBe(401);
    expect(refused.body.errors[0].message).toMatch(/inactive|revoked/);
    expect(await refusedBy("the other app to refuse the deactivated user's token", () => userLimits(b, userId, token))).toBeLessThan(CREDENTIAL_CACHE_TTL_MS / 2);
    // the owner key of the same customer is unaffected, on both
    for (const app of [a, b]) expect((await currencies(app, key)).status).toBe(200);
  });
});

describe("the LISTEN session's metrics (docs/operations.md \"Observability\")", () => {
  it("says on /metrics that the session listens, with no outage", async () => {
    const metrics = await apiOf(a).get("/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^auth_cache_listen_up 1$/m);
    expect(metrics.text).toMatch(/^auth_cache_listen_outages_total 0$/m);
  });
});

describe("a change that sends no NOTIFY", () => {
  it("is served from the cache for at most the bound, then refused by both apps", { timeout: 15_000 }, async () => {
    const { key, credentialId } = await new Walk(a.express).tenant("cache-silent");
    for (const app of [a, b]) expect((await currencies(app, key)).status).toBe(200);
    const changedAt = Date.now();
    // revoked by SQL written directly: no pg_notify, as if the notification had been lost
    await admin.query("update credential set is_active = false, revoked_at = now() where credential_id = $1", [credentialId]);
    // the cache still holds the admission it made less than the bound ago (this is what the bound allows)
    expect((await currencies(a, key)).status).toBe(200);
    const refusedA = await waitFor("app A to re-verify", async () => ((await currencies(a, key)).status === 401 ? Date.now() : undefined), CREDENTIAL_CACHE_TTL_MS + 2000);
    const refusedB = await waitFor("app B to re-verify", async () => ((await currencies(b, key)).status === 401 ? Date.now() : undefined), CREDENTIAL_CACHE_TTL_MS + 2000);
    // 250 ms for the polling and the requests themselves
    expect(refusedA - changedAt).toBeLessThanOrEqual(CREDENTIAL_CACHE_TTL_MS + 250);
    expect(refusedB - changedAt).toBeLessThanOrEqual(CREDENTIAL_CACHE_TTL_MS + 250);
  });
});
