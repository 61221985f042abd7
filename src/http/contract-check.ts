/**
 * Response validation against the documents, for tests (`validateResponses`; docs/testing.md "The real
 * parts": test apps validate every JSON answer, errors included, against the emitted documents). Every JSON
 * body a surface's path answers — successes, the surfaces' errors, and the errors the middleware in
 * front of them sends (415, 413, malformed JSON, NUL characters, 404/405 of unknown routes) — is
 * checked: its status must be one the matched operation declares (or `default`), and its body
 * must match that response's schema; a body of a path no operation matches must match the
 * surface's error envelope. A mismatch is logged and answered 500 `INTERNAL_SERVER_ERROR` with the
 * details, so the test that caused it fails.
 */
import type { RequestHandler, Response } from "express";
import { ValidationContext, type OpenAPIBackend, type Operation } from "openapi-backend";
import type { ValidateFunction } from "ajv";
import type { Logger } from "pino";
import { errorBody } from "./envelope.js";
import { locateSurface } from "./middleware.js";

/** The surfaces' openapi-backend instances, built with response validation on. */
export interface CheckedSurfaces {
  platform: OpenAPIBackend;
  credit: OpenAPIBackend;
}

/** Whether `operation` declares `status` (exactly, as `4XX`-style range, or `default`). */
function declares(operation: Operation, status: number): boolean {
  const responses = operation.responses ?? {};
  return String(status) in responses || `${String(status)[0]}XX` in responses || "default" in responses;
}

/** The schema of the surface's error envelope (platform `ErrorEnvelope`, credit `CreditErrorEnvelope`), compiled once. */
function errorEnvelopeValidator(api: OpenAPIBackend, name: string): ValidateFunction {
  const schema = (api.definition.components?.schemas as Record<string, object> | undefined)?.[name];
  if (!schema) throw new Error(`the document has no ${name} schema`);
  // The surface's own (shared) response Ajv, formats included (src/http/openapi-compiled.ts).
  return api.validator.getAjv(ValidationContext.Response).compile(schema);
}

/**
 * Middleware (tests only): wraps `res.end` of every request under `/api/v1` and `/v2` with the
 * check described above, whichever writer produced the answer (express's `res.json`, the surfaces'
 * own writer, src/http/send-json.ts): a JSON answer is checked from the text it ends with, before
 * its headers go out. Install it before every other middleware that may answer. A HEAD answer
 * carries no text to check: its GET twin is checked.
 */
export function contractCheck(surfaces: CheckedSurfaces, logger: Logger): RequestHandler {
  const envelopes = {
    platform: errorEnvelopeValidator(surfaces.platform, "ErrorEnvelope"),
    credit: errorEnvelopeValidator(surfaces.credit, "CreditErrorEnvelope"),
  };
  return (req, res, next) => {
    const where = locateSurface(req.originalUrl.split("?")[0] ?? "");
    if (!where) {
      next();
      return;
    }
    const api = surfaces[where.surface];
    const problemOf = (body: unknown): string | null => {
      const status = res.statusCode;
      const operation = api.router.matchOperation({ method: req.method, path: where.path, headers: {} }, false);
      if (operation) {
        if (!declares(operation, status)) return `${operation.operationId ?? "the operation"} does not declare status ${status}`;
        const check = api.validateResponse(body, operation, status);
        return check.errors && check.errors.length > 0 ? `${operation.operationId ?? "the operation"} ${status}: ${JSON.stringify(check.errors)}` : null;
      }
      const validate = envelopes[where.surface];
      return validate(body) ? null : `no operation matches ${req.method} ${where.path}; body is not the error envelope: ${JSON.stringify(validate.errors)}`;
    };
    interceptJsonEnd(res, (text) => {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = Symbol("not JSON");
      }
      const problem = typeof body === "symbol" ? "the answer is not valid JSON" : problemOf(body);
      if (problem === null) return undefined;
      logger.error({ method: req.method, url: where.path, status: res.statusCode, problem }, "response does not match the contract");
      res.statusCode = 500;
      return JSON.stringify(errorBody(where.surface, req.traceId ?? "unknown", [{ code: "INTERNAL_SERVER_ERROR", message: `Response does not match the contract: ${problem}` }]));
    });
    next();
  };
}

/**
 * Wraps `res.end` (tests only: the contract check above, the Dredd negative control) so that
 * `replace` sees the text of a JSON answer before it goes out: a `Content-Type: application/json`
 * answer ended with its whole text (a string or a Buffer) while its headers are not sent yet,
 * whichever writer wrote it. `replace` returns the text to send instead (it may change the status
 * too), or undefined to send the answer as it is; `Content-Length` follows the replacement.
 */
export function interceptJsonEnd(res: Response, replace: (text: string) => string | undefined): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]): Response => {
    const [chunk] = args;
    const json = String(res.getHeader("content-type") ?? "").startsWith("application/json");
    if (res.headersSent || !json || (typeof chunk !== "string" && !Buffer.isBuffer(chunk))) return end(...args);
    const replaced = replace(Buffer.isBuffer(chunk) ? chunk.toString("utf8") : chunk);
    if (replaced === undefined) return end(...args);
    res.setHeader("Content-Length", Buffer.byteLength(replaced));
    return end(replaced);
  }) as Response["end"];
}
