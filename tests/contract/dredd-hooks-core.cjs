/**
 * The machinery both Dredd hookfiles share (tests/contract/dredd-hooks.cjs for the platform document,
 * dredd-credit-hooks.cjs for the credit document): each hookfile declares its CASES, its credentials
 * and its statuses skipped everywhere, and calls {@link installCaseHooks} with Dredd's `hooks`.
 *
 * Dredd compiles one transaction per declared status, all with the same valid request built from the
 * document's examples. For every transaction the installed hook:
 * - sends the credential the operation's access rule asks for (`defaultCredential`);
 * - turns the request into the case of its status (the hookfile's CASES): the success case of an
 *   implemented operation, an error case built on purpose (no credential, wrong kind of credential,
 *   unknown id, invalid body…), or the 501 of an operation not built yet; anything else is skipped
 *   explicitly (a string: the reason);
 * - for a status that arises in several ways (an array of cases), checks the first in the main run
 *   and the k-th in the alternative run k (`contract.alternative`), which skips everything else;
 * - replaces Dredd's key-only comparison with the real response schema of that status (plus the
 *   expected error code and any constraint the case adds with `expect`) and the exact
 *   `Content-Type` express sends.
 */

/** What express sends for `res.json()`; Dredd compares `Content-Type` exactly. */
const JSON_CONTENT_TYPE = "application/json; charset=utf-8";
const JSON_SCHEMA_DRAFT = "http://json-schema.org/draft-07/schema#";

/**
 * The case of this run: the first of an array in the main run; in alternative run k, the k-th of an
 * array and a skip for everything else.
 */
function alternativeOf(plan, key, contract) {
  const alternative = contract.alternative || 0;
  const cases = Array.isArray(plan) ? plan : [plan];
  if (cases.length - 1 > (contract.alternativeRuns || 0)) {
    throw new Error(`${key} has ${cases.length} alternative cases: raise the alternative runs of the Dredd test`);
  }
  if (alternative === 0) return cases[0];
  return Array.isArray(plan) && plan[alternative] ? plan[alternative] : `alternative run ${alternative}: ${key} has no such alternative`;
}

/** The 501 of an operation not built yet: the valid example request with its default credential. */
const NOT_IMPLEMENTED_CASE = (c) => c.error("NOT_IMPLEMENTED");

/**
 * The 400 every operation declares for a request that cannot be read, for operations without a rule
 * of their own that answers 400: a JSON body that is not JSON, sent even where the operation takes no body.
 */
const UNREADABLE_BODY_CASE = (c) => c.rawBody("{").error("BAD_REQUEST");

function deleteHeader(headers, name) {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) delete headers[key];
}

/**
 * The context a case works on: fluent setters over the transaction; `surface.extendContext(c, request)`
 * adds the hookfile's own helpers.
 */
function context(transaction, contract, surface) {
  const request = transaction.request;
  const state = { code: undefined, constraints: [], preconditions: [] };
  const c = {
    f: contract.fixtures,
    contract,
    state,
    as(kind) {
      for (const name of surface.credentialHeaderNames) deleteHeader(request.headers, name);
      Object.assign(request.headers, surface.credentialHeaders(kind, contract.fixtures));
      return c;
    },
    path(uri) {
      request.uri = uri;
      transaction.fullPath = `${contract.basePath}${uri}`;
      return c;
    },
    query(query) {
      return c.path(`${request.uri.split("?")[0]}?${query}`);
    },
    rawBody(text) {
      request.body = text;
      deleteHeader(request.headers, "content-type");
      request.headers["Content-Type"] = "application/json";
      return c;
    },
    body(value) {
      return c.rawBody(JSON.stringify(value));
    },
    noBody() {
      request.body = "";
      deleteHeader(request.headers, "content-type");
      return c;
    },
    example() {
      return JSON.parse(request.body);
    },
    /** Sets a request header (case-insensitively replacing it); `undefined` removes it. */
    header(name, value) {
      deleteHeader(request.headers, name.toLowerCase());
      if (value !== undefined) request.headers[name] = value;
      return c;
    },
    error(code) {
      state.code = code;
      return c;
    },
    /** A JSON Schema the body must also match (beyond the status's response schema). */
    expect(constraint) {
      state.constraints.push(constraint);
      return c;
    },
    /** Runs `step` (async) just before the request is sent. */
    before(step) {
      state.preconditions.push(step);
      return c;
    },
  };
  if (surface.extendContext) surface.extendContext(c, request);
  return c;
}

