/**
 * Cards on credit wallets over HTTP on a real PostgreSQL (docs/decisions/cards.md;
 * spec/credit/cards.tsp): Issue (the number and security code in the 201 only, the number sealed
 * at rest and the code not kept), Get, List, Update (states, CLOSED final, no-op, controls replaced
 * and removed), the open-card limit under 12 concurrent issues, the dissolution closing the cards,
 * a wallet in default, another tenant's card, and the expiry on the tenant's clock. Every response
 * is checked against the credit document by the test app.
 */
import { describe, expect, it } from "vitest";
import { isLuhnValid } from "../../src/domain/cards.js";
import { SecretBox } from "../../src/modules/identity/secrets.js";
import { TEST_SECRETS_KEY, useTestApp } from "../support/app.js";
import { cardsScene, expectCreditError as expectError, WALLETS } from "../support/cards-scene.js";

const t = useTestApp();
const { api, setClock, tenant, createWallet, issue, issued, getCard, patch, list } = cardsScene(t, "cc");
type Body = Record<string, unknown>;

/** The stored row of card `cardId`, every column. */
async function row(cardId: string): Promise<Record<string, unknown>> {
  const [found] = await t.orm.em.fork().getConnection().execute(`select * from credit_card where card_id = ?`, [cardId]);
  return found as Record<string, unknown>;
}

describe("issue", () => {
  it("answers 201 with pan and cvv once; reads and lists show neither; the number is stored sealed only", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const controls = { perTransaction: 50000, monthly: 500000, blockedMcc: ["7995"], allowedCountries: ["MX", "US"] };
    const card = await issued(tn, w, { cardholderName: "Ana Torres", memo: "Field team", spendControls: controls });
    expect(card).toMatchObject({ walletId: w, state: "ACTIVE", cardholderName: "Ana Torres", memo: "Field team", expMonth: 1, expYear: 2029, spendControls: controls });
    expect(card.createdAt).toBe("2026-01-16T10:00:00.000Z");
    const pan = card.pan as string;
    expect(pan).toMatch(/^400000[0-9]{10}$/);
    expect(isLuhnValid(pan)).toBe(true);
    expect(card.last4).toBe(pan.slice(-4));
    expect(card.cvv).toMatch(/^[0-9]{3}$/);

    const read = await getCard(tn, card.cardId as string);
    expect(read.status).toBe(200);
    expect(read.body.data).not.toHaveProperty("pan");
    expect(read.body.data).not.toHaveProperty("cvv");
    const { pan: _pan, cvv: _cvv, ...shown } = card;
    expect(read.body.data).toEqual(shown);
    const page = await list(tn, w);
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual({ items: [shown], total: 1, limit: 20, offset: 0 });

    const stored = await row(card.cardId as string);
    const text = JSON.stringify(stored);
    expect(text).not.toContain(pan);
    expect(text).not.toContain(pan.slice(6, 15));
    expect(new SecretBox(TEST_SECRETS_KEY).open(stored.pan_sealed as string, `credit-card:${card.cardId as string}`)).toBe(pan);
    expect(() => new SecretBox(TEST_SECRETS_KEY).open(stored.pan_sealed as string, "credit-card:00000000-0000-4000-8000-000000000000")).toThrow();
    expect(Object.keys(stored).some((c) => /cvv|security/i.test(c))).toBe(false);
  });

  it("refuses bad input with 422 on the field", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    expectError(await issue(tn, w, {}), 422, "VALIDATION_ERROR", "cardholderName");
    expectError(await issue(tn, w, { cardholderName: "" }), 422, "VALIDATION_ERROR");
    expectError(await issue(tn, w, { cardholderName: "x".repeat(101) }), 422, "VALIDATION_ERROR");
    expectError(await issue(tn, w, { cardholderName: "A", spendControls: { allowedMcc: ["5411"], blockedMcc: ["7995"] } }), 422, "VALIDATION_ERROR", "spendControls.blockedMcc");
    expectError(await issue(tn, w, { cardholderName: "A", spendControls: { allowedCountries: ["XK"] } }), 422, "VALIDATION_ERROR", "spendControls.allowedCountries");
    expectError(await issue(tn, w, { cardholderName: "A", spendControls: { daily: 0 } }), 422, "VALIDATION_ERROR");
    expectError(await issue(tn, w, { cardholderName: "A", spendControls: { blockedMcc: ["79"] } }), 422, "VALIDATION_ERROR");
    expect((await list(tn, w)).body.data.total).toBe(0);
  });

  it("follows the tenant clock: the expiry is the issue month three years on, across a year end", async () => {
    const tn = await tenant("2026-12-31T23:59:00Z");
    const w = await createWallet(tn);
    expect(await issued(tn, w)).toMatchObject({ expMonth: 12, expYear: 2029, createdAt: "2026-12-31T23:59:00.000Z" });
    await setClock(tn.customerId, "2027-01-01T00:01:00Z");
    expect(await issued(tn, w)).toMatchObject({ expMonth: 1, expYear: 2030, createdAt: "2027-01-01T00:01:00.000Z" });
  });

  it("a dissolved wallet and a wallet in default cannot issue (409); a blocked one can", async () => {
    const tn = await tenant("2026-01-01T00:00:00Z");
    const blocked = await createWallet(tn);
    expect((await api().post(`${WALLETS}/${blocked}/block`).set("x-api-key", tn.key)).status).toBe(200);
    expect((await issue(tn, blocked)).status).toBe(201);

    const late = await createWallet(tn, { firstCutDate: "2026-01-31T00:00:00Z" });
    const charged = await api().post(`${WALLETS}/${late}/charges`).set("x-api-key", tn.key).send({ amount: 30000, description: "Hardware store" });
    expect(charged.status).toBe(201);
    await setClock(tn.customerId, "2026-02-10T01:00:00Z");
    // The refusal still commits the steps due before it: the wallet reads in default.
    expectError(await issue(tn, late), 409, "CONFLICT");
    expect((await api().get(`${WALLETS}/${late}`).set("x-api-key", tn.key)).body.data.status).toBe("in_default");

    const gone = await createWallet(tn);
    expect((await api().post(`${WALLETS}/${gone}/dissolve`).set("x-api-key", tn.key)).status).toBe(200);
    expectError(await issue(tn, gone), 409, "CONFLICT");
    expect((await list(tn, gone)).body.data.total).toBe(0);
  });
});

