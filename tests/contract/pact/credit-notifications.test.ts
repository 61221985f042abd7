/**
 * Pact message contract of the credit notifications (docs/contract.md): consumer
 * "credit-notification-receiver" (credit-receiver.ts, a tenant's handler of the bodies POSTed to its
 * `creditNotificationsURL`) and provider "custody-credit-notifications" (this service), in one file
 * so the pact is written before it is verified (vitest runs the describe blocks of a file in order):
 *
 * 1. consumer: one asynchronous message (Pact V4) per notification type of the example scenario
 *    (credit-scenario.ts), described with matchers (integers for cents and `sequence`, numbers for
 *    the rates, the `type`, `direction` and `affectsBalance` each type has in
 *    spec/credit/notifications.tsp pinned by `equal`); each message goes through the real receiver
 *    (its own tests: credit-receiver.test.ts), which applies it to its record of the wallet;
 * 2. provider: the pact is verified against bodies the service makes on its own path. The provider
 *    state drives the real app over HTTP (tenant, golden product, NotificationsEnlist, sandbox
 *    clock, wallet, charge, ChangeInterestCreditCapital, clock advance through the cut and the grace
 *    end into default, two payments that cure it, ChangeWalletLimit, then card authorizations: one
 *    approved and captured in part, one declined above the available amount, one approved and
 *    voided; docs/decisions/credit.md "Authorizations"), so every event is a
 *    `credit_event` row the service wrote; each message is that row read back with the ORM and
 *    turned into a body by `creditNotificationBody`, what the delivery sends; the bodies made are
 *    also compared with the consumer's examples, value for value, and with the bodies the real
 *    delivery POSTed to the tenant's (loopback) URL, which the receiver applies in order. Negative
 *    controls verify the same pact against bodies with a field renamed (`totalDebt` → `total_debt`) and with a field of
 *    another type (`sequence` as a string) and expect the verification to fail on exactly that field
 *    for every message (the verifier prints those failures; they are expected). The three
 *    verifications and the wait for the delivered bodies run once, in the provider half's
 *    `beforeAll` under a whole-run time limit (tests/contract/whole-run.ts); its `it`s assert on
 *    what they produced.
 *
 * The pact file goes to a fresh temporary directory, removed afterwards; set `PACT_DIR` (for
 * example `tests/contract/pact/pacts`, ignored by git) to keep it.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MessageProviderPact, PactV4 } from "@pact-foundation/pact";
import type request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { creditNotificationBody, type CreditEventRow } from "../../../src/modules/credit/notifications/delivery.js";
import { CreditEvent } from "../../../src/modules/credit/accounts/entities.js";
import { TEST_MASTER_KEY, apiOf, startTestApp, type TestApp } from "../../support/app.js";
import { Walk } from "../../support/fixtures.js";
import { startReceiver, type Receiver } from "../../support/webhook-receiver.js";
import { waitFor } from "../../support/wait.js";
import { GOLDEN_PRODUCT } from "../../support/credit-golden.js";
import { WHOLE_RUN_MS } from "../whole-run.js";
import { CreditReceiver, recordOf, type NotificationType, type WalletRecord } from "./credit-receiver.js";
import {
  AUTH_APPROVED,
  AUTH_CAPTURED,
  AUTH_DECLINED,
  AUTH_VOIDED,
  EXAMPLE_WALLET,
  LATER_STEPS,
  STEPS,
  description,
  exampleBody,
  messageTemplate,
} from "./credit-scenario.js";

const CONSUMER = "credit-notification-receiver";
const PROVIDER = "custody-credit-notifications";
const keepDir = process.env.PACT_DIR ? resolve(process.env.PACT_DIR) : undefined;
const pactDir = keepDir ?? mkdtempSync(join(tmpdir(), "pact-credit-"));
const pactFile = join(pactDir, `${CONSUMER}-${PROVIDER}.json`);

/** The one provider state: the provider sets it up once and answers every message from it. */
const STATE = "a revolving credit wallet went through a cut with an interest change, default, cure, a limit raise and card authorizations";

// ── Consumer ──────────────────────────────────────────────────────────────────────────────────

