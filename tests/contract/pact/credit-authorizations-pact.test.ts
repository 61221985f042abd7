/**
 * Pact contract of the card authorizations on credit wallets (spec/credit/authorizations.tsp;
 * docs/decisions/credit.md "Authorizations"; docs/testing.md): consumer "card-processor" (a card
 * processor asking the credit core in real time) and provider "custody-credit-core". Both halves run
 * in this one file so that the pact is written before it is verified (vitest runs the describe
 * blocks of a file in order); the client, templates and provider states are in
 * credit-authorizations-setup.ts.
 *
 * 1. consumer: every interaction goes through a plain `fetch` client typed by
 *    generated/types/credit.ts against Pact's mock server: authorize approved and declined
 *    (`INSUFFICIENT_CREDIT`; both 201), a reused Idempotency-Key with another body (409), capture in
 *    part (200) and above the amount (409), refund of a captured authorization (201) and above
 *    its capture (409; docs/decisions/cards.md "Refunds"), authorize on a card (201 with `cardId`)
 *    and again with a processorReference sent before (201, the first one), void (200), read (200) and unknown (404),
 *    list (200), and a body out of range (422). Responses are described with matchers (types, UUIDs, ISO 8601
 *    times, regexes; `status`, `declineReason` and error codes pinned by `equal`), so the pact pins
 *    shapes, statuses and codes, not the example values.
 * 2. provider: the pact is replayed against the real app (real PostgreSQL, responses validated
 *    against the credit document) listening on 127.0.0.1. The provider states seed a tenant, the
 *    golden product, a wallet and authorizations through the app's HTTP API; the owner key they
 *    create differs on every run, so `requestFilter` swaps the pact's example key for the live one,
 *    and the ids they answer reach the paths and bodies through provider-state generators. A
 *    negative control replays the same pact through a proxy that renames `declineReason` in every
 *    answer and expects exactly the interactions that carry an authorization to fail. The
 *    verifications run once, in the provider half's `beforeAll`, under a whole-run time limit
 *    (tests/contract/whole-run.ts); its `it`s assert on the outcome.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { once } from "node:events";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PactV4, Verifier } from "@pact-foundation/pact";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../support/app.js";
import { startReceiver, type Receiver } from "../../support/webhook-receiver.js";
import { WHOLE_RUN_MS } from "../whole-run.js";
import {
  CONSUMER,
  CardProcessorClient,
  EXAMPLE_AUTHORIZATION,
  EXAMPLE_OWNER_KEY,
  EXAMPLE_WALLET,
  HELD,
  LIMIT,
  MERCHANT,
  PROVIDER,
  REFERENCE,
  STATE,
  UNKNOWN_AUTHORIZATION,
  USED_KEY,
  authorization,
  authorizationsPath,
  creditAuthorizationStates,
  failure,
  keepDir,
  ok,
  ownerKey,
  page,
  pactDir,
  pactFile,
  refundOf,
  cardAuthorizationsPath,
  onCard,
  EXAMPLE_CARD,
  USED_PROCESSOR_REFERENCE,
  traceHeader,
  type Answer,
  type Live,
} from "./credit-authorizations-setup.js";

/** The interactions the pact file holds: their descriptions. */
const descriptionsIn = (file: string): string[] =>
  (JSON.parse(readFileSync(file, "utf8")) as { interactions: { description: string }[] }).interactions.map((i) => i.description);

/** The body the consumer's answer carried, when it is a success. */
function data<T>(answer: Answer<{ data: T; meta: { traceId: string } }>, status: number): T {
  expect(answer.status).toBe(status);
  if (!answer.ok) throw new Error(`expected a success, got ${JSON.stringify(answer.body)}`);
  expect(answer.traceId).toBe(answer.body.meta.traceId);
  return answer.body.data;
}

/** The error codes of a failure answer. */
function codes(answer: Answer<unknown>, status: number): string[] {
  expect(answer.status).toBe(status);
  if (answer.ok) throw new Error(`expected an error, got ${JSON.stringify(answer.body)}`);
  return answer.body.errors.map((e) => e.code);
}

const client = (url: string) => new CardProcessorClient(url, EXAMPLE_OWNER_KEY);

/** The descriptions of the interactions whose answer carries a `CreditAuthorization` (the negative control fails exactly these). */
const CARRY_AUTHORIZATION: string[] = [];

// ── Consumer ──────────────────────────────────────────────────────────────────────────────────

