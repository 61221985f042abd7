/**
 * The contract check of tests (src/http/contract-check.ts) fails a drifting answer: a status the
 * operation does not declare, an error body that is not the declared envelope, an unknown route's
 * body that is not the surface's error envelope. Real documents, a hand-made express app.
 */
import express from "express";
import request from "supertest";
import { OpenAPIBackend, type Document } from "openapi-backend";
import ajvFormats from "ajv-formats";
import type { Ajv } from "ajv";
import { beforeAll, describe, expect, it } from "vitest";
import { contractCheck } from "../../src/http/contract-check.js";
import { loadDocument } from "../../src/http/docs.js";
import { installValidator } from "../../src/http/openapi-compiled.js";
import { createLogger } from "../../src/logging.js";
import { sendJson } from "../../src/http/send-json.js";

async function surfaceApi(name: "platform" | "credit"): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({ definition: loadDocument(name) as unknown as Document, strict: true, validate: false, quick: false });
  await api.init();
  const customizeAjv = (ajv: Ajv): Ajv => {
    (ajvFormats as unknown as { default: (a: Ajv) => void }).default(ajv);
    return ajv;
  };
  installValidator(api, { ajvOpts: { allErrors: true, strict: false }, customizeAjv, coerceTypes: true, validateResponses: true, compileRequestValidatorsAtStart: true });
  return api;
}

const envelope = (code: string) => ({ success: false, errors: [{ code, message: "m" }], meta: { timestamp: new Date().toISOString(), version: "v1", trace_id: "t" } });

let app: express.Express;
beforeAll(async () => {
  app = express();
  app.use((req, _res, next) => {
    req.traceId = "t";
    next();
  });
  app.use(contractCheck({ platform: await surfaceApi("platform"), credit: await surfaceApi("credit") }, createLogger("silent")));
  app.get("/api/v1/currencies", (req, res) => {
    const answer = String(req.query.answer);
    if (answer === "teapot") res.status(418).json(envelope("I_AM_A_TEAPOT"));
    else if (answer === "no-meta") res.status(401).json({ success: false, errors: [{ code: "UNAUTHORIZED", message: "m" }] });
    else res.status(401).json(envelope("UNAUTHORIZED"));
  });
  // the surfaces' own writer (no res.json): checked all the same
  app.get("/api/v1/customers", (req, res) => sendJson(res, req.query.answer === "teapot" ? 418 : 401, envelope("UNAUTHORIZED")));
  app.get("/api/v1/nowhere", (req, res) => {
    if (req.query.answer === "plain") res.status(404).json({ error: "not found" });
    else res.status(404).json(envelope("NOT_FOUND"));
  });
});

describe("contractCheck", () => {
  it("lets a declared error envelope through", async () => {
    expect((await request(app).get("/api/v1/currencies")).status).toBe(401);
    expect((await request(app).get("/api/v1/nowhere")).status).toBe(404);
  });

  it("answers 500 for a status the operation does not declare", async () => {
    const res = await request(app).get("/api/v1/currencies?answer=teapot");
    expect(res.status).toBe(500);
    expect(res.body.errors[0].message).toContain("listCurrencies does not declare status 418");
  });

  it("answers 500 for an error body that is not the declared envelope", async () => {
    const res = await request(app).get("/api/v1/currencies?answer=no-meta");
    expect(res.status).toBe(500);
    expect(res.body.errors[0].message).toMatch(/listCurrencies 401: .*meta/);
  });

  it("checks the surfaces' own writer as it checks res.json", async () => {
    expect((await request(app).get("/api/v1/customers")).status).toBe(401);
    const res = await request(app).get("/api/v1/customers?answer=teapot");
    expect(res.status).toBe(500);
    expect(res.body.errors[0].message).toContain("does not declare status 418");
  });

  it("answers 500 when an unknown route's body is not the error envelope", async () => {
    const res = await request(app).get("/api/v1/nowhere?answer=plain");
    expect(res.status).toBe(500);
    expect(res.body.errors[0].message).toContain("no operation matches GET /nowhere");
  });
});