describe(`consumer ${CONSUMER}`, () => {
  const pact = new PactV4({ consumer: CONSUMER, provider: PROVIDER, dir: pactDir, logLevel: "warn" });

  beforeAll(() => {
    // Pact merges into an existing file: start from none so a renamed message does not linger.
    rmSync(pactFile, { force: true });
  });

  for (const [index, step] of STEPS.entries()) {
    it(`applies ${description(step.type)} to its record of the wallet`, async () => {
      const previous = STEPS[index - 1];
      await pact
        .addAsynchronousInteraction()
        .given(STATE)
        .expectsToReceive(description(step.type), (b) => b.withJSONContent(messageTemplate(step)))
        .executeTest(async (message) => {
          // The receiver has applied the wallet's earlier notifications (its own storage).
          const known: [string, WalletRecord][] = previous
            ? [[EXAMPLE_WALLET, recordOf(step.sequence - 1, previous.after, previous.type)]]
            : [];
          const receiver = new CreditReceiver(known);
          expect(receiver.receive(message.contents.content)).toBe("applied");
          expect(receiver.wallet(EXAMPLE_WALLET)).toEqual(recordOf(step.sequence, step.after, step.type));
          expect(receiver.receive(message.contents.content)).toBe("duplicate");
        });
    });
  }

  it("wrote one message per notification type", async () => {
    expect(existsSync(pactFile)).toBe(true);
    const { readFile } = await import("node:fs/promises");
    const written = JSON.parse(await readFile(pactFile, "utf8")) as { interactions: { type: string; description: string }[] };
    expect(written.interactions.map((i) => [i.type, i.description]).sort()).toEqual(
      STEPS.map((s) => ["Asynchronous/Messages", description(s.type)]).sort(),
    );
  });
});

// ── Provider ──────────────────────────────────────────────────────────────────────────────────

/** The golden product (docs/decisions/credit.md, "The golden vector": revolving, simple interest, penal 12 % + 500). */
const GOLDEN = { creditProductCode: "001", ...GOLDEN_PRODUCT };

