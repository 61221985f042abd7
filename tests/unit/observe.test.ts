/**
 * The request observer (src/http/observe.ts): one line per request, at error level for a 5xx,
 * info otherwise, `request aborted` at warn when the client went away; and the metrics labels.
 */
import { Writable } from "node:stream";
import { request as httpRequest, type Server } from "node:http";
import express from "express";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging.js";
import { markOperation, metricsSurface, observeRequests } from "../../src/http/observe.js";
import { Metrics } from "../../src/http/ops.js";
import { sleep, waitFor } from "../support/wait.js";

/** An app whose routes answer `status`, marked as operation `op`, with the observer in front; `lines` receives the log. */
function observed(level: "info" | "silent" = "info") {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const l of chunk.toString().split("\n")) if (l !== "") lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const metrics = new Metrics();
  const app = express();
  app.use((req, _res, next) => {
    req.traceId = "t-1";
    next();
  });
  app.use(observeRequests(createLogger(level, sink), metrics));
  app.get("/api/v1/things/:id", (req, res) => {
    markOperation(res, "getThing", "/things/{id}");
    res.status(Number(req.query.status ?? 200)).json({});
  });
  let slowAnswered!: () => void;
  const slow = new Promise<void>((resolve) => (slowAnswered = resolve));
  app.get("/v2/slow", (_req, res) => {
    setTimeout(() => {
      res.json({});
      slowAnswered();
    }, 300);
  });
  /** Resolves once `/v2/slow` has sent its (late) answer. */
  const slowDone = (): Promise<void> => slow;
  return { app, lines, metrics, slowDone };
}

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

describe("observeRequests", () => {
  it("logs a 5xx at error level and a 4xx or 2xx at info, with the route template and operationId", async () => {
    const { app, lines } = observed();
    await request(app).get("/api/v1/things/42?status=503&email=a%40b.example");
    await request(app).get("/api/v1/things/42?status=404");
    await request(app).get("/api/v1/things/42");
    expect(lines.map((l) => [l.level, (l.res as { statusCode: number }).statusCode])).toEqual([[50, 503], [30, 404], [30, 200]]);
    expect(lines[0]).toMatchObject({ msg: "request completed", traceId: "t-1", route: "/things/{id}", operationId: "getThing", req: { method: "GET", url: "/api/v1/things/42?status=[redacted]&email=[redacted]" } });
  });

  it("logs 'request aborted' at warn (status 499) when the client goes away before the answer", async () => {
    const { app, lines, metrics, slowDone } = observed();
    server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server?.once("listening", r));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => {
      const req = httpRequest({ host: "127.0.0.1", port, path: "/v2/slow" });
      req.on("error", () => resolve());
      req.end();
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 50);
    });
    await waitFor("the abort line", () => (lines.length > 0 ? true : undefined));
    // the handler answers after the client left; then a window in which no second line may come
    await slowDone();
    await sleep(50);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, msg: "request aborted", res: { statusCode: 499 } });
    expect(await metrics.registry.metrics()).toMatch(/http_requests_total\{method="GET",surface="credit",operation="none",status="499"\} 1/);
  });

  it("builds no line when the level is off, and still counts the request", async () => {
    const { app, lines, metrics } = observed("silent");
    await request(app).get("/api/v1/things/1");
    expect(lines).toHaveLength(0);
    expect(await metrics.registry.metrics()).toMatch(/http_requests_total\{method="GET",surface="platform",operation="getThing",status="200"\} 1/);
  });

  it("names the surface from the original URL", () => {
    expect(["/api/v1/users", "/api/v1", "/v2/credit-products", "/v2?x=1", "/healthz", "/v20/x", "/api/v10"].map(metricsSurface)).toEqual(
      ["platform", "platform", "credit", "credit", "service", "service", "service"],
    );
  });
});
