/**
 * The surfaces' own router (docs/performance.md "What keeps the request path cheap"): which
 * operation of a document a request names, the methods a path allows, and a matched request's path
 * parameters. It is built once from openapi-backend's public operation list and replaces, for the
 * surfaces' dispatch only (src/http/dispatch.ts), what openapi-backend 5's router does on every
 * request: rebuild its flat operation list (lodash over the whole document), compile a `RegExp` per
 * path template in `matchOperation`, and compile the matched template again (bath-es5) in
 * `parseRequest`. openapi-backend's router itself is left as it is: `handleRequest`, which still
 * serves a request with cookies, and the tests' response check use it, and a test compares the two
 * answer for answer (tests/integration/dispatch.test.ts).
 *
 * The rules are openapi-backend's (router.js `matchOperation`, `normalizeRequest`, `normalizePath`;
 * bath-es5 for the parameters): the path's query string is dropped and the method lower-cased; an
 * operation whose path equals the request's wins; otherwise the templates are tried from the most
 * specific (the most literal characters) in document order, `{x}` matching one non-empty segment;
 * a path that some template matches with another method is a 405, any other a 404. Path parameters
 * capture one segment, possibly empty, and are percent-decoded.
 */
import type { OpenAPIRouter, Operation } from "openapi-backend";

/** What a request's method and path name: its operation, or why none (405 with the allowed methods, 404). */
export type RouteMatch = { operation: Operation } | { allowed: string[] } | { notFound: true };

/** One path template, compiled once. */
interface Template {
  operation: Operation;
  /** openapi-backend's matching pattern: `{x}` is one non-empty segment. */
  pattern: RegExp;
  /** bath-es5's capturing pattern of the parameters: `{x}` is one segment, possibly empty. */
  params: RegExp;
  names: string[];
}

/** `path` with regular-expression characters escaped. */
const escape = (literal: string): string => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The template's literal parts joined by `segment`. */
function templatePattern(path: string, segment: string): RegExp {
  return new RegExp(`^${path.split(/\{[^}]+\}/).map(escape).join(segment)}$`);
}

/** The matcher of one surface's document; see the module comment. */
export class SurfaceRouter {
  /** The document's operations, in document order. */
  readonly operations: readonly Operation[];
  private readonly exact = new Map<string, Operation>();
  /** Templates from the most specific, equally specific ones in document order. */
  private readonly templates: Template[];
  private readonly byOperation = new Map<Operation, Template>();

  /** @param router an initialised openapi-backend's router (its `apiRoot` must be `/`). */
  constructor(private readonly router: OpenAPIRouter) {
    this.operations = router.getOperations();
    for (const operation of this.operations) {
      const key = `${operation.method} ${operation.path}`;
      if (!this.exact.has(key)) this.exact.set(key, operation);
    }
    const literal = (path: string): number => path.replace(/\{.*?\}/g, "").length;
    const compiled = this.operations.map((operation, index) => {
      const styled = (operation.parameters ?? []).some((p) => !("$ref" in p) && p.in === "query" && (p.explode === false || p.content?.["application/json"] !== undefined));
      const template: Template = {
        operation,
        pattern: templatePattern(operation.path, "[^/]+"),
        params: templatePattern(operation.path, "([^\\/]*)"),
        names: [...operation.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string),
      };
      if (!styled) this.byOperation.set(operation, template);
      return { template, index, specificity: literal(operation.path) };
    });
    this.templates = compiled.sort((a, b) => b.specificity - a.specificity || a.index - b.index).map((c) => c.template);
  }

  /** The operation `method` and `path` (relative to the document, query string allowed) name, or why none. */
  match(method: string, path: string): RouteMatch {
    const normalized = this.normalize(path);
    const verb = method.trim().toLowerCase();
    const exact = this.exact.get(`${verb} ${normalized}`);
    if (exact) return { operation: exact };
    const allowed: string[] = [];
    for (const t of this.templates) {
      if (!t.pattern.test(normalized)) continue;
      if (t.operation.method === verb) return { operation: t.operation };
      allowed.push(t.operation.method.toUpperCase());
    }
    return allowed.length > 0 ? { allowed: [...new Set(allowed)] } : { notFound: true };
  }

  /**
   * The path parameters of a request to `path` that {@link match} matched to `operation`,
   * percent-decoded; undefined for an operation whose requests openapi-backend must parse whole
   * (a query parameter it re-splits, `explode: false`, or parses as JSON, `content`: the
   * documents have none today), which the dispatch then hands to `handleRequest`.
   */
  paramsOf(operation: Operation, path: string): Record<string, string> | undefined {
    const template = this.byOperation.get(operation);
    if (!template) return undefined;
    const params: Record<string, string> = {};
    const found = template.params.exec(this.normalize(path));
    if (found) template.names.forEach((name, i) => (params[name] = decodeURIComponent(found[i + 1] as string)));
    return params;
  }

  /** openapi-backend's normalization of a request path for matching. */
  private normalize(path: string): string {
    return this.router.normalizePath(this.router.normalizeRequest({ method: "get", path, headers: {} }).path);
  }
}
