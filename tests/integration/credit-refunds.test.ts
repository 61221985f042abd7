/**
 * Refunds of captured card authorizations over HTTP on a real PostgreSQL (docs/decisions/cards.md
 * "Refunds"; spec/credit/refunds.tsp): the 201 `CreditRefund`, partial refunds up to the captured
 * amount then 409, 409 for an authorization that is not captured, 404s (unknown, another wallet's,
 * another tenant's), Idempotency-Key, the authorization's `refundedAmount`, the `Reembolso`
 * notification in the wallet's sequence with `unappliedAmount` (List Credit Wallet Events), and the
 * races: a refund against a capture of the same authorization, and refunds together above the
 * captured amount (exactly the allowed sum applies). Every response is checked against the credit
 * document by the test app.
 */
import { describe, expect, it } from "vitest";
import { Db } from "../../src/db/sql.js";
import { CreditEvent } from "../../src/modules/credit/accounts/entities.js";
import { creditNotificationBody } from "../../src/modules/credit/notifications/channel.js";
import { creditMessage } from "../../src/modules/credit/notifications/repository.js";
import { useTestApp } from "../support/app.js";
import { cardsScene, WALLETS, type CardTenant } from "../support/cards-scene.js";

const t = useTestApp();
const scene = cardsScene(t, "cr");
const { api, setClock, createWallet } = scene;
type Body = Record<string, unknown>;
type Tenant = CardTenant;

/** A tenant with the golden product, a registered notification URL, an active user and its clock at `clock` (tests/support/cards-scene.ts). */
const tenant = (clock = "2026-01-01T10:00:00Z"): Promise<Tenant> => scene.tenant(clock);

