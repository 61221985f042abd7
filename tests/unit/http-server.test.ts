/**
 * The service's HTTP server builds each request and response with the express app's own
 * prototypes (`messageClassesOf` in src/http/client-errors.ts; docs/performance.md "What keeps the
 * request path cheap"), so express's per-request prototype change is a no-op, and the app still
 * answers as it does on a plain node:http server.
 */
import type { AddressInfo } from "node:net";
import { IncomingMessage, ServerResponse } from "node:http";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpServer } from "../../src/http/client-errors.js";

const app = express();
app.get("/hello", (req, res) => {
  res.status(201).json({ path: req.path, ip: req.ip, query: req.query });
});
const server = createHttpServer(app, { headersTimeoutS: 10, requestTimeoutS: 30, maxConnectionsPerAddress: 0 });
const born: { request: boolean; response: boolean; nodeClasses: boolean }[] = [];
server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
  born.push({
    request: Object.getPrototypeOf(req) === app.request,
    response: Object.getPrototypeOf(res) === app.response,
    nodeClasses: req instanceof IncomingMessage && res instanceof ServerResponse,
  });
});
let base = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("the service's HTTP server", () => {
  it("builds requests and responses with the app's prototypes, still node:http's classes, and express answers as usual", async () => {
    const res = await fetch(`${base}/hello?x=1`);
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ path: "/hello", ip: "127.0.0.1", query: { x: "1" } });
    expect(born).toEqual([{ request: true, response: true, nodeClasses: true }]);
  });
});
