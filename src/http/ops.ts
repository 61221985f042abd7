/** `/healthz`, `/readyz` and `/metrics` (docs/decisions/surfaces-and-process.md "Where everything is served"). */
import { createHash, timingSafeEqual } from "node:crypto";
import express, { type Router } from "express";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { MikroORM } from "@mikro-orm/postgresql";
import { ping } from "../db/health.js";
import { Db, type Sql } from "../db/sql.js";
import { DATABASE_RETRY_AFTER_S } from "../db/unavailable.js";
import { sendJson } from "./send-json.js";

/**
 * The credential cache's LISTEN session (src/db/listen.ts; docs/operations.md "Metrics"):
 * `auth_cache_listen_up` (1 while it listens and the cache is in use, 0 while every request checks
 * its credential in the database) and `auth_cache_listen_outages_total` (losses of the session,
 * each counted once however many reconnections it took), read from `listener` at each scrape.
 */
export function registerListenMetrics(registry: Registry, listener: { readonly up: boolean; readonly outages: number }): void {
  new Gauge({
    name: "auth_cache_listen_up",
    help: "1 while the credential cache's LISTEN session runs (the cache is in use), else 0",
    registers: [registry],
    collect() {
      this.set(listener.up ? 1 : 0);
    },
  });
  new Counter({
    name: "auth_cache_listen_outages_total",
    help: "Outages of the credential cache's LISTEN session",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(listener.outages);
    },
  });
}

/**
 * The job scheduler's LISTEN session (src/jobs/notification-channel.ts; docs/operations.md
 * "Metrics"): `job_listen_up` (1 while new jobs are announced to the workers, 0 while they find
 * them at their next poll) and `job_listen_outages_total` (losses of the session, each counted once
 * however many reconnections it took), read from `scheduler` at each scrape.
 */
export function registerJobListenMetrics(registry: Registry, scheduler: { readonly listenUp: boolean; readonly listenOutages: number }): void {
  new Gauge({
    name: "job_listen_up",
    help: "1 while the job scheduler's LISTEN session runs (new jobs are announced), else 0",
    registers: [registry],
    collect() {
      this.set(scheduler.listenUp ? 1 : 0);
    },
  });
  new Counter({
    name: "job_listen_outages_total",
    help: "Outages of the job scheduler's LISTEN session",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(scheduler.listenOutages);
    },
  });
}

/** The bodies of `/healthz` and of a ready `/readyz`. */
const HEALTHY = Object.freeze({ status: "ok" });
const READY = Object.freeze({ status: "ready" });

/**
 * Per-app Prometheus registry with default process metrics and the request metrics, labelled by
 * surface (`platform`, `credit`, `service`), operationId (`none` when no operation was routed),
 * method and status (499: the client went away before the answer).
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<"method" | "surface" | "operation" | "status">;
  readonly duration: Histogram<"surface" | "operation" | "status">;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: "http_requests_total",
      help: "HTTP requests by surface, operationId, method and status",
      labelNames: ["method", "surface", "operation", "status"],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request duration in seconds by surface, operationId and status",
      labelNames: ["surface", "operation", "status"],
      registers: [this.registry],
    });
  }

  /**
   * The two metrics' children of each label set seen, by the labels joined: prom-client hashes a
   * label object (its keys sorted) at every `inc`/`observe`; a child is looked up once per label set
   * (docs/performance.md "What keeps the request path cheap"). The label sets are bounded: the
   * documents' operations × methods × statuses.
   */
  private readonly children = new Map<string, { requests: { inc(): void }; duration: { observe(seconds: number): void } }>();

  /** Counts one finished request and its duration (`seconds`). Called by src/http/observe.ts. */
  observe(surface: string, operation: string, method: string, status: number, seconds: number): void {
    const key = `${surface} ${operation} ${method} ${status}`;
    let child = this.children.get(key);
    if (!child) {
      const statusLabel = String(status);
      child = { requests: this.requests.labels({ method, surface, operation, status: statusLabel }), duration: this.duration.labels({ surface, operation, status: statusLabel }) };
      this.children.set(key, child);
    }
    child.requests.inc();
    child.duration.observe(seconds);
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
 * The database is probed with src/db/health.ts `ping` on `options.statements` (the app's `Db`), or,
 * when none is given, on the ORM's pool (the statement sent unnamed); the pending migrations are
 * the ORM migrator's.
 */
export function opsRouter(orm: MikroORM, metrics: Metrics, options: { metricsToken?: string | undefined; statements?: Sql } = {}): Router {
  const router = express.Router();
  let probe: Sql | undefined = options.statements;
  const database = async (): Promise<Sql> => (probe ??= new Db(await orm.em.getConnection().getNativeClient(), { named: false }));
  router.get("/healthz", (_req, res) => {
    sendJson(res, 200, HEALTHY);
  });
  router.get("/readyz", async (_req, res) => {
    try {
      await ping(await database());
      const pending = await orm.migrator.getPending();
      if (pending.length > 0) {
        res.status(503).json({ status: "unavailable", reason: `${pending.length} pending migration(s)` });
        return;
      }
      sendJson(res, 200, READY);
    } catch {
      // No host, port or driver message: the probe is often public (docs/decisions/requests-and-validation.md "When the database cannot be reached").
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
