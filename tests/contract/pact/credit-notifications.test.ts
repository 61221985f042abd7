/**
 * Pact message contract of the credit notifications (issue 9 "Contract"): consumer
 * "credit-notification-receiver" (credit-receiver.ts, a tenant's handler of the bodies POSTed to its
 * `creditNotificationsURL`) and provider "custody-credit-notifications" (this service), in one file
 * so the pact is written before it is verified (vitest runs the describe blocks of a file in order):
 *
 * 1. consumer: one asynchronous message (Pact V4) per notification type, described with matchers
 *    (integers for cents and `sequence`, numbers for the rates, the `type`, `direction` and
 *    `affectsBalance` each type has in spec/credit/notifications.tsp pinned by `equal`); each
 *    message goes through the real receiver, which applies it to its record of the wallet;
 * 2. provider: the pact is verified against bodies the service makes on its own path. The provider
 *    state drives the real app over HTTP (tenant, golden product, NotificationsEnlist, sandbox
 *    clock, wallet, charge, ChangeInterestCreditCapital, clock advance through the cut and the grace
 *    end into default, two payments that cure it, ChangeWalletLimit), so every event is a
 *    `credit_event` row the service wrote; each message is that row read back with the ORM and
 *    turned into a body by `creditNotificationBody`, what the delivery sends; the bodies made are
 *    also compared with the consumer's examples, value for value, and with the bodies the real
 *    delivery POSTed to the tenant's (loopback) URL, which the receiver applies in order. Negative controls verify the same
 *    pact against bodies with a field renamed (`totalDebt` → `total_debt`) and with a field of
 *    another type (`sequence` as a string) and expect the verification to fail on exactly that field
 *    for every message (the verifier prints those failures; they are expected).
 *
 * The pact file goes to a fresh temporary directory, removed afterwards; set `PACT_DIR` (for
 * example `tests/contract/pact/pacts`, ignored by git) to keep it.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MatchersV3, MessageProviderPact, PactV4 } from "@pact-foundation/pact";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { creditNotificationBody, type CreditEventRow } from "../../../src/modules/credit/delivery.js";
import { CreditEvent } from "../../../src/modules/credit/wallet-entities.js";
import { TEST_MASTER_KEY, startTestApp, type TestApp } from "../../support/app.js";
import { Walk } from "../../support/fixtures.js";
import { startReceiver, type Receiver } from "../../support/webhook-receiver.js";
import { waitFor } from "../../support/wait.js";
import { GOLDEN_PRODUCT } from "../../support/credit-golden.js";
import {
  CreditReceiver,
  MalformedNotificationError,
  SequenceGapError,
  type NotificationType,
  type WalletDetails,
  type WalletRecord,
} from "./credit-receiver.js";

const { like, integer, number, equal } = MatchersV3;

const CONSUMER = "credit-notification-receiver";
const PROVIDER = "custody-credit-notifications";
const keepDir = process.env.PACT_DIR ? resolve(process.env.PACT_DIR) : undefined;
const pactDir = keepDir ?? mkdtempSync(join(tmpdir(), "pact-credit-"));
const pactFile = join(pactDir, `${CONSUMER}-${PROVIDER}.json`);

/** The one provider state: the provider sets it up once and answers every message from it. */
const STATE = "a revolving credit wallet went through a cut with an interest change, default, cure and a limit raise";
const EXAMPLE_WALLET = "5b1e7c2a-8d3f-4a6b-9c0d-1e2f3a4b5c6d";

// ── The example scenario (the golden product and default-and-cure of decisions.md §6) ──────

const SPECS_36 = { interestRateNominal: 36, interestRateMoroso: 12, fixedInterestNominal: 0, fixedInterestMoroso: 500 };
const SPECS_24 = { ...SPECS_36, interestRateNominal: 24 };
const MINIMUM = { minimumPaymentRate: 10, fixedMinimumPayment: 1000 };
const details = (ao: number, io: number, limit = 100000, interestSpecs = SPECS_24): WalletDetails => ({
  principal_outstanding: ao,
  interest_accrued: io,
  totalDebt: ao + io,
  limit,
  amountOverdraft: Math.max(0, ao + io - limit),
  interestSpecs,
  minimumPaymentSpecs: MINIMUM,
});

/** One notification of the example: the values the consumer's examples use. */
interface Step {
  type: NotificationType;
  amount: number;
  direction: "debit" | "credit";
  affectsBalance: boolean;
  sequence: number;
  after: WalletDetails;
}

