/**
 * Express middleware that runs before the surfaces: trace ids (reference: "Errors" rule 4 and the
 * credit core's trace rules), JSON body rules (415 / 413 / malformed JSON), in the surface's envelope.
 */
import { randomUUID } from "node:crypto";
import { keepExactNumbers } from "./json-numbers.js";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
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
 * Whether the request declares a body: a positive `Content-Length`, or a chunked body that names its
 * `Content-Type` (clients and proxies stream empty POSTs chunked without one).
 */
const hasBody = (req: Request): boolean =>
  Number(req.headers["content-length"] ?? 0) > 0 ||
  (req.headers["transfer-encoding"] !== undefined && req.headers["content-type"] !== undefined);

/**
 * JSON bodies only: a request with a body whose `Content-Type` is not JSON answers 415
 * `UNSUPPORTED_MEDIA_TYPE`; a body over `limitBytes` 413 `PAYLOAD_TOO_LARGE`; malformed JSON 400
 * `BAD_REQUEST`.
 */
export function jsonBodies(limitBytes: number): RequestHandler[] {
  const contentType: RequestHandler = (req, res, next) => {
    if (hasBody(req) && !req.is(["application/json", "application/*+json"])) {
      const surface = surfaceOf(req.path);
      res.status(415).json(
        errorBody(surface, req.traceId, [
          { code: "UNSUPPORTED_MEDIA_TYPE", message: "Request bodies must be JSON: set Content-Type: application/json." },
        ]),
      );
      return;
    }
    next();
  };
  return [contentType, express.json({
      limit: limitBytes,
      type: ["application/json", "application/*+json"],
      strict: false,
      reviver: keepExactNumbers,
      verify: refuseDeepJson,
    })];
}

/** `type` of the body-parser error {@link refuseDeepJson} raises. */
const TOO_DEEP = "entity.too.deep";

/**
 * body-parser `verify` hook: refuses a JSON text nested deeper than {@link MAX_BODY_DEPTH} before it
 * is parsed, since the parse's reviver (src/http/json-numbers.ts) walks values recursively and a
 * body nested thousands of levels deep would overflow its stack. One pass over the bytes; brackets
 * inside strings do not count.
 * @throws Error with `type` `entity.too.deep` (answered 400 `BAD_REQUEST` by {@link bodyErrors}).
 */
export function refuseDeepJson(_req: unknown, _res: unknown, buf: Buffer): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_BODY_DEPTH) throw Object.assign(new Error("nested too deep"), { type: TOO_DEEP, status: 400 });
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
}

/** Turns body-parser failures into the surface's envelope. */
export function bodyErrors() {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    const type = (error as { type?: string }).type;
    const surface = surfaceOf(req.path);
    if (type === "entity.too.large") {
      res.status(413).json(errorBody(surface, req.traceId, [{ code: "PAYLOAD_TOO_LARGE", message: "The request body is too large." }]));
      return;
    }
    if (type === TOO_DEEP) {
      res.status(400).json(errorBody(surface, req.traceId, [{ code: "BAD_REQUEST", message: `The request body is nested deeper than ${MAX_BODY_DEPTH} levels.` }]));
      return;
    }
    if (type === "entity.parse.failed") {
      res.status(400).json(errorBody(surface, req.traceId, [{ code: "BAD_REQUEST", message: "The request body is not valid JSON." }]));
      return;
    }
    if (type === "charset.unsupported" || type === "encoding.unsupported") {
      res.status(415).json(errorBody(surface, req.traceId, [{ code: "UNSUPPORTED_MEDIA_TYPE", message: "Unsupported body encoding." }]));
      return;
    }
    const status = (error as { status?: unknown }).status;
    if (typeof status === "number" && status >= 400 && status < 500) {
      // Any other body the parser could not read: a Content-Encoding that does not match the bytes
      // (gzip that is not gzip), an aborted or truncated upload…
      const reason = req.headers["content-encoding"] !== undefined ? "its bytes do not match its Content-Encoding" : "it is incomplete or malformed";
      res.status(400).json(errorBody(surface, req.traceId, [{ code: "BAD_REQUEST", message: `The request body could not be read: ${reason}.` }]));
      return;
    }
    next(error);
  };
}

/**
 * Largest number of values {@link rejectUnsafeInput} looks at in one body: far above what a 1 MiB body
 * (`BODY_LIMIT_BYTES`) can hold, so every value of an accepted body is checked.
 */
const MAX_NODES = 2_000_000;

/** Deepest nesting of arrays and objects accepted in a body: no field of either document nests more than a few levels. */
export const MAX_BODY_DEPTH = 32;

/**
 * What makes a parsed JSON value unacceptable, walked without recursion: a NUL character in a
 * string or key, or nesting deeper than {@link MAX_BODY_DEPTH}; null when neither.
 */
function unsafeValue(value: unknown): "nul" | "deep" | null {
  const stack: [unknown, number][] = [[value, 0]];
  let seen = 0;
  while (stack.length > 0 && seen++ < MAX_NODES) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v === "string") {
      if (v.includes("\u0000")) return "nul";
    } else if (v !== null && typeof v === "object") {
      if (depth >= MAX_BODY_DEPTH) return "deep";
      if (Array.isArray(v)) {
        for (const item of v) stack.push([item, depth + 1]);
      } else {
        for (const [k, item] of Object.entries(v)) {
          if (k.includes("\u0000")) return "nul";
          stack.push([item, depth + 1]);
        }
      }
    }
  }
  return null;
}

/**
 * Refuses, before the request reaches a surface, with 400 `BAD_REQUEST` in the surface's envelope:
 * a NUL character anywhere in the path, the query or a JSON body string or key (PostgreSQL cannot
 * store it in text, and no field of either document allows it), and a body nested deeper than
 * {@link MAX_BODY_DEPTH} levels (it could only overflow a stack further on).
 */
export function rejectUnsafeInput(): RequestHandler {
  return (req, res, next) => {
    let path: string;
    try {
      path = decodeURIComponent(req.path);
    } catch {
      path = req.path;
    }
    const query = Object.entries(req.query as Record<string, unknown>).some(([k, v]) => k.includes("\u0000") || unsafeValue(v) !== null);
    const body = unsafeValue(req.body);
    const refuse = (message: string) => res.status(400).json(errorBody(surfaceOf(req.path), req.traceId, [{ code: "BAD_REQUEST", message }]));
    if (path.includes("\u0000") || query || body === "nul") {
      refuse("The request holds a NUL character (U+0000), which no field accepts.");
      return;
    }
    if (body === "deep") {
      refuse(`The request body is nested deeper than ${MAX_BODY_DEPTH} levels.`);
      return;
    }
    next();
  };
}
