/**
 * The surfaces' JSON writer (src/http/send-json.ts; docs/performance.md "What keeps the request
 * path cheap"): a frozen reply is built once per source and its text reused, and the envelope
 * written from that text is the one `res.json` would write.
 */
import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { frozenOnce, sendJson, sendSuccess } from "../../src/http/send-json.js";

describe("frozenOnce", () => {
  it("builds once per source object, deep-frozen, and again for another source", () => {
    let builds = 0;
    const view = frozenOnce((source: { items: string[] }) => {
      builds += 1;
      return source.items.map((name) => ({ name, tags: [name.toUpperCase()] }));
    });
    const source = { items: ["a", "b"] };
    const first = view(source);
    expect(view(source)).toBe(first);
    expect(builds).toBe(1);
    expect(Object.isFrozen(first) && Object.isFrozen(first[0]) && Object.isFrozen(first[0]?.tags)).toBe(true);
    expect(view({ items: ["a", "b"] })).not.toBe(first);
    expect(builds).toBe(2);
  });
});

describe("sendSuccess", () => {
  const app = express();
  const frozen = frozenOnce((n: { count: number }) => Array.from({ length: n.count }, (_, i) => ({ i, sign: "₿" })));
  const source = { count: 3 };
  app.get("/frozen", (_req, res) => sendSuccess(res, 200, frozen(source), { trace_id: "t-1" }));
  app.get("/plain", (_req, res) => sendSuccess(res, 201, { kept: [1, 2] }, { trace_id: "t-2" }));
  app.get("/json", (_req, res) => {
    res.status(200).json({ success: true, data: frozen(source), meta: { trace_id: "t-1" } });
  });
  app.get("/send-json", (_req, res) => sendJson(res, 200, { success: true, data: frozen(source), meta: { trace_id: "t-1" } }));

  it("writes the bytes and headers res.json writes, for frozen and for plain data, every time", async () => {
    const expected = await request(app).get("/json");
    for (let i = 0; i < 2; i++) {
      const res = await request(app).get("/frozen");
      expect(res.status).toBe(200);
      expect(res.text).toBe(expected.text);
      expect(res.headers["content-type"]).toBe(expected.headers["content-type"]);
      expect(res.headers["content-length"]).toBe(expected.headers["content-length"]);
    }
    expect((await request(app).get("/send-json")).text).toBe(expected.text);
    const plain = await request(app).get("/plain");
    expect(plain.status).toBe(201);
    expect(plain.body).toEqual({ success: true, data: { kept: [1, 2] }, meta: { trace_id: "t-2" } });
  });

  it("answers a HEAD request with the headers and no body", async () => {
    const res = await request(app).head("/frozen");
    expect(res.status).toBe(200);
    expect(Number(res.headers["content-length"])).toBeGreaterThan(0);
    expect(res.text).toBeUndefined();
  });
});