/** The scenario's notifications in sequence order; each type's first one is a message of the pact. */
const STEPS: Step[] = [
  { type: "Interes Nominal Calculado", amount: 900, direction: "debit", affectsBalance: false, sequence: 1, after: details(30000, 0, 100000, SPECS_36) },
  { type: "Cambio Interest ejecutado", amount: 0, direction: "credit", affectsBalance: false, sequence: 2, after: details(30000, 0) },
  { type: "Interes Nominal Aplicado", amount: 900, direction: "debit", affectsBalance: true, sequence: 3, after: details(30000, 900) },
  { type: "Interes Moroso Calculado", amount: 800, direction: "debit", affectsBalance: false, sequence: 4, after: details(30000, 900) },
  { type: "Interes Moroso Aplicado", amount: 800, direction: "debit", affectsBalance: true, sequence: 5, after: details(30000, 1700) },
  { type: "Interes moroso ejecutado", amount: 800, direction: "debit", affectsBalance: false, sequence: 6, after: details(30000, 1700) },
  { type: "Reporte de Pago", amount: 3000, direction: "credit", affectsBalance: true, sequence: 7, after: details(28500, 200) },
  { type: "Interes cancelado", amount: 800, direction: "credit", affectsBalance: false, sequence: 9, after: details(26900, 0) },
  { type: "Credito Reintegrado", amount: 4800, direction: "credit", affectsBalance: true, sequence: 10, after: details(26900, 0) },
  { type: "Cambio de Limite", amount: 50000, direction: "credit", affectsBalance: true, sequence: 11, after: details(26900, 0, 150000) },
];

const description = (type: NotificationType) => `a '${type}' credit notification`;

/** `walletDetails_after` with matchers: integer cents, numeric rates; every field required. */
const detailsTemplate = (d: WalletDetails) => ({
  principal_outstanding: integer(d.principal_outstanding),
  interest_accrued: integer(d.interest_accrued),
  totalDebt: integer(d.totalDebt),
  limit: integer(d.limit),
  amountOverdraft: integer(d.amountOverdraft),
  interestSpecs: {
    interestRateNominal: number(d.interestSpecs.interestRateNominal),
    interestRateMoroso: number(d.interestSpecs.interestRateMoroso),
    fixedInterestNominal: integer(d.interestSpecs.fixedInterestNominal),
    fixedInterestMoroso: integer(d.interestSpecs.fixedInterestMoroso),
  },
  minimumPaymentSpecs: {
    minimumPaymentRate: number(d.minimumPaymentSpecs.minimumPaymentRate),
    fixedMinimumPayment: integer(d.minimumPaymentSpecs.fixedMinimumPayment),
  },
});

/**
 * The message of a step. `type`, `direction` and `affectsBalance` are fixed per type by the spec
 * (spec/credit/notifications.tsp table), so `equal` pins them; amounts, `sequence` and the
 * details are integers (cents) and numbers (rates) of any value; `walletId` any string.
 * `Cambio Interest ejecutado` always carries amount 0.
 */
const messageTemplate = (s: Step) => ({
  walletId: like(EXAMPLE_WALLET),
  type: equal(s.type),
  amount: s.type === "Cambio Interest ejecutado" ? equal(0) : integer(s.amount),
  direction: equal(s.direction),
  affectsBalance: equal(s.affectsBalance),
  walletDetails_after: detailsTemplate(s.after),
  sequence: integer(s.sequence),
});

/** The example body of a step, without matchers. */
const exampleBody = (s: Step) => ({
  walletId: EXAMPLE_WALLET,
  type: s.type,
  amount: s.amount,
  direction: s.direction,
  affectsBalance: s.affectsBalance,
  walletDetails_after: s.after,
  sequence: s.sequence,
});

// ── The receiver itself ───────────────────────────────────────────────────────────────────────

