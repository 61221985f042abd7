/**
 * One observer per request (docs/performance.md "What keeps the request path cheap"): when the response is finished (or the client
 * went away), one JSON log line with the trace id and one update of the request metrics. No child
 * logger and no serializer run per request; the line is built only when its level is enabled.
 *
 * The surfaces name what was called in `res.locals` ({@link markOperation}), so the line and the
 * metrics carry the operationId and the route template (`/users/{user_id}`) instead of a raw URL.
 */
import type { Request, RequestHandler, Response } from "express";
import type { Logger } from "pino";
import { redactUrl } from "../logging.js";
import type { Metrics } from "./ops.js";
import { surfaceUnder } from "./middleware.js";

/** What a surface records about the request it routed (`res.locals`). */
interface RouteLocals {
  /** The matched operation's id, e.g. `getWalletBalance`. */
  operationId?: string;
  /** The matched path template relative to the surface's server, e.g. `/wallets/{wallet_id}/balance`. */
  route?: string;
}

/** Records on `res` which operation of the document a request was routed to (called by src/http/surface.ts). */
export function markOperation(res: Response, operationId: string, route: string): void {
  const locals = res.locals as RouteLocals;
  locals.operationId = operationId;
  locals.route = route;
}

/** The surface of a request for the metrics: `platform` (`/api/v1`), `credit` (`/v2`), else `service` (health, docs, metrics). */
export function metricsSurface(originalUrl: string): "platform" | "credit" | "service" {
  return surfaceUnder(originalUrl.split("?")[0] ?? "") ?? "service";
}

/**
 * Middleware: when the response is done (`close`), one log line `request completed` — `traceId`, `req: {method, url}` (query
 * values redacted, src/logging.ts), `route` and `operationId` when a surface routed it,
 * `res: {statusCode}`, `responseTime` (ms) — at `error` level for a 5xx and `info` otherwise; a
 * request whose client went away before the answer is logged `request aborted` at `warn`. Metrics:
 * `http_requests_total` and `http_request_duration_seconds` labelled by surface, operationId (or
 * `none`) and status.
 */
export function observeRequests(logger: Logger, metrics: Metrics): RequestHandler {
  const finished = (req: Request, res: Response, startedAt: number, aborted: boolean): void => {
    const seconds = (performance.now() - startedAt) / 1000;
    const locals = res.locals as RouteLocals;
    const status = aborted ? 499 : res.statusCode;
    metrics.observe(metricsSurface(req.originalUrl), locals.operationId ?? "none", req.method, status, seconds);
    const level = aborted ? "warn" : status >= 500 ? "error" : "info";
    if (!logger.isLevelEnabled(level)) return;
    logger[level](
      {
        traceId: req.traceId,
        req: { method: req.method, url: redactUrl(req.originalUrl) },
        ...(locals.route !== undefined ? { route: locals.route, operationId: locals.operationId } : {}),
        res: { statusCode: status },
        responseTime: Math.round(seconds * 1e6) / 1e3,
      },
      aborted ? "request aborted" : "request completed",
    );
  };
  return (req, res, next) => {
    const startedAt = performance.now();
    // `close` follows `finish` on every response, and comes alone when the client went away first.
    res.on("close", () => finished(req, res, startedAt, !res.writableFinished));
    next();
  };
}
