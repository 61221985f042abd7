/**
 * The request path under hostile or careless input (docs/security.md): a body is read only once
 * its caller is authenticated; integers are checked on the JSON text; a key named twice is
 * refused; a malformed path, an impossible date, thousands of unknown keys or parameters each get
 * a small 4xx in the surface's envelope; HEAD answers as GET; a request that does not arrive in
 * time gets 408, and one address cannot hold more than its share of connections.
 */
import { once } from "node:events";
import type { Server } from "node:http";
import { connect, type Socket } from "node:net";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, startTestApp, useTestApp, type TestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError, userBody } from "../support/fixtures.js";
import { listen, type Listener } from "../support/listener.js";
import { sleep, waitFor } from "../support/wait.js";

/** The connections `server` holds open now. */
const connectionsOf = (server: Server): Promise<number> =>
  new Promise((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))));

const t = useTestApp();
let key: string;
let customerId: string;
let userId: string;
let walletId: string;

const api = t.api;

beforeAll(async () => {
  ({ customerId, key, userId, walletId } = await new Walk(t.express).creditWallet(`hard-${Date.now().toString(36)}`));
});

/** A JSON text of `count` numbers `1.0` in one array: ~4 bytes each. */
const numbersBody = (count: number): string => `{"z":[${Array.from({ length: count }, () => "1.0").join(",")}]}`;

describe("no key: the body is not read", () => {
  it("a 1 MiB body of 250 000 numbers without a key answers 401", async () => {
    const body = numbersBody(250_000);
    expect(body.length).toBeGreaterThan(900_000);
    const res = await api().post(`/v2/wallet/credits/${walletId}/charges`).set("content-type", "application/json").send(body);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ success: false, errors: [{ code: "UNAUTHORIZED" }], meta: { version: "v2" } });
  });

  it("without a key, broken JSON, a NUL or a 1000-deep body answer 401, not 400: nothing of the body was looked at", async () => {
    for (const text of [`{"amount":`, `{"a":"x\\u0000y"}`, `${"[".repeat(1000)}${"]".repeat(1000)}`]) {
      const credit = await api().post(`/v2/wallet/credits/${walletId}/charges`).set("content-type", "application/json").send(text);
      expect(credit.status, text.slice(0, 20)).toBe(401);
      const platform = await api().post(`${BASE}/users`).set("content-type", "application/json").send(text);
      expectPlatformError(platform, 401, "UNAUTHORIZED");
    }
    // With the key the same bodies are read and refused.
    const broken = await api().post(`/v2/wallet/credits/${walletId}/charges`).set("x-api-key", key).set("content-type", "application/json").send(`{"amount":`);
    expect(broken.status).toBe(400);
    expect(broken.body.errors[0].code).toBe("BAD_REQUEST");
  });

  it("what the headers alone show is still answered first: 415 for a body that is not JSON, 413 for a declared length over the limit", async () => {
    const text = await api().post(`/v2/wallet/credits/${walletId}/charges`).set("content-type", "text/plain").send("hello");
    expect(text.status).toBe(415);
    const big = await api().post(`${BASE}/users`).set("content-type", "application/json").send(JSON.stringify({ x: "y".repeat(t.config.bodyLimitBytes) }));
    expectPlatformError(big, 413, "PAYLOAD_TOO_LARGE");
  });

  it("a wrong key with a body answers 401 and the request after it on the same connection is served", async () => {
    const agent = request.agent(t.express);
    const wrong = await agent.post(`/v2/wallet/credits/${walletId}/charges`).set("x-api-key", "sk_wrong").send({ amount: 100, description: "x" });
    expect(wrong.status).toBe(401);
    const right = await agent.get(`/v2/wallet/credits/${walletId}`).set("x-api-key", key);
    expect(right.status).toBe(200);
  });
});

