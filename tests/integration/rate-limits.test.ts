/**
 * Rate limits (docs/decisions/requests-and-validation.md "Rate limits"; src/http/rate-limits.ts) over HTTP on a real PostgreSQL: each bucket trips
 * with 429 in its surface's envelope, `Retry-After` and the `RateLimit-Policy`/`RateLimit` headers,
 * and refills after its window. The limited app is a second replica on the database of an
 * unlimited one (which seeds the tenants), so the buckets shown are the shared PostgreSQL ones.
 * Clients are told apart by `X-Forwarded-For` (`TRUST_PROXY=1`), each test with its own addresses.
 */
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY, apiOf, useTestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError, fundedBtcUser, initiateBtcWithdrawal } from "../support/fixtures.js";
import { waitFor } from "../support/wait.js";

/** Seeds tenants; no limits. */
const seed = useTestApp();
/** Small buckets (2 s windows) on the same database. */
let limited: App;
/** Another replica with the same buckets on the same database. */
let replica: App;

const LIMITS = {
  RATE_LIMIT_IP: "5/2",
  RATE_LIMIT_CREDENTIAL: "8/2",
  RATE_LIMIT_AUTH_FAILURES: "3/2",
  RATE_LIMIT_CODES: "3/2",
  TRUST_PROXY: "1",
  WITHDRAWAL_CODE_RESEND_INTERVAL_S: "0",
  // exact mode: every request counts in PostgreSQL, so two replicas share each count at once (the
  // memory-first default, with its bound across replicas, is tests/process/rate-limit-replicas.test.ts)
  RATE_LIMIT_SYNC_MS: "0",
};

const replicaOf = (databaseUrl: string) =>
  createApp(loadConfig({ DATABASE_URL: databaseUrl, MASTER_API_KEY: TEST_MASTER_KEY, SECRETS_KEY: TEST_SECRETS_KEY, LOG_LEVEL: "silent", ROLE: "api", ...LIMITS }), {
    validateResponses: true,
  });

beforeAll(async () => {
  [limited, replica] = await Promise.all([replicaOf(seed.config.databaseUrl as string), replicaOf(seed.config.databaseUrl as string)]);
});
afterAll(async () => {
  await Promise.all([limited?.close(), replica?.close()]);
});

/** `GET /currencies` with the owner key `key` from client address `ip`. */
const currencies = (app: App, ip: string, key: string) => apiOf(app).get(`${BASE}/currencies`).set("x-forwarded-for", ip).set("x-api-key", key);

/** Asserts a 429 of the platform surface with `Retry-After` within the window and the bucket's headers. */
function expectLimited(res: request.Response, bucket: string, quota: string): void {
  expectPlatformError(res, 429, "RATE_LIMIT_EXCEEDED");
  const retryAfter = Number(res.headers["retry-after"]);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(2);
  expect(res.headers["ratelimit-policy"]).toBe(`"${bucket}";${quota}`);
  expect(res.headers["ratelimit"]).toMatch(new RegExp(`^"${bucket}";r=0;t=[12]$`));
}

/** Waits until the bucket has refilled: `probe` answers something other than 429. */
const refilled = (probe: () => Promise<request.Response>) =>
  waitFor("the bucket to refill", async () => {
    const res = await probe();
    return res.status === 429 ? undefined : res;
  }, 5_000);

describe("ip bucket (RATE_LIMIT_IP=5/2)", () => {
  it("answers 429 to the sixth request of an address in its window, on both surfaces and both replicas, not to another address, and again 200 once the window passed", async () => {
    const { key } = await new Walk(seed.express).tenant("rl-ip");
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await currencies(i % 2 === 0 ? limited : replica, "203.0.113.10", key);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      seen.push(res.headers["ratelimit"] as string);
      expect(res.headers["ratelimit-policy"]).toBeDefined();
    }
    // the headers count down on the bucket nearest to exhaustion (the ip bucket here)
    expect(seen.slice(1)).toEqual(['"ip";r=3;t=2', '"ip";r=2;t=2', '"ip";r=1;t=2', '"ip";r=0;t=2'].map((v) => expect.stringMatching(new RegExp(`^${v.replace(";t=2", ";t=[12]")}$`))));
    expectLimited(await currencies(limited, "203.0.113.10", key), "ip", "q=5;w=2");
    expectLimited(await currencies(replica, "203.0.113.10", key), "ip", "q=5;w=2");

    const credit = await apiOf(limited).get("/v2/credit-products").set("x-forwarded-for", "203.0.113.10").set("x-api-key", key);
    expect(credit.status).toBe(429);
    expect(credit.body).toMatchObject({ success: false, errors: [{ code: "TOO_MANY_REQUESTS" }], meta: { version: "v2" } });
    expect(credit.headers["x-trace-id"]).toBe(credit.body.meta.traceId);
    expect(Number(credit.headers["retry-after"])).toBeGreaterThanOrEqual(1);

    expect((await currencies(limited, "203.0.113.11", key)).status).toBe(200);
    expect((await refilled(() => currencies(limited, "203.0.113.10", key))).status).toBe(200);
  });
});

