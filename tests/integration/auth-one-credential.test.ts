/**
 * One credential per request (docs/decisions/credentials-and-tokens.md "One credential per request", reference "Authentication"; the security schemes of
 * both documents): a request carrying an API key (`x-api-key` or `x-master-api-key`) and an
 * `Authorization` header, or different keys in the two API key headers, answers 401
 * `UNAUTHORIZED` "Send one credential: …" before any of them is checked.
 *
 * And what that means for a generated SDK: a @hey-api/openapi-ts client (client-fetch) generated
 * from the emitted platform document, run against the real app on 127.0.0.1, sends exactly the
 * credential it is configured with — one `auth` per scheme — and a client given one secret for
 * every scheme gets the clear 401 on an operation that takes an API key or a bearer token.
 */
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createClient as generateSdk } from "@hey-api/openapi-ts";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, useTestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError, fundedBtcUser } from "../support/fixtures.js";

const PLATFORM_DOCUMENT = fileURLToPath(new URL("../../generated/openapi/platform.openapi.json", import.meta.url));
const ONE_CREDENTIAL = /^Send one credential: /;

const t = useTestApp();
let server: Server;
let origin: string;
let key: string;
let walletId: string;
let userToken: string;
let operatorToken: string;
let sdkDir: string;
const api = t.api;

beforeAll(async () => {
  const walk = new Walk(t.express);
  key = (await walk.tenant("one-cred-co")).key;
  const user = await fundedBtcUser(t.express, key);
  walletId = user.walletId;
  userToken = (await api().post(`${BASE}/users/${user.userId}/token`).set("x-api-key", key)).body.data.token as string;
  operatorToken = await walk.operatorToken();
  server = t.express.listen(0, "127.0.0.1");
  await once(server, "listening");
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sdkDir = mkdtempSync(join(tmpdir(), "hey-api-sdk-"));
  await generateSdk({ input: PLATFORM_DOCUMENT, output: { path: sdkDir }, plugins: ["@hey-api/client-fetch"], logs: { level: "silent" } });
}, 120_000);
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  if (sdkDir) rmSync(sdkDir, { recursive: true, force: true });
});
/** The 401 of a request that carries two credentials. */
function expectAmbiguous(res: request.Response): void {
  expectPlatformError(res, 401, "UNAUTHORIZED");
  expect(res.body.errors[0].message).toMatch(ONE_CREDENTIAL);
}

describe("the service takes one credential per request", () => {
  it("answers 401 'Send one credential' to an API key together with a bearer token, whichever is valid", async () => {
    const wallets = `${BASE}/wallets/${walletId}/balance`;
    // each alone is accepted
    expect((await api().get(wallets).set("x-api-key", key)).status).toBe(200);
    expect((await api().get(wallets).set("Authorization", `Bearer ${userToken}`)).status).toBe(200);
    // both valid, both for this user: still refused
    expectAmbiguous(await api().get(wallets).set("x-api-key", key).set("Authorization", `Bearer ${userToken}`));
    // one secret in both headers (a client given one secret for every scheme)
    expectAmbiguous(await api().get(wallets).set("x-api-key", key).set("Authorization", `Bearer ${key}`));
    // the master key header with a session token
    expectAmbiguous(await api().get(`${BASE}/customers`).set("x-master-api-key", TEST_MASTER_KEY).set("Authorization", `Bearer ${operatorToken}`));
    const res = await api().get(wallets).set("x-api-key", key).set("Authorization", `Bearer ${userToken}`);
    expect(res.body.errors[0].message).toBe("Send one credential: x-api-key or Authorization, not both.");
  });

  it("takes the master key in both API key headers once, and refuses different keys in them", async () => {
    expect((await api().get(`${BASE}/customers`).set("x-master-api-key", TEST_MASTER_KEY).set("x-api-key", TEST_MASTER_KEY)).status).toBe(200);
    expectAmbiguous(await api().get(`${BASE}/customers`).set("x-master-api-key", TEST_MASTER_KEY).set("x-api-key", key));
    expectAmbiguous(await api().get(`${BASE}/users`).set("x-master-api-key", TEST_MASTER_KEY).set("x-api-key", key));
  });

  it("Create Session (open to anyone) refuses two credentials and a wrong key instead of ignoring them", async () => {
    const ownerId = "one-cred-co";
    const body = { customer_id: ownerId, customer_secret: key };
    expectAmbiguous(await api().post(`${BASE}/sessions`).set("x-master-api-key", TEST_MASTER_KEY).set("Authorization", `Bearer ${operatorToken}`));
    expectAmbiguous(await api().post(`${BASE}/sessions`).set("x-master-api-key", TEST_MASTER_KEY).set("x-api-key", key).send(body));
    const wrongKey = await api().post(`${BASE}/sessions`).set("x-master-api-key", "not-the-master-key-0123456789abcdef").send(body);
    expectPlatformError(wrongKey, 401, "UNAUTHORIZED");
    expect(wrongKey.body.errors[0].message).toBe("Invalid master API key.");
    // one credential, or none with the body's customer credentials: sessions as before
    expect((await api().post(`${BASE}/sessions`).set("x-master-api-key", TEST_MASTER_KEY)).body.data).toMatchObject({ scope: "operator" });
    expect((await api().post(`${BASE}/sessions`).send(body)).body.data).toMatchObject({ scope: "customer", customer_id: ownerId });
  });

  it("answers the same 401 on the credit core, in its envelope", async () => {
    const res = await api().get("/v2/wallet/credits").set("x-api-key", key).set("Authorization", `Bearer ${userToken}`);
    expect(res.status).toBe(401);
    expect(res.body.success).toBe(false);
    expect(res.body.meta.version).toBe("v2");
    expect(res.body.errors[0]).toMatchObject({ code: "UNAUTHORIZED", message: expect.stringMatching(ONE_CREDENTIAL) });
    expect((await api().get("/v2/wallet/credits").set("x-api-key", key)).status).toBe(200);
  });
});

