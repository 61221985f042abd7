/**
 * Authorize Card over HTTP on a real PostgreSQL (docs/decisions/cards.md "Authorize on a card";
 * spec/credit/cards.tsp `authorizeCard`): approvals and declines (201 both) in the card's order
 * before the wallet's, `declineDetail`, the spend windows on the tenant clock (a new UTC day and a
 * new month start again, a void gives spend back), `processorReference` answering the first
 * decision (also ten at once, and across two cards), `cardId` on the authorization and on every
 * notification of it (approval, decline, capture, void, expiry by the cycle batches, refund), a paused and
 * a closed card's holds still capturable, 404s, a set-aside wallet's 409; and under concurrency, 20 parallel authorizations
 * on one card whose daily control fits only some. Every response is checked against the credit
 * document by the test app.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { cardsScene, expectCreditError, WALLETS, type CardTenant } from "../support/cards-scene.js";

const t = useTestApp();
const scene = cardsScene(t, "cauth");
const { api, setClock, tenant, createWallet, issued, patch } = scene;
type Body = Record<string, unknown>;

let ref = 0;
/** A new processor reference. */
const nextRef = (): string => `net-${Date.now().toString(36)}-${++ref}`;
const MERCHANT = { name: "Hardware store", mcc: "5251", country: "US" };

