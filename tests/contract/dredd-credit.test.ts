/**
 * Contract verification of the credit document with Dredd: the real app on a real PostgreSQL,
 * listening on 127.0.0.1, checked against generated/openapi/credit.openapi.yaml. Fixtures are seeded
 * over HTTP with the document's example ids (tenant `acme-bank`, product `001`, user `6f1d2c3b-…`;
 * support-dredd.ts `seedCreditFixtures`), the tenant's notifications go to a real receiver on
 * 127.0.0.1; tests/contract/dredd-credit-hooks.cjs builds each transaction's case and puts the real
 * response schema into Dredd's expectation.
 */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
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
  ],
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
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await t?.dispose();
  await receiver?.close();
});

/** {@link runDredd} on the credit document, on fresh connections (see dredd.test.ts). */
async function dredd(options: Omit<Parameters<typeof runDredd<CreditFixtures>>[0], "surface">): Promise<DreddRun> {
  server.closeIdleConnections();
  await new Promise((resolve) => setTimeout(resolve, 100));
  return runDredd({ ...options, surface: CREDIT_SURFACE });
}

describe("credit contract (Dredd)", () => {
  it("serves every operation and its deterministic error cases as the document says", async () => {
    expect(all.length, "operations of the credit document").toBe(21);
    expect(all.filter((op) => !op.implemented).map((op) => op.operationId), "credit operations answering 501").toEqual([]);
    const guard = watchOutboundConnections();
    let run: DreddRun;
    try {
      run = await dredd({ endpoint, contract, description });
    } finally {
      const connections = guard.stop();
      expect(connections.all.length, "the connection watch saw Dredd's requests").toBeGreaterThan(0);
      expect(connections.outside, "connections outside 127.0.0.1").toEqual([]);
    }
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
      "updateCreditProductSettings", "changeInterestCreditCapital", "changeWalletLimit",
    ].sort());
    expect(passing("409"), "operations passing 409").toEqual([
      "blockCreditWallet", "changeInterestCreditCapital", "changeWalletLimit", "createCreditProduct", "createCreditWallet",
      "dissolveCreditWallet", "payOutCredit", "reportPayCredit", "setSandboxClock", "unblockCreditWallet",
    ].sort());
    // Skipped: 413, 415, 429, 500 and 503 of every operation, and the sandbox clock's 404 (the provider is the sandbox).
    const skipped = run.tests.filter((x) => x.status === "skip").map((x) => x.expectedStatus);
    expect(skipped.filter((status) => !["413", "415", "429", "500", "503"].includes(status)), "skipped other than 413/415/429/500/503").toEqual(["404", "404", "404"]);
    expect(run.stats.passes + run.stats.skipped).toBe(run.stats.tests);
    console.info(`Dredd (credit): ${run.stats.tests} transactions, ${run.stats.passes} passing, ${run.stats.skipped} skipped`);
  }, 60_000);

  it("serves the alternative cases (another tenant's wallet, Idempotency-Key repeats and reuses, other 422 fields), one Dredd run per alternative", async () => {
    for (const [index, expected] of ALTERNATIVES.entries()) {
      const alternative = index + 1;
      const run = await dredd({ endpoint, contract: { ...contract, alternative }, description });
      const report = failureReport(run);
      expect(run.stats.failures, report).toBe(0);
      expect(run.stats.errors, report).toBe(0);
      const passing = [...outcomes(run, operations)].filter(([, statuses]) => statuses.includes("pass")).map(([key]) => key);
      expect(passing.sort(), `passing cases of alternative run ${alternative}`).toEqual([...expected].sort());
      expect(run.stats.passes + run.stats.skipped).toBe(run.stats.tests);
      console.info(`Dredd (credit) alternative run ${alternative}: ${run.stats.passes} passing, ${run.stats.skipped} skipped`);
    }
  }, 60_000);

  it("fails on a response that keeps its keys but breaks its schema, which Dredd alone would accept", async () => {
    const byId = (operationId: string) => all.find((op) => op.operationId === operationId) as ContractOperation;
    const only = [
      transactionName(byId("getCreditProduct"), "200"),
      transactionName(byId("getNotificationsSettings"), "200"),
      transactionName(byId("getSandboxClock"), "200"),
      transactionName(byId("getCreditWallet"), "404"),
    ];
    breakResponses.on = true;
    try {
      const withSchemas = await dredd({ endpoint, contract, description, only, quiet: true });
      expect(withSchemas.stats.failures, failureReport(withSchemas)).toBe(only.length);
      expect(withSchemas.stats.passes).toBe(0);
      for (const test of withSchemas.tests.filter((x) => x.status === "fail")) {
        expect(test.message, test.name).toMatch(/^body: At '\/(data|errors)\/.*' Invalid type: number \(expected string\)$/m);
        expect(test.message, test.name).not.toMatch(/^(statusCode|headers):/m);
      }
      // Dredd's own check compares keys only: the same broken success answers pass it.
      const successes = only.filter((name) => !name.includes(" > 404"));
      const keysOnly = await dredd({ endpoint, contract: { ...contract, keysOnly: true }, description, only: successes, quiet: true });
      expect(keysOnly.stats.passes, failureReport(keysOnly)).toBe(successes.length);
    } finally {
      breakResponses.on = false;
    }
  }, 60_000);
});
