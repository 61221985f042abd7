/**
 * Every body goes through the one reader and its checks (docs/security.md, "Money stays exact" and
 * "Bodies, connections and time"; docs/decisions/requests-and-validation.md "Malformed requests"):
 * a JSON body whose top level is a string holding JSON is refused, not parsed a second time
 * without the exact-number, duplicate-key, depth and NUL checks; a NUL in any string is a 422 on
 * its field, never a 5xx; a chunked body without a Content-Type is read or refused, never ignored.
 * Each case is sent both ways where it matters: the plain body and the body wrapped in a string.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError, fundedBtcUser } from "../support/fixtures.js";
import { listen, type Listener } from "../support/listener.js";

const t = useTestApp();
let key: string;
let walletId: string;
let from: string;
let to: string;
let listener: Listener;

beforeAll(async () => {
  const scene = await new Walk(t.express).creditWallet(`bodies-h-${Date.now().toString(36)}`);
  key = scene.key;
  walletId = scene.walletId;
  const a = await fundedBtcUser(t.express, key, 1);
  const b = await fundedBtcUser(t.express, key, 0.001);
  from = a.walletId;
  to = b.walletId;
  listener = await listen(t.express, { headersTimeoutS: 5, requestTimeoutS: 5, maxConnectionsPerAddress: 0 });
});
afterAll(async () => {
  await listener?.close();
});

/** POSTs `text` as it is (already JSON text) with the owner key. */
const post = (path: string, text: string) => t.api().post(path).set("x-api-key", key).set("content-type", "application/json").send(text);

/** A JSON text wrapped once more as a JSON string: `"{\"amount\":…}"`. */
const wrapped = (text: string): string => JSON.stringify(text);

const balance = async (wallet: string): Promise<string> => {
  const res = await t.api().get(`${BASE}/wallets/${wallet}/balance`).set("x-api-key", key);
  expect(res.status).toBe(200);
  return JSON.stringify(res.body.data);
};

describe("a body whose top level is not an object", () => {
  it("a charge wrapped in a string is 400, as the plain one is refused (422): no charge of 1 cent is booked", async () => {
    const text = '{"amount":0.99999999999999999999,"description":"x"}';
    const plain = await post(`/v2/wallet/credits/${walletId}/charges`, text);
    expect(plain.status).toBe(422);
    const res = await post(`/v2/wallet/credits/${walletId}/charges`, wrapped(text));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ success: false, errors: [{ code: "BAD_REQUEST", message: "The request body must be a JSON object." }], meta: { version: "v2" } });
    const charges = await t.api().get(`/v2/wallet/credits/${walletId}`).set("x-api-key", key);
    expect(charges.body.data.totalDebt ?? 0).toBe(0);
  });

  it("an authorization of 1.0 wrapped in a string is refused, not approved", async () => {
    const res = await post(`/v2/wallet/credits/${walletId}/authorizations`, wrapped('{"amount":1.0,"merchant":{"name":"Shop"}}'));
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe("BAD_REQUEST");
  });

  it("transfers wrapped in a string (an amount past 8 decimals, a key given twice) move nothing", async () => {
    const before = [await balance(from), await balance(to)];
    for (const text of [
      `{"from_wallet_id":"${from}","to_wallet_id":"${to}","currency":"btc","amount":0.100000000000000001}`,
      `{"from_wallet_id":"${from}","to_wallet_id":"${to}","currency":"btc","amount":0.01,"amount":0.02}`,
    ]) {
      expectPlatformError(await post(`${BASE}/transfers`, wrapped(text)), 400, "BAD_REQUEST");
    }
    // the plain duplicate key is refused too
    expectPlatformError(await post(`${BASE}/transfers`, `{"from_wallet_id":"${from}","to_wallet_id":"${to}","currency":"btc","amount":0.01,"amount":0.02}`), 400, "BAD_REQUEST");
    expect([await balance(from), await balance(to)]).toEqual(before);
  });

  it("null, a number, an array or a bare string at the top level answer 400 on both surfaces", async () => {
    for (const text of ["null", "1", "[]", '"x"', "true"]) {
      expectPlatformError(await post(`${BASE}/transfers`, text), 400, "BAD_REQUEST");
      const credit = await post(`/v2/wallet/credits/${walletId}/charges`, text);
      expect(credit.status, text).toBe(400);
      expect(credit.body.meta.version).toBe("v2");
    }
  });
});

describe("a NUL in a string is a 422 on its field", () => {
  it("in a transfer's memo: 422 naming memo, not 503; plain and nothing moves", async () => {
    const before = await balance(from);
    const res = await t.api().post(`${BASE}/transfers`).set("x-api-key", key).send({ from_wallet_id: from, to_wallet_id: to, currency: "btc", amount: 0.01, memo: "a\u0000b" });
    expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
    expect(res.body.errors[0]).toMatchObject({ field: "memo" });
    expect(res.body.errors[0].message).toMatch(/NUL/);
    expect(await balance(from)).toBe(before);
  });

  it("in an authorization's merchant.name: 422 naming merchant.name, not 500", async () => {
    const res = await t.api().post(`/v2/wallet/credits/${walletId}/authorizations`).set("x-api-key", key).send({ amount: 100, merchant: { name: "Sh\u0000op" } });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ code: "VALIDATION_ERROR", field: "merchant.name" });
  });

  it("a NUL in a key is still 400 BAD_REQUEST (a key no field has)", async () => {
    expectPlatformError(await post(`${BASE}/transfers`, '{"me\\u0000mo":"x"}'), 400, "BAD_REQUEST");
  });
});

describe("a chunked body without a Content-Type", () => {
  /** Sends `body` chunked, with no Content-Type, on the listener; resolves with the status and the parsed answer. */
  const chunked = (path: string, body: string | null): Promise<{ status: number; json: { errors?: { code: string }[]; data?: Record<string, unknown> } }> =>
    new Promise((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port: listener.port, method: "POST", path, headers: { "x-api-key": key, "transfer-encoding": "chunked" } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") }));
      });
      req.on("error", reject);
      if (body !== null) req.write(body);
      req.end();
    });

  it("with bytes: 415, and a capture of part of a hold does not capture the whole hold", async () => {
    const authorized = await t.api().post(`/v2/wallet/credits/${walletId}/authorizations`).set("x-api-key", key).send({ amount: 5000, merchant: { name: "Hotel" } });
    expect(authorized.status).toBe(201);
    const authorizationId = authorized.body.data.authorizationId as string;
    const capture = await chunked(`/v2/wallet/credits/${walletId}/authorizations/${authorizationId}/capture`, '{"amount":100}');
    expect(capture.status).toBe(415);
    const read = await t.api().get(`/v2/wallet/credits/${walletId}/authorizations/${authorizationId}`).set("x-api-key", key);
    expect(read.status).toBe(200);
    expect(read.body.data, JSON.stringify(read.body.data)).toMatchObject({ status: "approved", amount: 5000, capturedAmount: 0 });
  });

  it("empty: no body, as clients and proxies send empty POSTs", async () => {
    const { userId } = await new Walk(t.express).activeUserWithToken(key);
    const deactivated = await chunked(`${BASE}/users/${userId}/deactivate`, null);
    expect(deactivated.status, JSON.stringify(deactivated.json)).toBe(200);
  });
});
