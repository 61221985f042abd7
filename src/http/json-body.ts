/**
 * JSON request bodies of both surfaces, read by the surface itself once the caller is known
 * (docs/security.md, "Before authentication"): what the headers alone tell (a body that is not
 * JSON, a charset other than UTF-*, a declared length over the limit) is answered before
 * authentication; the bytes are read and parsed only for a request that passed authentication and
 * the address limits, so an anonymous 1 MiB body costs no parse at all.
 */
import express, { type Request, type Response } from "express";
import type { FieldProblem } from "../domain/errors.js";
import type { BodyBudget } from "./body-budget.js";
import { applyExactNumbers, duplicateKeyOf, scanJson, type NumericFields } from "./json-numbers.js";

/** Deepest nesting of arrays and objects accepted in a body: no field of either document nests more than a few levels. */
export const MAX_BODY_DEPTH = 32;

/** A body refused: status, the surface-independent error code, the message and, for a 503, when to retry. */
export interface BodyRefusal {
  status: 400 | 413 | 415 | 429 | 503;
  code: "BAD_REQUEST" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "RATE_LIMIT_EXCEEDED" | "SERVICE_UNAVAILABLE";
  message: string;
  retryAfterS?: number;
  /** The answer closes the connection whatever the size of the body left unread (a refused reservation). */
  close?: true;
}

/** A body read: the parsed value (undefined when the request has none) and its field problems. */
export interface BodyRead {
  body: unknown;
  /**
   * Fields answered 422 after the permission checks: declared integer fields written with a
   * fraction or exponent, and a string holding a NUL character.
   */
  problems: FieldProblem[];
}

/** What the operation takes as its body's top level: a JSON object (every operation of both documents) or an array. */
export type BodyShape = "object" | "array";

/** How a body is read for one request: its limit, the operation's numeric fields and shape, the budget and the caller's share keys. */
export interface BodyReading {
  limitBytes: number;
  numeric: NumericFields;
  shape: BodyShape;
  budget?: BodyBudget;
  /** The keys the body counts against in the budget's shares: the caller's credential and its address. */
  shareKeys?: readonly string[];
}

/**
 * Whether the request may carry a body: a positive `Content-Length`, or any `Transfer-Encoding`
 * (chunked). A chunked body is read even without a `Content-Type`: clients and proxies stream empty
 * POSTs that way, and an empty one is no body, but one with bytes is refused with 415, never
 * ignored ({@link readJsonBody}).
 */
export function hasBody(req: Request): boolean {
  return Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined;
}

/** The 415 of a body that is not JSON. */
const NOT_JSON: BodyRefusal = { status: 415, code: "UNSUPPORTED_MEDIA_TYPE", message: "Request bodies must be JSON: set Content-Type: application/json." };

/** The `charset` parameter of a `Content-Type` value, quoted or not. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/**
 * What the headers alone say against a body, answered before authentication: 415
 * `UNSUPPORTED_MEDIA_TYPE` for a body whose `Content-Type` is not JSON (`application/json`,
 * `application/*+json`) or whose charset is not UTF-* (RFC 8259 §8.1); 413 `PAYLOAD_TOO_LARGE`
 * for a `Content-Length` over `limitBytes`. Null when nothing is wrong yet.
 */
export function bodyHeaderRefusal(req: Request, limitBytes: number): BodyRefusal | null {
  if (!hasBody(req)) return null;
  // A chunked body without a Content-Type is read first: refused with 415 only if it holds bytes.
  if (req.headers["content-type"] === undefined && Number(req.headers["content-length"] ?? 0) === 0) return null;
  if (!req.is(["application/json", "application/*+json"])) return NOT_JSON;
  const charset = CHARSET.exec(req.headers["content-type"] ?? "")?.[1]?.toLowerCase();
  if (charset !== undefined && !charset.startsWith("utf-")) return { status: 415, code: "UNSUPPORTED_MEDIA_TYPE", message: "Unsupported body encoding." };
  if (Number(req.headers["content-length"] ?? 0) > limitBytes) return { status: 413, code: "PAYLOAD_TOO_LARGE", message: "The request body is too large." };
  return null;
}

