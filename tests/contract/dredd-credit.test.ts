/**
 * Contract verification of the credit document with Dredd: the real app on a real PostgreSQL,
 * listening on 127.0.0.1, checked against generated/openapi/credit.openapi.yaml. Fixtures are seeded
 * over HTTP with the document's example ids (tenant `acme-bank`, product `001`, user `6f1d2c3b-…`;
 * support-dredd-fixtures-credit.ts `seedCreditFixtures`), the tenant's notifications go to a real receiver on
 * 127.0.0.1; tests/contract/dredd-credit-hooks.cjs builds each transaction's case and puts the real
 * response schema into Dredd's expectation.
 *
 * Every Dredd run of this file (the main run, one per alternative, the negative control's two)
 * happens once, in order, in a `beforeAll` under a whole-run time limit (tests/contract/whole-run.ts,
 * docs/testing.md); the document is parsed once for all of them. The `it`s assert on the runs.
 */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { globalAgent, type Server } from "node:http";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";
import { WHOLE_RUN_MS } from "./whole-run.js";
import {
  BASE_PATH,
  CREDIT_SURFACE,
  contractOperations,
  dreddDescription,
  failureReport,
  loadContractDocument,
  outcomes,
  responseBreaker,
  runDredd,
  seedCreditFixtures,
  transactionName,
  watchOutboundConnections,
  type ContractOperation,
  type CreditFixtures,
  type DreddRun,
  type HookContract,
} from "./support-dredd.js";

/**
 * The alternative cases of statuses that arise in several ways (arrays in the hooks' CASES): run k
 * checks the k-th alternative of each, and exactly these `operationId status` pass in it.
 */
const ALTERNATIVES: readonly (readonly string[])[] = [
  [
    "createCreditProduct 422", "createCreditWallet 422", "getCreditWallet 404",
    "payOutCredit 201", "payOutCredit 409", "reportPayCredit 201",
    "authorizeCredit 201", "authorizeCredit 422", "getCreditAuthorization 404", "captureCreditAuthorization 409",
    "refundCreditAuthorization 409",
  ],
  ["authorizeCredit 201"],
];

/** Negative control only: when on, every JSON response keeps its keys but one value changes type. */
const breakResponses = responseBreaker();
let t: TestApp;
let receiver: Receiver;
let server: Server;
let contract: HookContract<CreditFixtures>;
let endpoint: string;
const doc = loadContractDocument(CREDIT_SURFACE);
const description = dreddDescription(doc);
const operations = contractOperations(doc, CREDIT_SURFACE);
const all = Object.values(operations);
const successStatus = (op: ContractOperation): string => {
  const status = Object.keys(op.responses).find((s) => s.startsWith("2"));
  if (!status) throw new Error(`${op.operationId} declares no 2xx`);
  return status;
};

beforeAll(async () => {
  // The notification URL is a real receiver on 127.0.0.1, which the SSRF guard allows only when told to.
  [t, receiver] = await Promise.all([startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true" }), startReceiver()]);
  const outer = express();
  outer.disable("x-powered-by");
  outer.use(breakResponses.middleware);
  outer.use(t.express);
  server = outer.listen(0, "127.0.0.1");
  await once(server, "listening");
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  endpoint = `${origin}${CREDIT_SURFACE.basePath}`;
  contract = {
    baseUrl: endpoint,
    basePath: CREDIT_SURFACE.basePath,
    operations,
    fixtures: await seedCreditFixtures(`${origin}${BASE_PATH}`, endpoint, operations, receiver.url),
    alternativeRuns: ALTERNATIVES.length,
  };
}, WHOLE_RUN_MS);
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await t?.dispose();
  await receiver?.close();
});

/** {@link runDredd} on the credit document, on fresh connections (see dredd.test.ts). */
async function dredd(options: Omit<Parameters<typeof runDredd<CreditFixtures>>[0], "surface">): Promise<DreddRun> {
  server.closeIdleConnections();
  await waitFor("Dredd's idle sockets to the server to close", () => (idleClientSockets(server) === 0 ? true : undefined));
  return runDredd({ ...options, surface: CREDIT_SURFACE });
}

/** Idle keep-alive sockets that Node's global agent (Dredd's) keeps open to `server`. */
function idleClientSockets(server: Server): number {
  const port = String((server.address() as AddressInfo).port);
  return Object.entries(globalAgent.freeSockets)
    .filter(([name]) => name.split(":")[1] === port)
    .reduce((n, [, sockets]) => n + (sockets?.length ?? 0), 0);
}

const byId = (operationId: string) => all.find((op) => op.operationId === operationId) as ContractOperation;
/** The negative control's transactions: successes and an error whose answers get a value of another type. */
const BROKEN = [
  transactionName(byId("getCreditProduct"), "200"),
  transactionName(byId("getNotificationsSettings"), "200"),
  transactionName(byId("getSandboxClock"), "200"),
  transactionName(byId("getCreditWallet"), "404"),
];
// Dredd's own check compares keys only: the same broken success answers pass it.
const BROKEN_SUCCESSES = BROKEN.filter((name) => !name.includes(" > 404"));

