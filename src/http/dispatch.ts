/**
 * The dispatch of a request already matched to an operation (docs/performance.md "What keeps the
 * request path cheap"): the steps of openapi-backend's `handleRequest` after routing — security
 * requirements, request validation with type coercion, the operation's handler — without the
 * per-request work it does around them. `handleRequest` parses the request three times (before
 * routing, after it, and again inside validation), each time lower-casing the headers and deep-cloning
 * the query with lodash, matches the operation twice more, and copies the request for the coerced
 * result. Here the request is parsed once, from what express already parsed, and the precompiled
 * validators of the operation are called directly.
 *
 * The answers are openapi-backend's: the same security rule (one satisfied requirement object
 * suffices; an empty one needs no credential), the same validators over the same
 * `{ path, query, header, cookie, requestBody }` object, the same coerced query handed on. A
 * request this does not mirror exactly — one with cookies, an operation whose query
 * openapi-backend parses in its own way — goes through `handleRequest` itself, with the body the
 * surface already parsed and checked (always an object or array, never text to parse again).
 */
import type { Context, OpenAPIBackend, Operation, Request as OpenApiRequest } from "openapi-backend";
import type { ErrorObject } from "ajv";
import type { SurfaceRouter } from "./router.js";

/** A handler as the surfaces register them with openapi-backend: its context, then the request's state. */
export type StateHandler<State> = (c: Context, state: State) => Promise<void>;

/** What {@link OperationDispatch} calls. */
export interface DispatchHandlers<State> {
  /** Each operation's handler, by operation id. */
  operations: Record<string, StateHandler<State>>;
  /** Called when no security requirement of the operation is satisfied. */
  unauthorized: StateHandler<State>;
  /** Called when the request fails validation (`c.validation.errors`). */
  validationFail: StateHandler<State>;
  /** Whether the request's credential authenticates (the security handler of every scheme). */
  authenticated(state: State): Promise<boolean>;
}

/** What is read once per operation. */
interface Prepared {
  /** Path or header parameters declared with another type than string: validation may coerce them, so it gets copies. */
  coercesPath: boolean;
  coercesHeaders: boolean;
  /** Query parameters declared as arrays: a single value is wrapped, as openapi-backend does. */
  arrayQuery: ReadonlySet<string>;
  /** The operation has security requirements. */
  secured: boolean;
  /** One of its requirement objects is empty: a request without credentials satisfies it. */
  open: boolean;
}

/** Dispatches matched requests of one surface; see the module comment. */
export class OperationDispatch<State> {
  private readonly prepared = new Map<Operation, Prepared>();

  constructor(
    private readonly api: OpenAPIBackend,
    private readonly router: SurfaceRouter,
    private readonly handlers: DispatchHandlers<State>,
  ) {
    for (const operation of router.operations) {
      const requirements = operation.security ?? [];
      const arrayQuery = new Set<string>();
      const coerced = { path: false, header: false };
      for (const p of operation.parameters ?? []) {
        if ("$ref" in p) continue;
        const type = (p.schema as { type?: string } | undefined)?.type;
        if (p.in === "query" && type === "array") arrayQuery.add(p.name);
        if ((p.in === "path" || p.in === "header") && type !== "string") coerced[p.in] = true;
      }
      this.prepared.set(operation, {
        coercesPath: coerced.path,
        coercesHeaders: coerced.header,
        arrayQuery,
        secured: requirements.length > 0,
        open: requirements.some((r) => Object.keys(r).length === 0),
      });
    }
  }

  /**
   * Runs `request` (method, path, express's parsed query and headers, the parsed JSON body) on
   * `operation`, which the surface's router (src/http/router.ts) matched.
   */
  async dispatch(operation: Operation, request: OpenApiRequest, state: State): Promise<void> {
    const prepared = this.prepared.get(operation);
    const params = this.router.paramsOf(operation, request.path);
    const body = request.body as unknown;
    // The body was parsed and checked by the surface (src/http/json-body.ts `readJsonBody`): an
    // object or array, or undefined. Anything else is a defect upstream, never handed on to a
    // parser that would read it again without those checks.
    if (body !== undefined && (body === null || typeof body !== "object")) throw new Error("a request body must reach dispatch parsed");
    const plain = typeof request.query !== "string" && request.headers.cookie === undefined;
    if (!prepared || !params || !plain) {
      await this.api.handleRequest(request, state);
      return;
    }
    const query = copyQuery(request.query, prepared.arrayQuery);
    const c = {
      api: this.api,
      operation,
      request: { method: request.method.toLowerCase(), path: request.path, headers: request.headers, query, params, cookies: {}, requestBody: body, body },
      security: {},
      validation: { valid: true, errors: null },
      response: undefined,
    } as Context;
    if (prepared.secured) {
      const authorized = prepared.open || (await this.handlers.authenticated(state));
      c.security = { authorized };
      if (!authorized) return this.handlers.unauthorized(c, state);
    }
    const validation = this.validate(operation, prepared, c.request, request);
    c.validation = validation;
    if (validation.errors) return this.handlers.validationFail(c, state);
    const handler = this.handlers.operations[operation.operationId ?? ""];
    if (!handler) throw new Error(`no handler registered for ${operation.operationId ?? "?"}`);
    return handler(c, state);
  }

  /**
   * openapi-backend's `validateRequest` on the parsed request: its validators, coercing
   * `parsed.query` in place; the path parameters and headers are handed to them as copies when
   * the operation declares one that is not a string (the handlers see them as sent).
   */
  private validate(operation: Operation, prepared: Prepared, parsed: Context["request"], request: OpenApiRequest): Context["validation"] {
    const validators = this.api.validator.getRequestValidatorsForOperation(operation.operationId ?? "") ?? [];
    const parameters: Record<string, unknown> = {
      path: prepared.coercesPath ? { ...parsed.params } : parsed.params,
      query: parsed.query,
      header: prepared.coercesHeaders ? { ...parsed.headers } : parsed.headers,
      cookie: parsed.cookies,
    };
    const contentType = request.headers["content-type"];
    const mediaType = String((Array.isArray(contentType) ? contentType[0] : contentType) ?? "").split(";")[0]?.trim().toLowerCase();
    if (typeof parsed.requestBody === "object" || mediaType === "application/json") parameters.requestBody = parsed.requestBody;
    let errors: ErrorObject[] | null = null;
    for (const validate of validators) {
      validate(parameters);
      if (validate.errors) (errors ??= []).push(...validate.errors);
    }
    return { valid: errors === null, errors, coerced: { query: parsed.query, params: parsed.params } };
  }
}

/** The request's query as openapi-backend hands it on: a copy (coercion writes into it), declared arrays wrapped. */
function copyQuery(query: OpenApiRequest["query"], arrayQuery: ReadonlySet<string>): Record<string, string | string[]> {
  const copy: Record<string, string | string[]> = {};
  if (query === undefined || typeof query === "string") return copy; // a string query goes through handleRequest
  for (const name of Object.keys(query)) {
    const value = query[name] as string | string[];
    copy[name] = Array.isArray(value) ? [...value] : arrayQuery.has(name) ? [value] : value;
  }
  return copy;
}