/** The parts of the generated SDK this test calls (typed loosely: the SDK is generated at run time). */
interface Scheme {
  type: "apiKey" | "http";
  name?: string;
  scheme?: "basic" | "bearer";
}
type Auth = string | ((scheme: Scheme) => string | undefined);
interface Result {
  response: Response;
  data?: unknown;
  error?: { errors: { code: string; message: string }[] };
}
type Call = (options: { client: unknown; path?: Record<string, string> }) => Promise<Result>;
interface Sdk {
  listUsers: Call;
  getWalletBalance: Call;
  listCustomers: Call;
}

describe("a generated SDK (@hey-api/openapi-ts 0.99, client-fetch) sends exactly its one credential", () => {
  /** A client of the generated SDK with `auth`, and the credential headers of each request it sends. */
  async function sdkClient(auth: Auth) {
    const sdk = (await import(pathToFileURL(join(sdkDir, "sdk.gen.ts")).href)) as Sdk;
    const { createClient } = (await import(pathToFileURL(join(sdkDir, "client", "index.ts")).href)) as { createClient: (config: object) => unknown };
    const sent: Record<string, string>[] = [];
    const recordingFetch = async (input: Request) => {
      const credentials: Record<string, string> = {};
      for (const name of ["x-api-key", "x-master-api-key", "authorization"]) {
        const value = input.headers.get(name);
        if (value !== null) credentials[name] = value;
      }
      sent.push(credentials);
      return fetch(input);
    };
    const client = createClient({ baseUrl: `${origin}/api/v1`, auth, fetch: recordingFetch });
    return { sdk, client, sent };
  }

  it("the documents declare one scheme per header: ApiKey (x-api-key), MasterApiKey (x-master-api-key), BearerAuth", async () => {
    const platform = (await api().get("/openapi/platform.json")).body as { components: { securitySchemes: Record<string, { in?: string; name?: string; scheme?: string }> } };
    const schemes = platform.components.securitySchemes;
    expect(Object.keys(schemes).sort()).toEqual(["ApiKey", "BearerAuth", "MasterApiKey"]);
    expect(schemes.ApiKey).toMatchObject({ in: "header", name: "x-api-key" });
    expect(schemes.MasterApiKey).toMatchObject({ in: "header", name: "x-master-api-key" });
    expect(schemes.BearerAuth).toMatchObject({ scheme: "Bearer" });
    const credit = (await api().get("/openapi/credit.json")).body as { components: { securitySchemes: Record<string, unknown> } };
    expect(Object.keys(credit.components.securitySchemes)).toEqual(["ApiKey"]);
  });

  it("configured with only the owner API key: x-api-key alone, on an ApiKey operation and on an ApiKey-or-BearerAuth one", async () => {
    const { sdk, client, sent } = await sdkClient((scheme) => (scheme.type === "apiKey" && scheme.name === "x-api-key" ? key : undefined));
    expect((await sdk.listUsers({ client })).response.status).toBe(200);
    expect((await sdk.getWalletBalance({ client, path: { wallet_id: walletId } })).response.status).toBe(200);
    expect(sent).toEqual([{ "x-api-key": key }, { "x-api-key": key }]);
  });

  it("configured with only a user token: Authorization alone", async () => {
    const { sdk, client, sent } = await sdkClient((scheme) => (scheme.type === "http" ? userToken : undefined));
    expect((await sdk.getWalletBalance({ client, path: { wallet_id: walletId } })).response.status).toBe(200);
    expect(sent).toEqual([{ authorization: `Bearer ${userToken}` }]);
  });

  it("configured with only the master key: x-master-api-key alone on List Customers", async () => {
    const { sdk, client, sent } = await sdkClient((scheme) => (scheme.name === "x-master-api-key" ? TEST_MASTER_KEY : undefined));
    expect((await sdk.listCustomers({ client })).response.status).toBe(200);
    expect(sent).toEqual([{ "x-master-api-key": TEST_MASTER_KEY }]);
  });

  it("given one secret as a plain string: fine where an operation takes one scheme; on API key or bearer token, both headers and the clear 401", async () => {
    const { sdk, client, sent } = await sdkClient(key);
    expect((await sdk.listUsers({ client })).response.status).toBe(200);
    const both = await sdk.getWalletBalance({ client, path: { wallet_id: walletId } });
    expect(sent).toEqual([{ "x-api-key": key }, { "x-api-key": key, authorization: `Bearer ${key}` }]);
    expect(both.response.status).toBe(401);
    expect(both.error?.errors[0]?.code).toBe("UNAUTHORIZED");
    expect(both.error?.errors[0]?.message).toMatch(ONE_CREDENTIAL);
  });

  it("given the master key as a plain string: List Customers sends it in both API key headers, which counts as one credential", async () => {
    const { sdk, client, sent } = await sdkClient(TEST_MASTER_KEY);
    expect((await sdk.listCustomers({ client })).response.status).toBe(200);
    expect(sent).toEqual([{ "x-master-api-key": TEST_MASTER_KEY, "x-api-key": TEST_MASTER_KEY }]);
  });
});
