/** `/healthz`, `/readyz` and `/metrics` (decisions.md §1). */
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
 * Health routes: `/healthz` (process up), `/readyz` (database reachable and no pending migration:
 * 200, else 503 `{status: "unavailable", reason}` whose reason never carries connection details).
 */
export function opsRouter(orm: MikroORM, metrics: Metrics): Router {
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
  router.get("/metrics", async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  return router;
}
