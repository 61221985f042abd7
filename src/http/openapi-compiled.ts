/**
 * openapi-backend, compiled once (docs/performance.md "What keeps the request path cheap"). openapi-backend 5.21 rebuilds
 * its flat operation list (lodash over the whole document) and a `RegExp` per path template on every
 * `matchOperation` call, and at `init()` compiles every request, response and response-header
 * validator, each with a fresh Ajv instance (~2.2 s at start for the two documents). Here:
 *
 * - the operation list is built once and the path templates compiled once ({@link compileRouter}),
 *   for matching and for reading the path parameters;
 *   matching keeps openapi-backend's rules (exact path first, then templates by specificity, 405
 *   when a template matches the path but not the method);
 * - each request validator is compiled once — at start in tests, on its operation's first request
 *   in production — response validators only when responses are validated (tests), and all of
 *   them share one Ajv instance per option set
 *   ({@link installValidator}).
 */
import { OpenAPIValidator, type OpenAPIBackend, type OpenAPIRouter, type Operation, type Request as OpenApiRequest, type ValidationContext } from "openapi-backend";
import type { Ajv, Options as AjvOptions } from "ajv";

/** openapi-backend's path template → pattern (router.js `pathTemplateToPattern`): `{x}` matches one segment. */
function templatePattern(path: string): RegExp {
  const literal = path
    .replace(/\{[^}]+\}/g, "\0")
    .split("\0")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("[^/]+");
  return new RegExp(`^${literal}$`);
}

/**
 * Replaces `router.getOperations` with the list built once and `router.matchOperation` with a
 * matcher over precompiled path patterns. The document must not change afterwards (it does not:
 * it is the emitted contract, loaded once). Same answers as openapi-backend's matcher, including its
 * `404-notFound` / `405-methodNotAllowed` errors in strict mode. The router's `apiRoot` must be `/`.
 */
export function compileRouter(router: OpenAPIRouter): CompiledParams {
  const operations = router.getOperations();
  const exact = new Map<string, Operation>();
  for (const op of operations) {
    const key = `${op.method} ${op.path}`;
    if (!exact.has(key)) exact.set(key, op);
  }
  const specificity = (path: string): number => path.replace(/\{.*?\}/g, "").length;
  // A stable sort, as lodash's orderBy: equally specific templates keep the document's order.
  const templates = operations
    .map((op, index) => ({ op, index, pattern: templatePattern(op.path), specificity: specificity(op.path) }))
    .sort((a, b) => b.specificity - a.specificity || a.index - b.index);

  router.getOperations = () => operations;
  function matchOperation(req: OpenApiRequest): Operation | undefined;
  function matchOperation(req: OpenApiRequest, strict: boolean): Operation;
  function matchOperation(req: OpenApiRequest, strict?: boolean): Operation | undefined {
    const { path, method } = router.normalizeRequest(req);
    const normalized = router.normalizePath(path);
    const found = exact.get(`${method} ${normalized}`);
    if (found) return found;
    let pathMatched = false;
    for (const t of templates) {
      if (!t.pattern.test(normalized)) continue;
      pathMatched = true;
      if (t.op.method === method) return t.op;
    }
    if (!strict) return undefined;
    throw new Error(pathMatched ? "405-methodNotAllowed: this method is not registered for the route" : "404-notFound: no route matches request");
  }
  router.matchOperation = matchOperation;
  return compilePathParams(router, operations);
}

/**
 * The path parameters of a request already matched to `operation`, read through the pattern
 * compiled once for it and decoded as bath-es5 decodes them; `undefined` for an operation whose
 * requests openapi-backend must parse whole (a query parameter it re-splits or parses as JSON).
 */
export type CompiledParams = (operation: Operation, path: string) => Record<string, string> | undefined;