describe(`consumer ${CONSUMER}`, () => {
  const pact = new PactV4({ consumer: CONSUMER, provider: PROVIDER, dir: pactDir, logLevel: "warn" });
  const withAuthorization = (description: string) => (CARRY_AUTHORIZATION.push(description), description);

  beforeAll(() => {
    // Pact merges into an existing file: start from none so a renamed interaction does not linger.
    rmSync(pactFile, { force: true });
  });

  it("authorizes a payment within the available amount: 201 approved, held until expiresAt", async () => {
    const body = { amount: HELD, merchant: MERCHANT, reference: REFERENCE };
    await pact
      .addInteraction()
      .given(STATE.wallet)
      .uponReceiving(withAuthorization("a request to authorize a payment within the available amount"))
      .withRequest("POST", authorizationsPath(), (b) => b.headers(ownerKey).jsonBody(body))
      .willRespondWith(201, (b) => b.headers(traceHeader()).jsonBody(ok(authorization({ status: "approved", amount: HELD }))))
      .executeTest(async (mock) => {
        const a = data(await client(mock.url).authorize(EXAMPLE_WALLET, body), 201);
        expect(a).toMatchObject({ status: "approved", declineReason: null, amount: HELD, capturedAmount: 0, releasedAmount: 0, closedAt: null, isDuplicate: false });
        expect(Date.parse(a.expiresAt!)).toBeGreaterThan(Date.parse(a.createdAt));
      });
  });

  it("authorizes a payment above the available amount: 201 declined INSUFFICIENT_CREDIT, nothing held", async () => {
    const body = { amount: LIMIT + 1, merchant: MERCHANT, reference: REFERENCE };
    await pact
      .addInteraction()
      .given(STATE.wallet)
      .uponReceiving(withAuthorization("a request to authorize a payment above the available amount"))
      .withRequest("POST", authorizationsPath(), (b) => b.headers(ownerKey).jsonBody(body))
      .willRespondWith(201, (b) =>
        b.headers(traceHeader()).jsonBody(ok(authorization({ status: "declined", declineReason: "INSUFFICIENT_CREDIT", amount: LIMIT + 1 }))),
      )
      .executeTest(async (mock) => {
        const a = data(await client(mock.url).authorize(EXAMPLE_WALLET, body), 201);
        expect(a).toMatchObject({ status: "declined", declineReason: "INSUFFICIENT_CREDIT", expiresAt: null, closedAt: null });
      });
  });

  it("reuses an Idempotency-Key with another body: 409 CONFLICT", async () => {
    const body = { amount: HELD + 1, merchant: MERCHANT, reference: REFERENCE };
    await pact
      .addInteraction()
      .given(STATE.keyUsed)
      .uponReceiving("a request to authorize with a used Idempotency-Key and another body")
      .withRequest("POST", authorizationsPath(), (b) => b.headers({ ...ownerKey, "Idempotency-Key": USED_KEY }).jsonBody(body))
      .willRespondWith(409, (b) => b.headers(traceHeader()).jsonBody(failure("CONFLICT", "The Idempotency-Key was used with another request.")))
      .executeTest(async (mock) => {
        expect(codes(await client(mock.url).authorize(EXAMPLE_WALLET, body, USED_KEY), 409)).toEqual(["CONFLICT"]);
      });
  });

  it("captures part of an approved authorization: 200 captured, the rest released", async () => {
    const captured = 12000;
    await pact
      .addInteraction()
      .given(STATE.approved)
      .uponReceiving(withAuthorization("a request to capture part of an approved authorization"))
      .withRequest("POST", authorizationsPath("/${authorizationId}/capture"), (b) => b.headers(ownerKey).jsonBody({ amount: captured }))
      .willRespondWith(200, (b) =>
        b.headers(traceHeader()).jsonBody(ok(authorization({ status: "captured", amount: HELD, capturedAmount: captured, releasedAmount: HELD - captured, fromState: true }))),
      )
      .executeTest(async (mock) => {
        const a = data(await client(mock.url).capture(EXAMPLE_WALLET, EXAMPLE_AUTHORIZATION, { amount: captured }), 200);
        expect(a).toMatchObject({ authorizationId: EXAMPLE_AUTHORIZATION, status: "captured", capturedAmount: captured, releasedAmount: HELD - captured });
        expect(a.closedAt).not.toBeNull();
      });
  });

  it("captures more than the authorized amount: 409 CONFLICT", async () => {
    await pact
      .addInteraction()
      .given(STATE.approved)
      .uponReceiving("a request to capture more than the authorized amount")
      .withRequest("POST", authorizationsPath("/${authorizationId}/capture"), (b) => b.headers(ownerKey).jsonBody({ amount: HELD + 1 }))
      .willRespondWith(409, (b) => b.headers(traceHeader()).jsonBody(failure("CONFLICT", "The capture is larger than the authorized amount.")))
      .executeTest(async (mock) => {
        expect(codes(await client(mock.url).capture(EXAMPLE_WALLET, EXAMPLE_AUTHORIZATION, { amount: HELD + 1 }), 409)).toEqual(["CONFLICT"]);
      });
  });

  it("refunds part of a captured authorization: 201 CreditRefund (docs/decisions/cards.md \"Refunds\")", async () => {
    const refunded = 4000;
    await pact
      .addInteraction()
      .given(STATE.captured)
      .uponReceiving("a request to refund part of a captured authorization")
      .withRequest("POST", authorizationsPath("/${authorizationId}/refund"), (b) => b.headers(ownerKey).jsonBody({ amount: refunded }))
      .willRespondWith(201, (b) => b.headers(traceHeader()).jsonBody(ok(refundOf(refunded))))
      .executeTest(async (mock) => {
        const r = data(await client(mock.url).refund(EXAMPLE_WALLET, EXAMPLE_AUTHORIZATION, { amount: refunded }), 201);
        expect(r).toMatchObject({ authorizationId: EXAMPLE_AUTHORIZATION, amount: refunded, appliedAmount: refunded, unappliedAmount: 0 });
      });
  });

  it("refunds more than was captured: 409 CONFLICT", async () => {
    await pact
      .addInteraction()
      .given(STATE.captured)
      .uponReceiving("a request to refund more than was captured")
      .withRequest("POST", authorizationsPath("/${authorizationId}/refund"), (b) => b.headers(ownerKey).jsonBody({ amount: HELD + 1 }))
      .willRespondWith(409, (b) => b.headers(traceHeader()).jsonBody(failure("CONFLICT", "The refund is larger than what is left of the capture.")))
      .executeTest(async (mock) => {
        expect(codes(await client(mock.url).refund(EXAMPLE_WALLET, EXAMPLE_AUTHORIZATION, { amount: HELD + 1 }), 409)).toEqual(["CONFLICT"]);
      });
  });

  it("authorizes on a card: 201 approved, carrying the card and the processor reference (docs/decisions/cards.md)", async () => {
    const body = { amount: HELD, merchant: MERCHANT, processorReference: "net-20260116-000200" };
    await pact
      .addInteraction()
      .given(STATE.card)
      .uponReceiving(withAuthorization("a request to authorize a payment on a card"))
      .withRequest("POST", cardAuthorizationsPath(), (b) => b.headers(ownerKey).jsonBody(body))
      .willRespondWith(201, (b) => b.headers(traceHeader()).jsonBody(ok({ ...authorization({ status: "approved", amount: HELD }), ...onCard(body.processorReference) })))
      .executeTest(async (mock) => {
        const a = data(await client(mock.url).authorizeCard(EXAMPLE_CARD, body), 201);
        expect(a).toMatchObject({ status: "approved", cardId: EXAMPLE_CARD, processorReference: body.processorReference, isDuplicate: false });
      });
  });

  it("authorizes on a card with a processorReference sent before: 201, the first authorization again", async () => {
    const body = { amount: HELD + 1, merchant: MERCHANT, processorReference: USED_PROCESSOR_REFERENCE };
    await pact
      .addInteraction()
      .given(STATE.cardReferenceUsed)
      .uponReceiving(withAuthorization("a request to authorize on a card with a processorReference sent before"))
      .withRequest("POST", cardAuthorizationsPath(), (b) => b.headers(ownerKey).jsonBody(body))
      .willRespondWith(201, (b) =>
        b.headers(traceHeader()).jsonBody(ok({ ...authorization({ status: "approved", amount: HELD, fromState: true }), ...onCard(USED_PROCESSOR_REFERENCE, true) })),
      )
      .executeTest(async (mock) => {
        const a = data(await client(mock.url).authorizeCard(EXAMPLE_CARD, body), 201);
        expect(a).toMatchObject({ authorizationId: EXAMPLE_AUTHORIZATION, amount: HELD, isDuplicate: true });
      });
  });

  it("voids an approved authorization: 200 voided, the whole hold released", async () => {
    await pact
      .addInteraction()
      .given(STATE.approved)
      .uponReceiving(withAuthorization("a request to void an approved authorization"))
      .withRequest("POST", authorizationsPath("/${authorizationId}/void"), (b) => b.headers(ownerKey))
      .willRespondWith(200, (b) => b.headers(traceHeader()).jsonBody(ok(authorization({ status: "voided", amount: HELD, releasedAmount: HELD, fromState: true }))))
      .executeTest(async (mock) => {
        const a = data(await client(mock.url).void(EXAMPLE_WALLET, EXAMPLE_AUTHORIZATION), 200);
        expect(a).toMatchObject({ status: "voided", capturedAmount: 0, releasedAmount: HELD });
      });
  });

  it("reads an approved authorization: 200", async () => {
    await pact
      .addInteraction()
      .given(STATE.approved)
      .uponReceiving(withAuthorization("a request to read an approved authorization"))
      .withRequest("GET", authorizationsPath("/${authorizationId}"), (b) => b.headers(ownerKey))
      .willRespondWith(200, (b) => b.headers(traceHeader()).jsonBody(ok(authorization({ status: "approved", amount: HELD, fromState: true }))))
      .executeTest(async (mock) => {
        const a = data(await client(mock.url).get(EXAMPLE_WALLET, EXAMPLE_AUTHORIZATION), 200);
        expect(a).toMatchObject({ authorizationId: EXAMPLE_AUTHORIZATION, walletId: EXAMPLE_WALLET, status: "approved", merchant: MERCHANT, reference: REFERENCE });
      });
  });

  it("reads an authorization unknown on the wallet: 404 NOT_FOUND", async () => {
    await pact
      .addInteraction()
      .given(STATE.wallet)
      .uponReceiving("a request to read an unknown authorization")
      .withRequest("GET", authorizationsPath(`/${UNKNOWN_AUTHORIZATION}`), (b) => b.headers(ownerKey))
      .willRespondWith(404, (b) => b.headers(traceHeader()).jsonBody(failure("NOT_FOUND", `Authorization '${UNKNOWN_AUTHORIZATION}' not found on this credit wallet.`)))
      .executeTest(async (mock) => {
        expect(codes(await client(mock.url).get(EXAMPLE_WALLET, UNKNOWN_AUTHORIZATION), 404)).toEqual(["NOT_FOUND"]);
      });
  });

  it("lists the wallet's authorizations: 200, a page", async () => {
    await pact
      .addInteraction()
      .given(STATE.approved)
      .uponReceiving(withAuthorization("a request to list the authorizations of a wallet"))
      .withRequest("GET", authorizationsPath(), (b) => b.headers(ownerKey).query({ limit: "20", offset: "0" }))
      .willRespondWith(200, (b) => b.headers(traceHeader()).jsonBody(ok(page(authorization({ status: "approved", amount: HELD, fromState: true }), 20, 0))))
      .executeTest(async (mock) => {
        const list = data(await client(mock.url).list(EXAMPLE_WALLET, { limit: 20, offset: 0 }), 200);
        expect(list).toMatchObject({ total: 1, limit: 20, offset: 0 });
        expect(list.items.map((i) => i.status)).toEqual(["approved"]);
      });
  });

  it("sends an amount out of range: 422 VALIDATION_ERROR on `amount`", async () => {
    const body = { amount: 0, merchant: MERCHANT };
    await pact
      .addInteraction()
      .given(STATE.wallet)
      .uponReceiving("a request to authorize an amount of 0")
      .withRequest("POST", authorizationsPath(), (b) => b.headers(ownerKey).jsonBody(body))
      .willRespondWith(422, (b) => b.headers(traceHeader()).jsonBody(failure("VALIDATION_ERROR", "must be >= 1", "amount")))
      .executeTest(async (mock) => {
        const answer = await client(mock.url).authorize(EXAMPLE_WALLET, body);
        expect(codes(answer, 422)).toEqual(["VALIDATION_ERROR"]);
        expect(!answer.ok && answer.body.errors[0]!.field).toBe("amount");
      });
  });

  it("wrote every interaction into one pact file, each under its own description", () => {
    expect(existsSync(pactFile), `${pactFile} was not written`).toBe(true);
    const descriptions = descriptionsIn(pactFile);
    expect(new Set(descriptions).size).toBe(descriptions.length);
    expect(descriptions).toHaveLength(14);
  });
});