describe(`provider ${PROVIDER}`, () => {
  let t: TestApp;
  let hooks: Receiver;

  /**
   * Sets {@link STATE} up through the API, once: a tenant with the golden product and a
   * notification URL, its sandbox clock at 2026-01-01, a wallet (limit 100000, first cut Jan 31)
   * charged 30000, an interest override (24 %) pending until the cut, the clock advanced to
   * Feb 10 01:00 (cut, grace end below the minimum: default), payments of 3000 and 1800 (cure),
   * a limit raise to 150000, then card authorizations: AUTH_APPROVED approved and AUTH_CAPTURED of it
   * captured (the rest released), AUTH_DECLINED declined (`INSUFFICIENT_CREDIT`, above the
   * available amount), AUTH_VOIDED approved and voided. Answers the wallet id.
   */
  let scenario: Promise<string> | undefined;
  const setUp = (): Promise<string> => (scenario ??= runScenario());
  async function runScenario(): Promise<string> {
    const api = () => apiOf(t);
    const expectStatus = (res: request.Response, status: number) => expect(res.status, JSON.stringify(res.body)).toBe(status);
    const walk = new Walk(t.express);
    const { customerId, key } = await walk.tenant(`pact-credit-${Date.now().toString(36)}`);
    const { userId } = await walk.activeUserWithToken(key);
    expectStatus(await api().post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send({ customerId, ...GOLDEN }), 201);
    expectStatus(await api().put("/v2/notifications").set("x-api-key", key).send({ creditNotificationsURL: hooks.url }), 200);
    expectStatus(await api().put("/v2/sandbox/clock").set("x-api-key", key).send({ now: "2026-01-01T00:00:00Z" }), 200);
    const created = await api().post("/v2/wallet/credits").set("x-api-key", key)
      .send({ userId, currency: "USD", limit: 100000, firstCutDate: "2026-01-31T00:00:00Z", creditProductCode: "001" });
    expectStatus(created, 201);
    const walletId = created.body.data.walletId as string;
    const wallet = `/v2/wallet/credits/${walletId}`;
    expectStatus(await api().post(`${wallet}/charges`).set("x-api-key", key).send({ amount: 30000, description: "pact" }), 201);
    expectStatus(await api().put(`${wallet}/interest`).set("x-api-key", key).send({ interestRateNominal: 24 }), 200);
    expectStatus(await api().post("/v2/sandbox/clock/advance").set("x-api-key", key).send({ to: "2026-02-10T01:00:00Z" }), 200);
    expectStatus(await api().post(`${wallet}/payments`).set("x-api-key", key).send({ amount: 3000 }), 201);
    expectStatus(await api().post(`${wallet}/payments`).set("x-api-key", key).send({ amount: 1800 }), 201);
    expectStatus(await api().post(`${wallet}/limit`).set("x-api-key", key).send({ limit: 150000 }), 200);
    const authorize = async (amount: number, status: string): Promise<string> => {
      const res = await api().post(`${wallet}/authorizations`).set("x-api-key", key).send({ amount, merchant: { name: "Pact store", mcc: "5411", country: "US" } });
      expectStatus(res, 201);
      expect(res.body.data.status, JSON.stringify(res.body)).toBe(status);
      return res.body.data.authorizationId as string;
    };
    const captured = await authorize(AUTH_APPROVED, "approved");
    const capture = await api().post(`${wallet}/authorizations/${captured}/capture`).set("x-api-key", key).send({ amount: AUTH_CAPTURED });
    if (capture.status !== 200) {
      // Say what the authorization, the tenant's clock and the wallet's last events were when the capture was refused.
      const read = await api().get(`${wallet}/authorizations/${captured}`).set("x-api-key", key);
      const clock = await api().get("/v2/sandbox/clock").set("x-api-key", key);
      const events = await api().get(`${wallet}/events?limit=100`).set("x-api-key", key);
      throw new Error(`capture answered ${capture.status} ${JSON.stringify(capture.body)}; authorization ${JSON.stringify(read.body.data)}; clock ${JSON.stringify(clock.body.data)}; last events ${JSON.stringify((events.body.data?.items as unknown[] | undefined)?.slice(-3))}`);
    }
    expect((await api().get(`${wallet}`).set("x-api-key", key)).body.data.availableAmount).toBeLessThan(AUTH_DECLINED);
    await authorize(AUTH_DECLINED, "declined");
    const voided = await authorize(AUTH_VOIDED, "approved");
    expectStatus(await api().post(`${wallet}/authorizations/${voided}/void`).set("x-api-key", key), 200);
    return walletId;
  }

  /** The body of the wallet's first stored event of `type`, built by `body` (the service's `creditNotificationBody`). */
  async function storedBody(type: NotificationType, body: (row: CreditEventRow) => unknown): Promise<unknown> {
    const walletId = await setUp();
    const [row] = await t.orm.em.fork().find(CreditEvent, { walletId, type }, { orderBy: { sequence: "asc" }, limit: 1 });
    if (!row) throw new Error(`the scenario emitted no '${type}' event`);
    return body(row);
  }

  /** What one verification did: the state set-ups, each message produced by description, and what it rejected with (undefined: passed). */
  interface Run {
    states: number;
    produced: Map<string, unknown>;
    error?: unknown;
  }

  /** Verifies the pact against bodies made by `body`; the run records what the verification asked for and how it ended. */
  async function verify(body: (row: CreditEventRow) => unknown): Promise<Run> {
    const run: Run = { states: 0, produced: new Map() };
    await new MessageProviderPact({
      provider: PROVIDER,
      pactUrls: [pactFile],
      stateHandlers: {
        [STATE]: async () => {
          run.states += 1;
          await setUp();
        },
      },
      messageProviders: Object.fromEntries(
        STEPS.map((s) => [description(s.type), async () => {
          const produced = await storedBody(s.type, body);
          run.produced.set(description(s.type), produced);
          return produced;
        }]),
      ),
      logLevel: "warn",
    })
      .verify()
      .catch((error: unknown) => (run.error = error));
    return run;
  }

  /** The verifier's failures (its JSON report, the message of the rejection): interaction → mismatches. */
  function failuresOf(run: Run): Map<string, { path: string; mismatch: string }[]> {
    expect(run.error, "the verification passed").toBeInstanceOf(Error);
    const report = JSON.parse((run.error as Error).message) as { errors: { interaction: string; mismatch: { mismatches: { path: string; mismatch: string }[] } }[] };
    return new Map(report.errors.map((e) => [e.interaction, e.mismatch.mismatches.map(({ path, mismatch }) => ({ path, mismatch }))]));
  }

  const renamed = (row: CreditEventRow) => {
    const { walletDetails_after, ...rest } = creditNotificationBody(row);
    const { totalDebt, ...d } = walletDetails_after;
    return { ...rest, walletDetails_after: { ...d, total_debt: totalDebt } };
  };
  const stringSequence = (row: CreditEventRow): Record<string, unknown> => ({ ...creditNotificationBody(row), sequence: String(row.sequence) });

  /** Everything the `it`s check, made once. */
  let results: {
    pactWritten: boolean;
    walletId: string;
    verified: Run;
    rows: CreditEvent[];
    delivered: string[];
    renamedRun: Run;
    stringSequenceRun: Run;
  };

  beforeAll(async () => {
    const started = Date.now();
    [t, hooks] = await Promise.all([startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true" }), startReceiver()]);
    const pactWritten = existsSync(pactFile);
    const verified = await verify(creditNotificationBody);
    const walletId = await setUp();
    const rows = await t.orm.em.fork().find(CreditEvent, { walletId }, { orderBy: { sequence: "asc" } });
    // At least once: a retried notification repeats its webhook-id; keep each id's first copy.
    // The wait takes what is left of the hook's time limit (less a minute for the controls), so a
    // slow delivery loop on a busy machine does not fail it and a lost one still names itself.
    const delivered = await waitFor("the wallet's notifications delivered", () => {
      const byId = new Map<string, string>();
      for (const h of hooks.received) {
        if ((JSON.parse(h.body) as { walletId: string }).walletId === walletId && !byId.has(String(h.headers["webhook-id"]))) byId.set(String(h.headers["webhook-id"]), h.body);
      }
      return byId.size >= rows.length ? [...byId.values()] : undefined;
    }, WHOLE_RUN_MS - (Date.now() - started) - 60_000);
    const renamedRun = await verify(renamed);
    const stringSequenceRun = await verify(stringSequence);
    results = { pactWritten, walletId, verified, rows, delivered, renamedRun, stringSequenceRun };
  }, WHOLE_RUN_MS);
  afterAll(async () => {
    await t?.dispose();
    await hooks?.close();
    if (!keepDir) rmSync(pactDir, { recursive: true, force: true });
  });

  it("produces every message of the pact from the events the service stored", () => {
    const { pactWritten, verified, walletId } = results;
    expect(pactWritten, `${pactFile} was not written: the consumer tests failed`).toBe(true);
    expect(verified.error, `the verification failed: ${String(verified.error)}`).toBeUndefined();
    expect(verified.states).toBeGreaterThanOrEqual(STEPS.length);
    // The bodies the service made are the example scenario's, value for value (only the wallet id differs).
    expect(Object.fromEntries(verified.produced)).toEqual(Object.fromEntries(STEPS.map((s) => [description(s.type), { ...exampleBody(s), walletId }])));
  });

  it("the bodies delivered to the tenant's URL are those bodies, and the receiver applies the wallet's whole stream", () => {
    const { rows, delivered, walletId } = results;
    expect(rows.map((r) => r.type)).toEqual(expect.arrayContaining(STEPS.map((s) => s.type)));
    expect(delivered.map((b) => JSON.parse(b) as unknown)).toEqual(rows.map((r) => creditNotificationBody(r)));
    const receiver = new CreditReceiver();
    for (const body of delivered) expect(receiver.receive(body)).toBe("applied");
    const last = LATER_STEPS.at(-1)!;
    expect(rows.length).toBe(last.sequence);
    expect(rows.slice(-LATER_STEPS.length).map((r) => creditNotificationBody(r))).toEqual(LATER_STEPS.map((s) => ({ ...exampleBody(s), walletId })));
    expect(receiver.wallet(walletId)).toEqual(recordOf(last.sequence, last.after, "Autorizacion Liberada"));
    expect(receiver.wallet(walletId)?.details.amountHeld).toBe(0);
  });

  it("negative control: the verification fails when the body renames a field", () => {
    const failures = failuresOf(results.renamedRun);
    expect(failures.size).toBe(STEPS.length);
    for (const mismatches of failures.values()) {
      expect(mismatches).toEqual([{ path: "$.walletDetails_after", mismatch: "Actual map is missing the following keys: totalDebt" }]);
    }
  });

  it("negative control: the verification fails when a field changes type", () => {
    const failures = failuresOf(results.stringSequenceRun);
    expect(failures.size).toBe(STEPS.length);
    for (const mismatches of failures.values()) expect(mismatches.map((m) => m.path)).toEqual(["$.sequence"]);
  });
});