describe("exact integers and duplicate keys", () => {
  const chargeText = (text: string) =>
    api().post(`/v2/wallet/credits/${walletId}/charges`).set("x-api-key", key).set("content-type", "application/json").send(text);

  it("an amount in cents written with a fraction or an exponent is a 422 on that field, never rounded", async () => {
    for (const amount of ["0.99999999999999999999", "1.00000000000000000001", "1.0", "1e2", "100.000"]) {
      const res = await chargeText(`{"amount":${amount},"description":"x"}`);
      expect(res.status, amount).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: "VALIDATION_ERROR", field: "amount" });
    }
    const wallet = await api().get(`/v2/wallet/credits/${walletId}`).set("x-api-key", key);
    expect(wallet.body.data.principalOutstanding).toBe(0);
    const ok = await chargeText(`{"amount":100,"description":"x"}`);
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
  });

  it("integers of the platform and of nested objects are checked too (poller port, interest override)", async () => {
    const operator = await new Walk(t.express).operatorToken();
    const poller = await api().post(`${BASE}/customers/${customerId}/email/poller`).set("Authorization", `Bearer ${operator}`).set("content-type", "application/json")
      .send(`{"imap":{"host":"imap.example.com","port":993.0,"tls":true,"password":"p"}}`);
    expectPlatformError(poller, 422, "UNPROCESSABLE_ENTITY");
    expect(poller.body.errors[0].field).toBe("imap.port");
  });

  it("a key named twice answers 400 on both surfaces", async () => {
    const credit = await chargeText(`{"amount":1,"amount":2,"description":"x"}`);
    expect(credit.status).toBe(400);
    expect(credit.body.errors[0]).toMatchObject({ code: "BAD_REQUEST" });
    expect(credit.body.errors[0].message).toMatch(/"amount" more than once/);
    const escaped = await chargeText(`{"amount":1,"\\u0061mount":2,"description":"x"}`);
    expect(escaped.status).toBe(400);
    const platform = await api().put(`${BASE}/users/${userId}`).set("x-api-key", key).set("content-type", "application/json").send(`{"first_name":"A","first_name":"B"}`);
    expectPlatformError(platform, 400, "BAD_REQUEST");
    // The same key in two different objects is fine.
    const nested = await api().post(`${BASE}/users`).set("x-api-key", key).set("content-type", "application/json").send(JSON.stringify(userBody()));
    expect(nested.status, JSON.stringify(nested.body)).toBe(201);
  });

  it("decimal amounts of the platform keep the digits a double would drop", async () => {
    const res = await api().post(`${BASE}/users/${userId}/accounts/crypto/withdrawals`).set("x-api-key", key).set("content-type", "application/json")
      .send(`{"currency":"btc","amount":0.000000001,"address":"tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl"}`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(JSON.stringify(res.body.errors)).toMatch(/amount|decimal|precision|AMOUNT/i);
  });
});

