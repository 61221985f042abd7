/**
 * Dredd harness of the contract tests of both documents (tests/contract/dredd.test.ts for the
 * platform, dredd-credit.test.ts for the credit core): runs Dredd programmatically on a document
 * with its hookfile, records each transaction's outcome, watches that nothing connects outside
 * 127.0.0.1, and breaks answers on purpose for the negative controls. The documents as Dredd checks
 * them are in support-dredd-document.ts, the seeding in support-dredd-fixtures.ts (the credit
 * document's in support-dredd-fixtures-credit.ts); this module re-exports them, the one import of
 * the test files. Everything Dredd and the hooks talk to is the
 * test server on 127.0.0.1.
 */
import { EventEmitter } from "node:events";
import { createRequire } from "node:module";
import http from "node:http";
import net from "node:net";
import { fileURLToPath } from "node:url";
import type { RequestHandler } from "express";
import { interceptJsonEnd } from "../../src/http/contract-check.js";
import { PLATFORM_SURFACE, type ContractOperation, type ContractSurface } from "./support-dredd-document.js";
import type { Fixtures } from "./support-dredd-fixtures.js";

export * from "./support-dredd-document.js";
export * from "./support-dredd-fixtures.js";
export * from "./support-dredd-fixtures-credit.js";

const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** What the hooks get in `hooks.configuration.custom.contract`; `F` is the fixtures of the surface's seeding. */
export interface HookContract<F = Fixtures> {
  baseUrl: string;
  basePath: string;
  operations: Record<string, ContractOperation>;
  fixtures: F;
  /** Leave Dredd's own expectation (key comparison of the example) alone: only for the negative control. */
  keysOnly?: boolean;
  /**
   * How many extra runs check the alternative cases of statuses that arise in several ways (Dredd
   * compiles one transaction per status); the hooks fail a status with more alternatives than that.
   */
  alternativeRuns?: number;
  /** Which alternative this run checks: 0 (default) is the main run; k > 0 runs only the k-th alternatives. */
  alternative?: number;
}

/** A Dredd test result as its reporter events carry it. */
export interface DreddTest {
  status: "pass" | "fail" | "skip" | "error";
  name: string;
  method: string;
  /** The document path (`resourceName`) and status of the transaction. */
  path: string;
  expectedStatus: string;
  message: string;
}

export interface DreddRun {
  stats: { tests: number; failures: number; errors: number; passes: number; skipped: number };
  tests: DreddTest[];
}

/** One document as Dredd prepares it for a run: its location, content, media type, compiled transactions and parser annotations. */
type PreparedDescription = Record<string, unknown>;
type PrepareCallback = (error: Error | null, descriptions?: PreparedDescription[]) => void;
interface DreddInstance {
  run(callback: (error: Error | null, stats: DreddRun["stats"]) => void): void;
  /** Dredd 14's step that parses the documents and compiles their transactions (`run` calls it first). */
  prepareAPIdescriptions(callback: PrepareCallback): void;
}
type DreddConstructor = new (config: Record<string, unknown>) => DreddInstance;
interface ReporterTest {
  title?: string;
  message?: string;
  origin?: { resourceName?: string; actionName?: string; exampleName?: string };
  request?: { method?: string };
  expected?: { statusCode?: string };
}

/**
 * Runs Dredd on the document (as {@link dreddDescription}) against `endpoint` with the hookfile.
 * Only the dot reporter (no file reporter, so no Apiary reporter and no network beyond
 * `endpoint`): it prints one character per transaction and the details of failures. `only` restricts the run to these transaction names.
 */
export async function runDredd<F>(options: {
  /** The document and hookfile (default: the platform's). */
  surface?: ContractSurface;
  endpoint: string;
  contract: HookContract<F>;
  description: string;
  only?: string[];
  /** Do not print the details of failures (for runs that are meant to fail). */
  quiet?: boolean;
}): Promise<DreddRun> {
  const require = createRequire(import.meta.url);
  const Dredd = require("dredd") as DreddConstructor;
  const reporterOutput = (require("dredd/build/reporters/reporterOutputLogger") as { default: { transports: { console: { silent?: boolean } } } })
    .default.transports.console;
  const surface = options.surface ?? PLATFORM_SURFACE;
  const emitter = new EventEmitter();
  const tests: DreddTest[] = [];
  const record = (status: DreddTest["status"]) => (test: ReporterTest) => {
    const [, statusFromName = ""] = /^(\d{3})/.exec(test.origin?.exampleName ?? "") ?? [];
    tests.push({
      status,
      name: `${test.origin?.resourceName} > ${test.origin?.actionName} > ${test.origin?.exampleName}`,
      method: test.request?.method ?? "",
      path: test.origin?.resourceName ?? "",
      expectedStatus: test.expected?.statusCode ?? statusFromName,
      message: test.message ?? "",
    });
  };
  emitter.on("test pass", record("pass"));
  emitter.on("test fail", record("fail"));
  emitter.on("test skip", record("skip"));
  emitter.on("test error", (_error: Error, test: ReporterTest) => record("error")(test));
  const dredd = new Dredd({
    endpoint: options.endpoint,
    apiDescriptions: [{ location: surface.documentPath, content: options.description }],
    hookfiles: [surface.hookfilePath],
    language: "nodejs",
    only: options.only ?? [],
    reporter: options.quiet ? [] : ["dot"],
    output: [],
    color: false,
    loglevel: "error",
    custom: { cwd: PROJECT_ROOT, contract: options.contract },
    emitter,
  });
  reuseCompiledTransactions(dredd, `${surface.documentPath}\n${options.description}`);
  reporterOutput.silent = options.quiet === true;
  try {
    const stats = await new Promise<DreddRun["stats"]>((resolve, reject) => {
      dredd.run((error, result) => (error ? reject(error) : resolve(result)));
    });
    return { stats: { ...stats }, tests };
  } finally {
    reporterOutput.silent = false;
  }
}