/**
 * Reads and decodes the body (charset, `Content-Encoding` gzip/deflate/br, at most `limitBytes`
 * after decoding; body-parser), scans it once ({@link scanJson}: depth, keys, the source text of
 * `numeric` fields), parses it and walks the result once ({@link walkBody}: NUL characters, keys).
 * Every body of both surfaces goes through here and nowhere else: the handlers never see a body
 * these checks did not pass.
 * @returns the body (undefined without one; `{}` for an empty one) and its field problems (422:
 *   integer fields written with a fraction, a string holding a NUL character, named by its dotted
 *   path), or the refusal: 429 `RATE_LIMIT_EXCEEDED` when the caller's share of `budget` cannot
 *   hold the body now, 503 `SERVICE_UNAVAILABLE` when the whole budget cannot, 413 over the limit,
 *   415 for an unsupported encoding or a chunked body with bytes and no `Content-Type`, 400
 *   `BAD_REQUEST` for a body that is not valid JSON, whose top level is not an object (or an array
 *   where `shape` says so: a JSON string holding JSON is not read twice), nested deeper than
 *   {@link MAX_BODY_DEPTH}, names a key twice in one object, holds a NUL character in a key, or
 *   could not be read (truncated, aborted, bytes that do not match `Content-Encoding`).
 */
export async function readJsonBody(req: Request, res: Response, reading: BodyReading): Promise<BodyRead | BodyRefusal> {
  const { limitBytes, numeric, budget, shareKeys } = reading;
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  const reserve = reservationOf(declared, limitBytes);
  const refused = takeBudget(budget, reserve, shareKeys);
  if (refused) return refused;
  let failure: unknown;
  let text: unknown;
  try {
    if (isPlainBody(req, declared, limitBytes)) {
      text = await readPlainText(req, declared);
      if (text === ABORTED) failure = text;
    } else {
      failure = await new Promise<unknown>((resolve) => textParser(limitBytes)(req, res, resolve));
      text = req.body;
    }
  } finally {
    budget?.give(reserve, shareKeys);
  }
  if (failure) return refusalOf(failure, req);
  const typed = req.headers["content-type"] !== undefined;
  if (typeof text !== "string" || (text.length === 0 && !typed)) return { body: undefined, problems: [] };
  if (text.length === 0) return { body: {}, problems: [] };
  if (!typed) return NOT_JSON;
  return parseJsonText(text, numeric, reading.shape);
}

/** The bytes a body reserves in the budget: its declared length, or the limit when it declares none or more. */
function reservationOf(declared: number, limitBytes: number): number {
  return Number.isFinite(declared) && declared >= 0 ? Math.min(declared, limitBytes) : limitBytes;
}

/** Reserves `reserve` bytes of `budget` for the callers `shareKeys`: null when taken (or no budget), else the 429 or 503 refusal. */
function takeBudget(budget: BodyBudget | undefined, reserve: number, shareKeys: readonly string[] | undefined): BodyRefusal | null {
  const taken = budget ? budget.take(reserve, shareKeys) : "ok";
  if (taken === "share") {
    return { status: 429, code: "RATE_LIMIT_EXCEEDED", message: "This caller is already sending as many request bodies as it may at once; retry shortly.", retryAfterS: 1, close: true };
  }
  if (taken === "full") {
    return { status: 503, code: "SERVICE_UNAVAILABLE", message: "The service is reading too many request bodies at once; retry shortly.", retryAfterS: 1, close: true };
  }
  return null;
}

/** How a raw body is read ({@link readRawBody}): its limit, the budget and the caller's share keys. */
export type RawBodyReading = Pick<BodyReading, "limitBytes" | "budget" | "shareKeys">;