describe("paths, dates, HEAD and the size of validation answers", () => {
  it("malformed percent-encoding in a path answers 400 in the surface's envelope", async () => {
    const credit = await api().get("/v2/wallet/credits/%ff").set("x-api-key", key);
    expect(credit.status).toBe(400);
    expect(credit.body).toMatchObject({ success: false, errors: [{ code: "BAD_REQUEST" }], meta: { version: "v2" } });
    expectPlatformError(await api().get(`${BASE}/users/%E0%A4%A`).set("x-api-key", key), 400, "BAD_REQUEST");
    expectPlatformError(await api().get(`${BASE}/wallets/%zz/balance`).set("x-api-key", key), 400, "BAD_REQUEST");
  });

  it("a leap second, year 0 or an out-of-range date answers 422 on its field on both surfaces", async () => {
    for (const now of ["2026-12-31T23:59:60Z", "0000-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "+275760-09-13T00:00:00Z"]) {
      const res = await api().put("/v2/sandbox/clock").set("x-api-key", key).send({ now });
      expect(res.status, now).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: "VALIDATION_ERROR", field: "now" });
    }
    const advance = await api().post("/v2/sandbox/clock/advance").set("x-api-key", key).send({ to: "2030-06-30T23:59:60Z" });
    expect(advance.status).toBe(422);
    expect(advance.body.errors[0].field).toBe("to");
    const wallet = await api().post("/v2/wallet/credits").set("x-api-key", key).send({ userId, currency: "USD", limit: 1000, creditProductCode: "001", firstCutDate: "0000-01-01T00:00:00Z" });
    expect(wallet.status).toBe(422);
    expect(wallet.body.errors[0].field).toBe("firstCutDate");
    const dob = await api().put(`${BASE}/users/${userId}`).set("x-api-key", key).send({ individual: { dob: "0000-05-17" } });
    expectPlatformError(dob, 422, "UNPROCESSABLE_ENTITY");
  });

  it("80 000 unknown keys answer at most 20 errors, in an answer smaller than the request", async () => {
    const body: Record<string, number> = { creditNotificationsURL: 1 };
    for (let i = 0; i < 80_000; i++) body[`k${i}`] = 1;
    const text = JSON.stringify(body);
    const res = await api().put("/v2/notifications").set("x-api-key", key).set("content-type", "application/json").send(text);
    expect(res.status).toBe(422);
    expect(res.body.errors.length).toBeLessThanOrEqual(20);
    expect(res.text.length).toBeLessThan(text.length / 50);
    const patch = await api().patch("/v2/credit-products/001").set("x-api-key", TEST_MASTER_KEY).set("content-type", "application/json").send(text);
    expect(patch.status).toBe(422);
    expect(patch.body.errors.length).toBeLessThanOrEqual(20);
  });

  it("1000 unknown query parameters answer at most 20 errors, named as query parameters", async () => {
    const query = Array.from({ length: 1000 }, (_, i) => `p${i}=1`).join("&");
    const res = await api().get(`/v2/wallet/credits?${query}`).set("x-api-key", key);
    expect(res.status).toBe(422);
    expect(res.body.errors.length).toBeLessThanOrEqual(20);
    expect(res.body.errors[0].message).toMatch(/is not a query parameter/);
    expect(JSON.stringify(res.body)).not.toMatch(/request body/);
  });

  it("HEAD on a GET route answers as GET without a body; Allow names HEAD", async () => {
    const get = await api().get(`/v2/wallet/credits/${walletId}`).set("x-api-key", key);
    const head = await api().head(`/v2/wallet/credits/${walletId}`).set("x-api-key", key);
    expect(head.status).toBe(200);
    expect(head.headers["content-type"]).toBe(get.headers["content-type"]);
    expect(head.text ?? "").toBe("");
    const platform = await api().head(`${BASE}/users/${userId}`).set("x-api-key", key);
    expect(platform.status).toBe(200);
    const unauthenticated = await api().head(`${BASE}/users/${userId}`);
    expect(unauthenticated.status).toBe(401);
    const wrong = await api().delete("/v2/wallet/credits");
    expect(wrong.headers.allow).toBe("GET, HEAD, POST");
  });
});

describe("time and connections (a real listener with small bounds)", () => {
  let server: Server;
  let port: number;
  let listener: Listener;
  const LIMITS = { headersTimeoutS: 1, requestTimeoutS: 2, maxConnectionsPerAddress: 4 };

  beforeAll(async () => {
    listener = await listen(t.express, LIMITS);
    ({ server, port } = listener);
  });
  afterAll(() => listener?.close());

  /** Opens a connection, sends `raw`, and collects what comes back until the server closes it. */
  const open = (raw: string): { socket: Socket; answer: Promise<string> } => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => {});
    socket.write(raw);
    return { socket, answer: once(socket, "close").then(() => Buffer.concat(chunks).toString("utf8")) };
  };

  it("a body that stalls half-way is answered 408 in the envelope and its connection closed", async () => {
    const { answer } = open(
      `POST /v2/wallet/credits/${walletId}/charges HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"amount":`,
    );
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as { errors: { code: string }[]; meta: { version: string } };
    expect(body.errors[0]?.code).toBe("BAD_REQUEST");
    expect(text).toMatch(/did not arrive in time/);
    expect(body.meta.version).toBe("v2");
  });

  it("an anonymous request with a large unread body is answered with Connection: close; a small one keeps the connection", async () => {
    const head = (length: number) =>
      `POST /v2/wallet/credits/${walletId}/charges HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
    // Sent whole: Node would read and discard it to keep the connection alive.
    const big = numbersBody(50_000);
    const large = open(`${head(big.length)}${big}`);
    const answer = await large.answer;
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    const body = `{"amount":1,"description":"x"}`;
    const small = open(`${head(body.length)}${body}`);
    const chunks: Buffer[] = [];
    small.socket.on("data", (c: Buffer) => chunks.push(c));
    const text = await waitFor("the whole answer to the small request", () => {
      const received = Buffer.concat(chunks).toString("utf8");
      const end = received.indexOf("\r\n\r\n");
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(received)?.[1] ?? Number.NaN);
      return end >= 0 && Buffer.byteLength(received.slice(end + 4)) >= length ? received : undefined;
    });
    // A window in which the server must NOT close the kept-alive connection (a fixed time on purpose).
    await sleep(100);
    expect(text).toMatch(/^HTTP\/1\.1 401 /);
    expect(text).toMatch(/\r\nConnection: keep-alive\r\n/i);
    expect(small.socket.destroyed).toBe(false);
    small.socket.destroy();
  });

  it("headers that never finish are answered 408 in the platform envelope", async () => {
    const { answer } = open(`GET ${BASE}/currencies HTTP/1.1\r\nHost: x\r\n`);
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toMatch(/"version":"v1"/);
    expect(text).toMatch(/did not arrive in time/);
  });

  it("one address holds at most MAX_CONNECTIONS_PER_ADDRESS connections: the next is answered 429 and closed; a freed slot is reusable", async () => {
    const held = Array.from({ length: LIMITS.maxConnectionsPerAddress }, () => open(""));
    await Promise.all(held.map(({ socket }) => once(socket, "connect")));
    await waitFor("the server to hold the connections", async () => ((await connectionsOf(server)) >= LIMITS.maxConnectionsPerAddress ? true : undefined));
    const extra = open("");
    const text = await extra.answer;
    expect(text).toMatch(/^HTTP\/1\.1 429 /);
    expect(text).toContain('"RATE_LIMIT_EXCEEDED"');
    held[0]?.socket.destroy();
    await held[0]?.answer;
    await waitFor("the server to free the closed connection's slot", async () => ((await connectionsOf(server)) < LIMITS.maxConnectionsPerAddress ? true : undefined));
    const again = open(`GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(await again.answer).toMatch(/^HTTP\/1\.1 200 /);
    for (const { socket } of held) socket.destroy();
  });
});

