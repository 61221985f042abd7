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
 *    turned into a body by `creditNotificationBody`, what the delivery sends. A negative control
 *    verifies the same pact against bodies with one field renamed and expects the verification to fail.
 *
 * The pact file goes to a fresh temporary directory, removed afterwards; set `PACT_DIR` (for
 * example `tests/contract/pact/pacts`, ignored by git) to keep it.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MatchersV3, PactV4 } from "@pact-foundation/pact";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

  afterAll(() => {
    if (!keepDir) rmSync(pactDir, { recursive: true, force: true });
  });
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