describe("open-card limit", () => {
  it("12 concurrent issues on one wallet: exactly 10 succeed, 2 answer 409; closing one frees a place, reactivating a paused one does not need one", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => issue(tn, w, { cardholderName: `Holder ${i}` })));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(2);
    for (const r of refused) expectError(r, 409, "CONFLICT");
    const pans = answers.filter((r) => r.status === 201).map((r) => r.body.data.pan as string);
    expect(new Set(pans).size).toBe(10);
    expect((await list(tn, w, "?limit=100")).body.data.total).toBe(10);

    const [first, second] = answers.filter((r) => r.status === 201).map((r) => r.body.data.cardId as string);
    expect((await patch(tn, first!, { state: "PAUSED" })).status).toBe(200);
    expectError(await issue(tn, w), 409, "CONFLICT");
    expect((await patch(tn, first!, { state: "ACTIVE" })).status).toBe(200);
    expect((await patch(tn, second!, { state: "CLOSED" })).status).toBe(200);
    expect((await issue(tn, w)).status).toBe(201);
    expectError(await issue(tn, w), 409, "CONFLICT");
  });
});

describe("update", () => {
  it("ACTIVE ↔ PAUSED, a no-op to the same state, controls replaced whole and removed with null, memo, then CLOSED is final", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const card = await issued(tn, w, { cardholderName: "Ana", memo: "m1", spendControls: { daily: 1000, allowedMcc: ["5411"] } });
    const id = card.cardId as string;

    await setClock(tn.customerId, "2026-01-17T08:00:00Z");
    const paused = await patch(tn, id, { state: "PAUSED" });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.data).toMatchObject({ state: "PAUSED", spendControls: { daily: 1000, allowedMcc: ["5411"] }, memo: "m1", updatedAt: "2026-01-17T08:00:00.000Z" });

    await setClock(tn.customerId, "2026-01-18T08:00:00Z");
    const same = await patch(tn, id, { state: "PAUSED" });
    expect(same.status).toBe(200);
    expect(same.body.data).toEqual(paused.body.data);

    const replaced = await patch(tn, id, { spendControls: { monthly: 90000 }, state: "ACTIVE" });
    expect(replaced.body.data).toMatchObject({ state: "ACTIVE", spendControls: { monthly: 90000 }, memo: "m1", updatedAt: "2026-01-18T08:00:00.000Z" });
    expectError(await patch(tn, id, { spendControls: { allowedMcc: ["5411"], blockedMcc: ["1234"] } }), 422, "VALIDATION_ERROR", "spendControls.blockedMcc");
    expectError(await patch(tn, id, { state: "LOST" }), 422, "VALIDATION_ERROR");
    const cleared = await patch(tn, id, { spendControls: null, memo: null });
    expect(cleared.body.data).toMatchObject({ spendControls: null, memo: null, state: "ACTIVE" });
    expect((await getCard(tn, id)).body.data).toEqual(cleared.body.data);

    const closed = await patch(tn, id, { state: "CLOSED" });
    expect(closed.status).toBe(200);
    expect(closed.body.data.state).toBe("CLOSED");
    expect((await row(id)).closed_at).not.toBeNull();
    expectError(await patch(tn, id, { state: "ACTIVE" }), 409, "CONFLICT");
    expectError(await patch(tn, id, { state: "CLOSED" }), 409, "CONFLICT");
    expectError(await patch(tn, id, { memo: "again" }), 409, "CONFLICT");
    expectError(await patch(tn, id, {}), 409, "CONFLICT");
    expect((await getCard(tn, id)).body.data).toMatchObject({ state: "CLOSED", memo: null });
  });

  it("a closed card may also be closed from PAUSED", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const id = (await issued(tn, w)).cardId as string;
    expect((await patch(tn, id, { state: "PAUSED" })).status).toBe(200);
    expect((await patch(tn, id, { state: "CLOSED" })).body.data.state).toBe("CLOSED");
  });
});

