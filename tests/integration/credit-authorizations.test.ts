/**
 * Card authorizations on credit wallets over HTTP on a real PostgreSQL (docs/decisions/credit.md
 * "Authorizations"; spec/credit/authorizations.tsp): Authorize (approvals and declines, both 201),
 * Capture (whole and partial), Void, Read, List, the wallet's `amountHeld`, the four notification
 * types in the wallet's sequence, Idempotency-Key, 404/409/422, expiry on the tenant's clock, and 20
 * parallel authorizations over the available amount. Every response is checked against the credit
 * document by the test app.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { cardsScene, WALLETS, type CardTenant } from "../support/cards-scene.js";

const t = useTestApp();
const scene = cardsScene(t, "ca");
const { api, setClock, createWallet } = scene;
type Body = Record<string, unknown>;
type Tenant = CardTenant;

/** A tenant with the golden product, a registered notification URL, an active user and its clock at `clock` (tests/support/cards-scene.ts). */
const tenant = (clock = "2026-01-01T10:00:00Z"): Promise<Tenant> => scene.tenant(clock);

const authorize = (tn: Tenant, walletId: string, amount: number, key?: string, extra: Body = {}) => {
  const r = api().post(`${WALLETS}/${walletId}/authorizations`).set("x-api-key", tn.key);
  if (key) r.set("Idempotency-Key", key);
  return r.send({ amount, merchant: { name: "Corner store", mcc: "5411", country: "MX" }, ...extra });
};
const capture = (tn: Tenant, walletId: string, id: string, amount?: number) => {
  const r = api().post(`${WALLETS}/${walletId}/authorizations/${id}/capture`).set("x-api-key", tn.key);
  return amount === undefined ? r : r.send({ amount });
};
const voidIt = (tn: Tenant, walletId: string, id: string) => api().post(`${WALLETS}/${walletId}/authorizations/${id}/void`).set("x-api-key", tn.key);
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
const balances = (w: Body) => ({ availableAmount: w.availableAmount, amountHeld: w.amountHeld, principalOutstanding: w.principalOutstanding, totalDebt: w.totalDebt });

describe("authorize, capture, void", () => {
  it("an approval holds its amount, a partial capture books a charge and releases the rest, in the wallet's sequence", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const auth = await authorize(tn, w, 15000, undefined, { reference: "proc-1" });
    expect(auth.status, JSON.stringify(auth.body)).toBe(201);
    const a = auth.body.data as Body;
    expect(a).toMatchObject({ status: "approved", declineReason: null, amount: 15000, capturedAmount: 0, releasedAmount: 0, reference: "proc-1", isDuplicate: false, closedAt: null });
    expect(a.expiresAt).toBe("2026-01-09T00:00:00.000Z");
    expect(balances(await wallet(tn, w))).toEqual({ availableAmount: 85000, amountHeld: 15000, principalOutstanding: 0, totalDebt: 0 });

    await setClock(tn.customerId, "2026-01-02T09:00:00Z");
    const captured = await capture(tn, w, a.authorizationId as string, 12000);
    expect(captured.status, JSON.stringify(captured.body)).toBe(200);
    expect(captured.body.data).toMatchObject({ status: "captured", capturedAmount: 12000, releasedAmount: 3000, closedAt: "2026-01-02T09:00:00.000Z" });
    expect(balances(await wallet(tn, w))).toEqual({ availableAmount: 88000, amountHeld: 0, principalOutstanding: 12000, totalDebt: 12000 });

    const evs = await events(tn, w);
    expect(evs.map((e) => [e.sequence, e.type, e.amount, e.direction, e.affectsBalance])).toEqual([
      [1, "Autorizacion Aprobada", 15000, "debit", false],
      [2, "Autorizacion Capturada", 12000, "debit", true],
      [3, "Autorizacion Liberada", 3000, "credit", false],
    ]);
    expect(evs[0]!.walletDetails_after).toMatchObject({ amountHeld: 15000, totalDebt: 0 });
    expect(evs[1]!.walletDetails_after).toMatchObject({ amountHeld: 3000, principal_outstanding: 12000 });
    expect(evs[2]!.walletDetails_after).toMatchObject({ amountHeld: 0, principal_outstanding: 12000 });

    const again = await capture(tn, w, a.authorizationId as string);
    expect(again.status).toBe(409);
    expect(again.body.errors[0].code).toBe("CONFLICT");
  });

  it("capture without a body takes the whole amount; void releases the whole hold; closed ones answer 409", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const one = (await authorize(tn, w, 20000)).body.data as Body;
    const two = (await authorize(tn, w, 30000)).body.data as Body;
    expect(balances(await wallet(tn, w))).toMatchObject({ availableAmount: 50000, amountHeld: 50000 });
    const whole = await capture(tn, w, one.authorizationId as string);
    expect(whole.body.data).toMatchObject({ status: "captured", capturedAmount: 20000, releasedAmount: 0 });
    const voided = await voidIt(tn, w, two.authorizationId as string);
    expect(voided.status).toBe(200);
    expect(voided.body.data).toMatchObject({ status: "voided", capturedAmount: 0, releasedAmount: 30000 });
    expect(balances(await wallet(tn, w))).toEqual({ availableAmount: 80000, amountHeld: 0, principalOutstanding: 20000, totalDebt: 20000 });
    expect((await voidIt(tn, w, two.authorizationId as string)).status).toBe(409);
    expect((await capture(tn, w, two.authorizationId as string)).status).toBe(409);
  });

  it("a capture above the authorized amount answers 409 and holds on", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const a = (await authorize(tn, w, 5000)).body.data as Body;
    const over = await capture(tn, w, a.authorizationId as string, 5001);
    expect(over.status).toBe(409);
    expect(over.body.errors[0].message).toMatch(/larger than the authorized amount/);
    expect(balances(await wallet(tn, w))).toMatchObject({ amountHeld: 5000, availableAmount: 95000 });
  });
});

