/**
 * Pact contract of the identity, wallet, transfer, trading, limits and allowlist, webhook and email poller
 * slices: consumer "platform-client" and provider "custody-platform-api" (docs/contract.md, docs/testing.md). Both halves run in this
 * one file so that the pact is written before it is verified (vitest runs the files in parallel,
 * the describe blocks of one file in order); the consumer cases live in one module per resource
 * group under platform/, with their shared setup in platform/setup.ts.
 *
 * 1. consumer: every interaction goes through the client generated from the platform document
 *    (generated/client/platform/, platform/client.ts) against Pact's mock server; responses are
 *    described with matchers (types, UUIDs, ISO 8601 times, regexes), so the pact pins shapes,
 *    statuses and error codes, not the example values. All cases write one pact file.
 * 2. provider: the pact is replayed against the real app (real PostgreSQL, responses validated
 *    against the emitted document) listening on 127.0.0.1. Provider states
 *    (platform/provider-states.ts) seed data through the services; the secrets they create differ
 *    on every run, so `requestFilter` swaps the pact's example credentials for the live ones. The
 *    verification runs once, in the provider half's `beforeAll`, under a whole-run time limit;
 *    its `it`s assert on the outcome.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PactV4, Verifier } from "@pact-foundation/pact";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, startTestApp, type TestApp } from "../../support/app.js";
import { startReceiver, type Receiver } from "../../support/webhook-receiver.js";
import { WHOLE_RUN_MS } from "../whole-run.js";
import { emailPollerCases } from "./platform/email-poller.js";
import { limitAndAddressCases } from "./platform/limits-addresses.js";
import { PlatformProviderStates, type LiveCredentials, type StateHandler } from "./platform/provider-states.js";
import { sessionAndCustomerCases } from "./platform/sessions-customers.js";
import { CONSUMER, EXAMPLE_USER_TOKEN, PROVIDER, RECEIVER_PORT, keepDir, pactDir, pactFile, type ConsumerPact } from "./platform/setup.js";
import { tradingCases } from "./platform/trading.js";
import { transferCases } from "./platform/transfers.js";
import { userCases } from "./platform/users.js";
import { walletCases } from "./platform/wallets.js";
import { webhookCases } from "./platform/webhooks.js";

/** The resource groups, in the order their cases run. */
const GROUPS = {
  "sessions and customers": sessionAndCustomerCases,
  users: userCases,
  "wallets, currencies and the sandbox": walletCases,
  transfers: transferCases,
  "quotes, orders and the sandbox price": tradingCases,
  "limits and the withdrawal allowlist": limitAndAddressCases,
  "customer webhook and delivery log": webhookCases,
  "email poller": emailPollerCases,
};

/** The interactions the pact file holds: their descriptions. */
const descriptionsIn = (file: string): string[] =>
  (JSON.parse(readFileSync(file, "utf8")) as { interactions: { description: string }[] }).interactions.map((i) => i.description);

/** Interactions the consumer cases added: each one must reach the pact file under its own description, and the provider replay them all. */
let added = 0;

// ── Consumer ──────────────────────────────────────────────────────────────────────────────────

describe(`consumer ${CONSUMER}`, () => {
  const pact = new PactV4({ consumer: CONSUMER, provider: PROVIDER, dir: pactDir, logLevel: "warn" });
  const counted: ConsumerPact = {
    addInteraction: () => {
      added += 1;
      return pact.addInteraction();
    },
  };

  beforeAll(() => {
    // Pact merges into an existing file: start from none so a renamed interaction does not linger.
    rmSync(pactFile, { force: true });
  });

  for (const [group, cases] of Object.entries(GROUPS)) {
    describe(group, () => {
      for (const { title, run } of cases) it(title, () => run(counted));
    });
  }

  it("wrote every interaction the cases added into one pact file, each under its own description", () => {
    expect(existsSync(pactFile), `${pactFile} was not written`).toBe(true);
    const descriptions = descriptionsIn(pactFile);
    expect(new Set(descriptions).size).toBe(descriptions.length);
    expect(descriptions.length).toBe(added);
  });
});

