/**
 * Contract verification with Dredd: the real app on a real PostgreSQL, listening on 127.0.0.1,
 * checked against generated/openapi/platform.openapi.yaml. Fixtures are seeded over HTTP with the
 * document's example ids; tests/contract/dredd-hooks.cjs builds each transaction's case and puts
 * the real response schema into Dredd's expectation (support-dredd.ts has the harness).
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
import { startDovecot, type Dovecot } from "../support/dovecot.js";
import { waitFor } from "../support/wait.js";
import { WHOLE_RUN_MS } from "./whole-run.js";
import {
  BASE_PATH,
  contractOperations,
  dreddDescription,
  failureReport,
  loadContractDocument,
  outcomes as outcomesOf,
  responseBreaker,
  runDredd,
  seedFixtures,
  transactionName,
  watchOutboundConnections,
  type ContractOperation,
  type DreddRun,
  type HookContract,
} from "./support-dredd.js";

/**
 * The alternative cases of statuses that arise in several ways (arrays in the hooks' CASES): run k
 * checks the k-th alternative of each, and exactly these `operationId status` pass in it.
 */
const ALTERNATIVES: readonly (readonly string[])[] = [
  [
    "getSepaPayoutFile 200", "getSepaPayoutFile 403", "getSepaPayoutFile 422",
    "lockWallet 400", "lockWallet 403", "unlockWallet 400", "unlockWallet 403", "suspendWallet 403",
    "reinstateWallet 400", "deactivateWallet 400", "deactivateWallet 403", "updateCurrency 200", "updateCurrency 403",
    "createWallet 201", "createWallet 400", "createWallet 403", "createWallet 404",
    "listWallets 200", "listWallets 403", "listWallets 404",
    "getWalletBalance 200", "getWalletBalance 404",
    "listWalletTransactions 200", "listWalletTransactions 400", "listWalletTransactions 404",
    "createSandboxDeposit 400", "createSandboxDeposit 404",
    "listSandboxMail 200", "listSandboxMail 403",
    "initiateWithdrawal 201", "initiateWithdrawal 400", "initiateWithdrawal 403", "initiateWithdrawal 404", "initiateWithdrawal 422",
    "listWithdrawals 200", "listWithdrawals 403", "listWithdrawals 422",
    "cancelWithdrawal 400", "cancelWithdrawal 403", "cancelWithdrawal 404",
    "getWithdrawal 200", "getWithdrawal 403", "getWithdrawal 404",
    "confirmWithdrawal 400", "confirmWithdrawal 403", "confirmWithdrawal 404",
    "resendWithdrawalCode 200", "resendWithdrawalCode 400", "resendWithdrawalCode 403", "resendWithdrawalCode 404",
    "createTransfer 201", "createTransfer 400", "createTransfer 403", "createTransfer 404", "createTransfer 422",
    "getTransfer 200", "getTransfer 404",
    "listWalletTransfers 200", "listWalletTransfers 403", "listWalletTransfers 404",
    "getLimits 200", "getLimits 403",
    "setLimits 200", "setLimits 400", "setLimits 403",
    "getUserLimits 200", "getUserLimits 403",
    "addAddress 201", "addAddress 400", "addAddress 403",
    "listAddresses 200", "listAddresses 403",
    "deleteAddress 403", "deleteAddress 404",
    "addBankAccount 201", "addBankAccount 400", "addBankAccount 403",
    "listBankAccounts 200", "listBankAccounts 403",
    "deleteBankAccount 403", "deleteBankAccount 404",
    "receiveInboundPin 400",
    "initiateFiatWithdrawal 201", "initiateFiatWithdrawal 400", "confirmFiatWithdrawal 400", "confirmFiatWithdrawal 403", "confirmFiatWithdrawal 404",
    "cancelFiatWithdrawal 400", "getFiatWithdrawal 404",
    "createQuote 201", "createQuote 400", "createQuote 403", "createQuote 404", "createQuote 422",
    "createOrder 201", "createOrder 400", "createOrder 403", "createOrder 404", "createOrder 422",
    "getOrder 200", "getOrder 403", "getOrder 404",
    "listOrders 200", "listOrders 403", "listOrders 422",
    "setSandboxPrice 200", "setSandboxPrice 400", "setSandboxPrice 403", "setSandboxPrice 422",
    "listChains 403",
  ],
  [
    "lockWallet 400", "deactivateWallet 400",
    "createWallet 400", "createSandboxDeposit 404",
    "initiateWithdrawal 201", "initiateWithdrawal 400", "initiateWithdrawal 404",
    "getWithdrawal 404",
    "confirmWithdrawal 400", "confirmWithdrawal 403",
    "createTransfer 201", "createTransfer 400", "createTransfer 404",
    "getTransfer 200", "getTransfer 404",
    "addAddress 400",
    "addBankAccount 400",
    "confirmFiatWithdrawal 400",
    "createQuote 400", "createQuote 404", "createOrder 201", "createOrder 400", "createOrder 422", "getOrder 404",
  ],
  ["initiateWithdrawal 400", "createTransfer 400", "createQuote 400", "createOrder 201", "createOrder 400"],
  ["createOrder 400"],
];

