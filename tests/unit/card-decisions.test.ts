/**
 * A card's own decision on an authorization (src/domain/cards.ts `cardDecline`, `spendWindows`,
 * `cardExpired`) and its place before the wallet's checks in the engine
 * (src/domain/credit/authorizations.ts `authorize` with `cardDecline`), against
 * docs/decisions/cards.md "Decline order" and "Spend controls": for every adjacent pair of reasons
 * in the order, a request that meets both gets the earlier one; the amount controls in the order
 * perTransaction, daily, monthly with `declineDetail`; the windows of the tenant clock's UTC day and
 * month across their boundaries; the expiry through the last day of the expiry month.
 */
import { describe, expect, it } from "vitest";
import { cardDecline, cardExpired, spendWindows, type CardForDecision, type CardSpend, type DecisionMerchant } from "../../src/domain/cards.js";
import { authorize } from "../../src/domain/credit/authorizations.js";
import type { Outcome } from "../../src/domain/credit/outcome.js";
import { blockWallet } from "../../src/domain/credit/simulate.js";
import { createWallet, type WalletState } from "../../src/domain/credit/wallet.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";

const d = (iso: string): Date => new Date(iso);
const AT = d("2026-03-15T12:00:00Z");
const NONE: CardSpend = { daily: 0, monthly: 0 };
const MERCHANT: DecisionMerchant = { mcc: "5411", country: "US" };

/** An ACTIVE card expiring 12/2028 with `controls`, changed by `change`. */
function card(change: Partial<CardForDecision> = {}): CardForDecision {
  return { state: "ACTIVE", expMonth: 12, expYear: 2028, spendControls: null, ...change };
}

/** What each reason needs of the card, the merchant and the spend, to apply at {@link AT} with amount 5000. */
const CAUSES = {
  CARD_CLOSED: { card: { state: "CLOSED" as const } },
  CARD_PAUSED: { card: { state: "PAUSED" as const } },
  CARD_EXPIRED: { card: { expMonth: 2, expYear: 2026 } },
  MCC_BLOCKED: { controls: { blockedMcc: ["5411"] } },
  COUNTRY_BLOCKED: { controls: { allowedCountries: ["MX"] } },
  SPEND_LIMIT_EXCEEDED: { controls: { perTransaction: 4999 } },
};
type Reason = keyof typeof CAUSES;

/** A card and merchant where every reason of `reasons` applies at once. */
function meeting(...reasons: Reason[]): CardForDecision {
  let c = card();
  for (const r of reasons) {
    const cause = CAUSES[r] as { card?: Partial<CardForDecision>; controls?: CardForDecision["spendControls"] };
    c = { ...c, ...cause.card, spendControls: cause.controls ? { ...c.spendControls, ...cause.controls } : c.spendControls };
  }
  return c;
}

describe("the decline order (docs/decisions/cards.md \"Decline order\")", () => {
  it.each(Object.keys(CAUSES) as Reason[])("%s alone", (reason) => {
    expect(cardDecline(meeting(reason), AT, 5000, MERCHANT, NONE)?.reason).toBe(reason);
  });

  // A card has one state: CLOSED and PAUSED never meet; the pair after CLOSED is CLOSED with an expiry.
  it.each([
    ["CARD_CLOSED", "CARD_EXPIRED"],
    ["CARD_PAUSED", "CARD_EXPIRED"],
    ["CARD_EXPIRED", "MCC_BLOCKED"],
    ["MCC_BLOCKED", "COUNTRY_BLOCKED"],
    ["COUNTRY_BLOCKED", "SPEND_LIMIT_EXCEEDED"],
  ] as [Reason, Reason][])("%s before %s", (first, second) => {
    const c = meeting(first, second);
    expect(cardDecline(meeting(second), AT, 5000, MERCHANT, NONE)?.reason).toBe(second);
    expect(cardDecline(c, AT, 5000, MERCHANT, NONE)?.reason).toBe(first);
  });

  it("a CLOSED card is declined CARD_CLOSED whatever else applies", () => {
    const everything = meeting("CARD_CLOSED", "CARD_EXPIRED", "MCC_BLOCKED", "COUNTRY_BLOCKED", "SPEND_LIMIT_EXCEEDED");
    expect(cardDecline(everything, AT, 5000, MERCHANT, NONE)).toEqual({ reason: "CARD_CLOSED", detail: null });
  });

  it("lets a card without controls, active and valid, through to the wallet", () => {
    expect(cardDecline(card(), AT, 10 ** 12, {}, { daily: 10 ** 12, monthly: 10 ** 12 })).toBeNull();
  });
});