describe("declines are answers, not errors", () => {
  it("INSUFFICIENT_CREDIT and WALLET_BLOCKED answer 201 declined, hold nothing and notify `Autorizacion Rechazada`", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const big = await authorize(tn, w, 100001);
    expect(big.status).toBe(201);
    expect(big.body.data).toMatchObject({ status: "declined", declineReason: "INSUFFICIENT_CREDIT", expiresAt: null, amount: 100001 });
    expect((await api().post(`${WALLETS}/${w}/block`).set("x-api-key", tn.key)).status).toBe(200);
    const blocked = await authorize(tn, w, 10);
    expect(blocked.body.data).toMatchObject({ status: "declined", declineReason: "WALLET_BLOCKED" });
    expect(balances(await wallet(tn, w))).toMatchObject({ availableAmount: 100000, amountHeld: 0 });
    expect((await events(tn, w)).map((e) => [e.type, e.amount, e.affectsBalance])).toEqual([
      ["Autorizacion Rechazada", 100001, false],
      ["Autorizacion Rechazada", 10, false],
    ]);
    const declinedId = (big.body.data as Body).authorizationId as string;
    expect((await capture(tn, w, declinedId)).status).toBe(409);
  });

  it("WALLET_EXPIRED past the wallet's time, WALLET_DISSOLVED after a dissolution (which voids the open holds)", async () => {
    const tn = await tenant();
    const timed = await createWallet(tn, { time: 3 });
    const open = (await authorize(tn, timed, 1000)).body.data as Body;
    await setClock(tn.customerId, "2026-01-04T10:00:00Z");
    expect((await authorize(tn, timed, 1000)).body.data).toMatchObject({ status: "declined", declineReason: "WALLET_EXPIRED" });
    expect((await api().post(`${WALLETS}/${timed}/dissolve`).set("x-api-key", tn.key)).status).toBe(200);
    expect((await authorize(tn, timed, 1000)).body.data).toMatchObject({ status: "declined", declineReason: "WALLET_DISSOLVED" });
    const read = await api().get(`${WALLETS}/${timed}/authorizations/${open.authorizationId as string}`).set("x-api-key", tn.key);
    expect(read.body.data).toMatchObject({ status: "voided", releasedAmount: 1000, closedAt: "2026-01-04T10:00:00.000Z" });
    expect(balances(await wallet(tn, timed))).toMatchObject({ amountHeld: 0, availableAmount: 100000 });
  });
});