const authorize = async (tn: Tenant, walletId: string, amount: number): Promise<string> => {
  const res = await api().post(`${WALLETS}/${walletId}/authorizations`).set("x-api-key", tn.key).send({ amount, merchant: { name: "Corner store", mcc: "5411", country: "MX" } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect((res.body.data as Body).status).toBe("approved");
  return (res.body.data as Body).authorizationId as string;
};
const capture = (tn: Tenant, walletId: string, id: string, amount?: number) => {
  const r = api().post(`${WALLETS}/${walletId}/authorizations/${id}/capture`).set("x-api-key", tn.key);
  return amount === undefined ? r : r.send({ amount });
};
/** An authorization of `amount` captured whole. */
const captured = async (tn: Tenant, walletId: string, amount: number): Promise<string> => {
  const id = await authorize(tn, walletId, amount);
  const res = await capture(tn, walletId, id);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return id;
};
const refund = (tn: Tenant, walletId: string, id: string, amount: number, key?: string) => {
  const r = api().post(`${WALLETS}/${walletId}/authorizations/${id}/refund`).set("x-api-key", tn.key);
  if (key) r.set("Idempotency-Key", key);
  return r.send({ amount });
};
const authorization = async (tn: Tenant, walletId: string, id: string): Promise<Body> => {
  const res = await api().get(`${WALLETS}/${walletId}/authorizations/${id}`).set("x-api-key", tn.key);
  expect(res.status).toBe(200);
  return res.body.data as Body;
};
const wallet = async (tn: Tenant, walletId: string): Promise<Body> => {
  const res = await api().get(`${WALLETS}/${walletId}`).set("x-api-key", tn.key);
  expect(res.status).toBe(200);
  return res.body.data as Body;
};
const events = async (tn: Tenant, walletId: string): Promise<Body[]> => {
  const res = await api().get(`${WALLETS}/${walletId}/events?limit=100`).set("x-api-key", tn.key);
  expect(res.status).toBe(200);
  return res.body.data.items as Body[];
};
const balances = (w: Body) => ({ availableAmount: w.availableAmount, principalOutstanding: w.principalOutstanding, interestOutstanding: w.interestOutstanding, totalDebt: w.totalDebt });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("refund a captured authorization", () => {
  it("answers 201 CreditRefund, lowers principal, gives the available amount back, and notifies Reembolso in sequence", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const id = await captured(tn, w, 12000);
    await setClock(tn.customerId, "2026-01-03T09:00:00Z");
    const res = await refund(tn, w, id, 4000);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const r = res.body.data as Body;
    expect(r).toEqual({ refundId: expect.stringMatching(UUID), authorizationId: id, amount: 4000, appliedAmount: 4000, unappliedAmount: 0, createdAt: "2026-01-03T09:00:00.000Z" });
    expect(balances(await wallet(tn, w))).toEqual({ availableAmount: 92000, principalOutstanding: 8000, interestOutstanding: 0, totalDebt: 8000 });
    expect(await authorization(tn, w, id)).toMatchObject({ status: "captured", capturedAmount: 12000, releasedAmount: 0, refundedAmount: 4000 });

    const evs = await events(tn, w);
    expect(evs.map((e) => [e.sequence, e.type, e.amount, e.direction, e.affectsBalance, e.unappliedAmount])).toEqual([
      [1, "Autorizacion Aprobada", 12000, "debit", false, undefined],
      [2, "Autorizacion Capturada", 12000, "debit", true, undefined],
      [3, "Reembolso", 4000, "credit", true, 0],
    ]);
    expect(evs[2]!.walletDetails_after).toMatchObject({ principal_outstanding: 8000, interest_accrued: 0, totalDebt: 8000, amountHeld: 0, amountOverdraft: 0 });
    expect(evs[2]!.createdAt).toBe("2026-01-03T09:00:00.000Z");
  });

  it("partial refunds up to the captured amount, then 409; what exceeds the debt is unappliedAmount", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const id = await captured(tn, w, 12000);
    // the cardholder pays 7000 of the 12000: the debt is 5000
    const paid = await api().post(`${WALLETS}/${w}/payments`).set("x-api-key", tn.key).send({ amount: 7000 });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    const first = await refund(tn, w, id, 4000);
    expect(first.body.data).toMatchObject({ amount: 4000, appliedAmount: 4000, unappliedAmount: 0 });
    const second = await refund(tn, w, id, 8000);
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    expect(second.body.data).toMatchObject({ amount: 8000, appliedAmount: 1000, unappliedAmount: 7000 });
    expect(balances(await wallet(tn, w))).toEqual({ availableAmount: 100000, principalOutstanding: 0, interestOutstanding: 0, totalDebt: 0 });
    expect(await authorization(tn, w, id)).toMatchObject({ refundedAmount: 12000 });
    const beyond = await refund(tn, w, id, 1);
    expect(beyond.status).toBe(409);
    expect(beyond.body.errors[0].code).toBe("CONFLICT");
    const last = (await events(tn, w)).at(-1)!;
    expect(last).toMatchObject({ type: "Reembolso", amount: 1000, direction: "credit", affectsBalance: true, unappliedAmount: 7000 });
  });

  it("above what is left of the capture answers 409 and books nothing", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const id = await captured(tn, w, 5000);
    expect((await refund(tn, w, id, 3000)).status).toBe(201);
    const over = await refund(tn, w, id, 2001);
    expect(over.status).toBe(409);
    expect(over.body.errors[0].code).toBe("CONFLICT");
    expect(balances(await wallet(tn, w))).toMatchObject({ principalOutstanding: 2000 });
    expect((await authorization(tn, w, id)).refundedAmount).toBe(3000);
    expect((await events(tn, w)).filter((e) => e.type === "Reembolso")).toHaveLength(1);
  });

  it("an authorization that is not captured (approved, voided, partially captured beyond its capture) answers 409", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const open = await authorize(tn, w, 3000);
    const openRefund = await refund(tn, w, open, 1000);
    expect(openRefund.status).toBe(409);
    expect(openRefund.body.errors[0].code).toBe("CONFLICT");
    const voided = await authorize(tn, w, 2000);
    expect((await api().post(`${WALLETS}/${w}/authorizations/${voided}/void`).set("x-api-key", tn.key)).status).toBe(200);
    expect((await refund(tn, w, voided, 1000)).status).toBe(409);
    // a partial capture: only the captured part is refundable
    const partial = await authorize(tn, w, 9000);
    expect((await capture(tn, w, partial, 6000)).status).toBe(200);
    expect((await refund(tn, w, partial, 6001)).status).toBe(409);
    expect((await refund(tn, w, partial, 6000)).status).toBe(201);
    expect(await authorization(tn, w, partial)).toMatchObject({ capturedAmount: 6000, releasedAmount: 3000, refundedAmount: 6000 });
  });

  it("unknown, another wallet's and another tenant's authorizations answer 404; so does an unknown wallet", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const other = await createWallet(tn);
    const id = await captured(tn, w, 5000);
    for (const res of [
      await refund(tn, w, "7b1c2d3e-4f50-4a61-8b72-93a4b5c6d7e8", 100),
      await refund(tn, w, "not-a-uuid", 100),
      await refund(tn, other, id, 100),
      await refund(tn, "8c2d3e4f-5061-4b72-9c83-a4b5c6d7e8f9", id, 100),
    ]) {
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body.errors[0].code).toBe("NOT_FOUND");
    }
    const stranger = await tenant();
    expect((await refund(stranger, w, id, 100)).status).toBe(404);
    expect((await authorization(tn, w, id)).refundedAmount).toBe(0);
  });

  it("invalid amounts answer 422 on amount", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const id = await captured(tn, w, 5000);
    for (const body of [{ amount: 0 }, { amount: -1 }, { amount: 1000000000001 }, {}]) {
      const res = await api().post(`${WALLETS}/${w}/authorizations/${id}/refund`).set("x-api-key", tn.key).send(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors[0].code).toBe("VALIDATION_ERROR");
    }
  });

  it("a repeated Idempotency-Key answers the first refund and books nothing again; another body answers 409", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const id = await captured(tn, w, 5000);
    const first = await refund(tn, w, id, 1500, "refund-key-1");
    expect(first.status).toBe(201);
    const repeat = await refund(tn, w, id, 1500, "refund-key-1");
    expect(repeat.status).toBe(201);
    expect(repeat.body.data).toEqual(first.body.data);
    expect((await refund(tn, w, id, 1600, "refund-key-1")).status).toBe(409);
    expect((await authorization(tn, w, id)).refundedAmount).toBe(1500);
    expect(balances(await wallet(tn, w))).toMatchObject({ principalOutstanding: 3500 });
    expect((await events(tn, w)).filter((e) => e.type === "Reembolso")).toHaveLength(1);
  });
});

