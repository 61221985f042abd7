/**
 * One openapi-backend instance per surface (docs/decisions/surfaces-and-process.md): its router
 * matches the operationId and its validators check the request against the emitted document; the
 * surface's own dispatch (src/http/dispatch.ts) applies the security requirements, runs those
 * validators and calls the operation's handler. The requests themselves are answered by
 * src/http/surface-requests.ts: not-found, method-not-allowed, unauthorized, validation-failed and
 * not-implemented each have one special handler there.
 */
import type { Request, Response } from "express";
import { OpenAPIBackend, type Document } from "openapi-backend";
import type { Logger } from "pino";
import type { MikroORM } from "@mikro-orm/postgresql";
import type { Authenticator, PrincipalKind } from "../modules/identity/auth.js";
import { customizeAjv } from "./ajv.js";
import type { Surface } from "./envelope.js";
import type { BodyBudget } from "./body-budget.js";
import { installValidator } from "./openapi-compiled.js";
import { SurfaceRouter } from "./router.js";
import type { RateLimits } from "./rate-limits.js";
import { SurfaceRequests } from "./surface-requests.js";
import type { Call, HandlerMap } from "./types.js";

/**
 * Who may call an operation: principal kinds; `anyone` (the handler decides, e.g. Create Session);
 * or `signature`: no credential is read, and the handler authenticates the request by a signature
 * over its raw body (Receive Inbound PIN; docs/security.md "Inbound webhooks"). A `signature`
 * operation gets its body unparsed (`Call.rawBody`, at most `SIGNED_BODY_LIMIT_BYTES`) and no
 * request validation: its handler checks the signature first, then the body.
 */
export type Access = readonly PrincipalKind[] | "anyone" | "signature";

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
 * openapi-backend without its start-time check of the document against the OpenAPI 3.0
 * meta-schema (0.15 s of a 2.1 s start on a 2-core CI machine; docs/performance.md "What keeps the request path cheap"): the documents are build artefacts that CI
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
  /** Answers a request; `path` is relative to the surface's document (the platform's without `/api/v1`). */
  handle(req: Request, res: Response, traceId: string, path: string): Promise<void>;
}

/**
 * Builds and initialises a surface.
 * @throws Error at start when an operation has no handler and is not listed as not implemented, or
 *   a handler or access rule names an operation the document lacks (strict wiring).
 */
export async function buildSurface<Ops>(options: SurfaceOptions<Ops>): Promise<BuiltSurface> {
  // Ajv is compiled by installValidator below, once: init() compiles nothing (`validate: false`).
  const api = new CheckedInCiBackend({
    definition: options.definition,
    strict: true,
    validate: false,
    coerceTypes: true,
    quick: false,
  });
  await api.init();
  const router = new SurfaceRouter(api.router);
  // Tests (validateResponses) compile every request validator at start; production on first use.
  installValidator(api, {
    ajvOpts: { allErrors: true, strict: false },
    customizeAjv,
    coerceTypes: true,
    validateResponses: options.validateResponses,
    compileRequestValidatorsAtStart: options.validateResponses,
  });
  const documentOperations = checkWiring(options, api);
  const requests = new SurfaceRequests(options, api, router, documentOperations);
  for (const name of Object.keys((options.definition as { components?: { securitySchemes?: object } }).components?.securitySchemes ?? {})) {
    api.registerSecurityHandler(name, requests.securityHandler());
  }
  return {
    api,
    handle: (req, res, traceId, path) => requests.handle(req, res, traceId, path),
  };
}

/**
 * Checks the surface's wiring against its document: every operation has a handler or is listed as
 * not implemented (not both) and has an access rule; every handler, stub and access rule names an
 * operation of the document.
 * @returns the document's operation ids.
 * @throws Error naming the first mismatch.
 */
function checkWiring<Ops>(options: SurfaceOptions<Ops>, api: OpenAPIBackend): Set<string> {
  const { surface } = options;
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
  return documentOperations;
}
