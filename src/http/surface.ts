/**
 * One openapi-backend instance per surface (architecture.md): it matches the operationId,
 * resolves the caller through the security handlers, validates the request against the emitted
 * document, and calls the operation's handler. Not-found, method-not-allowed, unauthorized,
 * validation-failed and not-implemented each have one special handler here.
 */
import type { Request, Response } from "express";
import { OpenAPIBackend, type Context, type Document, type Operation } from "openapi-backend";
import type { Ajv, ErrorObject } from "ajv";
import { compileRouter, installValidator } from "./openapi-compiled.js";
import { markOperation } from "./observe.js";
import ajvFormats from "ajv-formats";
import type { Logger } from "pino";
import type { MikroORM } from "@mikro-orm/postgresql";
import { DomainError, clip, quote, type FieldProblem } from "../domain/errors.js";
import { isRealDate, isRealInstant } from "../domain/dates.js";
import type { AuthOutcome, Authenticator, PrincipalKind } from "../modules/identity/auth.js";
import { creditMeta, errorBody, platformMeta, type Surface } from "./envelope.js";
import { MAX_FIELD_ERRORS, renderError, renderValidation, type RenderedError } from "./errors.js";
import type { Call, HandlerMap, Reply } from "./types.js";
import type { RateLimits } from "./rate-limits.js";
import { bodyHeaderRefusal, hasBody, readJsonBody, type BodyBudget, type BodyRefusal } from "./json-body.js";
import { PATH_SEPARATOR, type NumericFields, type NumericKind } from "./json-numbers.js";

/** Who may call an operation: principal kinds, or `anyone` (the handler decides, e.g. Create Session). */
export type Access = readonly PrincipalKind[] | "anyone";

/** Per-request state passed through openapi-backend to the handlers. */
interface RequestState {
  req: Request;
  res: Response;
  traceId: string;
  /** The request's own EntityManager, forked on first use. */
  readonly em: ReturnType<MikroORM["em"]["fork"]>;
  auth?: Promise<AuthOutcome>;
  /** Declared integer fields of the body written with a fraction or exponent (422 once permission is checked). */
  integerProblems?: FieldProblem[];
  /** The body was read (or the request declared none). */
  bodyRead?: boolean;
}

/** How a surface is put together. `Ops` is the generated `operations` interface of its document. */
export interface SurfaceOptions<Ops> {
  surface: Surface;
  definition: Document;
  handlers: HandlerMap<Ops>;
  /** Operations of the contract that are not built yet: they answer 501 `NOT_IMPLEMENTED`. */
  notImplemented: readonly (keyof Ops & string)[];
  /** Who may call each operation; every operation must be listed. */
  access: { [K in keyof Ops]: Access };
  /** Extra check of a request's path scope (e.g. a customer session only on its own customer); throws DomainError FORBIDDEN. */
  scope?: (operationId: string, params: Record<string, string>, call: Call<unknown>) => void;
  orm: MikroORM;
  authenticator: Authenticator;
  logger: Logger;
  /** Compile the response validators, for the contract check of tests (src/http/contract-check.ts). */
  validateResponses: boolean;
  /** The rate limits (src/http/rate-limits.ts); none when absent. */
  limits?: RateLimits;
  /** Operations counted in the `codes` bucket, per their `user_id` path parameter (confirm, resend). */
  codeOperations?: readonly (keyof Ops & string)[];
  /** Largest request body accepted, bytes after decoding (`BODY_LIMIT_BYTES`); larger answers 413. */
  bodyLimitBytes: number;
  /** The bytes of bodies the process reads at once (`MAX_BODY_BYTES_IN_FLIGHT`), shared by both surfaces; none when absent. */
  bodyBudget?: BodyBudget;
}

/**
 * Converts ajv errors of openapi-backend's combined request object into field problems: one per
 * invalid field (the first rule it breaks), named by its dotted path within the body or parameters.
 * A stray key (`additionalProperties`) is the caller's text: the field names it clipped to its
 * first 32 characters and the message quotes it (`quote`), so a 300-character key is never echoed;
 * a stray query parameter is named as one. At most {@link MAX_FIELD_ERRORS} problems
 * (docs/security.md, "Paths, queries and validation answers").
 */