describe("dissolution and tenants", () => {
  it("dissolving the wallet closes its open cards in the same change", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const a = (await issued(tn, w)).cardId as string;
    const b = (await issued(tn, w)).cardId as string;
    expect((await patch(tn, b, { state: "PAUSED" })).status).toBe(200);
    const other = await createWallet(tn);
    const c = (await issued(tn, other)).cardId as string;
    await setClock(tn.customerId, "2026-01-20T12:00:00Z");
    expect((await api().post(`${WALLETS}/${w}/dissolve`).set("x-api-key", tn.key)).status).toBe(200);
    for (const id of [a, b]) {
      expect((await getCard(tn, id)).body.data).toMatchObject({ state: "CLOSED", updatedAt: "2026-01-20T12:00:00.000Z" });
      expectError(await patch(tn, id, { state: "ACTIVE" }), 409, "CONFLICT");
    }
    expect((await getCard(tn, c)).body.data.state).toBe("ACTIVE");
  });

  it("another tenant's card and wallet answer 404, as unknown ones", async () => {
    const one = await tenant();
    const two = await tenant();
    const w = await createWallet(one);
    const id = (await issued(one, w)).cardId as string;
    expectError(await getCard(two, id), 404, "NOT_FOUND");
    expectError(await patch(two, id, { state: "CLOSED" }), 404, "NOT_FOUND");
    expectError(await list(two, w), 404, "NOT_FOUND");
    expectError(await issue(two, w), 404, "NOT_FOUND");
    expectError(await getCard(one, "00000000-0000-4000-8000-000000000000"), 404, "NOT_FOUND");
    expectError(await getCard(one, "not-a-card"), 404, "NOT_FOUND");
    expect((await getCard(one, id)).body.data.state).toBe("ACTIVE");
  });

  it("lists newest first, paged", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      await setClock(tn.customerId, `2026-01-16T1${i}:00:00Z`);
      ids.push((await issued(tn, w)).cardId as string);
    }
    const page = await list(tn, w, "?limit=2&offset=1");
    expect(page.body.data).toMatchObject({ total: 3, limit: 2, offset: 1 });
    expect(page.body.data.items.map((c: Body) => c.cardId)).toEqual([ids[1], ids[0]]);
    expectError(await list(tn, w, "?limit=101"), 422, "VALIDATION_ERROR");
  });
});
