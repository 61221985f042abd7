/**
 * The request side of a surface (src/http/surface.ts): each request is admitted before its body is
 * read (docs/security.md, "Before authentication"), its body read within the limits, and every
 * answer — an operation's, not-found, method-not-allowed, unauthorized, a validation failure —
 * sent in the surface's envelope.
 */
import type { Request, Response } from "express";
import type { Context, OpenAPIBackend, Operation } from "openapi-backend";
import type { MikroORM } from "@mikro-orm/postgresql";
import { DomainError, FailedGuess, quote, type FieldProblem } from "../domain/errors.js";
import type { AuthOutcome, Principal } from "../modules/identity/auth.js";
import { problemsFromAjv } from "./ajv.js";
import { creditMeta, errorBody, platformMeta } from "./envelope.js";
import { renderCode, renderError, renderValidation, type RenderedError } from "./errors.js";
import { bodyHeaderRefusal, discardUnreadBody, hasBody, readJsonBody, type BodyRefusal } from "./json-body.js";
import { readSignedCall } from "./signed-call.js";
import { credentialKey } from "./rate-limits.js";
import { NO_BODY_FACTS, bodyFactsOf, type BodyFacts } from "./body-schema.js";
import { OperationDispatch, type StateHandler as DispatchedHandler } from "./dispatch.js";
import { markOperation } from "./observe.js";
import type { SurfaceRouter } from "./router.js";
import { sendJson, sendSuccess } from "./send-json.js";
import type { Access, SurfaceOptions } from "./surface.js";
import type { Call, Reply } from "./types.js";

/** Per-request state passed through openapi-backend to the handlers. */
export interface RequestState {
  req: Request;
  res: Response;
  traceId: string;
  /** The request's path relative to the surface's document. */
  path: string;
  /** The request's own EntityManager, forked on first use. */
  readonly em: ReturnType<MikroORM["em"]["fork"]>;
  auth?: Promise<AuthOutcome>;
  /** A handler refused a secret of the body that matches no credential (counted as a failed guess). */
  guessed?: boolean;
  /** Fields of the body answered 422 once permission is checked: integers written with a fraction or exponent, strings holding a NUL (src/http/json-body.ts `readJsonBody`). */
  bodyProblems?: FieldProblem[];
}

/** A handler of openapi-backend as the surfaces register them. */
type StateHandler = DispatchedHandler<RequestState>;

/** Answers the requests of one initialised surface; see the module comment. */
export class SurfaceRequests<Ops> {
  private readonly codeOperations: Set<string>;
  /** What the body reader needs of each operation, by operation id. */
  private readonly bodyFacts: Map<string, BodyFacts>;
  private readonly dispatch: OperationDispatch<RequestState>;
  /** The operations authenticated by a signature over their raw body (access `signature`): {@link handleSigned}. */
  private readonly signed: ReadonlySet<string>;

  /**
   * Registers the operations' handlers (each operation of `operationIds`) and the special handlers
   * with `api`; requests are matched by `router` (src/http/router.ts), built on `api`'s document.
   */
  constructor(
    private readonly options: SurfaceOptions<Ops>,
    private readonly api: OpenAPIBackend,
    private readonly router: SurfaceRouter,
    operationIds: Iterable<string>,
  ) {
    this.codeOperations = new Set<string>(options.codeOperations ?? []);
    this.bodyFacts = new Map(api.getOperations().map((o) => [o.operationId ?? "", bodyFactsOf(o)] as const));
    this.signed = new Set(Object.entries(options.access as Record<string, Access>).filter(([, access]) => access === "signature").map(([id]) => id));
    const operations = this.operationHandlers(operationIds);
    const special = this.specialHandlers();
    api.register({ ...operations, ...special });
    this.dispatch = new OperationDispatch(api, router, {
      operations,
      unauthorized: special.unauthorizedHandler,
      validationFail: special.validationFail,
      authenticated: async (state) => (await this.authenticate(state)).ok,
    });
  }

  /** The handler of every operation of `operationIds`: its registered handler, else 501 `NOT_IMPLEMENTED`. */
  private operationHandlers(operationIds: Iterable<string>): Record<string, StateHandler> {
    const handlers: Record<string, StateHandler> = {};
    for (const id of operationIds) {
      const handler = (this.options.handlers as Record<string, ((call: Call<unknown>) => Promise<Reply<unknown>>) | undefined>)[id];
      handlers[id] = async (c, state) => {
        try {
          const call = await this.authorize(id, c, state);
          if (state.bodyProblems && state.bodyProblems.length > 0) {
            await this.sendError(state, renderValidation(this.options.surface, state.bodyProblems));
            return;
          }
          if (!handler) {
            await this.sendError(state, renderError(this.options.surface, new DomainError("NOT_IMPLEMENTED", `Operation ${id} is part of the contract but not implemented yet.`)));
            return;
          }
          this.respond(state, await handler(call));
        } catch (error) {
          if (error instanceof FailedGuess) state.guessed = true;
          await this.sendError(state, renderError(this.options.surface, error));
        }
      };
    }
    return handlers;
  }