/**
 * Reads a body's bytes without parsing them, for an operation authenticated by a signature over
 * its raw body (src/http/surface.ts access `signature`; docs/security.md "Inbound webhooks"): the
 * bytes as sent, decoded from `Content-Encoding` (gzip, deflate, br), at most `limitBytes`
 * (body-parser), reserved in `budget` as {@link readJsonBody} reserves them. The caller verifies
 * the bytes first, then parses them with {@link parseJsonBytes}: this reader and that parser are
 * the only other way into a handler, and they apply the same checks.
 * @returns the bytes (empty without a body), or the refusal: 429 or 503 as {@link readJsonBody},
 *   413 `PAYLOAD_TOO_LARGE` over `limitBytes` (declared or counted), 415 for an unsupported
 *   encoding, 400 `BAD_REQUEST` for a body that could not be read.
 */
export async function readRawBody(req: Request, res: Response, reading: RawBodyReading): Promise<{ bytes: Buffer } | BodyRefusal> {
  if (!hasBody(req)) return { bytes: Buffer.alloc(0) };
  const { limitBytes, budget, shareKeys } = reading;
  const reserve = reservationOf(Number(req.headers["content-length"] ?? Number.NaN), limitBytes);
  const refused = takeBudget(budget, reserve, shareKeys);
  if (refused) return refused;
  let failure: unknown;
  try {
    failure = await new Promise<unknown>((resolve) => rawParser(limitBytes)(req, res, resolve));
  } finally {
    budget?.give(reserve, shareKeys);
  }
  if (failure) return refusalOf(failure, req);
  return { bytes: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0) };
}

/**
 * Parses the bytes of {@link readRawBody} as a JSON object, with the checks of {@link readJsonBody}
 * (UTF-8 with a leading byte order mark dropped; depth, duplicate keys, NUL characters).
 * @returns the body and its field problems, or 400 `BAD_REQUEST` for bytes that are not a JSON object.
 */
export function parseJsonBytes(bytes: Buffer): BodyRead | BodyRefusal {
  const text = bytes.toString("utf8");
  return parseJsonText(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, NO_NUMERIC_FIELDS, "object");
}

/** The numeric fields of a body read without an operation's schema: none. */
const NO_NUMERIC_FIELDS: NumericFields = new Map();

/**
 * Parses a body's decoded text with the checks of {@link readJsonBody} (depth, duplicate keys, the
 * top level's shape, NUL characters, exact numbers).
 */
function parseJsonText(text: string, numeric: NumericFields, shape: BodyShape): BodyRead | BodyRefusal {
  const scan = scanJson(text, numeric, MAX_BODY_DEPTH);
  if (scan.tooDeep) return { status: 400, code: "BAD_REQUEST", message: `The request body is nested deeper than ${MAX_BODY_DEPTH} levels.` };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { status: 400, code: "BAD_REQUEST", message: "The request body is not valid JSON." };
  }
  if (body === null || typeof body !== "object" || Array.isArray(body) !== (shape === "array")) {
    return { status: 400, code: "BAD_REQUEST", message: `The request body must be a JSON ${shape}.` };
  }
  const walked = walkBody(body);
  if (walked.nulKey) return { status: 400, code: "BAD_REQUEST", message: NUL_MESSAGE };
  if (walked.keys < scan.keys) {
    const duplicate = duplicateKeyOf(text) ?? "";
    return { status: 400, code: "BAD_REQUEST", message: `The request body names the key ${JSON.stringify(clipKey(duplicate))} more than once in one object.` };
  }
  const problems = applyExactNumbers(body, scan, numeric);
  if (walked.nulValue) {
    const field = nulFieldOf(body) ?? "body";
    problems.push({ field, message: `${field} holds a NUL character (U+0000), which no field accepts.` });
  }
  return { body, problems };
}

