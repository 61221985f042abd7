/**
 * Express middleware that runs before the surfaces: trace ids (reference: "Errors" rule 4 and the
 * credit core's trace rules) and the request target's rules, in the surface's envelope. Bodies are
 * read by the surfaces themselves, after authentication (src/http/json-body.ts).
 */
import { randomUUID } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import { NUL_MESSAGE } from "./json-body.js";
import { errorBody, type Surface } from "./envelope.js";
import { isUuidV4 } from "../domain/ids.js";

/** Which surface a path belongs to: `/v2/...` is the credit core, everything else the platform API. */
export function surfaceOf(path: string): Surface {
  return surfaceUnder(path) === "credit" ? "credit" : "platform";
}

/** The surface whose base a path (without query) is under: `/api/v1…` platform, `/v2…` credit, else null (health, docs, metrics). */
export function surfaceUnder(path: string): Surface | null {
  if (path === "/v2" || path.startsWith("/v2/")) return "credit";
  if (path === "/api/v1" || path.startsWith("/api/v1/")) return "platform";
  return null;
}

/** The platform API's base path: its document's paths are relative to it. */
const PLATFORM_BASE = "/api/v1";

/**
 * The surface a path (without query) belongs to, with the path relative to that surface's document
 * (the platform's without `/api/v1`, the credit core's as it is); null for health, docs and metrics.
 */
export function locateSurface(path: string): { surface: Surface; path: string } | null {
  const surface = surfaceUnder(path);
  if (surface === null) return null;
  return { surface, path: surface === "platform" ? path.slice(PLATFORM_BASE.length) || "/" : path };
}

/** Accepted platform trace ids: 1–128 characters of `[A-Za-z0-9._:-]`; anything else is replaced. */
const PLATFORM_TRACE = /^[A-Za-z0-9._:-]{1,128}$/;

declare module "express-serve-static-core" {
  interface Request {
    /** The request's trace id (echoed in `x-trace-id` and `meta`). */
    traceId: string;
  }
}

/**
 * Sets `req.traceId` and the `x-trace-id` response header. Platform: the client's id when well
 * formed (the `x-trace-id` schema of the platform document: 1–128 characters of `[A-Za-z0-9._:-]`),
 * else a generated UUID; a malformed id is dropped from the request's headers too, so it is never
 * echoed, logged or validated further (the request goes on as if it had sent none). Credit core:
 * the client's id must be a UUID v4, else 422 `VALIDATION_ERROR` on field `traceId` (with a fresh
 * trace id; the sent value is not echoed).
 */
export function traceIds(): RequestHandler {
  return (req, res, next) => {
    const sent = req.header("x-trace-id");
    const surface = surfaceOf(req.path);
    if (surface === "credit" && sent !== undefined && !isUuidV4(sent)) {
      req.traceId = randomUUID();
      res.setHeader("x-trace-id", req.traceId);
      res.status(422).json(
        errorBody("credit", req.traceId, [{ code: "VALIDATION_ERROR", message: "x-trace-id must be a UUID v4.", field: "traceId" }]),
      );
      return;
    }
    const valid = surface === "credit" ? sent !== undefined : sent !== undefined && PLATFORM_TRACE.test(sent);
    if (sent !== undefined && !valid) delete req.headers["x-trace-id"];
    req.traceId = valid && sent ? sent : randomUUID();
    res.setHeader("x-trace-id", req.traceId);
    next();
  };
}

/**
 * Why the request's target is refused before it reaches a surface (docs/security.md, "Paths,
 * queries and validation answers"), or `undefined`: a path whose percent-encoding is malformed
 * (`%ff`, `%E0%A4%A`, `%zz`: it decodes to no text, so no route could match it), or a NUL character
 * anywhere in the path or the query.
 */
function unsafeTargetReason(req: Request): string | undefined {
  // Without a `%` the target holds no escape, so nothing to decode: the common case costs a scan
  // of the URL for an escape and for a raw NUL.
  if (!req.url.includes("%") && !req.url.includes("\u0000")) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    return "The request path holds malformed percent-encoding: every % must start a UTF-8 sequence of %XX escapes.";
  }
  if (path.includes("\u0000")) return NUL_MESSAGE;
  const query = req.query as Record<string, unknown>;
  for (const key in query) {
    if (key.includes("\u0000") || [query[key]].flat().some((x) => typeof x === "string" && x.includes("\u0000"))) return NUL_MESSAGE;
  }
  return undefined;
}

/** Answers 400 `BAD_REQUEST` in the surface's envelope when {@link unsafeTargetReason} refuses the target; returns whether it did. */
export function refuseUnsafeTarget(req: Request, res: Response): boolean {
  const reason = unsafeTargetReason(req);
  if (reason === undefined) return false;
  res.status(400).json(errorBody(surfaceOf(req.path), req.traceId, [{ code: "BAD_REQUEST", message: reason }]));
  return true;
}

/** Middleware form of {@link refuseUnsafeTarget}. */
export function rejectUnsafeTargets(): RequestHandler {
  return (req, res, next) => {
    if (!refuseUnsafeTarget(req, res)) next();
  };
}