  /** openapi-backend's special handlers: not found (404), method not allowed (405), unauthorized (401), validation failed (422). */
  private specialHandlers(): Record<"notFound" | "methodNotAllowed" | "unauthorizedHandler" | "validationFail", StateHandler> {
    const { surface } = this.options;
    return {
      notFound: async (_c, state) => this.notFound(state),
      methodNotAllowed: async (_c, state) => {
        const route = this.router.match(state.req.method === "HEAD" ? "get" : state.req.method, state.path);
        await this.methodNotAllowed(state, "allowed" in route ? route.allowed : []);
      },
      unauthorizedHandler: async (c, state) => {
        markOperation(state.res, c.operation.operationId ?? "", c.operation.path);
        const outcome = await this.authenticate(state);
        const reason = outcome.ok ? "This credential is not accepted here." : outcome.reason;
        await this.sendError(state, { status: 401, errors: [{ code: "UNAUTHORIZED", message: reason }] });
      },
      validationFail: async (c, state) => {
        try {
          await this.authorize(c.operation.operationId ?? "", c, state);
        } catch (error) {
          await this.sendError(state, renderError(surface, error));
          return;
        }
        const fromBody = state.bodyProblems ?? [];
        const named = new Set(fromBody.map((p) => p.field));
        const problems = [...fromBody, ...problemsFromAjv(c.validation.errors ?? []).filter((p) => !named.has(p.field))];
        await this.sendError(state, renderValidation(surface, problems));
      },
    };
  }

  /** 404 `NOT_FOUND`: no operation has the request's path. */
  private async notFound(state: RequestState): Promise<void> {
    await this.sendError(state, { status: 404, errors: [{ code: "NOT_FOUND", message: `No route for ${state.req.method} ${quote(state.req.originalUrl.split("?")[0] ?? "")}.` }] });
  }

  /** 405 `METHOD_NOT_ALLOWED` with `Allow`: the `allowed` methods (upper case; HEAD beside GET). */
  private async methodNotAllowed(state: RequestState, allowed: string[]): Promise<void> {
    const methods = [...allowed];
    const get = methods.indexOf("GET");
    if (get >= 0) methods.splice(get + 1, 0, "HEAD");
    if (methods.length > 0) state.res.setHeader("Allow", [...new Set(methods)].join(", "));
    await this.sendError(state, { status: 405, errors: [{ code: "METHOD_NOT_ALLOWED", message: `Method ${state.req.method} is not allowed on ${quote(state.req.originalUrl.split("?")[0] ?? "")}.` }] });
  }

  /** The security handler of every scheme of the document: whether the request's credential authenticates. */
  securityHandler(): (c: Context, state: RequestState) => Promise<boolean> {
    return async (_c, state) => (await this.authenticate(state)).ok;
  }

  /**
   * Answers one request: the address's rate limit (429), the body's declared size and type (413,
   * 415), then, for a request matching an operation, the caller's admission before the body is read,
   * the body itself, then the operation's security, validation and handler (src/http/dispatch.ts).
   */
  async handle(req: Request, res: Response, traceId: string, path: string): Promise<void> {
    const { limits, bodyLimitBytes, bodyBudget, orm } = this.options;
    // The request's EntityManager is forked on first use: reads served by prepared statements
    // (authentication, balances, lists) never need one (docs/performance.md "What keeps the request path cheap").
    let em: RequestState["em"] | undefined;
    const state: RequestState = {
      req,
      res,
      traceId,
      path,
      get em() {
        return (em ??= orm.em.fork());
      },
    };
    if (limits) {
      try {
        await limits.admit(clientAddress(req), res, () => this.options.authenticator.knownCredential(req.headers));
      } catch (error) {
        await this.sendError(state, renderError(this.options.surface, error));
        return;
      }
    }
    const refused = bodyHeaderRefusal(req, bodyLimitBytes);
    if (refused) {
      await this.sendError(state, this.refusal(refused));
      return;
    }
    // HEAD is answered as GET; Node sends the headers without the body.
    const request = {
      method: req.method === "HEAD" ? "get" : req.method,
      path,
      query: req.query as Record<string, string>,
      headers: req.headers as Record<string, string>,
      body: undefined as unknown,
    };
    // Without a matching operation the answer is a 404 or 405, which needs neither caller nor body.
    const route = this.router.match(request.method, path);
    if ("notFound" in route) return this.notFound(state);
    if ("allowed" in route) return this.methodNotAllowed(state, route.allowed);
    const { operation } = route;
    if (this.signed.has(operation.operationId ?? "")) return this.handleSigned(operation, state);
    const principal = await this.admitCaller(operation, state);
    if (principal === false) return;
    if (hasBody(req)) {
      const address = `address:${clientAddress(req)}`;
      const read = await readJsonBody(req, res, {
        ...(this.bodyFacts.get(operation.operationId ?? "") ?? NO_BODY_FACTS),
        limitBytes: bodyLimitBytes,
        budget: bodyBudget,
        shareKeys: principal ? [credentialKey(principal), address] : [address],
      });
      if ("status" in read) {
        await this.sendError(state, this.refusal(read), read.close);
        return;
      }
      request.body = read.body;
      state.bodyProblems = read.problems;
    }
    await this.dispatch.dispatch(operation, request, state);
  }