describe("the Reembolso notification", () => {
  it("its delivered body carries unappliedAmount; the other types' bodies do not", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const id = await captured(tn, w, 6000);
    expect((await api().post(`${WALLETS}/${w}/payments`).set("x-api-key", tn.key).send({ amount: 5000 })).status).toBe(201);
    expect((await refund(tn, w, id, 2500)).body.data).toMatchObject({ appliedAmount: 1000, unappliedAmount: 1500 });
    const rows = await t.orm.em.fork().find(CreditEvent, { walletId: w }, { orderBy: { sequence: "asc" } });
    expect(rows.map((r) => r.type)).toEqual(["Autorizacion Aprobada", "Autorizacion Capturada", "Reporte de Pago", "Reembolso"]);
    const sql = new Db(await t.orm.em.getConnection().getNativeClient(), { named: true });
    const bodies = await Promise.all(rows.map(async (r) => creditNotificationBody((await creditMessage(sql, r.id)).event)));
    expect(bodies.map((b) => [b.type, b.amount, b.sequence, b.unappliedAmount])).toEqual([
      ["Autorizacion Aprobada", 6000, 1, undefined],
      ["Autorizacion Capturada", 6000, 2, undefined],
      ["Reporte de Pago", 5000, 3, undefined],
      ["Reembolso", 1000, 4, 1500],
    ]);
    expect(bodies.slice(0, 3).every((b) => !("unappliedAmount" in b))).toBe(true);
    expect(Object.keys(bodies[3]!).at(-1)).toBe("unappliedAmount");
    expect(bodies[3]!.walletDetails_after).toMatchObject({ principal_outstanding: 0, totalDebt: 0, amountOverdraft: 0 });
  });
});

describe("concurrency (the wallet's lock serializes them)", () => {
  it("a refund racing a capture of the same authorization: refunded after the capture, or refused before it", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await authorize(tn, w, 10000));
    const answers = await Promise.all(ids.map((id) => Promise.all([capture(tn, w, id), refund(tn, w, id, 4000)])));
    let refunded = 0;
    for (const [i, [cap, ref]] of answers.entries()) {
      expect(cap.status, JSON.stringify(cap.body)).toBe(200);
      expect([201, 409], JSON.stringify(ref.body)).toContain(ref.status);
      const a = await authorization(tn, w, ids[i]!);
      expect(a).toMatchObject({ status: "captured", capturedAmount: 10000, refundedAmount: ref.status === 201 ? 4000 : 0 });
      if (ref.status === 201) refunded += 4000;
    }
    expect(balances(await wallet(tn, w))).toEqual({ availableAmount: 40000 + refunded, principalOutstanding: 60000 - refunded, interestOutstanding: 0, totalDebt: 60000 - refunded });
    const evs = await events(tn, w);
    expect(evs.map((e) => e.sequence)).toEqual(Array.from({ length: evs.length }, (_, i) => i + 1));
    expect(evs.filter((e) => e.type === "Reembolso")).toHaveLength(refunded / 4000);
  });

  it("refunds together above the captured amount: exactly the allowed sum applies, the others answer 409", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const id = await captured(tn, w, 10000);
    const answers = await Promise.all(Array.from({ length: 5 }, () => refund(tn, w, id, 3000)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 409, 409]);
    expect((await authorization(tn, w, id)).refundedAmount).toBe(9000);
    expect(balances(await wallet(tn, w))).toEqual({ availableAmount: 99000, principalOutstanding: 1000, interestOutstanding: 0, totalDebt: 1000 });
    expect((await events(tn, w)).filter((e) => e.type === "Reembolso").map((e) => e.amount)).toEqual([3000, 3000, 3000]);
  });
});