export function problemsFromAjv(errors: ErrorObject[]): FieldProblem[] {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const e of errors) {
    const segments = e.instancePath.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    const location = segments.shift();
    if (e.keyword === "required" && typeof e.params.missingProperty === "string") segments.push(e.params.missingProperty);
    const stray = e.keyword === "additionalProperties" && typeof e.params.additionalProperty === "string" ? e.params.additionalProperty : undefined;
    if (stray !== undefined) segments.push(clip(stray));
    const field = segments.length > 0 ? segments.join(".") : location === "requestBody" || e.keyword === "parse" ? "body" : (location ?? "request");
    if (e.keyword === "if" || e.keyword === "anyOf" || e.keyword === "oneOf") continue;
    const message =
      e.keyword === "required" ? `${field} is required.` :
      e.keyword === "enum" ? `${field} must be one of: ${(e.params.allowedValues as unknown[]).join(", ")}.` :
      e.keyword === "parse" ? `Malformed JSON body: ${e.message ?? ""}` :
      stray !== undefined && location === "query" ? `${quote(stray)} is not a query parameter of this operation.` :
      stray !== undefined && location === "headers" ? `${quote(stray)} is not a header of this operation.` :
      stray !== undefined ? `${quote(stray)} is not a field of ${segments.length > 1 ? segments.slice(0, -1).join(".") : "the request body"}.` :
      `${field} ${e.message ?? "is invalid"}.`;
    if (seen.has(field)) continue;
    seen.add(field);
    problems.push({ field, message });
    if (problems.length >= MAX_FIELD_ERRORS) break;
  }
  return problems.length > 0 ? problems : [{ field: "request", message: "The request is invalid." }];
}

/**
 * openapi-backend without its start-time check of the document against the OpenAPI 3.0
 * meta-schema (0.15 s of a 2.1 s start on a 2-core CI machine; issue 10): the documents are build artefacts that CI
 * checks before any start — Redocly recommended-strict (`npm run lint:openapi`) and this very check
 * of openapi-backend on both documents (tests/unit/openapi-documents.test.ts).
 */
class CheckedInCiBackend extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document;
  }
}

/** A built surface: its express-compatible request handler and its openapi-backend instance. */
export interface BuiltSurface {
  api: OpenAPIBackend;
  handle(req: Request, res: Response, traceId: string): Promise<void>;
}

/**
 * Builds and initialises a surface.
 * @throws Error at start when an operation has no handler and is not listed as not implemented, or
 *   a handler or access rule names an operation the document lacks (strict wiring).
 */