  /**
   * Answers an operation authenticated by a signature over its raw body (access `signature`):
   * no credential is read or charged (the address's limits applied on arrival); the bytes, read
   * by src/http/signed-call.ts within the address's share of the body budget, go to the handler
   * unvalidated, which verifies them, then parses and checks them. The signature's 401 is not a
   * failed guess (docs/security.md "Inbound webhooks").
   */
  private async handleSigned(operation: Operation, state: RequestState): Promise<void> {
    const id = operation.operationId ?? "";
    markOperation(state.res, id, operation.path);
    const { bodyLimitBytes, bodyBudget, surface, handlers } = this.options;
    const params = this.router.paramsOf(operation, state.path) ?? {};
    const call = await readSignedCall({ state, bodyLimitBytes, bodyBudget, address: clientAddress(state.req) }, id, params);
    if ("status" in call) return this.sendError(state, this.refusal(call), call.close);
    try {
      const handler = (handlers as Record<string, ((call: Call<unknown>) => Promise<Reply<unknown>>) | undefined>)[id];
      if (!handler) throw new DomainError("NOT_IMPLEMENTED", `Operation ${id} is part of the contract but not implemented yet.`);
      this.respond(state, await handler(call));
    } catch (error) {
      await this.sendError(state, renderError(surface, error));
    }
  }

  /**
   * Sends an error; a 401 for a guessed secret first counts in the client address's
   * `auth-failures` bucket (docs/security.md "Failed authentications"). With
   * `close`, or when a large body is left unread, the answer closes the connection.
   */
  private async sendError(state: RequestState, rendered: RenderedError, close = false): Promise<void> {
    const { limits, logger, surface } = this.options;
    if (rendered.status === 401 && limits && (await this.wasGuess(state))) await limits.recordAuthFailure(clientAddress(state.req), state.res);
    if (rendered.unexpected !== undefined) {
      logger.error({ err: rendered.unexpected, traceId: state.traceId }, "unhandled error");
    }
    if (rendered.unavailable !== undefined) {
      logger.warn({ err: rendered.unavailable, traceId: state.traceId }, "database unavailable: answered 503");
    }
    if (rendered.headers) state.res.set(rendered.headers);
    // A large body left unread (the request stopped before it, or its read was refused or cut
    // short): close the connection instead of letting Node read and discard the rest to keep it
    // alive (docs/security.md, "Before authentication").
    if ((close && !state.req.readableEnded) || unreadBodyIsLarge(state.req)) {
      state.res.setHeader("Connection", "close");
      discardUnreadBody(state.req);
    }
    sendJson(state.res, rendered.status, errorBody(surface, state.traceId, rendered.errors));
  }

  /** A body refusal as the surface's error (its code on the platform, the status's code on the credit core). */
  private refusal(r: BodyRefusal): RenderedError {
    return renderError(this.options.surface, new DomainError(r.code, r.message, undefined, r.retryAfterS));
  }

  /** Whether the request's authentication failed on a secret that matches no credential. */
  private async wasGuess(state: RequestState): Promise<boolean> {
    if (state.guessed) return true;
    if (!state.auth) return false;
    const outcome = await state.auth.catch(() => null);
    return outcome !== null && !outcome.ok && outcome.guess === true;
  }

  /** The request's authentication, computed once. */
  private authenticate(state: RequestState): Promise<AuthOutcome> {
    state.auth ??= this.options.authenticator.authenticate(state.req.headers);
    return state.auth;
  }