// ── Provider ──────────────────────────────────────────────────────────────────────────────────

/** The outcome of one provider verification. */
interface Verification {
  pactWritten: boolean;
  interactions: number;
  /** What `verifyProvider` rejected with; undefined when every interaction passed. */
  error?: unknown;
  /** Provider states that could not be set up (`state: reason`). */
  failedStates: string[];
}

/** Replays the pact file against `providerBaseUrl`, seeding with `states` and swapping in the live owner key. */
async function verify(providerBaseUrl: string, states: ReturnType<typeof creditAuthorizationStates>, live: Live): Promise<Verification> {
  const outcome: Verification = { pactWritten: existsSync(pactFile), interactions: 0, failedStates: [] };
  if (!outcome.pactWritten) return outcome;
  outcome.interactions = descriptionsIn(pactFile).length;
  // Pact's proxy only logs a state handler's error and answers 200: record the errors to fail on.
  const guarded = Object.fromEntries(
    Object.entries(states).map(([name, handler]) => [
      name,
      async () => {
        try {
          return await handler();
        } catch (error) {
          outcome.failedStates.push(`${name}: ${(error as Error).message}`);
          throw error;
        }
      },
    ]),
  );
  await new Verifier({
    provider: PROVIDER,
    providerBaseUrl,
    pactUrls: [pactFile],
    stateHandlers: guarded,
    requestFilter: (req, _res, next) => {
      if (req.headers["x-api-key"] !== undefined && live.ownerKey) req.headers["x-api-key"] = live.ownerKey;
      next();
    },
    logLevel: "warn",
  })
    .verifyProvider()
    .catch((error: unknown) => (outcome.error = error));
  return outcome;
}