/** Authorize Card of `amount` cents (201 expected); the authorization. */
async function authorize(tn: CardTenant, cardId: string, amount: number, extra: Body = {}): Promise<Body> {
  const res = await scene.authorize(tn, cardId, { amount, merchant: MERCHANT, processorReference: nextRef(), ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as Body;
}

/** A tenant, a wallet (limit 100 000 cents) and a card with `controls`. */
async function cardScene(controls?: Body, clock?: string): Promise<{ tn: CardTenant; walletId: string; cardId: string }> {
  const tn = await tenant(clock);
  const walletId = await createWallet(tn);
  const card = await issued(tn, walletId, { cardholderName: "Ana Torres", ...(controls ? { spendControls: controls } : {}) });
  return { tn, walletId, cardId: card.cardId as string };
}

async function events(tn: CardTenant, walletId: string): Promise<Body[]> {
  const res = await api().get(`${WALLETS}/${walletId}/events?limit=100`).set("x-api-key", tn.key);
  expect(res.status).toBe(200);
  return res.body.data.items as Body[];
}

async function wallet(tn: CardTenant, walletId: string): Promise<Body> {
  const res = await api().get(`${WALLETS}/${walletId}`).set("x-api-key", tn.key);
  expect(res.status).toBe(200);
  return res.body.data as Body;
}

const capture = (tn: CardTenant, walletId: string, authorizationId: string, amount?: number) =>
  api().post(`${WALLETS}/${walletId}/authorizations/${authorizationId}/capture`).set("x-api-key", tn.key).send(amount === undefined ? {} : { amount });
const voidIt = (tn: CardTenant, walletId: string, authorizationId: string) => api().post(`${WALLETS}/${walletId}/authorizations/${authorizationId}/void`).set("x-api-key", tn.key).send();

describe("decisions", () => {
  it("approves on the card's wallet, and the authorization and its notifications carry the card, through capture and void", async () => {
    const { tn, walletId, cardId } = await cardScene();
    const a = await authorize(tn, cardId, 15000, { reference: "proc-1" });
    expect(a).toMatchObject({ walletId, cardId, status: "approved", declineReason: null, declineDetail: null, amount: 15000, reference: "proc-1", isDuplicate: false });
    expect(a.idempotencyKey).toBe(a.processorReference);
    const b = await authorize(tn, cardId, 5000);
    expect(await wallet(tn, walletId)).toMatchObject({ amountHeld: 20000, availableAmount: 80000 });
    expect((await capture(tn, walletId, a.authorizationId as string, 12000)).body.data).toMatchObject({ status: "captured", cardId, capturedAmount: 12000, releasedAmount: 3000 });
    expect((await voidIt(tn, walletId, b.authorizationId as string)).body.data).toMatchObject({ status: "voided", cardId });
    const read = await api().get(`${WALLETS}/${walletId}/authorizations/${a.authorizationId as string}`).set("x-api-key", tn.key);
    expect(read.body.data).toMatchObject({ cardId, processorReference: a.processorReference });
    expect((await events(tn, walletId)).map((e) => [e.type, e.amount, e.cardId])).toEqual([
      ["Autorizacion Aprobada", 15000, cardId],
      ["Autorizacion Aprobada", 5000, cardId],
      ["Autorizacion Capturada", 12000, cardId],
      ["Autorizacion Liberada", 3000, cardId],
      ["Autorizacion Liberada", 5000, cardId],
    ]);
  });

  it("a refund of a card's capture, past the debt: Reembolso carries the card and the unapplied amount", async () => {
    const { tn, walletId, cardId } = await cardScene();
    const a = await authorize(tn, cardId, 10000);
    expect((await capture(tn, walletId, a.authorizationId as string)).status).toBe(200);
    const paid = await api().post(`${WALLETS}/${walletId}/payments`).set("x-api-key", tn.key).send({ amount: 4000 });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    const refunded = await api().post(`${WALLETS}/${walletId}/authorizations/${a.authorizationId as string}/refund`).set("x-api-key", tn.key).send({ amount: 10000 });
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(201);
    expect(refunded.body.data).toMatchObject({ amount: 10000, appliedAmount: 6000, unappliedAmount: 4000 });
    const last = (await events(tn, walletId)).at(-1)!;
    expect(last).toMatchObject({ type: "Reembolso", amount: 6000, unappliedAmount: 4000, cardId });
  });

  it("pauses (CARD_PAUSED, nothing held), reactivates, closes (CARD_CLOSED); a paused card's hold is still captured", async () => {
    const { tn, walletId, cardId } = await cardScene();
    const open = await authorize(tn, cardId, 1000);
    expect((await patch(tn, cardId, { state: "PAUSED" })).status).toBe(200);
    expect(await authorize(tn, cardId, 1000)).toMatchObject({ status: "declined", declineReason: "CARD_PAUSED", declineDetail: null, cardId });
    expect((await capture(tn, walletId, open.authorizationId as string)).body.data).toMatchObject({ status: "captured", cardId });
    expect((await patch(tn, cardId, { state: "ACTIVE" })).status).toBe(200);
    expect(await authorize(tn, cardId, 1000)).toMatchObject({ status: "approved" });
    expect((await patch(tn, cardId, { state: "CLOSED" })).status).toBe(200);
    expect(await authorize(tn, cardId, 1000)).toMatchObject({ status: "declined", declineReason: "CARD_CLOSED" });
    expect(await wallet(tn, walletId)).toMatchObject({ amountHeld: 1000, principalOutstanding: 1000 });
    const rejected = (await events(tn, walletId)).filter((e) => e.type === "Autorizacion Rechazada");
    expect(rejected.map((e) => e.cardId)).toEqual([cardId, cardId]);
  });

  it("checks the card before the wallet: a blocked wallet's card with a blocked MCC declines MCC_BLOCKED, then the wallet's reason", async () => {
    const { tn, walletId, cardId } = await cardScene({ blockedMcc: ["7995"], allowedCountries: ["US", "MX"] });
    expect((await api().post(`${WALLETS}/${walletId}/block`).set("x-api-key", tn.key)).status).toBe(200);
    expect(await authorize(tn, cardId, 100, { merchant: { name: "Casino", mcc: "7995", country: "CA" } })).toMatchObject({ declineReason: "MCC_BLOCKED" });
    expect(await authorize(tn, cardId, 100, { merchant: { name: "Shop", mcc: "5411", country: "CA" } })).toMatchObject({ declineReason: "COUNTRY_BLOCKED" });
    expect(await authorize(tn, cardId, 100, { merchant: { name: "Shop", mcc: "5411" } })).toMatchObject({ declineReason: "COUNTRY_BLOCKED" });
    expect(await authorize(tn, cardId, 100, { merchant: { name: "Shop", mcc: "5411", country: "MX" } })).toMatchObject({ declineReason: "WALLET_BLOCKED" });
  });

  it("a dissolved wallet's card declines CARD_CLOSED", async () => {
    const { tn, walletId, cardId } = await cardScene();
    expect((await api().post(`${WALLETS}/${walletId}/dissolve`).set("x-api-key", tn.key)).status).toBe(200);
    expect(await authorize(tn, cardId, 100)).toMatchObject({ status: "declined", declineReason: "CARD_CLOSED" });
  });

  it("an expired card declines CARD_EXPIRED on the tenant clock", async () => {
    const { tn, cardId } = await cardScene(undefined, "2026-01-16T10:00:00Z");
    // the card is valid through 2029-01-31 (UTC); the clock is set, not advanced (no cycle steps run for three years)
    await setClock(tn.customerId, "2029-01-31T23:59:59Z");
    expect((await scene.getCard(tn, cardId)).body.data).toMatchObject({ expMonth: 1, expYear: 2029 });
    await setClock(tn.customerId, "2029-02-01T00:00:00Z");
    expect(await authorize(tn, cardId, 100)).toMatchObject({ status: "declined", declineReason: "CARD_EXPIRED" });
  });

  it("a set-aside wallet's card answers 409 CONFLICT and holds nothing", async () => {
    const { tn, walletId, cardId } = await cardScene();
    // set aside as the cycle batches do (docs/security.md "Money stays exact"), without the runaway amounts
    await t.orm.em.fork().getConnection().execute(`update credit_wallet set set_aside_at = now(), set_aside_reason = 'test: set aside' where wallet_id = ?`, [walletId]);
    expectCreditError(await scene.authorize(tn, cardId, { amount: 100, merchant: MERCHANT, processorReference: nextRef() }), 409, "CONFLICT");
    expect(await wallet(tn, walletId)).toMatchObject({ amountHeld: 0 });
  });

  it("unknown card, another tenant's card and a malformed id answer 404; a bad body 422", async () => {
    const { tn, cardId } = await cardScene();
    const stranger = await tenant();
    expectCreditError(await scene.authorize(stranger, cardId, { amount: 100, merchant: MERCHANT, processorReference: nextRef() }), 404, "NOT_FOUND");
    expectCreditError(await scene.authorize(tn, "00000000-0000-4000-8000-000000000000", { amount: 100, merchant: MERCHANT, processorReference: nextRef() }), 404, "NOT_FOUND");
    expectCreditError(await scene.authorize(tn, "not-a-card", { amount: 100, merchant: MERCHANT, processorReference: nextRef() }), 404, "NOT_FOUND");
    expectCreditError(await scene.authorize(tn, cardId, { amount: 100, merchant: MERCHANT }), 422, "VALIDATION_ERROR", "processorReference");
    expectCreditError(await scene.authorize(tn, cardId, { amount: 100, merchant: MERCHANT, processorReference: "x".repeat(65) }), 422, "VALIDATION_ERROR");
    expectCreditError(await scene.authorize(tn, cardId, { amount: 0, merchant: MERCHANT, processorReference: nextRef() }), 422, "VALIDATION_ERROR");
  });
});

describe("spend controls on the tenant clock", () => {
  it("declines past the daily control with what remains; a void gives spend back; the next UTC day starts again", async () => {
    const { tn, walletId, cardId } = await cardScene({ perTransaction: 30000, daily: 20000 }, "2026-01-16T10:00:00Z");
    const first = await authorize(tn, cardId, 15000);
    expect(await authorize(tn, cardId, 30001)).toMatchObject({ declineReason: "SPEND_LIMIT_EXCEEDED", declineDetail: { control: "perTransaction", limit: 30000, used: 0, remaining: 30000 } });
    const over = await authorize(tn, cardId, 6000);
    expect(over).toMatchObject({ status: "declined", declineReason: "SPEND_LIMIT_EXCEEDED", declineDetail: { control: "daily", limit: 20000, used: 15000, remaining: 5000 } });
    expect(await authorize(tn, cardId, 5000)).toMatchObject({ status: "approved" });
    expect(await authorize(tn, cardId, 1)).toMatchObject({ declineDetail: { control: "daily", used: 20000, remaining: 0 } });
    expect((await voidIt(tn, walletId, first.authorizationId as string)).status).toBe(200);
    expect(await authorize(tn, cardId, 15000)).toMatchObject({ status: "approved" });
    await setClock(tn.customerId, "2026-01-16T23:59:59Z");
    expect(await authorize(tn, cardId, 1)).toMatchObject({ declineReason: "SPEND_LIMIT_EXCEEDED" });
    await setClock(tn.customerId, "2026-01-17T00:00:00Z");
    expect(await authorize(tn, cardId, 20000)).toMatchObject({ status: "approved" });
  });

  it("counts a partial capture's amount only, and the month across its end", async () => {
    const { tn, walletId, cardId } = await cardScene({ monthly: 50000 }, "2026-01-31T20:00:00Z");
    const a = await authorize(tn, cardId, 40000);
    expect((await capture(tn, walletId, a.authorizationId as string, 10000)).status).toBe(200);
    expect(await authorize(tn, cardId, 40001)).toMatchObject({ declineDetail: { control: "monthly", limit: 50000, used: 10000, remaining: 40000 } });
    expect(await authorize(tn, cardId, 40000)).toMatchObject({ status: "approved" });
    expect(await authorize(tn, cardId, 1)).toMatchObject({ declineDetail: { control: "monthly", used: 50000, remaining: 0 } });
    await setClock(tn.customerId, "2026-02-01T00:00:00Z");
    expect(await authorize(tn, cardId, 40000)).toMatchObject({ status: "approved" });
  });

  it("a hold expired by the cycle batches gives its spend back, and its Autorizacion Liberada carries the card", async () => {
    const { tn, walletId, cardId } = await cardScene({ monthly: 10000 }, "2026-01-02T10:00:00Z");
    await authorize(tn, cardId, 10000);
    expect(await authorize(tn, cardId, 1)).toMatchObject({ declineReason: "SPEND_LIMIT_EXCEEDED" });
    const moved = await api().post("/v2/sandbox/clock/advance").set("x-api-key", tn.key).send({ days: 8 });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const released = (await events(tn, walletId)).filter((e) => e.type === "Autorizacion Liberada");
    expect(released.map((e) => [e.amount, e.cardId])).toEqual([[10000, cardId]]);
    expect(await authorize(tn, cardId, 10000)).toMatchObject({ status: "approved" });
  });
});

describe("processorReference", () => {
  it("answers the first decision again, whatever the new body, and holds nothing more", async () => {
    const { tn, walletId, cardId } = await cardScene({ daily: 10000 });
    const reference = nextRef();
    const first = await authorize(tn, cardId, 4000, { processorReference: reference });
    const again = await authorize(tn, cardId, 9999, { processorReference: reference, merchant: { name: "Other" } });
    expect(again).toEqual({ ...first, isDuplicate: true });
    const declined = await authorize(tn, cardId, 20000);
    expect(await authorize(tn, cardId, 1, { processorReference: declined.processorReference })).toEqual({ ...declined, isDuplicate: true });
    expect(await wallet(tn, walletId)).toMatchObject({ amountHeld: 4000 });
    expect((await events(tn, walletId)).map((e) => e.type)).toEqual(["Autorizacion Aprobada", "Autorizacion Rechazada"]);
  });

  it("sent 10 times at once holds once; on two cards of two wallets at once, both answer the first", async () => {
    const { tn, walletId, cardId } = await cardScene();
    const reference = nextRef();
    const answers = await Promise.all(Array.from({ length: 10 }, () => scene.authorize(tn, cardId, { amount: 3000, merchant: MERCHANT, processorReference: reference })));
    const ids = new Set(answers.map((r) => { expect(r.status, JSON.stringify(r.body)).toBe(201); return (r.body.data as Body).authorizationId; }));
    expect(ids.size).toBe(1);
    expect(answers.filter((r) => r.body.data.isDuplicate === false)).toHaveLength(1);
    expect(await wallet(tn, walletId)).toMatchObject({ amountHeld: 3000 });

    const otherWallet = await createWallet(tn);
    const otherCard = (await issued(tn, otherWallet)).cardId as string;
    const shared = nextRef();
    const pair = await Promise.all([cardId, otherCard].map((c) => scene.authorize(tn, c, { amount: 700, merchant: MERCHANT, processorReference: shared })));
    expect(pair.map((r) => r.status)).toEqual([201, 201]);
    expect(new Set(pair.map((r) => r.body.data.authorizationId)).size).toBe(1);
    // one hold of 700 on the wallet of the card that came first
    const held = [(await wallet(tn, walletId)).amountHeld as number, (await wallet(tn, otherWallet)).amountHeld as number];
    expect(held[0]! + held[1]!).toBe(3700);
    expect([0, 700]).toContain(held[1]);
  });
});

describe("concurrency", () => {
  it("20 parallel authorizations on one card whose daily control fits only some: the approved sum never exceeds it", async () => {
    const { tn, walletId, cardId } = await cardScene({ daily: 50000 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => scene.authorize(tn, cardId, { amount: 7000, merchant: MERCHANT, processorReference: nextRef() })));
    const data = answers.map((r) => { expect(r.status, JSON.stringify(r.body)).toBe(201); return r.body.data as Body; });
    const approved = data.filter((d) => d.status === "approved");
    expect(approved).toHaveLength(7);
    const declined = data.filter((d) => d.status === "declined");
    expect(declined.every((d) => d.declineReason === "SPEND_LIMIT_EXCEEDED" && (d.declineDetail as Body).used === 49000 && (d.declineDetail as Body).remaining === 1000)).toBe(true);
    expect(await wallet(tn, walletId)).toMatchObject({ amountHeld: 49000, availableAmount: 51000 });
  });
});
