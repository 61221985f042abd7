/**
 * The answers of the benchmark's baseline server (scripts/bench/baseline.ts and
 * scripts/bench/baseline-transfers.ts): the service's envelope (`success`, `data` or `errors`,
 * `meta` with the platform's `trace_id` or the credit core's `traceId`), written straight to a bare
 * `node:http` response, and the small request helpers both files share.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Decimal } from "decimal.js";

/** Decimals as the service computes them (60 significant digits, half-even). */
export const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_EVEN });

/** An error answer: HTTP status, error code, message. */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The service's 401 message for a request without credentials. */
export const MISSING = "Missing credentials: send x-api-key or Authorization: Bearer <token>.";

const platformMeta = (traceId: string): string => `{"timestamp":"${new Date().toISOString()}","version":"v1","trace_id":"${traceId}"}`;
const creditMeta = (traceId: string): string => `{"timestamp":"${new Date().toISOString()}","version":"v2","traceId":"${traceId}"}`;

function send(res: ServerResponse, status: number, body: string, traceId: string): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body), "x-trace-id": traceId });
  res.end(body);
}

/** A success envelope with `dataJson` (JSON text) as `data`; `credit` for the credit core's meta. */
export const ok = (res: ServerResponse, status: number, dataJson: string, traceId: string, credit = false): void =>
  send(res, status, `{"success":true,"data":${dataJson},"meta":${credit ? creditMeta(traceId) : platformMeta(traceId)}}`, traceId);

/** An error envelope of `error`; `credit` for the credit core's meta. */
export const refuse = (res: ServerResponse, error: Refusal, traceId: string, credit = false): void =>
  send(
    res,
    error.status,
    `{"success":false,"errors":[${JSON.stringify({ code: error.code, message: error.message })}],"meta":${credit ? creditMeta(traceId) : platformMeta(traceId)}}`,
    traceId,
  );

/** The first value of a header. */
export const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** The request's body parsed as JSON. */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
}