describe("the card's reasons before the wallet's (the engine's authorize)", () => {
  const wallet = (): WalletState => {
    const created = createWallet(GOLDEN_PRODUCT, { walletId: "w1", createdAt: d("2026-03-01T00:00:00Z"), limit: 100000, firstCutDate: d("2026-03-31T00:00:00Z") });
    if (!created.ok) throw new Error(created.message);
    return created.value;
  };
  const decided = (o: ReturnType<typeof authorize>) => {
    if (!o.ok) throw new Error(o.message);
    return o.value;
  };
  const ok = <T>(o: Outcome<T>): T => {
    if (!o.ok) throw new Error(o.message);
    return o.value;
  };

  it("SPEND_LIMIT_EXCEEDED before WALLET_BLOCKED, the first of the wallet's", () => {
    const blocked = ok(blockWallet(wallet(), GOLDEN_PRODUCT, AT)).state;
    expect(decided(authorize(blocked, GOLDEN_PRODUCT, AT, { authorizationId: "a1", amount: 5000, ttlDays: 7 })).decision).toEqual({ status: "declined", reason: "WALLET_BLOCKED" });
    const both = decided(authorize(blocked, GOLDEN_PRODUCT, AT, { authorizationId: "a1", amount: 5000, ttlDays: 7, cardId: "c1", cardDecline: "SPEND_LIMIT_EXCEEDED" }));
    expect(both.decision).toEqual({ status: "declined", reason: "SPEND_LIMIT_EXCEEDED" });
  });

  it("SPEND_LIMIT_EXCEEDED before INSUFFICIENT_CREDIT; a card's decline holds nothing and carries the card", () => {
    const s = wallet();
    const both = decided(authorize(s, GOLDEN_PRODUCT, AT, { authorizationId: "a1", amount: 200000, ttlDays: 7, cardId: "c1", cardDecline: "SPEND_LIMIT_EXCEEDED" }));
    expect(both.decision).toEqual({ status: "declined", reason: "SPEND_LIMIT_EXCEEDED" });
    expect(both.state.amountHeld).toBe(0);
    expect(both.state.availableAmount).toBe(100000);
    expect(both.events.map((e) => [e.type, e.amount, e.cardId])).toEqual([["Autorizacion Rechazada", 200000, "c1"]]);
  });

  it("an approval on a card holds and carries the card on the hold and the event", () => {
    const approved = decided(authorize(wallet(), GOLDEN_PRODUCT, AT, { authorizationId: "a1", amount: 5000, ttlDays: 7, cardId: "c1", cardDecline: null }));
    expect(approved.decision.status).toBe("approved");
    expect(approved.state.holds).toMatchObject([{ authorizationId: "a1", amount: 5000, cardId: "c1" }]);
    expect(approved.events.map((e) => [e.type, e.cardId])).toEqual([["Autorizacion Aprobada", "c1"]]);
  });

  it("an authorization on the wallet carries no card", () => {
    const approved = decided(authorize(wallet(), GOLDEN_PRODUCT, AT, { authorizationId: "a1", amount: 5000, ttlDays: 7 }));
    expect(approved.state.holds[0]).not.toHaveProperty("cardId");
    expect(approved.events[0]).not.toHaveProperty("cardId");
  });
});

describe("MCC and country lists", () => {
  it.each([
    { controls: { allowedMcc: ["5411"] }, merchant: { mcc: "5411" }, reason: null },
    { controls: { allowedMcc: ["5411"] }, merchant: { mcc: "5812" }, reason: "MCC_BLOCKED" },
    { controls: { allowedMcc: ["5411"] }, merchant: {}, reason: "MCC_BLOCKED" },
    { controls: { blockedMcc: ["7995"] }, merchant: { mcc: "5411" }, reason: null },
    { controls: { blockedMcc: ["7995"] }, merchant: { mcc: "7995" }, reason: "MCC_BLOCKED" },
    { controls: { blockedMcc: ["7995"] }, merchant: {}, reason: "MCC_BLOCKED" },
    { controls: { allowedCountries: ["US", "MX"] }, merchant: { country: "MX" }, reason: null },
    { controls: { allowedCountries: ["US", "MX"] }, merchant: { country: "CA" }, reason: "COUNTRY_BLOCKED" },
    { controls: { allowedCountries: ["US"] }, merchant: { mcc: "5411" }, reason: "COUNTRY_BLOCKED" },
    { controls: { perTransaction: 100 }, merchant: {}, reason: null },
  ])("$controls with $merchant → $reason", ({ controls, merchant, reason }) => {
    expect(cardDecline(card({ spendControls: controls }), AT, 100, merchant, NONE)?.reason ?? null).toBe(reason);
  });
});

