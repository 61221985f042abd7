/**
 * The JSON writer of the surfaces' answers (docs/performance.md "What keeps the request path cheap").
 * express's `res.json` stringifies, then `res.send` re-reads the content type to set its charset,
 * converts the text to a Buffer to measure it, and evaluates the request's freshness
 * (If-None-Match, If-Modified-Since) although no answer of the API carries an ETag or a
 * Last-Modified; this writes the same status, headers and bytes without those steps.
 *
 * A reply's `data` that is frozen ({@link frozenOnce}) is serialized once and its text reused by
 * every answer that carries it, such as the currency catalogue.
 */
import type { Response } from "express";

/** The JSON text of each frozen value written so far. */
const frozenText = new WeakMap<object, string>();

/**
 * Answers `body` as JSON with `status`: `Content-Type: application/json; charset=utf-8` and its
 * `Content-Length`, as `res.status(status).json(body)` would (no body on a HEAD request).
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  res.statusCode = status;
  writeJson(res, JSON.stringify(body));
}

/**
 * Answers the success envelope `{ success: true, data, meta }` with `status`, as
 * {@link sendJson} would; `data` that {@link frozenOnce} built is written from its text serialized once.
 */
export function sendSuccess(res: Response, status: number, data: unknown, meta: object): void {
  if (data === undefined) {
    sendJson(res, status, { success: true, data, meta });
    return;
  }
  res.statusCode = status;
  writeJson(res, `{"success":true,"data":${textOf(data)},"meta":${JSON.stringify(meta)}}`);
}

function writeJson(res: Response, text: string): void {
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  if (res.req.method === "HEAD") res.end();
  else res.end(text);
}

/** `JSON.stringify(data)`, once per frozen value. */
function textOf(data: unknown): string {
  if (typeof data !== "object" || data === null || !Object.isFrozen(data)) return JSON.stringify(data);
  let text = frozenText.get(data);
  if (text === undefined) {
    text = JSON.stringify(data);
    frozenText.set(data, text);
  }
  return text;
}

/**
 * Memoizes `build` per source object (by identity) and deep-freezes what it returns, so the
 * answers carrying it serialize it once ({@link sendSuccess}). For replies derived from data that
 * does not change while the source object lives (the provider's currency catalogue).
 */
export function frozenOnce<Source extends object, Value>(build: (source: Source) => Value): (source: Source) => Value {
  const built = new WeakMap<Source, Value>();
  return (source) => {
    let value = built.get(source);
    if (value === undefined) {
      value = deepFreeze(build(source));
      built.set(source, value);
    }
    return value;
  };
}

/** Freezes `value` and every object it holds. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
