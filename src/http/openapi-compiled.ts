/**
 * openapi-backend's request and response validators, compiled once (docs/performance.md "What
 * keeps the request path cheap"). openapi-backend 5.21 compiles at `init()` every request, response
 * and response-header validator, each with a fresh Ajv instance (~2.2 s at start for the two
 * documents). Here each request validator is compiled once — at start in tests, on its operation's
 * first request in production — response validators only when responses are validated (tests), and
 * all of them share one Ajv instance per option set ({@link installValidator}), through
 * openapi-backend's own options (`lazyCompileValidators`) and a subclass of its validator. Matching
 * a request to its operation is the surfaces' own router (src/http/router.ts).
 */
import { OpenAPIValidator, type OpenAPIBackend, type ValidationContext } from "openapi-backend";
import type { Ajv, Options as AjvOptions } from "ajv";

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