/** The message of a NUL character, wherever it is found (body, path or query). */
export const NUL_MESSAGE = "The request holds a NUL character (U+0000), which no field accepts.";

/**
 * One walk over a parsed body, without recursion: whether a key or a string value holds a NUL
 * character, and how many keys its objects hold (fewer than the text names when a key was given
 * twice). A NUL in a key stops the walk.
 */
function walkBody(value: unknown): { nulKey: boolean; nulValue: boolean; keys: number } {
  const stack: unknown[] = [value];
  let keys = 0;
  let nulValue = false;
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (v.includes("\u0000")) nulValue = true;
    } else if (Array.isArray(v)) {
      for (const item of v) if (item !== null && typeof item !== "number" && typeof item !== "boolean") stack.push(item);
    } else if (v !== null && typeof v === "object") {
      for (const k in v) {
        keys++;
        if (k.includes("\u0000")) return { nulKey: true, nulValue, keys };
        const item = (v as Record<string, unknown>)[k];
        if (item !== null && typeof item !== "number" && typeof item !== "boolean") stack.push(item);
      }
    }
  }
  return { nulKey: false, nulValue, keys };
}

/**
 * The dotted path of the first string of `body` holding a NUL character (`merchant.name`,
 * `networks.0.name`, as validation names fields), or null. Only walked once {@link walkBody} found one.
 */
function nulFieldOf(body: unknown): string | null {
  const stack: [unknown, string][] = [[body, ""]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      if (v.includes("\u0000")) return path;
    } else if (v !== null && typeof v === "object") {
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) stack.push([item, path === "" ? clipKey(k) : `${path}.${clipKey(k)}`]);
    }
  }
  return null;
}

/** A key as quoted in a message: at most 32 characters. */
const clipKey = (key: string): string => (key.length > 32 ? `${key.slice(0, 32)}…` : key);

/** What {@link readPlainText} resolves with when the body ended before its declared length (aborted, timed out, cut off). */
const ABORTED = Symbol("aborted");

/**
 * Whether {@link readPlainText} can read the body: a `Content-Length` within `limitBytes`, no
 * `Transfer-Encoding`, no `Content-Encoding` (or `identity`) and UTF-8 (no charset, `utf-8` or
 * `utf8`). Anything else goes through body-parser, which decodes the other charsets and encodings.
 */
function isPlainBody(req: Request, declared: number, limitBytes: number): boolean {
  if (!Number.isInteger(declared) || declared < 0 || declared > limitBytes) return false;
  const { headers } = req;
  if (headers["transfer-encoding"] !== undefined) return false;
  const encoding = headers["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") return false;
  const charset = CHARSET.exec(headers["content-type"] ?? "")?.[1]?.toLowerCase();
  return charset === undefined || charset === "utf-8" || charset === "utf8";
}

/**
 * Reads a plain body ({@link isPlainBody}) of `length` bytes into one buffer of that length and
 * decodes it once as UTF-8 (invalid bytes become U+FFFD and a leading byte order mark is dropped,
 * as body-parser does). Memory is given back as soon as it is no longer needed, not at the next
 * garbage collection (docs/performance.md, "Hostile neighbours"): each chunk is freed once copied,
 * and the buffer ({@link bodyStorage}) once decoded or once the request ends early, so a body
 * stalled half-way returns its pages to the system the moment its request times out.
 * @returns the text, or {@link ABORTED} when the request closed before `length` bytes arrived.
 */
function readPlainText(req: Request, length: number): Promise<string | typeof ABORTED> {
  if (length === 0 || req.readableEnded) return Promise.resolve("");
  return new Promise((resolve) => {
    let storage: Buffer | null = bodyStorage(length);
    let received = 0;
    const settle = (outcome: string | typeof ABORTED): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("close", onClose);
      req.off("error", onClose);
      if (storage) release(storage);
      storage = null;
      resolve(outcome);
    };
    const onData = (chunk: Buffer): void => {
      if (!storage) return;
      received += chunk.copy(storage, received);
      release(chunk);
    };
    const onEnd = (): void => {
      if (!storage) return;
      if (received < length) return settle(ABORTED);
      const text = storage.toString("utf8", 0, received);
      settle(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    };
    const onClose = (): void => settle(ABORTED);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("close", onClose);
    req.on("error", onClose);
  });
}

