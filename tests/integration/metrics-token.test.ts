/**
 * `/metrics` protection (docs/operations.md "Observability" and "What an operator must set in
 * production"): with `METRICS_TOKEN` set, `/metrics` answers
 * only `Authorization: Bearer <token>` (401 otherwise, the token compared in constant time); without
 * it, `/metrics` stays open. `/healthz` and `/readyz` are never protected.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerMatches } from "../../src/http/ops.js";
import { apiOf, startTestApp, type TestApp } from "../support/app.js";

const TOKEN = "metrics-token-0123456789abcdef";
let guarded: TestApp;
let open: TestApp;

beforeAll(async () => {
  [guarded, open] = await Promise.all([startTestApp({ METRICS_TOKEN: TOKEN }), startTestApp()]);
});
afterAll(async () => {
  await Promise.all([guarded?.dispose(), open?.dispose()]);
});

describe("/metrics with METRICS_TOKEN", () => {
  it("answers 200 with the Prometheus text to Authorization: Bearer <token>", async () => {
    const res = await apiOf(guarded).get("/metrics").set("Authorization", `Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain("http_requests_total");
  });

  it.each([
    ["no Authorization header", undefined],
    ["another token", "Bearer metrics-token-0123456789abcdeX"],
    ["a prefix of the token", `Bearer ${TOKEN.slice(0, -1)}`],
    ["the token with a suffix", `Bearer ${TOKEN}x`],
    ["the token without the Bearer scheme", TOKEN],
    ["Basic credentials", `Basic ${Buffer.from(`metrics:${TOKEN}`).toString("base64")}`],
    ["an empty bearer", "Bearer "],
  ])("answers 401 with WWW-Authenticate and no metrics to %s", async (_name, header) => {
    const req = apiOf(guarded).get("/metrics");
    const res = header === undefined ? await req : await req.set("Authorization", header);
    expect(res.status).toBe(401);
    expect(res.headers["www-authenticate"]).toBe('Bearer realm="metrics"');
    expect(res.text).not.toContain("http_requests_total");
    expect(res.text).not.toContain(TOKEN);
  });

  it("leaves /healthz and /readyz open", async () => {
    expect((await apiOf(guarded).get("/healthz")).status).toBe(200);
    expect((await apiOf(guarded).get("/readyz")).status).toBe(200);
  });
});

describe("/metrics without METRICS_TOKEN", () => {
  it("stays open, as before", async () => {
    const res = await apiOf(open).get("/metrics");
    expect(res.status).toBe(200);
    expect(res.text).toContain("http_requests_total");
  });
});

describe("bearerMatches", () => {
  it("accepts the token after a case-insensitive Bearer scheme, nothing else", () => {
    expect(bearerMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`Bearer ${TOKEN} extra`, TOKEN)).toBe(false);
    expect(bearerMatches(undefined, TOKEN)).toBe(false);
    expect(bearerMatches("Bearer", TOKEN)).toBe(false);
  });
});