describe("credential bucket (RATE_LIMIT_CREDENTIAL=8/2)", () => {
  it("answers 429 to the ninth request of a credential in its window from any address; other credentials go on; refills", async () => {
    const walk = new Walk(seed.express);
    const { key } = await walk.tenant("rl-cred");
    const other = await walk.tenant("rl-cred-other");
    for (let i = 0; i < 8; i++) expect((await currencies(i % 2 === 0 ? limited : replica, `198.51.100.${i + 1}`, key)).status).toBe(200);
    expectLimited(await currencies(replica, "198.51.100.9", key), "credential", "q=8;w=2");
    expect((await currencies(limited, "198.51.100.9", other.key)).status).toBe(200);
    expect((await refilled(() => currencies(limited, "198.51.100.10", key))).status).toBe(200);
  });
});

describe("auth-failures bucket (RATE_LIMIT_AUTH_FAILURES=3/2; docs/security.md \"Failed authentications\")", () => {
  it("after 3 failed guesses from an address (API key, master key, customer secret) refuses requests without a credential known to be valid with 429; the partner's working key still answers 200; other addresses are unaffected; refills", async () => {
    const walk = new Walk(seed.express);
    const { key, customerId } = await walk.tenant("rl-auth");
    const ip = "192.0.2.50";
    // the partner's key at work on the replica (from another address) before the guesses begin
    expect((await currencies(replica, "192.0.2.53", key)).status).toBe(200);
    expectPlatformError(await currencies(limited, ip, "sk_wrong-key-0000000000000000"), 401, "UNAUTHORIZED");
    expectPlatformError(await apiOf(limited).post(`${BASE}/sessions`).set("x-forwarded-for", ip).set("x-master-api-key", "not-the-master-key"), 401, "UNAUTHORIZED");
    expectPlatformError(
      await apiOf(limited).post(`${BASE}/sessions`).set("x-forwarded-for", ip).send({ customer_id: customerId, customer_secret: "sk_wrong-secret-000000000000" }),
      401,
      "UNAUTHORIZED",
    );
    // the lock-out holds on the other replica too (the buckets are shared)
    const refused = await apiOf(replica).get(`${BASE}/currencies`).set("x-forwarded-for", ip);
    expectLimited(refused, "auth-failures", "q=3;w=2");
    expect(refused.body.errors[0].message).toMatch(/failed authentications/);
    // the partner's own key, from the same address, is not locked out
    expect((await currencies(replica, ip, key)).status).toBe(200);
    expect((await currencies(limited, "192.0.2.51", key)).status).toBe(200);
    const bare = () => apiOf(limited).get(`${BASE}/currencies`).set("x-forwarded-for", ip);
    expect((await refilled(bare)).status).toBe(401);
  });

  it("a user token (lower-case scheme included) still works from an address locked out by wrong keys; a wrong master key does not", async () => {
    const walk = new Walk(seed.express);
    const { key } = await walk.tenant("rl-auth-token");
    const { token, userId } = await walk.activeUserWithToken(key);
    const ip = "192.0.2.52";
    for (let i = 0; i < 3; i++) expectPlatformError(await currencies(limited, ip, `sk_wrong-key-${i}-00000000000000000000`), 401, "UNAUTHORIZED");
    const withToken = await apiOf(limited).get(`${BASE}/users/${userId}/wallets`).set("x-forwarded-for", ip).set("Authorization", `bearer ${token}`);
    // authenticated and answered by the operation (the user has no wallet yet), not 429 or 401
    expectPlatformError(withToken, 404, "WALLET_NOT_FOUND");
    const master = await apiOf(replica).post(`${BASE}/sessions`).set("x-forwarded-for", ip).set("x-master-api-key", "still-not-the-master-key");
    expectPlatformError(master, 429, "RATE_LIMIT_EXCEEDED");
    expect(master.body.errors[0].message).toMatch(/failed authentications/);
  });

  it("never counts a success, nor a 401 that guessed nothing (no credential, a revoked key), only secrets that match nothing", async () => {
    const walk = new Walk(seed.express);
    const { key } = await walk.tenant("rl-auth-ok");
    const revoked = await walk.tenant("rl-auth-revoked");
    const operator = await walk.operatorToken();
    const revoke = await request(seed.express).delete(`${BASE}/customers/rl-auth-revoked/credentials/${revoked.credentialId}`).set("Authorization", `Bearer ${operator}`);
    expect([200, 204], JSON.stringify(revoke.body)).toContain(revoke.status);
    const ip = "192.0.2.61";
    expect((await currencies(limited, ip, key)).status).toBe(200);
    for (let i = 0; i < 2; i++) expectPlatformError(await apiOf(limited).get(`${BASE}/currencies`).set("x-forwarded-for", ip), 401, "UNAUTHORIZED");
    expectPlatformError(await currencies(limited, ip, revoked.key), 401, "UNAUTHORIZED");
    // none of the four counted: one guess leaves two of three
    const guess = await currencies(limited, ip, "sk_wrong-key-0000000000000000");
    expectPlatformError(guess, 401, "UNAUTHORIZED");
    expect(guess.headers["ratelimit"]).toMatch(/^"(auth-failures";r=2|ip";r=0);t=[12]$/);
  });
});

describe("the RateLimit header names the bucket nearest to exhaustion (docs/security.md \"Tokens and rate-limit headers\")", () => {
  it("names auth-failures once failed authentications leave it the smaller share, on the failing response itself, and ip when that is lower", async () => {
    const { key } = await new Walk(seed.express).tenant("rl-header");
    const ip = "192.0.2.70";
    const wrong = () => currencies(limited, ip, "sk_wrong-key-0000000000000000");
    const headers = (res: request.Response) => [res.headers["ratelimit-policy"], res.headers["ratelimit"]];
    // 1st failure: ip 4 of 5 left (0.8), auth-failures 2 of 3 left once this failure is counted (0.67)
    const first = await wrong();
    expectPlatformError(first, 401, "UNAUTHORIZED");
    expect(headers(first)).toEqual(['"auth-failures";q=3;w=2', expect.stringMatching(/^"auth-failures";r=2;t=[12]$/)]);
    // a success: ip 3 of 5 (0.6) is now below auth-failures 2 of 3 (0.67)
    const ok = await currencies(limited, ip, key);
    expect(ok.status).toBe(200);
    expect(headers(ok)).toEqual(['"ip";q=5;w=2', expect.stringMatching(/^"ip";r=3;t=[12]$/)]);
    // 2nd failure: ip 2 of 5 (0.4), auth-failures 1 of 3 (0.33)
    const second = await wrong();
    expectPlatformError(second, 401, "UNAUTHORIZED");
    expect(headers(second)).toEqual(['"auth-failures";q=3;w=2', expect.stringMatching(/^"auth-failures";r=1;t=[12]$/)]);
    // another success reports the failures bucket read before it (1 of 3 against ip 1 of 5: ip is lower)
    const okAgain = await currencies(limited, ip, key);
    expect(okAgain.status).toBe(200);
    expect(headers(okAgain)).toEqual(['"ip";q=5;w=2', expect.stringMatching(/^"ip";r=1;t=[12]$/)]);
  });

  it("reports auth-failures on a success while its share is the smaller (1 of 3 left against ip 3 of 5)", async () => {
    const { key } = await new Walk(seed.express).tenant("rl-header-ok");
    const ip = "192.0.2.71";
    for (let i = 0; i < 2; i++) expectPlatformError(await currencies(limited, ip, "sk_wrong-key-0000000000000000"), 401, "UNAUTHORIZED");
    const ok = await currencies(replica, ip, key);
    expect(ok.status).toBe(200);
    expect([ok.headers["ratelimit-policy"], ok.headers["ratelimit"]]).toEqual(['"auth-failures";q=3;w=2', expect.stringMatching(/^"auth-failures";r=1;t=[12]$/)]);
  });
});

describe("codes bucket (RATE_LIMIT_CODES=3/2)", () => {
  it("answers 429 to the fourth confirm or resend of a user in its window, whatever the address; refills", async () => {
    const { key } = await new Walk(seed.express).tenant("rl-codes");
    const user = await fundedBtcUser(seed.express, key);
    const withdrawalId = await initiateBtcWithdrawal(seed.express, key, user.userId);
    const confirm = (ip: string) =>
      apiOf(limited)
        .post(`${BASE}/users/${user.userId}/accounts/crypto/withdrawals/${withdrawalId}/confirm`)
        .set("x-forwarded-for", ip)
        .set("x-api-key", key)
        .send({ code: "000000" });
    for (let i = 0; i < 2; i++) {
      const res = await confirm(`100.64.0.${i + 1}`);
      // a wrong code (one chance in a million of the right one)
      expect([400, 200]).toContain(res.status);
    }
    const resend = await apiOf(limited)
      .post(`${BASE}/users/${user.userId}/accounts/crypto/withdrawals/${withdrawalId}/verification/codes`)
      .set("x-forwarded-for", "100.64.0.3")
      .set("x-api-key", key);
    expect(resend.status, JSON.stringify(resend.body)).toBe(200);
    expectLimited(await confirm("100.64.0.4"), "codes", "q=3;w=2");
    // other operations of the same user are not in this bucket
    const read = await apiOf(limited)
      .get(`${BASE}/users/${user.userId}/accounts/crypto/withdrawals/${withdrawalId}`)
      .set("x-forwarded-for", "100.64.0.5")
      .set("x-api-key", key);
    expect(read.status).toBe(200);
    expect((await refilled(() => confirm("100.64.0.6"))).status).toBe(400);
  });
});
