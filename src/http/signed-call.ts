/**
 * The call of an operation authenticated by a signature over its raw body (access `signature`,
 * src/http/surface.ts; docs/security.md "Inbound webhooks"), as src/http/surface-requests.ts
 * `handleSigned` builds it: no credential, no request validation, the body's bytes unparsed.
 */
import type { Request, Response } from "express";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { BodyBudget } from "./body-budget.js";
import { readRawBody, type BodyRefusal } from "./json-body.js";
import type { Call } from "./types.js";

/**
 * Largest body of an operation authenticated by a signature over its raw body: 8 KiB. A PIN
 * notification is under 100 bytes; a larger body is refused with 413 before any signature is
 * computed.
 */
export const SIGNED_BODY_LIMIT_BYTES = 8 * 1024;

/** The request a signed call is read from, and what it takes of the surface. */
export interface SignedRequest {
  /** The request's state (src/http/surface-requests.ts `RequestState`): its EntityManager is forked on first use. */
  state: { req: Request; res: Response; traceId: string; readonly em: EntityManager };
  /** The surface's body limit (`BODY_LIMIT_BYTES`): the smaller of it and {@link SIGNED_BODY_LIMIT_BYTES} applies. */
  bodyLimitBytes: number;
  /** The process's body budget, if any. */
  bodyBudget?: BodyBudget;
  /** The client's address: the body counts against the address's share of the budget. */
  address: string;
}

/**
 * Reads the body's bytes (src/http/json-body.ts `readRawBody`: at most
 * {@link SIGNED_BODY_LIMIT_BYTES}, within the address's share of the budget) and builds the call of
 * operation `operationId` with its path `params`: `rawBody` set, `body` and `query` empty,
 * `principal` null (the handler authenticates the bytes).
 * @returns the call, or the body's refusal (413 over the limit, 429 or 503 from the budget, 415,
 *   400 for a body that could not be read).
 */
export async function readSignedCall(request: SignedRequest, operationId: string, params: Record<string, string>): Promise<Call<unknown> | BodyRefusal> {
  const { state } = request;
  const read = await readRawBody(state.req, state.res, {
    limitBytes: Math.min(SIGNED_BODY_LIMIT_BYTES, request.bodyLimitBytes),
    budget: request.bodyBudget,
    shareKeys: [`address:${request.address}`],
  });
  if ("status" in read) return read;
  return {
    operationId,
    params: params as never,
    query: {} as never,
    body: undefined as never,
    rawBody: read.bytes,
    headers: state.req.headers,
    principal: null,
    get em() {
      return state.em;
    },
    traceId: state.traceId,
  };
}
