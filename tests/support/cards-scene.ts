/**
 * The scene of the card tests (docs/decisions/cards.md): a tenant with the golden credit product,
 * a registered notification URL, an active user and its credit clock set; credit wallets; cards
 * issued; and the requests of the card operations. Shared by the credit integration tests
 * of cards, authorizations and refunds.
 */
import type request from "supertest";
import { expect } from "vitest";
import { TEST_MASTER_KEY, type TestAppHandle } from "./app.js";
import { goldenProductBody } from "./credit-golden.js";
import { Walk } from "./fixtures.js";

/** The credit wallets' path. */
export const WALLETS = "/v2/wallet/credits";

type Body = Record<string, unknown>;

/** A tenant of the card tests. */
export interface CardTenant {
  customerId: string;
  key: string;
  userId: string;
}

/** The card tests' scene over test app `t`; `prefix` names its tenants. */
export function cardsScene(t: TestAppHandle, prefix: string) {
  let seq = 0;
  const api = () => t.api();

  /** Sets the tenant's credit clock (the sandbox clock's row) to `iso`. */
  async function setClock(customerId: string, iso: string): Promise<void> {
    await t.orm.em.fork().getConnection().execute(
      `insert into credit_clock (customer_id, "now", updated_at) values (?, ?, now()) on conflict (customer_id) do update set "now" = excluded."now", updated_at = now()`,
      [customerId, new Date(iso)],
    );
  }

  /** A tenant with the golden product, a registered notification URL, an active user and its clock at `clock`. */
  async function tenant(clock = "2026-01-16T10:00:00Z"): Promise<CardTenant> {
    const walk = new Walk(t.express);
    const { customerId, key } = await walk.tenant(`${prefix}-${++seq}-${Date.now().toString(36)}`);
    const product = await api().post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody(customerId));
    expect(product.status, JSON.stringify(product.body)).toBe(201);
    const enlisted = await api().put("/v2/notifications").set("x-api-key", key).send({ creditNotificationsURL: "https://93.184.215.14/credit-hooks" });
    expect(enlisted.status).toBe(200);
    const { userId } = await walk.activeUserWithToken(key);
    await setClock(customerId, clock);
    return { customerId, key, userId };
  }

  /** A credit wallet of the tenant's user (limit 100 000 cents unless `body` says otherwise); its id. */
  async function createWallet(tn: CardTenant, body: Body = {}): Promise<string> {
    const res = await api().post(WALLETS).set("x-api-key", tn.key).send({ userId: tn.userId, currency: "USD", limit: 100000, creditProductCode: "001", ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return (res.body.data as Body).walletId as string;
  }

  const issue = (tn: CardTenant, walletId: string, body: Body = { cardholderName: "Ana Torres" }) => api().post(`${WALLETS}/${walletId}/cards`).set("x-api-key", tn.key).send(body);

  /** Issues a card (201 expected); the answer's data. */
  async function issued(tn: CardTenant, walletId: string, body?: Body): Promise<Body> {
    const res = await issue(tn, walletId, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as Body;
  }

  return {
    api,
    setClock,
    tenant,
    createWallet,
    issue,
    issued,
    getCard: (tn: CardTenant, cardId: string) => api().get(`/v2/cards/${cardId}`).set("x-api-key", tn.key),
    patch: (tn: CardTenant, cardId: string, body: Body) => api().patch(`/v2/cards/${cardId}`).set("x-api-key", tn.key).send(body),
    list: (tn: CardTenant, walletId: string, query = "") => api().get(`${WALLETS}/${walletId}/cards${query}`).set("x-api-key", tn.key),
    authorize: (tn: CardTenant, cardId: string, body: Body) => api().post(`/v2/cards/${cardId}/authorizations`).set("x-api-key", tn.key).send(body),
  };
}

/** Expects the credit surface's error envelope with `status`, `code` and, when given, an error on `field`. */
export function expectCreditError(res: request.Response, status: number, code: string, field?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.errors[0].code).toBe(code);
  if (field !== undefined) expect(res.body.errors.map((e: { field?: string }) => e.field)).toContain(field);
}