/**
 * Bodies of at least this many bytes are read into memory mapped for them alone
 * ({@link bodyStorage}); smaller ones into an ordinary buffer.
 */
const MAPPED_BODY_BYTES = 64 * 1024;

/**
 * The buffer a plain body of `length` bytes is read into. From {@link MAPPED_BODY_BYTES} on it is
 * a resizable ArrayBuffer's: V8 maps those pages itself rather than taking them from the C
 * allocator, so freeing it unmaps them, whatever else the process allocated meanwhile. An ordinary
 * buffer of that size may come from the allocator's heap (glibc raises its mapping threshold after
 * each large free), where memory freed below a live allocation stays with the process.
 */
function bodyStorage(length: number): Buffer {
  return length < MAPPED_BODY_BYTES ? Buffer.allocUnsafe(length) : Buffer.from(new ArrayBuffer(length, { maxByteLength: length }));
}

/**
 * Reads and frees, chunk by chunk, the rest of a body that an answer leaves unread on a connection
 * it closes, until the connection closes: without this Node would read and drop it itself, and the
 * chunks would stay allocated until a garbage collection, which an idle process does not run.
 */
export function discardUnreadBody(req: Request): void {
  req.on("data", release);
}

/**
 * Frees a buffer's memory now when the buffer is the whole of its ArrayBuffer (the parser's body
 * chunks and {@link readPlainText}'s storage are): detaching it releases the backing store at once.
 * A view into a shared ArrayBuffer is left to the garbage collector.
 */
function release(buffer: Buffer): void {
  if (buffer.byteOffset !== 0 || buffer.byteLength !== buffer.buffer.byteLength) return;
  try {
    (buffer.buffer as ArrayBuffer).transfer(0);
  } catch {
    // not detachable: the collector frees it
  }
}

/** body-parser's raw reader per limit ({@link readRawBody}: one limit, the signed operations'). */
const rawParsers = new Map<number, express.RequestHandler>();
function rawParser(limitBytes: number): express.RequestHandler {
  let parser = rawParsers.get(limitBytes);
  if (!parser) {
    parser = express.raw({ type: () => true, limit: limitBytes });
    rawParsers.set(limitBytes, parser);
  }
  return parser;
}

/** body-parser's text reader per limit (a surface has one limit; the map holds one or two). */
const parsers = new Map<number, express.RequestHandler>();
function textParser(limitBytes: number): express.RequestHandler {
  let parser = parsers.get(limitBytes);
  if (!parser) {
    parser = express.text({ type: () => true, limit: limitBytes, defaultCharset: "utf-8" });
    parsers.set(limitBytes, parser);
  }
  return parser;
}

/** A body-parser failure as a refusal. */
function refusalOf(error: unknown, req: Request): BodyRefusal {
  const type = (error as { type?: string }).type;
  if (type === "entity.too.large") return { status: 413, code: "PAYLOAD_TOO_LARGE", message: "The request body is too large." };
  if (type === "charset.unsupported" || type === "encoding.unsupported") return { status: 415, code: "UNSUPPORTED_MEDIA_TYPE", message: "Unsupported body encoding." };
  // Any other body the reader could not read: a Content-Encoding that does not match the bytes
  // (gzip that is not gzip), an aborted or truncated upload…
  const reason = req.headers["content-encoding"] !== undefined ? "its bytes do not match its Content-Encoding" : "it is incomplete or malformed";
  return { status: 400, code: "BAD_REQUEST", message: `The request body could not be read: ${reason}.` };
}
