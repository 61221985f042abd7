/**
 * Behaviour shared by every route (reference: "Errors", "Versioning"; docs/decisions/surfaces-and-process.md,
 * docs/decisions/requests-and-validation.md): envelopes,
 * trace ids, 404/405/413/415/400, 501 only for operations not built yet (none today), documents
 * (servers, metadata), docs page, health.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError, userBody } from "../support/fixtures.js";
import { loadDocument } from "../../src/http/docs.js";
import { platformNotImplemented } from "../../src/http/platform/handlers.js";
import { creditNotImplemented } from "../../src/http/credit/wiring.js";

const t = useTestApp({ BODY_LIMIT_BYTES: "2048" });
let key: string;

beforeAll(async () => {
  key = (await new Walk(t.express).tenant("http-co")).key;
});
const api = t.api;

/** Every operation of a document, as [METHOD, path, operationId]. */
function operationsOf(name: "platform" | "credit"): [string, string, string][] {
  const doc = loadDocument(name) as { paths: Record<string, Record<string, { operationId?: string }>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => typeof op === "object" && op.operationId)
      .map(([method, op]) => [method.toUpperCase(), path, op.operationId as string] as [string, string, string]),
  );
}

describe("platform envelope and trace ids", () => {
  it("echoes a sent x-trace-id in the header and meta, and generates one otherwise", async () => {
    const sent = await api().get(`${BASE}/users`).set("x-api-key", key).set("x-trace-id", "trace-abc.123");
    expect(sent.headers["x-trace-id"]).toBe("trace-abc.123");
    expect(sent.body.meta).toMatchObject({ trace_id: "trace-abc.123", version: "v1" });
    expect(Date.parse(sent.body.meta.timestamp)).not.toBeNaN();
    const generated = await api().get(`${BASE}/users`).set("x-api-key", key);
    expect(generated.body.meta.trace_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated.headers["x-trace-id"]).toBe(generated.body.meta.trace_id);
  });

  it("drops a malformed x-trace-id (not 1–128 of [A-Za-z0-9._:-]): the request succeeds with a generated id, the value is never echoed", async () => {
    const longest = "t".repeat(128);
    const kept = await api().get(`${BASE}/users`).set("x-api-key", key).set("x-trace-id", longest);
    expect(kept.status).toBe(200);
    expect(kept.body.meta.trace_id).toBe(longest);
    for (const bad of ["t".repeat(129), "x".repeat(6000), "two words", "<script>", "a;b=c", "trace\u00e9"]) {
      const res = await api().post(`${BASE}/users`).set("x-api-key", key).set("x-trace-id", bad).send(userBody({ first_name: "Trace" }));
      expect(res.status, bad.slice(0, 40)).toBe(201);
      expect(res.headers["x-trace-id"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(res.body.meta.trace_id).toBe(res.headers["x-trace-id"]);
      expect(JSON.stringify(res.body)).not.toContain(bad);
    }
  });

  it("answers 404 NOT_FOUND for an unknown route and 405 with Allow for a wrong method", async () => {
    expectPlatformError(await api().get(`${BASE}/no-such-thing`), 404, "NOT_FOUND");
    const res = await api().patch(`${BASE}/customers`);
    expectPlatformError(res, 405, "METHOD_NOT_ALLOWED");
    expect(res.headers.allow).toBe("GET, HEAD, POST");
  });

  it("answers 415 for a non-JSON body, 413 for an oversized one and 400 for malformed JSON", async () => {
    expectPlatformError(await api().post(`${BASE}/users`).set("x-api-key", key).set("content-type", "text/plain").send("hello"), 415, "UNSUPPORTED_MEDIA_TYPE");
    expectPlatformError(
      await api().post(`${BASE}/users`).set("x-api-key", key).send({ first_name: "x".repeat(4000) }),
      413,
      "PAYLOAD_TOO_LARGE",
    );
    expectPlatformError(await api().post(`${BASE}/users`).set("x-api-key", key).set("content-type", "application/json").send("{nope"), 400, "BAD_REQUEST");
  });

  it("serves every operation of both documents: none is left answering 501 NOT_IMPLEMENTED", async () => {
    expect(platformNotImplemented).toEqual([]);
    expect(creditNotImplemented).toEqual([]);
    const res = await api().get("/v2/sandbox/clock").set("x-api-key", key);
    expect(res.status).toBe(200);
  });

  it("declares 501 exactly on the operations not built yet: none", () => {
    for (const [name, stubbed] of [["platform", platformNotImplemented], ["credit", creditNotImplemented]] as const) {
      const doc = loadDocument(name) as { paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>> };
      const declaring = Object.values(doc.paths).flatMap((ops) => Object.values(ops)).filter((op) => op.responses?.["501"]).map((op) => op.operationId);
      expect(declaring.sort(), `${name} operations declaring 501`).toEqual([...stubbed].sort());
    }
  });
});

describe("bad input answers 4xx, never 500 (docs/decisions/requests-and-validation.md)", () => {
  it("a user email of 300 characters answers 422 on create and update (column limit 255)", async () => {
    const email = `${"a".repeat(288)}@example.com`;
    const created = await api().post(`${BASE}/users`).set("x-api-key", key).send(userBody({ email }));
    expectPlatformError(created, 422, "UNPROCESSABLE_ENTITY");
    expect(created.body.errors[0].field).toBe("email");
    const user = await new Walk(t.express).user(key);
    const updated = await api().put(`${BASE}/users/${user.user_id as string}`).set("x-api-key", key).send({ email });
    expectPlatformError(updated, 422, "UNPROCESSABLE_ENTITY");
  });

  it("error messages repeat at most a 32-character quoted prefix of a caller's path or key", async () => {
    const unknown = await api().get(`${BASE}/${"x".repeat(1500)}`).set("x-api-key", key);
    expectPlatformError(unknown, 404, "NOT_FOUND");
    expect(unknown.body.errors[0].message).toBe(`No route for GET "/api/v1/${"x".repeat(24)}…".`);
    const user = await new Walk(t.express).user(key);
    const stray = `k${"e".repeat(299)}`;
    const res = await api().put(`${BASE}/users/${user.user_id as string}`).set("x-api-key", key).send({ [stray]: 1 });
    expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
    expect(res.body.errors[0]).toEqual({ code: "UNPROCESSABLE_ENTITY", field: `k${"e".repeat(31)}…`, message: `"k${"e".repeat(31)}…" cannot be changed by Update User.` });
  });

  it("a NUL character in a body string answers 422 on its field; in a query value or the path, 400 BAD_REQUEST", async () => {
    const body = await api().post(`${BASE}/users`).set("x-api-key", key).send(userBody({ first_name: "Ja\u0000ne" }));
    expectPlatformError(body, 422, "UNPROCESSABLE_ENTITY");
    expect(body.body.errors[0]).toMatchObject({ field: "first_name", message: expect.stringMatching(/NUL/) });
    const nested = await api().post(`${BASE}/users`).set("x-api-key", key).send(userBody({}, { residential_city: "Spring\u0000field" }));
    expectPlatformError(nested, 422, "UNPROCESSABLE_ENTITY");
    expect(nested.body.errors[0]).toMatchObject({ field: "individual.residential_city" });
    expectPlatformError(await api().get(`${BASE}/users?search=a%00b`).set("x-api-key", key), 400, "BAD_REQUEST");
    expectPlatformError(await api().get(`${BASE}/users/a%00b`).set("x-api-key", key), 400, "BAD_REQUEST");
    const credit = await api().get("/v2/wallet/credits?limit=1%00").set("x-api-key", key);
    expect(credit.status).toBe(400);
    expect(credit.body).toMatchObject({ success: false, errors: [{ code: "BAD_REQUEST" }], meta: { version: "v2" } });
  });

  it("a body sent as Content-Encoding: gzip that is not gzip answers 400 BAD_REQUEST", async () => {
    const res = await api().post(`${BASE}/users`).set("x-api-key", key).set("content-type", "application/json").set("content-encoding", "gzip").send(JSON.stringify(userBody()));
    expectPlatformError(res, 400, "BAD_REQUEST");
    expect(res.body.errors[0].message).toMatch(/gzip|encod/i);
  });
});

describe("credit core envelope and trace ids", () => {
  it("answers in the credit envelope with a UUID v4 traceId, echoing a sent UUID v4", async () => {
    const traceId = randomUUID();
    const res = await api().get("/v2/wallet/credits").set("x-api-key", key).set("x-trace-id", traceId);
    expect(res.status).toBe(200);
    expect(res.headers["x-trace-id"]).toBe(traceId);
    expect(res.body).toMatchObject({ success: true, data: { items: [], total: 0 }, meta: { version: "v2", traceId } });
    const generated = await api().get("/v2/wallet/credits").set("x-api-key", key);
    expect(generated.body.meta.traceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("answers 422 VALIDATION_ERROR for an x-trace-id that is not a UUID v4", async () => {
    const res = await api().get("/v2/wallet/credits").set("x-api-key", key).set("x-trace-id", "not-a-uuid");
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ code: "VALIDATION_ERROR", message: expect.any(String), field: "traceId" }]);
    expect(res.body.meta.traceId).not.toBe("not-a-uuid");
  });

  it("answers 401 without a key, 403 for the master key on a tenant operation, 404/405 in the credit envelope", async () => {
    const missing = await api().get("/v2/wallet/credits");
    expect(missing.status).toBe(401);
    expect(missing.body.errors[0].code).toBe("UNAUTHORIZED");
    const master = await api().get("/v2/wallet/credits").set("x-api-key", t.config.masterApiKey as string);
    expect(master.status).toBe(403);
    expect(master.body.errors[0].code).toBe("FORBIDDEN");
    const unknown = await api().get("/v2/nothing");
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0].code).toBe("NOT_FOUND");
    expect(unknown.body.meta.version).toBe("v2");
    const wrong = await api().delete("/v2/wallet/credits");
    expect(wrong.status).toBe(405);
    expect(wrong.body.errors[0].code).toBe("METHOD_NOT_ALLOWED");
  });

  it("answers 415 for a non-JSON body and 413 for an oversized one in the credit envelope, as every credit operation declares", async () => {
    const textBody = await api().post("/v2/wallet/credits").set("x-api-key", key).set("content-type", "text/plain").send("hello");
    expect(textBody.status).toBe(415);
    expect(textBody.body).toMatchObject({ success: false, errors: [{ code: "UNSUPPORTED_MEDIA_TYPE" }], meta: { version: "v2" } });
    const big = await api().post("/v2/wallet/credits").set("x-api-key", key).set("content-type", "application/json").send(JSON.stringify({ description: "x".repeat(t.config.bodyLimitBytes + 1) }));
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ success: false, errors: [{ code: "PAYLOAD_TOO_LARGE" }], meta: { version: "v2" } });
  });
});