/**
 * The verifier's failures (its JSON report, the message of the rejection): interaction description
 * (the report names "Verifying a pact between … Given … - <description>") → mismatches.
 */
function failuresOf(v: Verification): Map<string, { path: string; mismatch: string }[]> {
  expect(v.error, "the verification passed").toBeInstanceOf(Error);
  const report = JSON.parse((v.error as Error).message) as { errors: { interaction: string; mismatch: { mismatches?: { path: string; mismatch: string }[] } }[] };
  return new Map(report.errors.map((e) => [e.interaction.split(" - ").at(-1)!, (e.mismatch.mismatches ?? []).map(({ path, mismatch }) => ({ path, mismatch }))]));
}

/**
 * A proxy in front of the app that renames `declineReason` to `decline_reason` in every JSON
 * answer (the negative control's broken provider).
 */
async function renamingProxy(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (c: Buffer) => chunks.push(c));
      answer.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8").replaceAll('"declineReason"', '"decline_reason"');
        const headers = { ...answer.headers, "content-length": String(Buffer.byteLength(body)) };
        res.writeHead(answer.statusCode ?? 502, headers).end(body);
      });
    });
    req.pipe(upstream);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return server;
}

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const close = (server: Server | undefined) => new Promise<void>((done) => (server ? server.close(() => done()) : done()));