/** Negative control only: when on, every JSON response keeps its keys but one value changes type. */
const breakResponses = responseBreaker();

const MAILBOX_PASSWORD = "dredd-mailbox-pass";
let t: TestApp;
let receiver: Receiver;
let dovecot: Dovecot;
let server: Server;
let contract: HookContract;
let endpoint: string;
const doc = loadContractDocument();
const description = dreddDescription(doc);
const operations = contractOperations(doc);
const all = Object.values(operations);
const implemented = all.filter((op) => op.implemented);
const notImplemented = all.filter((op) => !op.implemented);
const successStatus = (op: ContractOperation): string => {
  const status = Object.keys(op.responses).find((s) => s.startsWith("2"));
  if (!status) throw new Error(`${op.operationId} declares no 2xx`);
  return status;
};

beforeAll(async () => {
  // Webhook targets are a real receiver on 127.0.0.1, which the SSRF guard allows only when told to.
  // and the email poller's mailbox a real Dovecot.
  [t, receiver, dovecot] = await Promise.all([startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true" }), startReceiver(), startDovecot()]);
  const outer = express();
  outer.disable("x-powered-by");
  outer.use(breakResponses.middleware);
  outer.use(t.express);
  server = outer.listen(0, "127.0.0.1");
  await once(server, "listening");
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}${BASE_PATH}`;
  // The example customer's poller logs in as its owner credential's email: the customer's email.
  const exampleCustomer = operations["POST /customers"]?.requestExample as { email: string };
  dovecot.addUser(exampleCustomer.email, MAILBOX_PASSWORD);
  contract = {
    baseUrl: endpoint,
    basePath: BASE_PATH,
    operations,
    fixtures: await seedFixtures(endpoint, operations, receiver.url, { host: dovecot.host, port: dovecot.port, tls: false, password: MAILBOX_PASSWORD }),
    alternativeRuns: ALTERNATIVES.length,
  };
}, WHOLE_RUN_MS);
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await t?.dispose();
  await receiver?.close();
  await dovecot?.stop();
});

/**
 * {@link runDredd} on fresh connections. Dredd keeps its keep-alive sockets between runs and then
 * spends seconds parsing the document without reading them; a server-side idle close in that time
 * reaches it as a reset on the next run's first request. Closing the idle sockets first (and letting
 * the clients see it) makes every run open its own.
 */
async function dredd(options: Parameters<typeof runDredd>[0]): Promise<DreddRun> {
  server.closeIdleConnections();
  await waitFor("Dredd's idle sockets to the server to close", () => (idleClientSockets(server) === 0 ? true : undefined));
  return runDredd(options);
}

/** Idle keep-alive sockets that Node's global agent (Dredd's) keeps open to `server`. */
function idleClientSockets(server: Server): number {
  const port = String((server.address() as AddressInfo).port);
  return Object.entries(globalAgent.freeSockets)
    .filter(([name]) => name.split(":")[1] === port)
    .reduce((n, [, sockets]) => n + (sockets?.length ?? 0), 0);
}

/** Tests of a run by operationId and expected status, with their outcome. */
const outcomes = (run: DreddRun) => outcomesOf(run, operations);

const byId = (operationId: string) => all.find((op) => op.operationId === operationId) as ContractOperation;
/** The negative control's transactions: successes and an error whose answers get a value of another type. */
const BROKEN = [
  transactionName(byId("getCustomer"), "200"),
  transactionName(byId("listCredentials"), "200"),
  transactionName(byId("getUser"), "200"),
  transactionName(byId("listUsers"), "200"),
  transactionName(byId("getCustomer"), "404"),
];
// Dredd's own check compares keys only; its example of an error even requires the optional
// `field`, so the key-only control runs the success cases.
const BROKEN_SUCCESSES = BROKEN.filter((name) => !name.includes(" > 404"));

describe("platform contract (Dredd)", () => {
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

  it("serves every implemented operation, its error cases and the 501 of any operation not built yet as the document says", () => {
    const { main: run, connections } = runs;
    expect(connections.all.length, "the connection watch saw Dredd's requests").toBeGreaterThan(0);
    expect(connections.outside, "connections outside 127.0.0.1").toEqual([]);
    const report = failureReport(run);
    expect(run.stats.failures, report).toBe(0);
    expect(run.stats.errors, report).toBe(0);

    const passed = outcomes(run);
    const passes = (operationId: string, status: string) => passed.get(`${operationId} ${status}`)?.includes("pass") ?? false;
    for (const op of implemented) expect(passes(op.operationId, successStatus(op)), `${op.operationId} ${successStatus(op)}`).toBe(true);
    for (const op of notImplemented) expect(passes(op.operationId, "501"), `${op.operationId} 501`).toBe(true);
    const errorPasses = (status: string) => implemented.filter((op) => passes(op.operationId, status)).map((op) => op.operationId);
    const errorStatuses = ["400", "401", "403", "404", "409", "422"];
    for (const status of errorStatuses) expect(errorPasses(status).length, `operations passing ${status}`).toBeGreaterThanOrEqual(3);

    // Every implemented success, every 501 (none today), and the 400/401/403/404/409/422 cases of at least three operations each.
    const minimum = implemented.length + notImplemented.length + errorStatuses.length * 3;
    expect(run.stats.passes).toBeGreaterThanOrEqual(minimum);
    expect(run.stats.passes + run.stats.skipped).toBe(run.stats.tests);
    console.info(`Dredd: ${run.stats.tests} transactions, ${run.stats.passes} passing, ${run.stats.skipped} skipped (minimum ${minimum} passes)`);
  });

  it("serves the alternative cases of statuses that arise in several ways, one Dredd run per alternative", () => {
    expect(runs.alternatives).toHaveLength(ALTERNATIVES.length);
    for (const [index, expected] of ALTERNATIVES.entries()) {
      const alternative = index + 1;
      const run = runs.alternatives[index]!;
      const report = failureReport(run);
      expect(run.stats.failures, report).toBe(0);
      expect(run.stats.errors, report).toBe(0);
      const passing = [...outcomes(run)].filter(([, statuses]) => statuses.includes("pass")).map(([key]) => key);
      expect(passing.sort(), `passing cases of alternative run ${alternative}`).toEqual([...expected].sort());
      expect(run.stats.passes + run.stats.skipped).toBe(run.stats.tests);
      console.info(`Dredd alternative run ${alternative}: ${run.stats.passes} passing, ${run.stats.skipped} skipped`);
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