describe("the notification receiver", () => {
  it("applies a wallet's notifications in sequence order, keeping the latest walletDetails_after", () => {
    const receiver = new CreditReceiver();
    for (const s of STEPS.slice(0, 3)) expect(receiver.receive(exampleBody(s))).toBe("applied");
    expect(receiver.wallet(EXAMPLE_WALLET)).toEqual({ sequence: 3, details: STEPS[2]!.after, lastType: "Interes Nominal Aplicado" });
    expect(receiver.wallet("another-wallet")).toBeUndefined();
  });

  it("acknowledges a notification it already applied without changing its record (at-least-once delivery)", () => {
    const receiver = new CreditReceiver();
    for (const s of STEPS.slice(0, 2)) receiver.receive(JSON.stringify(exampleBody(s)));
    expect(receiver.receive(JSON.stringify(exampleBody(STEPS[0]!)))).toBe("duplicate");
    expect(receiver.wallet(EXAMPLE_WALLET)).toMatchObject({ sequence: 2, lastType: "Cambio Interest ejecutado" });
  });

  it("refuses a gap: a notification whose sequence is not the next one", () => {
    const receiver = new CreditReceiver();
    receiver.receive(exampleBody(STEPS[0]!));
    const gap = (() => {
      try {
        receiver.receive(exampleBody(STEPS[2]!));
      } catch (error) {
        return error;
      }
    })();
    expect(gap).toBeInstanceOf(SequenceGapError);
    expect(gap).toMatchObject({ walletId: EXAMPLE_WALLET, expected: 2, got: 3 });
    expect(() => new CreditReceiver().receive(exampleBody(STEPS[1]!))).toThrow(SequenceGapError);
    expect(receiver.wallet(EXAMPLE_WALLET)?.sequence).toBe(1);
  });

  it("refuses bodies of another shape, naming the field", () => {
    const body = exampleBody(STEPS[0]!);
    const broken: [unknown, string][] = [
      ["not json", "(body)"],
      [{ ...body, type: "Interes Desconocido" }, "type"],
      [{ ...body, direction: "up" }, "direction"],
      [{ ...body, affectsBalance: "false" }, "affectsBalance"],
      [{ ...body, amount: 9.5 }, "amount"],
      [{ ...body, sequence: 0 }, "sequence"],
      [{ ...body, walletDetails_after: { ...body.walletDetails_after, totalDebt: undefined, total_debt: 30000 } }, "walletDetails_after.totalDebt"],
      [{ ...body, walletDetails_after: { ...body.walletDetails_after, totalDebt: 1 } }, "walletDetails_after.totalDebt"],
      [{ ...body, walletDetails_after: { ...body.walletDetails_after, interestSpecs: { ...SPECS_36, interestRateNominal: "36" } } }, "walletDetails_after.interestSpecs.interestRateNominal"],
    ];
    for (const [input, path] of broken) {
      expect(() => new CreditReceiver().receive(input), path).toThrow(MalformedNotificationError);
      expect(() => new CreditReceiver().receive(input)).toThrow(expect.objectContaining({ path }));
    }
  });
});

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
            ? [[EXAMPLE_WALLET, { sequence: step.sequence - 1, details: previous.after, lastType: previous.type }]]
            : [];
          const receiver = new CreditReceiver(known);
          expect(receiver.receive(message.contents.content)).toBe("applied");
          expect(receiver.wallet(EXAMPLE_WALLET)).toEqual({ sequence: step.sequence, details: step.after, lastType: step.type });
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

/** The golden product of decisions.md §6 (revolving, simple interest, penal 12 % + 500). */
const GOLDEN = { creditProductCode: "001", ...GOLDEN_PRODUCT };

