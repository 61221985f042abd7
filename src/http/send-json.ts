/**
 * The JSON writer of the surfaces' answers (docs/performance.md "What keeps the request path cheap").
 * express's `res.json` stringifies, then `res.send` re-reads the content type to set its charset,
 * converts the text to a Buffer to measure it, and evaluates the request's freshness
 * (If-None-Match, If-Modified-Since) although no answer of the API carries an ETag or a
 * Last-Modified; this writes the same status, headers and bytes without those steps.
 */
import express, { type Response } from "express";

/** express's own `res.json`: anything else on a response is a wrapper (the tests' contract check, src/http/contract-check.ts). */
const EXPRESS_JSON = express.response.json;

/**
 * Answers `body` as JSON with `status`: `Content-Type: application/json; charset=utf-8` and its
 * `Content-Length`, as `res.status(status).json(body)` would (no body on a HEAD request). When
 * `res.json` has been wrapped, the answer goes through the wrapper instead.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  res.statusCode = status;
  if (res.json !== EXPRESS_JSON) {
    res.json(body);
    return;
  }
  const text = JSON.stringify(body);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  if (res.req.method === "HEAD") res.end();
  else res.end(text);
}