describe("amount controls (docs/decisions/cards.md \"Spend controls\")", () => {
  const controls = { perTransaction: 50000, daily: 80000, monthly: 300000 };
  it.each([
    { amount: 50000, spend: { daily: 30000, monthly: 250000 }, detail: null },
    { amount: 50001, spend: NONE, detail: { control: "perTransaction", limit: 50000, used: 0, remaining: 50000 } },
    // perTransaction before daily, daily before monthly
    { amount: 50001, spend: { daily: 80000, monthly: 300000 }, detail: { control: "perTransaction", limit: 50000, used: 0, remaining: 50000 } },
    { amount: 30001, spend: { daily: 50000, monthly: 270000 }, detail: { control: "daily", limit: 80000, used: 50000, remaining: 30000 } },
    { amount: 20001, spend: { daily: 10000, monthly: 280000 }, detail: { control: "monthly", limit: 300000, used: 280000, remaining: 20000 } },
    // a window already past its control (a control lowered after spending) leaves 0, never less
    { amount: 1, spend: { daily: 90000, monthly: 90000 }, detail: { control: "daily", limit: 80000, used: 90000, remaining: 0 } },
  ])("$amount on $spend", ({ amount, spend, detail }) => {
    const decision = cardDecline(card({ spendControls: controls }), AT, amount, MERCHANT, spend);
    expect(decision).toEqual(detail === null ? null : { reason: "SPEND_LIMIT_EXCEEDED", detail });
  });
});

describe("spend windows on the tenant clock (UTC day, calendar month)", () => {
  it.each([
    { at: "2026-03-15T12:00:00.000Z", day: "2026-03-15T00:00:00.000Z", month: "2026-03-01T00:00:00.000Z" },
    { at: "2026-03-15T00:00:00.000Z", day: "2026-03-15T00:00:00.000Z", month: "2026-03-01T00:00:00.000Z" },
    { at: "2026-03-14T23:59:59.999Z", day: "2026-03-14T00:00:00.000Z", month: "2026-03-01T00:00:00.000Z" },
    { at: "2026-03-31T23:59:59.999Z", day: "2026-03-31T00:00:00.000Z", month: "2026-03-01T00:00:00.000Z" },
    { at: "2026-04-01T00:00:00.000Z", day: "2026-04-01T00:00:00.000Z", month: "2026-04-01T00:00:00.000Z" },
    { at: "2028-02-29T08:00:00.000Z", day: "2028-02-29T00:00:00.000Z", month: "2028-02-01T00:00:00.000Z" },
    { at: "2026-12-31T23:59:59.000Z", day: "2026-12-31T00:00:00.000Z", month: "2026-12-01T00:00:00.000Z" },
    { at: "2027-01-01T00:00:00.000Z", day: "2027-01-01T00:00:00.000Z", month: "2027-01-01T00:00:00.000Z" },
  ])("$at → day $day, month $month", ({ at, day, month }) => {
    const w = spendWindows(d(at));
    expect([w.dayStart.toISOString(), w.monthStart.toISOString()]).toEqual([day, month]);
  });
});

describe("expiry through the last day of the expiry month (UTC)", () => {
  it.each([
    { expMonth: 2, expYear: 2028, at: "2028-02-29T23:59:59.999Z", expired: false },
    { expMonth: 2, expYear: 2028, at: "2028-03-01T00:00:00.000Z", expired: true },
    { expMonth: 12, expYear: 2028, at: "2028-12-31T23:59:59.999Z", expired: false },
    { expMonth: 12, expYear: 2028, at: "2029-01-01T00:00:00.000Z", expired: true },
    { expMonth: 1, expYear: 2029, at: "2026-01-16T10:00:00.000Z", expired: false },
  ])("$expMonth/$expYear at $at → $expired", ({ expMonth, expYear, at, expired }) => {
    expect(cardExpired({ expMonth, expYear }, d(at))).toBe(expired);
    expect(cardDecline(card({ expMonth, expYear }), d(at), 1, MERCHANT, NONE)?.reason ?? null).toBe(expired ? "CARD_EXPIRED" : null);
  });
});