export async function buildSurface<Ops>(options: SurfaceOptions<Ops>): Promise<BuiltSurface> {
  const { surface, orm, authenticator, logger } = options;
  // Ajv is compiled by installValidator below, once: init() compiles nothing (`validate: false`).
  const api = new CheckedInCiBackend({
    definition: options.definition,
    strict: true,
    validate: false,
    coerceTypes: true,
    quick: false,
  });
  /** ajv-formats on every shared Ajv (CommonJS: its default export arrives as the module object under NodeNext). */
  const customizeAjv = (ajv: Ajv): Ajv => {
    (ajvFormats as unknown as { default: (a: Ajv) => void }).default(ajv);
    // Real days and instants only: no leap second, no year 0 (src/domain/dates.ts).
    ajv.addFormat("date", { type: "string", validate: isRealDate });
    ajv.addFormat("date-time", { type: "string", validate: isRealInstant });
    return ajv;
  };

  const meta = (traceId: string) => (surface === "platform" ? platformMeta(traceId) : creditMeta(traceId));

  /** Sends an error; a 401 first counts in the client address's `auth-failures` bucket. */
  const sendError = async (state: RequestState, rendered: RenderedError): Promise<void> => {
    if (rendered.status === 401 && options.limits) await options.limits.recordAuthFailure(clientAddress(state.req), state.res);
    if (rendered.unexpected !== undefined) {
      logger.error({ err: rendered.unexpected, traceId: state.traceId }, "unhandled error");
    }
    if (rendered.unavailable !== undefined) {
      logger.warn({ err: rendered.unavailable, traceId: state.traceId }, "database unavailable: answered 503");
    }
    if (rendered.headers) state.res.set(rendered.headers);
    // A large body left unread (the request stopped before it): close the connection instead of
    // letting Node read and discard the rest to keep it alive (docs/security.md, "Before authentication").
    if (!state.bodyRead && unreadBodyIsLarge(state.req)) state.res.setHeader("Connection", "close");
    state.res.status(rendered.status).json(errorBody(surface, state.traceId, rendered.errors));
  };

  const authenticate = (state: RequestState): Promise<AuthOutcome> => {
    state.auth ??= authenticator.authenticate(state.req.headers);
    return state.auth;
  };

  const respond = (state: RequestState, reply: Reply<unknown>): void => {
    const { res } = state;
    if (reply.status === 204) {
      res.status(204).end();
      return;
    }
    const body =
      "pagination" in reply && reply.pagination
        ? { success: true, data: reply.data, meta: { ...platformMeta(state.traceId), pagination: reply.pagination } }
        : { success: true, data: reply.data, meta: meta(state.traceId) };
    res.status(reply.status).json(body);
  };

  await api.init();
  compileRouter(api.router);
  // Tests (validateResponses) compile every request validator at start; production on first use.
  installValidator(api, {
    ajvOpts: { allErrors: true, strict: false },
    customizeAjv,
    coerceTypes: true,
    validateResponses: options.validateResponses,
    compileRequestValidatorsAtStart: options.validateResponses,
  });
  const documentOperations = new Set(api.getOperations().map((o) => o.operationId ?? ""));
  const implemented = Object.keys(options.handlers);
  const stubbed = new Set<string>(options.notImplemented);
  for (const id of [...implemented, ...stubbed, ...Object.keys(options.access)]) {
    if (!documentOperations.has(id)) throw new Error(`${surface}: '${id}' is not an operation of the document`);
  }
  for (const id of documentOperations) {
    if (!implemented.includes(id) && !stubbed.has(id)) throw new Error(`${surface}: operation '${id}' has no handler`);
    if (implemented.includes(id) && stubbed.has(id)) throw new Error(`${surface}: operation '${id}' is both implemented and listed as not implemented`);
    if (!(id in (options.access as object))) throw new Error(`${surface}: operation '${id}' has no access rule`);
  }

  /**
   * The call of operation `id`, once {@link admitCaller} has admitted its caller (before the body
   * was read): the path must be in the principal's scope, and a code operation counts in the
   * `codes` bucket. Runs before request validation results are answered, so a caller without
   * permission gets 403, never details of the request's validation.
   * @throws DomainError FORBIDDEN (403), RATE_LIMIT_EXCEEDED (429).
   */
  const authorize = async (id: string, c: Context, state: RequestState): Promise<Call<unknown>> => {
    const outcome = await authenticate(state);
    const principal = outcome.ok ? outcome.principal : null;
    const call: Call<unknown> = {
      operationId: id,
      params: { ...(c.request.params as Record<string, string>) } as never,
      query: { ...(c.request.query as object), ...((c.validation.coerced as { query?: object } | undefined)?.query ?? {}) } as never,
      body: c.request.requestBody as never,
      headers: state.req.headers,
      principal,
      get em() {
        return state.em;
      },
      traceId: state.traceId,
    };
    options.scope?.(id, call.params as Record<string, string>, call);
    if (principal && options.limits) {
      const userId = (call.params as Record<string, string>).user_id;
      if (userId !== undefined && codeOperations.has(id)) await options.limits.chargeCodes(userId, state.res);
    }
    return call;
  };

  /**
   * The checks that need no body, run before it is read (docs/security.md, "Before
   * authentication"): authentication (401; an operation open to anyone, Create Session, still
   * refuses a credential that was sent and failed instead of ignoring it), the principal's kind
   * (403) and the credential's rate limit (429). Answers and returns false when the request stops
   * here.
   */
  const admitCaller = async (operation: Operation, state: RequestState): Promise<boolean> => {
    const id = operation.operationId ?? "";
    markOperation(state.res, id, operation.path);
    const access = (options.access as Record<string, Access>)[id] as Access;
    const outcome = await authenticate(state);
    try {
      if (!outcome.ok && (access !== "anyone" || !outcome.missing)) throw new DomainError("UNAUTHORIZED", outcome.reason);
      const principal = outcome.ok ? outcome.principal : null;
      if (access !== "anyone" && principal && !access.includes(principal.kind)) {
        throw new DomainError("FORBIDDEN", "This credential is not allowed to call this operation.");
      }
      if (principal && options.limits) await options.limits.chargeCredential(principal, state.res);
    } catch (error) {
      await sendError(state, renderError(surface, error));
      return false;
    }
    return true;
  };

  const codeOperations = new Set<string>(options.codeOperations ?? []);
  const numericFields = new Map(api.getOperations().map((o) => [o.operationId ?? "", numericFieldsOf(o)] as const));
  /** A body refusal as the surface's error (its code on the platform, the status's code on the credit core). */
  const refusal = (r: BodyRefusal): RenderedError => renderError(surface, new DomainError(r.code, r.message, undefined, r.retryAfterS));
  const operationHandlers: Record<string, (c: Context, state: RequestState) => Promise<void>> = {};
  for (const id of documentOperations) {
    const handler = (options.handlers as Record<string, ((call: Call<unknown>) => Promise<Reply<unknown>>) | undefined>)[id];
    operationHandlers[id] = async (c, state) => {
      try {
        const call = await authorize(id, c, state);
        if (state.integerProblems && state.integerProblems.length > 0) {
          await sendError(state, renderValidation(surface, state.integerProblems));
          return;
        }
        if (!handler) {
          await sendError(state, renderError(surface, new DomainError("NOT_IMPLEMENTED", `Operation ${id} is part of the contract but not implemented yet.`)));
          return;
        }
        respond(state, await handler(call));
      } catch (error) {
        await sendError(state, renderError(surface, error));
      }
    };
  }

  api.register({
    ...operationHandlers,
    notFound: async (_c: Context, state: RequestState) => {
      await sendError(state, { status: 404, errors: [{ code: "NOT_FOUND", message: `No route for ${state.req.method} ${quote(state.req.originalUrl.split("?")[0] ?? "")}.` }] });
    },
    methodNotAllowed: async (_c: Context, state: RequestState) => {
      const allowed = api.router
        .getOperations()
        .filter((o) => api.router.matchOperation({ method: o.method, path: state.req.path, headers: {} }, false)?.operationId === o.operationId)
        .map((o) => o.method.toUpperCase());
      const get = allowed.indexOf("GET");
      if (get >= 0) allowed.splice(get + 1, 0, "HEAD");
      if (allowed.length > 0) state.res.setHeader("Allow", [...new Set(allowed)].join(", "));
      await sendError(state, { status: 405, errors: [{ code: "METHOD_NOT_ALLOWED", message: `Method ${state.req.method} is not allowed on ${quote(state.req.originalUrl.split("?")[0] ?? "")}.` }] });
    },
    unauthorizedHandler: async (c: Context, state: RequestState) => {
      markOperation(state.res, c.operation.operationId ?? "", c.operation.path);
      const outcome = await authenticate(state);
      const reason = outcome.ok ? "This credential is not accepted here." : outcome.reason;
      await sendError(state, { status: 401, errors: [{ code: "UNAUTHORIZED", message: reason }] });
    },
    validationFail: async (c: Context, state: RequestState) => {
      try {
        await authorize(c.operation.operationId ?? "", c, state);
      } catch (error) {
        await sendError(state, renderError(surface, error));
        return;
      }
      const integer = state.integerProblems ?? [];
      const named = new Set(integer.map((p) => p.field));
      const problems = [...integer, ...problemsFromAjv(c.validation.errors ?? []).filter((p) => !named.has(p.field))];
      await sendError(state, renderValidation(surface, problems));
    },
  });

  for (const name of Object.keys((options.definition as { components?: { securitySchemes?: object } }).components?.securitySchemes ?? {})) {
    api.registerSecurityHandler(name, async (_c: Context, state: RequestState) => (await authenticate(state)).ok);
  }

  return {
    api,
    async handle(req, res, traceId) {
      // The request's EntityManager is forked on first use: reads served by prepared statements
      // (authentication, balances, lists) never need one (issue 10).
      let em: RequestState["em"] | undefined;
      const state: RequestState = {
        req,
        res,
        traceId,
        get em() {
          return (em ??= orm.em.fork());
        },
      };
      if (options.limits) {
        try {
          await options.limits.admit(clientAddress(req), res);
        } catch (error) {
          await sendError(state, renderError(surface, error));
          return;
        }
      }
      const refused = bodyHeaderRefusal(req, options.bodyLimitBytes);
      if (refused) {
        await sendError(state, refusal(refused));
        return;
      }
      // HEAD is answered as GET; Node sends the headers without the body.
      const request = {
        method: req.method === "HEAD" ? "get" : req.method,
        path: req.path,
        query: req.query as Record<string, string>,
        headers: req.headers as Record<string, string>,
        body: undefined as unknown,
      };
      // Without a matching operation the answer is a 404 or 405, which needs neither caller nor body.
      const operation = api.router.matchOperation(request);
      if (operation) {
        if (!(await admitCaller(operation, state))) return;
        if (hasBody(req)) {
          state.bodyRead = true;
          const read = await readJsonBody(req, res, options.bodyLimitBytes, numericFields.get(operation.operationId ?? "") ?? NO_NUMBERS, options.bodyBudget);
          if ("status" in read) {
            await sendError(state, refusal(read));
            return;
          }
          request.body = read.body;
          state.integerProblems = read.integerProblems;
        }
      }
      await api.handleRequest(request, state);
    },
  };
}