describe("credit contract (Dredd)", () => {
  /** Every Dredd run of this file, in the order they ran. */
  let runs: {
    main: DreddRun;
    /** What the connection watch saw during the main run. */
    connections: { all: string[]; outside: string[] };
    /** One per entry of {@link ALTERNATIVES}. */
    alternatives: DreddRun[];
    /** The negative control with the response schemas, and with Dredd's key comparison only. */
    withSchemas: DreddRun;
    keysOnly: DreddRun;
  };

  beforeAll(async () => {
    const guard = watchOutboundConnections();
    let main: DreddRun;
    let connections: { all: string[]; outside: string[] };
    try {
      main = await dredd({ endpoint, contract, description });
    } finally {
      connections = guard.stop();
    }
    const alternatives: DreddRun[] = [];
    for (const alternative of ALTERNATIVES.keys()) alternatives.push(await dredd({ endpoint, contract: { ...contract, alternative: alternative + 1 }, description }));
    breakResponses.on = true;
    try {
      const withSchemas = await dredd({ endpoint, contract, description, only: BROKEN, quiet: true });
      const keysOnly = await dredd({ endpoint, contract: { ...contract, keysOnly: true }, description, only: BROKEN_SUCCESSES, quiet: true });
      runs = { main, connections, alternatives, withSchemas, keysOnly };
    } finally {
      breakResponses.on = false;
    }
  }, WHOLE_RUN_MS);

  it("serves every operation and its deterministic error cases as the document says", () => {
    expect(all.length, "operations of the credit document").toBe(34);
    expect(all.filter((op) => !op.implemented).map((op) => op.operationId), "credit operations answering 501").toEqual([]);
    const { main: run, connections } = runs;
    expect(connections.all.length, "the connection watch saw Dredd's requests").toBeGreaterThan(0);
    expect(connections.outside, "connections outside 127.0.0.1").toEqual([]);
    const report = failureReport(run);
    expect(run.stats.failures, report).toBe(0);
    expect(run.stats.errors, report).toBe(0);

    const passed = outcomes(run, operations);
    const passes = (operationId: string, status: string) => passed.get(`${operationId} ${status}`)?.includes("pass") ?? false;
    for (const op of all) {
      expect(passes(op.operationId, successStatus(op)), `${op.operationId} ${successStatus(op)}`).toBe(true);
      // Every operation's 400 (an unreadable body), 401, 403 and 422 are checked.
      for (const status of ["400", "401", "403", "422"]) expect(passes(op.operationId, status), `${op.operationId} ${status}`).toBe(true);
    }
    const passing = (status: string) => all.filter((op) => passes(op.operationId, status)).map((op) => op.operationId).sort();
    expect(passing("404"), "operations passing 404").toEqual([
      "blockCreditWallet", "dissolveCreditWallet", "getCreditProduct", "getCreditWallet", "getNotificationsSettings",
      "listCreditWalletEvents", "listCreditWalletStatements", "payOutCredit", "reportPayCredit", "unblockCreditWallet",
      "updateCreditProductSettings", "changeInterestCreditCapital", "changeWalletLimit", "recoverCreditNotifications",
      "authorizeCredit", "captureCreditAuthorization", "voidCreditAuthorization", "getCreditAuthorization", "listCreditAuthorizations",
      "refundCreditAuthorization", "issueCard", "listWalletCards", "getCard", "updateCard", "authorizeCard",
    ].sort());
    expect(passing("409"), "operations passing 409").toEqual([
      "blockCreditWallet", "changeInterestCreditCapital", "changeWalletLimit", "createCreditProduct", "createCreditWallet",
      "dissolveCreditWallet", "payOutCredit", "reportPayCredit", "setSandboxClock", "unblockCreditWallet",
      "authorizeCredit", "captureCreditAuthorization", "voidCreditAuthorization", "refundCreditAuthorization", "issueCard", "updateCard",
    ].sort());
    // Skipped: 413, 415, 429, 500 and 503 of every operation, the sandbox clock's 404 (the provider is
    // the sandbox), and Authorize Card's 409 (a set-aside wallet: the integration test provokes it).
    const skipped = run.tests.filter((x) => x.status === "skip").map((x) => x.expectedStatus);
    expect(skipped.filter((status) => !["413", "415", "429", "500", "503"].includes(status)).sort(), "skipped other than 413/415/429/500/503").toEqual(["404", "404", "404", "409"]);
    expect(run.stats.passes + run.stats.skipped).toBe(run.stats.tests);
    console.info(`Dredd (credit): ${run.stats.tests} transactions, ${run.stats.passes} passing, ${run.stats.skipped} skipped`);
  });

  it("serves the alternative cases (another tenant's wallet, Idempotency-Key repeats and reuses, other 422 fields), one Dredd run per alternative", () => {
    expect(runs.alternatives).toHaveLength(ALTERNATIVES.length);
    for (const [index, expected] of ALTERNATIVES.entries()) {
      const alternative = index + 1;
      const run = runs.alternatives[index]!;
      const report = failureReport(run);
      expect(run.stats.failures, report).toBe(0);
      expect(run.stats.errors, report).toBe(0);
      const passing = [...outcomes(run, operations)].filter(([, statuses]) => statuses.includes("pass")).map(([key]) => key);
      expect(passing.sort(), `passing cases of alternative run ${alternative}`).toEqual([...expected].sort());
      expect(run.stats.passes + run.stats.skipped).toBe(run.stats.tests);
      console.info(`Dredd (credit) alternative run ${alternative}: ${run.stats.passes} passing, ${run.stats.skipped} skipped`);
    }
  });

  it("fails on a response that keeps its keys but breaks its schema, which Dredd alone would accept", () => {
    const { withSchemas, keysOnly } = runs;
    expect(withSchemas.stats.failures, failureReport(withSchemas)).toBe(BROKEN.length);
    expect(withSchemas.stats.passes).toBe(0);
    for (const test of withSchemas.tests.filter((x) => x.status === "fail")) {
      expect(test.message, test.name).toMatch(/^body: At '\/(data|errors)\/.*' Invalid type: number \(expected string\)$/m);
      expect(test.message, test.name).not.toMatch(/^(statusCode|headers):/m);
    }
    expect(keysOnly.stats.passes, failureReport(keysOnly)).toBe(BROKEN_SUCCESSES.length);
  });
});