/** bath-es5's pattern of a path template (openapi-backend's path parameters): `{x}` captures one segment, possibly empty. */
function paramsPattern(path: string): { names: string[]; pattern: RegExp } {
  const names = [...path.matchAll(/\{([A-Za-z0-9_-]+)\}/g)].map((m) => m[1] as string);
  return { names, pattern: new RegExp(`^${path.replace(/\{[A-Za-z0-9_-]+\}/g, "([^\\/]*)")}$`) };
}

/**
 * Replaces `router.parseRequest`, which compiles the operation's path template into a pattern on
 * every request (bath-es5), with one that reads the path parameters through a pattern compiled once
 * per operation, decoded as bath-es5 decodes them. Headers, query, cookies and body are parsed by
 * openapi-backend's own code; an operation with a query parameter openapi-backend re-splits
 * (`explode: false`) or parses as JSON (`content`) goes through its parser whole (the documents
 * have none today).
 */
function compilePathParams(router: OpenAPIRouter, operations: Operation[]): CompiledParams {
  const original = router.parseRequest.bind(router);
  const compiled = new Map<Operation, { names: string[]; pattern: RegExp }>();
  for (const op of operations) {
    const styled = (op.parameters ?? []).some((p) => !("$ref" in p) && p.in === "query" && (p.explode === false || p.content?.["application/json"] !== undefined));
    if (!styled) compiled.set(op, paramsPattern(op.path));
  }
  const paramsOf: CompiledParams = (operation, path) => {
    const own = compiled.get(operation);
    if (!own) return undefined;
    const match = own.pattern.exec(router.normalizePath(path));
    const params: Record<string, string> = {};
    if (match) own.names.forEach((name, i) => (params[name] = decodeURIComponent(match[i + 1] as string)));
    return params;
  };
  router.parseRequest = (req, operation) => {
    const params = operation ? paramsOf(operation, router.normalizeRequest(req).path) : undefined;
    if (!operation || !params) return original(req, operation);
    return { ...original(req), params };
  };
  return paramsOf;
}

/** An {@link OpenAPIValidator} whose validators share one Ajv instance per set of Ajv options. */
class SharedAjvValidator extends OpenAPIValidator {
  private readonly shared = new Map<string, Ajv>();

  override getAjv(validationContext: ValidationContext, opts: AjvOptions = {}): Ajv {
    const key = JSON.stringify(opts);
    let ajv = this.shared.get(key);
    if (!ajv) {
      ajv = super.getAjv(validationContext, opts);
      this.shared.set(key, ajv);
    }
    return ajv;
  }
}

/** How {@link installValidator} builds the validator. */
export interface ValidatorOptions {
  ajvOpts: AjvOptions;
  customizeAjv: (ajv: Ajv) => Ajv;
  coerceTypes: boolean;
  /** Compile the response validators too (at start), for response validation in tests. */
  validateResponses: boolean;
  /**
   * Compile every request validator at start (tests: a schema Ajv cannot compile fails every test
   * app at once); otherwise each operation's is compiled on its first request (production: about
   * 0.3 s less start on 2 cores, a few milliseconds more on each operation's first request).
   */
  compileRequestValidatorsAtStart: boolean;
}

/**
 * Gives `api` (initialised with `validate: false`, so its `init()` compiled nothing) a validator
 * whose request validators share Ajv instances and are compiled now or on first use
 * (`compileRequestValidatorsAtStart`); response validators are compiled only when
 * `validateResponses`. Turns request validation on.
 */
export function installValidator(api: OpenAPIBackend, options: ValidatorOptions): void {
  const validator = new SharedAjvValidator({
    definition: api.definition,
    ajvOpts: options.ajvOpts,
    customizeAjv: options.customizeAjv,
    router: api.router,
    lazyCompileValidators: true,
    coerceTypes: options.coerceTypes,
  });
  if (options.compileRequestValidatorsAtStart) validator.preCompileRequestValidators();
  if (options.validateResponses) validator.preCompileResponseValidators();
  api.validator = validator;
  api.validate = true;
}