/**
 * Largest body a request stopped before its body (401, 403, 404, 405, 413, 415, 429) may leave
 * unread on a kept-alive connection: Node drains it to read the next request. Above it, or for a
 * chunked body of unknown length, the answer closes the connection instead, so an anonymous sender
 * of 1 MiB bodies costs no more than its headers.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/** Whether the request's body, if left unread, is over {@link DRAIN_LIMIT_BYTES} or of unknown length. */
function unreadBodyIsLarge(req: Request): boolean {
  if (req.readableEnded) return false;
  const length = req.headers["content-length"];
  if (length !== undefined) return Number(length) > DRAIN_LIMIT_BYTES;
  return req.headers["transfer-encoding"] !== undefined;
}

/** No declared numeric field. */
const NO_NUMBERS: NumericFields = new Map();

/** JSON Schema of an (already dereferenced) document, as far as {@link numericFieldsOf} reads it. */
interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  allOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
}

/**
 * The numeric fields of an operation's JSON request body, by path (keys joined with
 * {@link PATH_SEPARATOR}), read from its (dereferenced) schema: `integer` and `number` properties of
 * the body object and of the objects it nests (arrays are not followed: no numeric field of either
 * document lies in one).
 */
export function numericFieldsOf(operation: Operation): NumericFields {
  const fields = new Map<string, NumericKind>();
  const schema = (operation.requestBody as { content?: Record<string, { schema?: SchemaNode }> } | undefined)?.content?.["application/json"]?.schema;
  const walk = (node: SchemaNode | undefined, path: string[], depth: number): void => {
    if (!node || depth > 8) return;
    for (const part of [...(node.allOf ?? []), ...(node.anyOf ?? []), ...(node.oneOf ?? [])]) walk(part, path, depth + 1);
    if ((node.type === "integer" || node.type === "number") && path.length > 0) {
      const key = path.join(PATH_SEPARATOR);
      if (fields.get(key) !== "integer") fields.set(key, node.type);
    }
    for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, [...path, name], depth + 1);
  };
  walk(schema, [], 0);
  return fields;
}

/** The client's address for the rate limits: `req.ip` (it follows express's `trust proxy`, `TRUST_PROXY`). */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? "unknown";
}
