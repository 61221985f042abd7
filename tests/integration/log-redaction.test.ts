/**
 * Logs carry no email addresses at info level (docs/operations.md "Observability"): the real app with the service's logger
 * (src/logging.ts) writing into a stream of this test; requests that carry emails in their query
 * (Sandbox Mail's `to`) and bodies (Create User) leave request log lines with the path and
 * `[redacted]` query values, and no line holds the addresses.
 */
import { Writable } from "node:stream";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/logging.js";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY, apiOf, createTestDatabase } from "../support/app.js";
import { BASE, Walk } from "../support/fixtures.js";

const lines: string[] = [];
let app: App;
let db: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  db = await createTestDatabase();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split("\n").filter((l) => l !== ""));
      done();
    },
  });
  const config = loadConfig({ DATABASE_URL: db.url, MASTER_API_KEY: TEST_MASTER_KEY, SECRETS_KEY: TEST_SECRETS_KEY, LOG_LEVEL: "info", RATE_LIMIT_IP: "off", RATE_LIMIT_CREDENTIAL: "off", RATE_LIMIT_AUTH_FAILURES: "off", RATE_LIMIT_CODES: "off" });
  app = await createApp(config, { logger: createLogger("info", sink), validateResponses: true });
});
afterAll(async () => {
  await app?.close();
  await db?.drop();
});

describe("request logs", () => {
  it("log the path with redacted query values and no email address", async () => {
    const walk = new Walk(app.express);
    const { key } = await walk.tenant("log-redaction-co");
    const email = "jane.logged@example.com";
    await walk.user(key, { email });
    const mail = await apiOf(app).get(`${BASE}/sandbox/mail`).query({ to: email }).set("x-api-key", key);
    expect(mail.status).toBe(200);
    const encoded = await apiOf(app).get(`${BASE}/sandbox/mail?to=${encodeURIComponent(email)}`).set("x-api-key", key);
    expect(encoded.status).toBe(200);

    const requestLines = lines.map((l) => JSON.parse(l) as { msg?: string; req?: { url?: string } }).filter((l) => l.req?.url?.startsWith(`${BASE}/sandbox/mail`));
    expect(requestLines.map((l) => l.req?.url)).toEqual([`${BASE}/sandbox/mail?to=[redacted]`, `${BASE}/sandbox/mail?to=[redacted]`]);
    expect(lines.some((l) => l.includes(`"url":"${BASE}/users"`)), "the Create User request was logged").toBe(true);
    const all = lines.join("\n");
    expect(all).not.toContain(email);
    expect(all).not.toContain(encodeURIComponent(email));
    expect(all).not.toContain("ops@log-redaction-co.example");
    expect(all).not.toContain(key);
  });

  it("carry the operationId and route template of the routed operation, and the metrics count by surface and operation", async () => {
    const walk = new Walk(app.express);
    const { key } = await walk.tenant("log-route-co");
    const currencies = await apiOf(app).get(`${BASE}/currencies`).set("x-api-key", key).set("x-trace-id", "route-log-trace");
    expect(currencies.status).toBe(200);
    const line = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.traceId === "route-log-trace");
    expect(line).toMatchObject({ msg: "request completed", level: 30, route: "/currencies", operationId: "listCurrencies", res: { statusCode: 200 } });
    expect(typeof line?.responseTime).toBe("number");

    const metrics = await apiOf(app).get("/metrics");
    expect(metrics.text).toMatch(/http_requests_total\{method="GET",surface="platform",operation="listCurrencies",status="200"\} [1-9]/);
    expect(metrics.text).toMatch(/http_request_duration_seconds_count\{surface="platform",operation="listCurrencies",status="200"\} [1-9]/);
  });
});