/** Prepared documents by path and content, for the runs after the first on the same document. */
const preparedDescriptions = new Map<string, PreparedDescription[]>();

/**
 * Makes `dredd` reuse the documents an earlier run of this process prepared from the same
 * document (`key`: its path and content). Parsing the platform document takes Dredd seconds on an
 * idle machine and many more on a busy one, and a test file runs Dredd several times on one
 * document (main run, alternatives, negative controls): it is parsed once per file
 * (docs/testing.md). Each run gets its own deep copy, so hooks that change a transaction change
 * only that run's. The parser's `apiElements` are left out: only the compiled transactions, the
 * annotations and the document's location and media type are read after this step.
 */
function reuseCompiledTransactions(dredd: DreddInstance, key: string): void {
  const prepare = dredd.prepareAPIdescriptions.bind(dredd);
  dredd.prepareAPIdescriptions = (callback) => {
    const cached = preparedDescriptions.get(key);
    if (cached) {
      process.nextTick(() => callback(null, structuredClone(cached)));
      return;
    }
    prepare((error, descriptions) => {
      if (!error && descriptions) preparedDescriptions.set(key, structuredClone(descriptions.map(({ apiElements: _apiElements, ...kept }) => kept)));
      callback(error, descriptions);
    });
  };
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost", "::ffff:127.0.0.1"]);

/**
 * Records every TCP connection this process opens until `stop()`, which returns them all and the
 * ones that went anywhere but the loopback interface (unix sockets count as local and are not listed).
 * Every request through an HTTP agent is recorded too (`http.Agent.prototype.addRequest`: Dredd's
 * `request` sends through Node's global agent): a request on a reused keep-alive socket opens no
 * connection, so a connection watch alone can miss all of Dredd's requests.
 */
export function watchOutboundConnections(): { stop(): { all: string[]; outside: string[] } } {
  const original = net.Socket.prototype.connect;
  const targets: string[] = [];
  type AddRequest = (this: http.Agent, req: http.ClientRequest, options: { host?: string; port?: number | string; socketPath?: string }, ...rest: unknown[]) => void;
  const agentPrototype = http.Agent.prototype as unknown as { addRequest: AddRequest };
  const originalAddRequest = agentPrototype.addRequest;
  agentPrototype.addRequest = function addRequest(this: http.Agent, req, options, ...rest) {
    if (options.socketPath === undefined) targets.push(`${options.host ?? "localhost"}:${options.port}`);
    return originalAddRequest.call(this, req, options, ...rest);
  };
  net.Socket.prototype.connect = function connect(this: net.Socket, ...args: unknown[]) {
    // net.connect() passes its normalised arguments as one array: [options, callback].
    const normalised = Array.isArray(args[0]);
    const first = normalised ? (args[0] as unknown[])[0] : args[0];
    if (first && typeof first === "object") {
      const o = first as { host?: string; port?: number; path?: string };
      if (o.path === undefined) targets.push(`${o.host ?? "localhost"}:${o.port}`);
    } else if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
      const host = normalised ? undefined : args[1];
      targets.push(`${typeof host === "string" ? host : "localhost"}:${first}`);
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
  return {
    stop() {
      net.Socket.prototype.connect = original;
      agentPrototype.addRequest = originalAddRequest;
      const host = (target: string) => target.replace(/:[^:]*$/, "").replace(/^\[|\]$/g, "");
      return { all: [...targets], outside: targets.filter((t) => !LOOPBACK.has(host(t))) };
    },
  };
}

/**
 * The negative control's switch: while `on`, every JSON response keeps its keys but the first string
 * field of `data` (or of its first item, or of the first error) becomes a number. It changes the text
 * a JSON answer ends with, whichever writer wrote it; installed in front of the app, it runs after
 * the app's own response check has passed the answer.
 */
export function responseBreaker(): { on: boolean; middleware: RequestHandler } {
  const state = { on: false, middleware: (() => {}) as RequestHandler };
  state.middleware = (_req, res, next) => {
    if (state.on) interceptJsonEnd(res, (text) => JSON.stringify(breakShape(JSON.parse(text))));
    next();
  };
  return state;
}

/** Changes the type of the first string field of `data` (or of its first item, or of the first error). */
function breakShape(body: unknown): unknown {
  if (!body || typeof body !== "object") return body;
  const copy = structuredClone(body) as { data?: unknown; errors?: unknown[] };
  const target = Array.isArray(copy.data) ? copy.data[0] : (copy.data ?? copy.errors?.[0]);
  if (target && typeof target === "object") {
    const record = target as Record<string, unknown>;
    const key = Object.keys(record).find((k) => typeof record[k] === "string");
    if (key) record[key] = 12345;
  }
  return copy;
}

/** Tests of a run by `operationId status`, with their outcomes. */
export function outcomes(run: DreddRun, operations: Record<string, ContractOperation>): Map<string, DreddTest["status"][]> {
  const byKey = new Map<string, DreddTest["status"][]>();
  for (const test of run.tests) {
    const op = operations[`${test.method} ${test.path}`];
    const key = `${op?.operationId ?? test.name} ${test.expectedStatus}`;
    byKey.set(key, [...(byKey.get(key) ?? []), test.status]);
  }
  return byKey;
}

/** The failed and errored tests of a run, with Dredd's messages. */
export const failureReport = (run: DreddRun): string =>
  run.tests
    .filter((x) => x.status === "fail" || x.status === "error")
    .map((x) => `${x.status.toUpperCase()} ${x.method} ${x.name}\n${x.message}`)
    .join("\n");