describe(`provider ${PROVIDER}`, () => {
  let t: TestApp;
  let hooks: Receiver;

  beforeAll(async () => {
    [t, hooks] = await Promise.all([startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true" }), startReceiver()]);
  });
  afterAll(async () => {
    await t?.dispose();
    await hooks?.close();
    if (!keepDir) rmSync(pactDir, { recursive: true, force: true });
  });

  /**
   * Sets {@link STATE} up through the API, once: a tenant with the golden product and a
   * notification URL, its sandbox clock at 2026-01-01, a wallet (limit 100000, first cut Jan 31)
   * charged 30000, an interest override (24 %) pending until the cut, the clock advanced to
   * Feb 10 01:00 (cut, grace end below the minimum: default), payments of 3000 and 1800 (cure),
   * and a limit raise to 150000. Answers the wallet id.
   */
  let scenario: Promise<string> | undefined;
  const setUp = (): Promise<string> => (scenario ??= runScenario());
  async function runScenario(): Promise<string> {
    const api = () => request(t.express);
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
    return walletId;
  }

  /** The body of the wallet's first stored event of `type`, built by `body` (the service's `creditNotificationBody`). */
  async function storedBody(type: NotificationType, body: (row: CreditEventRow) => unknown): Promise<unknown> {
    const walletId = await setUp();
    const [row] = await t.orm.em.fork().find(CreditEvent, { walletId, type }, { orderBy: { sequence: "asc" }, limit: 1 });
    if (!row) throw new Error(`the scenario emitted no '${type}' event`);
    return body(row);
  }

  /** What one verification did: the state set-ups and each message produced, by description. */
  interface Run {
    states: number;
    produced: Map<string, unknown>;
  }

  /** Verifies the pact against bodies made by `body`; `run` records what the verification asked for. */
  async function verify(body: (row: CreditEventRow) => unknown, run: Run = { states: 0, produced: new Map() }): Promise<void> {
    expect(existsSync(pactFile), `${pactFile} was not written: the consumer tests failed`).toBe(true);
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
    }).verify();
  }

  /** The verifier's failures (its JSON report, the message of the rejection): interaction → mismatches. */
  async function failuresOf(body: (row: CreditEventRow) => unknown): Promise<Map<string, { path: string; mismatch: string }[]>> {
    const error = await verify(body).then(() => undefined, (e: unknown) => e);
    expect(error, "the verification passed").toBeInstanceOf(Error);
    const report = JSON.parse((error as Error).message) as { errors: { interaction: string; mismatch: { mismatches: { path: string; mismatch: string }[] } }[] };
    return new Map(report.errors.map((e) => [e.interaction, e.mismatch.mismatches.map(({ path, mismatch }) => ({ path, mismatch }))]));
  }

  it("produces every message of the pact from the events the service stored", { timeout: 120_000 }, async () => {
    const run: Run = { states: 0, produced: new Map() };
    await verify(creditNotificationBody, run);
    expect(run.states).toBeGreaterThanOrEqual(STEPS.length);
    // The bodies the service made are the example scenario's, value for value (only the wallet id differs).
    const walletId = await setUp();
    expect(Object.fromEntries(run.produced)).toEqual(Object.fromEntries(STEPS.map((s) => [description(s.type), { ...exampleBody(s), walletId }])));
  });

  it("the bodies delivered to the tenant's URL are those bodies, and the receiver applies the wallet's whole stream", { timeout: 60_000 }, async () => {
    const walletId = await setUp();
    const rows = await t.orm.em.fork().find(CreditEvent, { walletId }, { orderBy: { sequence: "asc" } });
    expect(rows.map((r) => r.type)).toEqual(expect.arrayContaining(STEPS.map((s) => s.type)));
    const delivered = await waitFor("the wallet's notifications delivered", () => {
      // At least once: a retried notification repeats its webhook-id; keep each id's first copy.
      const byId = new Map<string, string>();
      for (const h of hooks.received) {
        if ((JSON.parse(h.body) as { walletId: string }).walletId === walletId && !byId.has(String(h.headers["webhook-id"]))) byId.set(String(h.headers["webhook-id"]), h.body);
      }
      return byId.size >= rows.length ? [...byId.values()] : undefined;
    }, 30_000);
    expect(delivered.map((b) => JSON.parse(b) as unknown)).toEqual(rows.map((r) => creditNotificationBody(r)));
    const receiver = new CreditReceiver();
    for (const body of delivered) expect(receiver.receive(body)).toBe("applied");
    expect(receiver.wallet(walletId)).toEqual({ sequence: rows.length, details: STEPS.at(-1)!.after, lastType: "Cambio de Limite" });
  });

  it("negative control: the verification fails when the body renames a field", { timeout: 120_000 }, async () => {
    const renamed = (row: CreditEventRow) => {
      const { walletDetails_after, ...rest } = creditNotificationBody(row);
      const { totalDebt, ...d } = walletDetails_after;
      return { ...rest, walletDetails_after: { ...d, total_debt: totalDebt } };
    };
    const failures = await failuresOf(renamed);
    expect(failures.size).toBe(STEPS.length);
    for (const mismatches of failures.values()) {
      expect(mismatches).toEqual([{ path: "$.walletDetails_after", mismatch: "Actual map is missing the following keys: totalDebt" }]);
    }
  });

  it("negative control: the verification fails when a field changes type", { timeout: 120_000 }, async () => {
    const stringSequence = (row: CreditEventRow): Record<string, unknown> => ({ ...creditNotificationBody(row), sequence: String(row.sequence) });
    const failures = await failuresOf(stringSequence);
    expect(failures.size).toBe(STEPS.length);
    for (const mismatches of failures.values()) expect(mismatches.map((m) => m.path)).toEqual(["$.sequence"]);
  });
});
