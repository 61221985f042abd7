/**
 * The express app of the service: trace ids, the contract check (tests), request metrics,
 * `/metrics` and the health routes, `/docs`, then the platform surface under `/api/v1` and the
 * credit core at the root (docs/decisions/surfaces-and-process.md); an error that escapes a surface
 * is answered in the surface's envelope (503 for a lost database, else 500).
 */
import express, { type Express } from "express";
import type { Logger } from "pino";
import type { MikroORM } from "@mikro-orm/postgresql";
import { contractCheck } from "./contract-check.js";
import { docsRouter } from "./docs.js";
import { errorBody } from "./envelope.js";
import { renderError } from "./errors.js";
import { locateSurface, refuseUnsafeTarget, rejectUnsafeTargets, surfaceOf, traceIds } from "./middleware.js";
import { observeRequests } from "./observe.js";
import { opsRouter, type Metrics } from "./ops.js";
import type { BuiltSurface } from "./surface.js";

/** What {@link assembleExpress} puts together. */
export interface ExpressParts {
  /** Both built surfaces (src/http/surface.ts). */
  surfaces: { platform: BuiltSurface; credit: BuiltSurface };
  orm: MikroORM;
  /** The request and business metrics served on `/metrics`. */
  metrics: Metrics;
  logger: Logger;
  /** Check every JSON answer against the documents (tests; src/http/contract-check.ts). */
  validateResponses: boolean;
  /** `TRUST_PROXY`: reverse proxies whose `X-Forwarded-For` names the client address. */
  trustProxy: number;
  /** `METRICS_TOKEN`: when set, `/metrics` requires it as a bearer token. */
  metricsToken: string | undefined;
}

/** Builds the express app from the surfaces and the ops routes (no I/O). */
export function assembleExpress(options: ExpressParts): Express {
  const { surfaces: { platform, credit }, orm, metrics, logger, validateResponses } = options;
  const app = express();
  app.disable("x-powered-by");
  // No ETag: every envelope carries its own timestamp and trace id, so a body's hash never matches
  // a client's If-None-Match; computing it cost a hash of every GET body (docs/performance.md "What keeps the request path cheap").
  app.set("etag", false);
  app.set("trust proxy", options.trustProxy);
  app.set("query parser", "simple");
  app.use(traceIds());
  // Tests: every JSON answer under /api/v1 and /v2, errors included, is checked against the documents.
  if (validateResponses) app.use(contractCheck({ platform: platform.api, credit: credit.api }, logger));
  app.use(observeRequests(logger, metrics));
  // The surfaces come first: their paths (`/api/v1…`, `/v2…`) and the ops and docs routes are
  // disjoint, so a surface's request skips those routers' matching (docs/performance.md "What keeps the request path cheap").
  app.use((req, res, next) => {
    const where = locateSurface(req.path);
    if (where === null) {
      next();
      return;
    }
    // Bodies are read by the surfaces once the caller is authenticated (src/http/json-body.ts).
    if (refuseUnsafeTarget(req, res)) return;
    (where.surface === "platform" ? platform : credit).handle(req, res, req.traceId, where.path).catch(next);
  });
  app.use(opsRouter(orm, metrics, { metricsToken: options.metricsToken }));
  app.use(docsRouter());
  // Any other path: the credit core's 404 (or 405), in its envelope.
  app.use(rejectUnsafeTargets());
  app.use((req, res, next) => {
    credit.handle(req, res, req.traceId, req.path).catch(next);
  });
  app.use((error: unknown, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    // Errors that escape a surface (an authentication lookup in openapi-backend's security
    // handler, middleware): a lost database answers 503 like inside the surfaces, anything else 500.
    const rendered = renderError(surfaceOf(req.path), error);
    if (rendered.unavailable !== undefined) logger.warn({ err: error, traceId: req.traceId }, "database unavailable: answered 503");
    else logger.error({ err: error, traceId: req.traceId }, "unhandled error");
    if (res.headersSent) return;
    if (rendered.headers) res.set(rendered.headers);
    res.status(rendered.status).json(errorBody(surfaceOf(req.path), req.traceId, rendered.errors));
  });
  return app;
}