// ── Provider ──────────────────────────────────────────────────────────────────────────────────

/** The outcome of the provider verification. */
interface Verification {
  pactWritten: boolean;
  /** The interactions of the pact file it verified. */
  interactions: number;
  /** What `verifyProvider` rejected with; undefined when every interaction passed. */
  error?: unknown;
  /** Provider states that could not be set up (`state: reason`). */
  failedStates: string[];
}

/**
 * Pact's proxy only logs a state handler's error and answers 200, so the interaction would be
 * replayed against a state that was not set up: the wrapped handlers record the errors in
 * `failedStates` for the test to fail on.
 */
function guarded(handlers: Record<string, StateHandler>, failedStates: string[]): Record<string, StateHandler> {
  return Object.fromEntries(
    Object.entries(handlers).map(([name, handler]) => [
      name,
      async () => {
        try {
          return await handler();
        } catch (error) {
          failedStates.push(`${name}: ${(error as Error).message}`);
          throw error;
        }
      },
    ]),
  );
}

/** Replays the pact file against the app at `providerBaseUrl`, seeding with `states`. */
async function verify(providerBaseUrl: string, states: Record<string, StateHandler>, live: LiveCredentials): Promise<Verification> {
  const outcome: Verification = { pactWritten: existsSync(pactFile), interactions: 0, failedStates: [] };
  if (!outcome.pactWritten) return outcome;
  outcome.interactions = descriptionsIn(pactFile).length;
  await new Verifier({
    provider: PROVIDER,
    providerBaseUrl,
    pactUrls: [pactFile],
    stateHandlers: guarded(states, outcome.failedStates),
    // Example credentials of the pact → live ones of this run; a missing header stays missing.
    // The example bearer tells a user token from a session token.
    requestFilter: (req, _res, next) => {
      if (req.headers["x-master-api-key"] !== undefined) req.headers["x-master-api-key"] = TEST_MASTER_KEY;
      if (req.headers.authorization === `Bearer ${EXAMPLE_USER_TOKEN}`) {
        if (live.userToken) req.headers.authorization = `Bearer ${live.userToken}`;
      } else if (req.headers.authorization !== undefined && live.sessionToken) {
        req.headers.authorization = `Bearer ${live.sessionToken}`;
      }
      if (req.headers["x-api-key"] !== undefined && live.ownerKey) req.headers["x-api-key"] = live.ownerKey;
      next();
    },
    logLevel: "warn",
  })
    .verifyProvider()
    .catch((error: unknown) => (outcome.error = error));
  return outcome;
}

describe(`provider ${PROVIDER} verifies the pact`, () => {
  let t: TestApp;
  let server: Server;
  let receiver: Receiver;
  let verification: Verification;

  beforeAll(async () => {
    // Webhook targets are a real receiver on 127.0.0.1 (allowed only when private targets are).
    [t, receiver] = await Promise.all([startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true" }), startReceiver(RECEIVER_PORT)]);
    server = t.express.listen(0, "127.0.0.1");
    await once(server, "listening");
    const live: LiveCredentials = {};
    const states = new PlatformProviderStates(t, live).handlers();
    verification = await verify(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, states, live);
  }, WHOLE_RUN_MS);
  afterAll(async () => {
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
    await t?.dispose();
    await receiver?.close();
    if (!keepDir) rmSync(pactDir, { recursive: true, force: true });
  });

  it("replays every interaction against the real app", () => {
    expect(verification.pactWritten, `${pactFile} was not written: the consumer tests failed`).toBe(true);
    expect(verification.interactions, "interactions of the pact file: every one the consumer cases added").toBe(added);
    expect(verification.interactions).toBeGreaterThan(0);
    expect(verification.error, `the verification failed: ${String(verification.error)}`).toBeUndefined();
  });

  it("sets up every provider state the interactions name", () => {
    expect(verification.failedStates, "provider states that could not be set up").toEqual([]);
  });
});
