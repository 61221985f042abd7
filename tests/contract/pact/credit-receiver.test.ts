/**
 * The credit notification receiver of the message pact (credit-receiver.ts) on its own: it applies
 * a wallet's notifications in sequence order, acknowledges duplicates, refuses gaps and bodies of
 * another shape (docs/testing.md). The pact itself is credit-notifications.test.ts.
 */
import { describe, expect, it } from "vitest";
import { CreditReceiver, MalformedNotificationError, SequenceGapError } from "./credit-receiver.js";
import { EXAMPLE_WALLET, SPECS_36, STEPS, exampleBody } from "./credit-scenario.js";

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