describe("expiry on the tenant's clock", () => {
  it("an approval not captured expires at the first daily close after its TTL; a capture after that answers 409", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const a = (await authorize(tn, w, 7000)).body.data as Body;
    await setClock(tn.customerId, "2026-01-08T23:59:59Z");
    expect((await api().get(`${WALLETS}/${w}/authorizations/${a.authorizationId as string}`).set("x-api-key", tn.key)).body.data).toMatchObject({ status: "approved" });
    await setClock(tn.customerId, "2026-01-09T00:00:01Z");
    const late = await capture(tn, w, a.authorizationId as string);
    expect(late.status).toBe(409);
    const read = await api().get(`${WALLETS}/${w}/authorizations/${a.authorizationId as string}`).set("x-api-key", tn.key);
    expect(read.body.data).toMatchObject({ status: "expired", releasedAmount: 7000, closedAt: "2026-01-09T00:00:00.000Z" });
    expect(balances(await wallet(tn, w))).toMatchObject({ amountHeld: 0, availableAmount: 100000 });
    expect((await events(tn, w)).map((e) => e.type)).toEqual(["Autorizacion Aprobada", "Autorizacion Liberada"]);
  });
});

describe("reads, idempotency, errors", () => {
  it("lists newest first with paging, reads one, and hides other wallets' and tenants' authorizations (404)", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const other = await createWallet(tn);
    const ids: string[] = [];
    for (const amount of [100, 200, 300]) {
      ids.push(((await authorize(tn, w, amount)).body.data as Body).authorizationId as string);
      await setClock(tn.customerId, new Date(Date.parse("2026-01-01T10:00:00Z") + ids.length * 60_000).toISOString());
    }
    const page = await api().get(`${WALLETS}/${w}/authorizations?limit=2&offset=0`).set("x-api-key", tn.key);
    expect(page.status).toBe(200);
    expect(page.body.data).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect((page.body.data.items as Body[]).map((i) => i.amount)).toEqual([300, 200]);
    expect((await api().get(`${WALLETS}/${other}/authorizations/${ids[0]!}`).set("x-api-key", tn.key)).status).toBe(404);
    expect((await capture(tn, other, ids[0]!)).status).toBe(404);
    expect((await voidIt(tn, w, "not-a-uuid")).status).toBe(404);
    const stranger = await tenant();
    expect((await api().get(`${WALLETS}/${w}/authorizations/${ids[0]!}`).set("x-api-key", stranger.key)).status).toBe(404);
    expect((await authorize(stranger, w, 100)).status).toBe(404);
  });

  it("a repeated Idempotency-Key returns the first authorization once; another body answers 409", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    const first = await authorize(tn, w, 4000, "auth-key-1");
    const repeat = await authorize(tn, w, 4000, "auth-key-1");
    expect(repeat.status).toBe(201);
    expect(repeat.body.data).toMatchObject({ authorizationId: (first.body.data as Body).authorizationId, isDuplicate: true, idempotencyKey: "auth-key-1" });
    expect((await authorize(tn, w, 4001, "auth-key-1")).status).toBe(409);
    expect(balances(await wallet(tn, w))).toMatchObject({ amountHeld: 4000 });
  });

  it("invalid bodies answer 422 on the field", async () => {
    const tn = await tenant();
    const w = await createWallet(tn);
    for (const body of [{ amount: 0, merchant: { name: "x" } }, { amount: 10, merchant: { name: "x", mcc: "54a1" } }, { amount: 10, merchant: { name: "x", country: "mx" } }, { amount: 10 }]) {
      const res = await api().post(`${WALLETS}/${w}/authorizations`).set("x-api-key", tn.key).send(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors[0].code).toBe("VALIDATION_ERROR");
    }
  });
});

describe("concurrency", () => {
  it("20 parallel authorizations over the available amount approve at most what is available; the rest decline INSUFFICIENT_CREDIT", async () => {
    const tn = await tenant();
    const w = await createWallet(tn, { limit: 100000 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => authorize(tn, w, 7000)));
    const data = answers.map((r) => { expect(r.status).toBe(201); return r.body.data as Body; });
    const approved = data.filter((d) => d.status === "approved");
    expect(approved).toHaveLength(14);
    expect(data.filter((d) => d.status === "declined").every((d) => d.declineReason === "INSUFFICIENT_CREDIT")).toBe(true);
    expect(balances(await wallet(tn, w))).toEqual({ availableAmount: 2000, amountHeld: 98000, principalOutstanding: 0, totalDebt: 0 });
    const seqs = (await events(tn, w)).map((e) => e.sequence);
    expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });
});
