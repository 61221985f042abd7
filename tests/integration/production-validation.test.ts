/**
 * Request validation in the production build of the app (`validateResponses` off): each
 * operation's request validator is compiled on its first request instead of at start
 * (src/http/openapi-compiled.ts, docs/operations.md "Start and memory"), so the first bad request of an operation and the ones
 * after it answer the same 422 in the surface's envelope, and a valid request still passes.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, useTestApp } from "../support/app.js";
import { goldenProductBody } from "../support/credit-golden.js";
import { BASE, Walk, expectPlatformError } from "../support/fixtures.js";

const t = useTestApp({}, { validateResponses: false });
const api = t.api;

beforeAll(async () => {
  await new Walk(t.express).tenant("lazy-co");
});

describe("request validators compiled on first use", () => {
  it("platform: the first bad request of an operation and the next get the same 422; a valid one passes", async () => {
    const bad = () => api().get(`${BASE}/customers?filter[limit]=101`).set("x-master-api-key", TEST_MASTER_KEY);
    const first = await bad();
    expectPlatformError(first, 422, "UNPROCESSABLE_ENTITY");
    const again = await bad();
    expectPlatformError(again, 422, "UNPROCESSABLE_ENTITY");
    expect(again.body.errors).toEqual(first.body.errors);
    expect((await api().get(`${BASE}/customers?filter[limit]=5`).set("x-master-api-key", TEST_MASTER_KEY)).status).toBe(200);
  });

  it("credit: a product out of bounds answers 422 VALIDATION_ERROR naming the field, twice; a valid one is created", async () => {
    const post = (body: Record<string, unknown>) => api().post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(body);
    for (let i = 0; i < 2; i += 1) {
      const res = await post(goldenProductBody("lazy-co", { creditProductCode: "001", gracePeriod: -1 }));
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body).toMatchObject({ success: false, meta: { version: "v2" } });
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ code: "VALIDATION_ERROR", field: "gracePeriod" })]));
    }
    expect((await post(goldenProductBody("lazy-co", { creditProductCode: "001" }))).status).toBe(201);
  });
});