  /**
   * Sends a handler's reply in the surface's success envelope (`meta.pagination` for a platform
   * list); 204 without a body; an XML document (`xml`) as itself, `application/xml`.
   */
  private respond(state: RequestState, reply: Reply<unknown>): void {
    const { res } = state;
    if (reply.status === 204) {
      res.status(204).end();
      return;
    }
    if ("xml" in reply) {
      res.status(reply.status).setHeader("Content-Type", "application/xml; charset=utf-8");
      res.end(reply.xml);
      return;
    }
    const meta =
      "pagination" in reply && reply.pagination
        ? { ...platformMeta(state.traceId), pagination: reply.pagination }
        : this.options.surface === "platform"
          ? platformMeta(state.traceId)
          : creditMeta(state.traceId);
    sendSuccess(res, reply.status, reply.data, meta);
  }

  /**
   * The call of operation `id`, once {@link admitCaller} has admitted its caller (before the body
   * was read): the path must be in the principal's scope, and a code operation counts in the
   * `codes` bucket. Runs before request validation results are answered, so a caller without
   * permission gets 403, never details of the request's validation.
   * @throws DomainError FORBIDDEN (403), RATE_LIMIT_EXCEEDED (429).
   */
  private async authorize(id: string, c: Context, state: RequestState): Promise<Call<unknown>> {
    const outcome = await this.authenticate(state);
    const principal = outcome.ok ? outcome.principal : null;
    const call: Call<unknown> = {
      operationId: id,
      params: { ...(c.request.params as Record<string, string>) } as never,
      query: queryOf(c) as never,
      body: c.request.requestBody as never,
      headers: state.req.headers,
      principal,
      get em() {
        return state.em;
      },
      traceId: state.traceId,
    };
    this.options.scope?.(id, call.params as Record<string, string>, call);
    if (principal && this.options.limits) {
      const userId = (call.params as Record<string, string>).user_id;
      if (userId !== undefined && this.codeOperations.has(id)) await this.options.limits.chargeCodes(userId, state.res);
    }
    return call;
  }

  /**
   * The checks that need no body, run before it is read (docs/security.md, "Before
   * authentication"): authentication (401; an operation open to anyone, Create Session, still
   * refuses a credential that was sent and failed instead of ignoring it), the principal's kind
   * (403) and the credential's rate limit (429). Answers and returns false when the request stops
   * here; otherwise the principal (null for a request without one to an operation open to anyone).
   */
  private async admitCaller(operation: Operation, state: RequestState): Promise<Principal | null | false> {
    const id = operation.operationId ?? "";
    markOperation(state.res, id, operation.path);
    const access = (this.options.access as Record<string, Access>)[id] as Access;
    const outcome = await this.authenticate(state);
    const principal = outcome.ok ? outcome.principal : null;
    const refusal = !outcome.ok
      ? access !== "anyone" || !outcome.missing ? renderCode(this.options.surface, "UNAUTHORIZED", outcome.reason) : undefined
      : access !== "anyone" && !access.includes(outcome.principal.kind)
        ? renderCode(this.options.surface, "FORBIDDEN", "This credential is not allowed to call this operation.")
        : undefined;
    if (refusal) {
      await this.sendError(state, refusal);
      return false;
    }
    try {
      if (principal && this.options.limits) await this.options.limits.chargeCredential(principal, state.res);
    } catch (error) {
      await this.sendError(state, renderError(this.options.surface, error));
      return false;
    }
    return principal;
  }
}

/**
 * Largest body a request stopped before its body (401, 403, 404, 405, 413, 415, 429, and 503 when
 * the body budget is full) or during it may leave unread on a kept-alive connection: Node drains
 * it to read the next request. Above it, or for a chunked body of unknown length, the answer
 * closes the connection instead and what still arrives is freed chunk by chunk
 * (`discardUnreadBody`), so an anonymous sender of 1 MiB bodies costs no more than its headers.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/** Whether the request's body, if left unread, is over {@link DRAIN_LIMIT_BYTES} or of unknown length. */
function unreadBodyIsLarge(req: Request): boolean {
  if (req.readableEnded) return false;
  const length = req.headers["content-length"];
  if (length !== undefined) return Number(length) > DRAIN_LIMIT_BYTES;
  return req.headers["transfer-encoding"] !== undefined;
}

/** The handler's query: the request's, with the values validation coerced (the same object after the surfaces' own dispatch). */
function queryOf(c: Context): object {
  const query = c.request.query as object;
  const coerced = (c.validation.coerced as { query?: object } | undefined)?.query;
  return coerced === undefined || coerced === query ? { ...query } : { ...query, ...coerced };
}

/** The client's address for the rate limits: `req.ip` (it follows express's `trust proxy`, `TRUST_PROXY`). */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? "unknown";
}