describe("documents, docs page and health", () => {
  it("serves both documents as JSON and YAML, listing every operation with a unique operationId", async () => {
    const ids = new Set<string>();
    for (const name of ["platform", "credit"] as const) {
      const json = await api().get(`/openapi/${name}.json`);
      expect(json.status).toBe(200);
      expect(json.body.openapi).toBe("3.0.0");
      const yaml = await api().get(`/openapi/${name}.yaml`);
      expect(yaml.status).toBe(200);
      expect(yaml.text).toContain("openapi: 3.0.0");
      for (const [, , id] of operationsOf(name)) {
        expect(ids.has(id), `duplicate operationId ${id}`).toBe(false);
        ids.add(id);
      }
    }
    expect(operationsOf("platform")).toHaveLength(82);
    expect(operationsOf("credit")).toHaveLength(34);
  });

  it("declares servers that work from wherever the document is served, then the templated deployments", async () => {
    for (const [name, relative, base] of [["platform", "/api/v1", "/api/v1"], ["credit", "/", ""]] as const) {
      const doc = (await api().get(`/openapi/${name}.json`)).body as {
        servers: { url: string; variables?: Record<string, { default: string; description?: string }> }[];
        info: { contact?: object; license?: { name: string; url?: string } };
        externalDocs?: { url: string };
        tags: { name: string; description?: string }[];
      };
      expect(doc.servers[0]?.url, `${name}: the first server is relative`).toBe(relative);
      for (const server of doc.servers.slice(1)) {
        expect(server.url).toBe(`https://{host}${base}`);
        expect(server.variables?.host?.default).toMatch(/\.invalid$/);
        expect(server.variables?.host?.description).toBeTruthy();
      }
      expect(doc.servers).toHaveLength(3);
      expect(doc.info.contact).toBeDefined();
      expect(doc.info.license).toEqual({ name: "Proprietary", url: "/docs" });
      expect(doc.externalDocs?.url).toBe("/docs");
      for (const tag of doc.tags) expect(tag.description, `${name} tag ${tag.name}`).toBeTruthy();
    }
  });

  it("serves the reference page (Scalar) with local assets and a Content-Security-Policy", async () => {
    const page = await api().get("/docs");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(page.text).toContain("/docs/assets/scalar.js");
    expect(page.text).not.toMatch(/https?:\/\//);
    const bundle = await api().get("/docs/assets/scalar.js");
    expect(bundle.status).toBe(200);
    expect(bundle.headers["content-type"]).toMatch(/^application\/javascript/);
    expect(bundle.text.length).toBeGreaterThan(1_000_000);
    expect(bundle.text).toContain("createApiReference");
    const init = await api().get("/docs/init.js");
    expect(init.text).toContain("/openapi/platform.json");
    expect(init.text).toContain("/openapi/credit.json");
    expect(init.text).not.toMatch(/https?:\/\//);
  });

  it("reports health, readiness and Prometheus metrics", async () => {
    expect((await api().get("/healthz")).body).toEqual({ status: "ok" });
    expect((await api().get("/readyz")).body).toEqual({ status: "ready" });
    const metrics = await api().get("/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain("http_requests_total");
  });

  it("never logs or echoes secrets: error bodies do not contain the sent key", async () => {
    const res = await api().get(`${BASE}/users`).set("x-api-key", "sk_this-is-not-a-real-key");
    expectPlatformError(res, 401, "UNAUTHORIZED");
    expect(JSON.stringify(res.body)).not.toContain("sk_this-is-not-a-real-key");
  });
});

describe("every operation of both documents is served", () => {
  it("answers each operation with its own status, never 404 route-not-found", async () => {
    for (const name of ["platform", "credit"] as const) {
      for (const [method, path] of operationsOf(name)) {
        const url = (name === "platform" ? BASE : "") + path.replace(/\{[^}]+\}/g, "x1");
        const res = await t.api()[method.toLowerCase() as "get"](url);
        expect([401, 403, 404, 422], `${method} ${url}`).toContain(res.status);
        expect(res.body.errors?.[0]?.code, `${method} ${url}`).not.toBe("NOT_FOUND");
      }
    }
  });
});

describe("permission before validation", () => {
  it("answers 403, not 422, to a valid credential of the wrong kind sending an invalid body", async () => {
    const operator = await new Walk(t.express).operatorToken();
    const res = await api().post(`${BASE}/users`).set("Authorization", `Bearer ${operator}`).send({ first_name: 42 });
    expectPlatformError(res, 403, "FORBIDDEN");
    expect(JSON.stringify(res.body)).not.toContain("first_name");
  });

  it("answers 403, not 422, to a customer session acting on another customer with an invalid body", async () => {
    const walk = new Walk(t.express);
    const other = await walk.tenant("http-other");
    const session = (await api().post(`${BASE}/sessions`).send({ customer_id: "http-other", customer_secret: other.key })).body.data.token as string;
    const res = await api().put(`${BASE}/customers/http-co`).set("Authorization", `Bearer ${session}`).send({ account_type: "alien" });
    expectPlatformError(res, 403, "FORBIDDEN");
  });

  it("still answers 422 to a permitted caller", async () => {
    expectPlatformError(await api().post(`${BASE}/users`).set("x-api-key", key).send({ first_name: 42 }), 422, "UNPROCESSABLE_ENTITY");
  });
});