describe("bodies being read hold at most MAX_BODY_BYTES_IN_FLIGHT between them", () => {
  let small: TestApp;
  let listener: Listener;
  let server: Server;
  let port: number;
  let ownerKey: string;
  let wallet: string;

  beforeAll(async () => {
    // all of the budget open to one caller: the shares per caller have their own test (body-reading.test.ts)
    small = await startTestApp({ BODY_LIMIT_BYTES: "65536", MAX_BODY_BYTES_IN_FLIGHT: "131072", MAX_BODY_BYTES_PER_CALLER: "131072" });
    ({ key: ownerKey, walletId: wallet } = await new Walk(small.express).creditWallet(`budget-${Date.now().toString(36)}`));
    listener = await listen(small.express, { headersTimeoutS: 10, requestTimeoutS: 30, maxConnectionsPerAddress: 0 });
    ({ server, port } = listener);
  });
  afterAll(async () => {
    await listener?.close();
    await small?.dispose();
  });

  it("two stalled 64 KiB bodies fill a 128 KiB budget: the next body answers 503 with Retry-After; a freed reservation serves it", async () => {
    const stall = () => {
      const socket = connect(port, "127.0.0.1");
      socket.on("error", () => {});
      socket.write(`POST /v2/wallet/credits/${wallet}/charges HTTP/1.1\r\nHost: x\r\nx-api-key: ${ownerKey}\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n{"amount":`);
      return socket;
    };
    const stalled = [stall(), stall()];
    const charge = () => request(server).post(`/v2/wallet/credits/${wallet}/charges`).set("x-api-key", ownerKey).send({ amount: 100, description: "x" });
    // The stalled bodies reserve the budget once their callers are authenticated: until then a
    // charge may still be served, so ask again until one is refused.
    const refused = await waitFor("a charge refused while the stalled bodies hold the budget", async () => {
      const res = await charge();
      return res.status === 201 ? undefined : res;
    });
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.body).toMatchObject({ success: false, errors: [{ code: "SERVICE_UNAVAILABLE" }] });
    stalled[0]?.destroy();
    // The closed connection gives its reservation back when the server sees the close: ask again until a charge is served.
    const served = await waitFor("a charge served once a reservation was given back", async () => {
      const res = await charge();
      return res.status === 503 ? undefined : res;
    });
    expect(served.status, JSON.stringify(served.body)).toBe(201);
    stalled[1]?.destroy();
  });
});