/** The response schema of a status, with the error code a case expects in `errors[]` and its own constraints. */
function expectedSchema(schema, code, constraints) {
  const codeConstraint = code === undefined ? [] : [{ properties: { errors: { contains: { required: ["code"], properties: { code: { const: code } } } } } }];
  return { $schema: JSON_SCHEMA_DRAFT, allOf: [schema, ...codeConstraint, ...constraints] };
}

/**
 * The plan of a transaction: the operation's case for the status, else a skip everywhere, else the
 * unreadable-body 400, else `surface.fallback(op, status)` (a case, a reason, or undefined to fail).
 */
function planOf(op, status, surface) {
  if (!op.implemented) return status === "501" ? NOT_IMPLEMENTED_CASE : "the operation is not implemented: only its 501 is checked";
  let plan = (surface.cases[op.operationId] || {})[status];
  if (plan === undefined && surface.skippedEverywhere[status]) plan = surface.skippedEverywhere[status];
  if (plan === undefined && status === "400") plan = UNREADABLE_BODY_CASE;
  if (plan === undefined && surface.fallback) plan = surface.fallback(op, status);
  if (plan === undefined) throw new Error(`No case for ${op.operationId} ${status}: add one to CASES or skip it with a reason`);
  return plan;
}

async function prepare(hooks, transaction, surface) {
  const { contract } = hooks.configuration.custom;
  const only = hooks.configuration.only || [];
  if (only.length > 0 && !only.includes(transaction.name)) return; // Dredd skips it anyway
  if (transaction.host !== "127.0.0.1") throw new Error(`Dredd must only call 127.0.0.1, not ${transaction.host}`);

  const op = contract.operations[`${transaction.request.method} ${transaction.origin.resourceName}`];
  if (!op) throw new Error(`No operation of the document matches ${transaction.name}`);
  const status = String(transaction.expected.statusCode);
  // Dredd sends an optional header parameter without an example (x-trace-id, the credit Idempotency-Key) as an empty value: drop it.
  for (const [name, value] of Object.entries(transaction.request.headers)) if (value === "") delete transaction.request.headers[name];

  const plan = alternativeOf(planOf(op, status, surface), `${op.operationId} ${status}`, contract);
  if (typeof plan === "string") {
    transaction.skip = true;
    return;
  }

  const c = context(transaction, contract, surface).as(surface.defaultCredential(op.access));
  plan(c);
  for (const precondition of c.state.preconditions) await precondition();

  if (contract.keysOnly) {
    transaction.expected.headers = { ...transaction.expected.headers, ...(op.responses[status] && { "Content-Type": JSON_CONTENT_TYPE }) };
    return;
  }
  const schema = op.responses[status];
  if (schema === undefined) throw new Error(`${op.operationId} declares no ${status}`);
  const document = (op.documents || {})[status];
  if (document !== undefined) {
    // a document other than JSON (the SEPA payout file): its media type is checked here, its
    // content by the operation's integration test (the text changes with every download)
    transaction.expected.headers = { "Content-Type": `${document}; charset=utf-8` };
    delete transaction.expected.body;
    delete transaction.expected.bodySchema;
  } else if (schema === null) {
    transaction.expected.headers = {};
    transaction.expected.body = "";
    delete transaction.expected.bodySchema;
  } else {
    transaction.expected.headers = { "Content-Type": JSON_CONTENT_TYPE };
    transaction.expected.bodySchema = JSON.stringify(expectedSchema(schema, c.state.code, c.state.constraints));
    delete transaction.expected.body;
  }
}

/**
 * Installs the `beforeEach` hook on Dredd's `hooks` for a surface:
 * `{ cases, skippedEverywhere, defaultCredential(access), credentialHeaders(kind, fixtures),
 *    credentialHeaderNames, extendContext?(c, request), fallback?(op, status) }`.
 * A hook that throws fails its transaction with the message.
 */
function installCaseHooks(hooks, surface) {
  hooks.beforeEach((transaction, done) => {
    prepare(hooks, transaction, surface).then(
      () => done(),
      (error) => {
        transaction.fail = `hook: ${error.message}`;
        done();
      },
    );
  });
}

module.exports = { installCaseHooks };
