/** `/healthz`, `/readyz` and `/metrics` (decisions.md §1). */
import { createHash, timingSafeEqual } from "node:crypto";
import express, { type RequestHandler, type Router } from "express";
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { MikroORM } from "@mikro-orm/postgresql";
import { DATABASE_RETRY_AFTER_S } from "../db/unavailable.js";

/** Per-app Prometheus registry with default process metrics and HTTP request metrics. */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<"method" | "surface" | "status">;
  readonly duration: Histogram<"method" | "surface">;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({ name: "http_requests_total", help: "HTTP requests by method, surface and status", labelNames: ["method", "surface", "status"], registers: [this.registry] });
    this.duration = new Histogram({ name: "http_request_duration_seconds", help: "HTTP request duration in seconds", labelNames: ["method", "surface"], registers: [this.registry] });
  }

  /** Middleware counting every request once it finishes. */
  middleware(): RequestHandler {
    return (req, res, next) => {
      const stop = this.duration.startTimer();
      res.on("finish", () => {
        const surface = req.path.startsWith("/v2") ? "credit" : req.path.startsWith("/api/v1") ? "platform" : "service";
        stop({ method: req.method, surface });
        this.requests.inc({ method: req.method, surface, status: String(res.statusCode) });
      });
      next();
    };
  }
}

/**
 * Whether an `Authorization` header carries `Bearer <token>`. Both sides are hashed (SHA-256) and
 * compared with `timingSafeEqual`, so the time taken tells nothing about the token or its length.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? "");
  const digest = (v: string): Buffer => createHash("sha256").update(v, "utf8").digest();
  const expected = digest(token);
  const given = digest(match?.[1] ?? "");
  return timingSafeEqual(given, expected) && match !== null;
}

/**
 * Health routes: `/healthz` (process up), `/readyz` (database reachable and no pending migration:
 * 200, else 503 `{status: "unavailable", reason}` whose reason never carries connection details)
 * and `/metrics` (Prometheus text; with `metricsToken` (`METRICS_TOKEN`) it requires
 * `Authorization: Bearer <token>` and answers 401 with `WWW-Authenticate: Bearer` otherwise).
 */
export function opsRouter(orm: MikroORM, metrics: Metrics, options: { metricsToken?: string | undefined } = {}): Router {
  const router = express.Router();
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    try {
      await orm.em.getConnection().execute("select 1");
      const pending = await orm.migrator.getPending();
      if (pending.length > 0) {
        res.status(503).json({ status: "unavailable", reason: `${pending.length} pending migration(s)` });
        return;
      }
      res.json({ status: "ready" });
    } catch {
      // No host, port or driver message: the probe is often public (issue 8, "Database down").
      res.status(503).set("Retry-After", String(DATABASE_RETRY_AFTER_S)).json({ status: "unavailable", reason: "database unreachable" });
    }
  });
  router.get("/metrics", async (req, res) => {
    if (options.metricsToken !== undefined && !bearerMatches(req.headers.authorization, options.metricsToken)) {
      res.status(401).set("WWW-Authenticate", 'Bearer realm="metrics"').json({ status: "unauthorized", reason: "/metrics requires Authorization: Bearer <METRICS_TOKEN>" });
      return;
    }
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  return router;
}