describe(`provider ${PROVIDER} verifies the pact`, () => {
  let t: TestApp;
  let server: Server;
  let proxy: Server;
  let hooks: Receiver;
  let verification: Verification;
  let broken: Verification;

  beforeAll(async () => {
    // The tenants' notification URL is a real receiver on 127.0.0.1 (allowed only when private targets are).
    [t, hooks] = await Promise.all([startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true" }), startReceiver()]);
    server = t.express.listen(0, "127.0.0.1");
    await once(server, "listening");
    proxy = await renamingProxy(urlOf(server));
    const live: Live = {};
    const states = creditAuthorizationStates(t, live, hooks.url);
    verification = await verify(urlOf(server), states, live);
    broken = await verify(urlOf(proxy), states, live);
  }, WHOLE_RUN_MS);
  afterAll(async () => {
    await close(proxy);
    await close(server);
    await t?.dispose();
    await hooks?.close();
    if (!keepDir) rmSync(pactDir, { recursive: true, force: true });
  });

  it("replays every interaction against the real app", () => {
    expect(verification.pactWritten, `${pactFile} was not written: the consumer tests failed`).toBe(true);
    expect(verification.interactions).toBe(14);
    expect(verification.error, `the verification failed: ${String(verification.error)}`).toBeUndefined();
  });

  it("sets up every provider state the interactions name", () => {
    expect(verification.failedStates, "provider states that could not be set up").toEqual([]);
  });

  it("negative control: the verification fails, on exactly the interactions carrying an authorization, when the answers rename a field", () => {
    expect(broken.failedStates).toEqual([]);
    const failures = failuresOf(broken);
    expect([...failures.keys()].sort()).toEqual([...CARRY_AUTHORIZATION].sort());
    for (const [interaction, mismatches] of failures) {
      const path = interaction === "a request to list the authorizations of a wallet" ? "$.data.items[0]" : "$.data";
      expect(mismatches, interaction).toEqual([{ path, mismatch: "Actual map is missing the following keys: declineReason" }]);
    }
  });
});
