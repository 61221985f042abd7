/**
 * The credit notification receiver of the message pact (credit-receiver.ts) on its own: it applies
 * a wallet's notifications in sequence order, acknowledges duplicates, refuses gaps and bodies of
 * another shape (docs/testing.md). The pact itself is credit-notifications.test.ts.
 */
import { describe, expect, it } from "vitest";
import { CreditReceiver, InconsistentNotificationError, MalformedNotificationError, SequenceGapError, recordOf } from "./credit-receiver.js";
import { EXAMPLE_WALLET, LATER_STEPS, SPECS_36, STEPS, exampleBody, type Step } from "./credit-scenario.js";

describe("the notification receiver", () => {
  it("applies a wallet's notifications in sequence order, keeping the latest walletDetails_after", () => {
    const receiver = new CreditReceiver();
    for (const s of STEPS.slice(0, 3)) expect(receiver.receive(exampleBody(s))).toBe("applied");
    expect(receiver.wallet(EXAMPLE_WALLET)).toEqual(recordOf(3, STEPS[2]!.after, "Interes Nominal Aplicado"));
    expect(receiver.wallet(EXAMPLE_WALLET)?.availableAmount).toBe(100000 - 30900);
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
      [{ ...body, walletDetails_after: { ...body.walletDetails_after, amountHeld: undefined } }, "walletDetails_after.amountHeld"],
      [{ ...body, walletDetails_after: { ...body.walletDetails_after, amountHeld: -1 } }, "walletDetails_after.amountHeld"],
      [{ ...body, type: "Autorizacion Pendiente" }, "type"],
      [{ ...body, walletDetails_after: { ...body.walletDetails_after, interestSpecs: { ...SPECS_36, interestRateNominal: "36" } } }, "walletDetails_after.interestSpecs.interestRateNominal"],
    ];
    for (const [input, path] of broken) {
      expect(() => new CreditReceiver().receive(input), path).toThrow(MalformedNotificationError);
      expect(() => new CreditReceiver().receive(input)).toThrow(expect.objectContaining({ path }));
    }
  });

  describe("card authorizations (docs/decisions/credit.md \"Authorizations\")", () => {
    /** The steps of the scenario from the limit raise on, then the void: the wallet's authorization stream. */
    const stream: Step[] = [...STEPS.slice(STEPS.findIndex((s) => s.type === "Cambio de Limite")), ...LATER_STEPS];
    /** A receiver that has applied the stream up to (and without) `step`. */
    const before = (step: Step) => {
      const previous = stream[stream.indexOf(step) - 1]!;
      return new CreditReceiver([[EXAMPLE_WALLET, recordOf(previous.sequence, previous.after, previous.type)]]);
    };
    const step = (type: string, index = 0) => stream.filter((s) => s.type === type)[index]!;

    it("applies holds: approval, partial capture and its release, decline, approval and void", () => {
      const first = stream[0]!;
      const receiver = new CreditReceiver([[EXAMPLE_WALLET, recordOf(first.sequence, first.after, first.type)]]);
      const seen: [string, number, number, number][] = [];
      for (const s of stream.slice(1)) {
        expect(receiver.receive(exampleBody(s)), s.type).toBe("applied");
        const r = receiver.wallet(EXAMPLE_WALLET)!;
        seen.push([r.lastType, r.details.amountHeld, r.details.principal_outstanding, r.availableAmount]);
      }
      expect(seen).toEqual([
        ["Autorizacion Aprobada", 20000, 26900, 103100],
        ["Autorizacion Capturada", 5000, 41900, 103100],
        ["Autorizacion Liberada", 0, 41900, 108100],
        ["Autorizacion Rechazada", 0, 41900, 108100],
        ["Autorizacion Aprobada", 10000, 41900, 98100],
        ["Autorizacion Liberada", 0, 41900, 108100],
      ]);
    });

    it("refuses an authorization notification whose walletDetails_after does not follow from the record", () => {
      const approved = step("Autorizacion Aprobada");
      const captured = step("Autorizacion Capturada");
      const released = step("Autorizacion Liberada");
      const declined = step("Autorizacion Rechazada");
      const broken: [Step, (b: ReturnType<typeof exampleBody>) => unknown, string][] = [
        // An approval that held another amount, or that moved the debt.
        [approved, (b) => ({ ...b, amount: b.amount + 1 }), "amountHeld"],
        [approved, (b) => ({ ...b, walletDetails_after: { ...b.walletDetails_after, principal_outstanding: 46900, totalDebt: 46900 } }), "principal_outstanding"],
        // A capture whose amount did not become principal.
        [captured, (b) => ({ ...b, walletDetails_after: { ...b.walletDetails_after, principal_outstanding: 26900, totalDebt: 26900, amountHeld: 5000 } }), "principal_outstanding"],
        // A release that kept the hold.
        [released, (b) => ({ ...b, walletDetails_after: { ...b.walletDetails_after, amountHeld: 5000 } }), "amountHeld"],
        // A decline that held something.
        [declined, (b) => ({ ...b, walletDetails_after: { ...b.walletDetails_after, amountHeld: b.amount } }), "amountHeld"],
        // A decline that booked interest.
        [declined, (b) => ({ ...b, walletDetails_after: { ...b.walletDetails_after, interest_accrued: 100, totalDebt: 42000 } }), "interest_accrued"],
      ];
      for (const [s, breakIt, field] of broken) {
        const receiver = before(s);
        const error = (() => {
          try {
            receiver.receive(breakIt(exampleBody(s)));
          } catch (e) {
            return e;
          }
        })();
        expect(error, `${s.type} → ${field}`).toBeInstanceOf(InconsistentNotificationError);
        expect(error).toMatchObject({ field, sequence: s.sequence });
        expect(receiver.wallet(EXAMPLE_WALLET)?.sequence, "the record is unchanged").toBe(s.sequence - 1);
        expect(before(s).receive(exampleBody(s)), "the body as sent applies").toBe("applied");
      }
    });
  });
});
