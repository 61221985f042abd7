/**
 * Shared setup of the card authorization pact (credit-authorizations-pact.test.ts; consumer
 * "card-processor", provider "custody-credit-core"; spec/credit/authorizations.tsp,
 * docs/decisions/credit.md "Authorizations"): where the pact file goes, the example ids and
 * credentials the interactions record, the provider states both halves name, the consumer's small
 * `fetch` client typed by generated/types/credit.ts (there is no generated client for the credit
 * document), the response templates (Pact matchers), and the provider states' set-up through HTTP
 * on the real app.
 *
 * The pact file goes to a fresh temporary directory, removed by the provider half; set `PACT_DIR`
 * (for example `tests/contract/pact/pacts`, ignored by git) to keep it. Its name
 * (`card-processor-custody-credit-core.json`) is its own, so a shared `PACT_DIR` holds it next to
 * the other pacts.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MatchersV3 } from "@pact-foundation/pact";
import { expect } from "vitest";
import type { components, operations } from "../../../generated/types/credit.js";
import { TEST_MASTER_KEY, apiOf, type TestApp } from "../../support/app.js";
import { GOLDEN_PRODUCT } from "../../support/credit-golden.js";
import { Walk } from "../../support/fixtures.js";

const { like, eachLike, regex, uuid, integer, equal, fromProviderState, iso8601DateTimeWithMillis } = MatchersV3;

export const CONSUMER = "card-processor";
export const PROVIDER = "custody-credit-core";
export const keepDir = process.env.PACT_DIR ? resolve(process.env.PACT_DIR) : undefined;
export const pactDir = keepDir ?? mkdtempSync(join(tmpdir(), "pact-credit-auth-"));
export const pactFile = join(pactDir, `${CONSUMER}-${PROVIDER}.json`);

/** Example ids and credentials of the pact; on the provider side the states and the request filter supply the live ones. */
export const EXAMPLE_WALLET = "c7e2a9d4-1f3b-4c5d-9e8f-0a1b2c3d4e5f";
export const EXAMPLE_AUTHORIZATION = "2b3c4d5e-6f70-4a81-9b2c-3d4e5f607182";
export const UNKNOWN_AUTHORIZATION = "2b3c4d5e-6f70-4a81-9b2c-000000000000";
export const EXAMPLE_OWNER_KEY = "sk_EXAMPLEexampleEXAMPLEexampleEXAMPLEexample0";
/** The key of the authorization the `keyUsed` state makes; the interaction reuses it with another body. */
export const USED_KEY = "auth-2026-01-16-0001";

/** The wallet every state creates: limit 100000 cents; the approved authorization holds {@link HELD}. */
export const LIMIT = 100000;
export const HELD = 15000;
export const MERCHANT = { name: "Hardware store", mcc: "5251", country: "US" };
export const REFERENCE = "auth-8842-0193";
/** The card every card state issues (its id differs per run: the paths take it from the state). */
export const EXAMPLE_CARD = "5d6e7f80-9102-4a3b-8c4d-5e6f70819203";
/** The processor reference of the authorization the `cardReferenceUsed` state makes; the interaction sends it again. */
export const USED_PROCESSOR_REFERENCE = "net-20260116-000142";

/** Provider states, shared by both halves. */
export const STATE = {
  wallet: `a credit wallet with limit ${LIMIT} and nothing held`,
  approved: `the credit wallet has an approved authorization of ${HELD}`,
  keyUsed: `the credit wallet has an authorization of ${HELD} made with Idempotency-Key ${USED_KEY}`,
  captured: `the credit wallet has an authorization of ${HELD} captured whole`,
  card: `a credit wallet with limit ${LIMIT} and an active card`,
  cardReferenceUsed: `the card has an authorization of ${HELD} with processorReference ${USED_PROCESSOR_REFERENCE}`,
} as const;

// ── Consumer client ──────────────────────────────────────────────────────────────────────────

type Schemas = components["schemas"];
export type AuthorizeBody = operations["authorizeCredit"]["requestBody"]["content"]["application/json"];
export type CaptureBody = NonNullable<operations["captureCreditAuthorization"]["requestBody"]>["content"]["application/json"];
export type RefundBody = operations["refundCreditAuthorization"]["requestBody"]["content"]["application/json"];
export type AuthorizeCardBody = operations["authorizeCard"]["requestBody"]["content"]["application/json"];
export type RefundEnvelope = Schemas["CreditRefundCreditEnvelope"];
export type AuthorizationEnvelope = Schemas["CreditAuthorizationCreditEnvelope"];
export type AuthorizationListEnvelope = Schemas["CreditAuthorizationListCreditEnvelope"];
export type ErrorEnvelope = Schemas["CreditErrorEnvelope"];

/** An answer of the credit core: status, the `x-trace-id` header and the parsed body (`T` on 2xx, the error envelope otherwise). */
export type Answer<T> = { status: number; traceId: string | null } & ({ ok: true; body: T } | { ok: false; body: ErrorEnvelope });

/**
 * The card processor's client of the authorization operations (spec/credit/authorizations.tsp):
 * plain `fetch` against `baseUrl`, the owner API key in `x-api-key`, bodies and answers typed by
 * generated/types/credit.ts.
 */
export class CardProcessorClient {
  constructor(private readonly baseUrl: string, private readonly apiKey: string) {}

  private async send<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { "x-api-key": this.apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = (await res.json()) as T & ErrorEnvelope;
    const traceId = res.headers.get("x-trace-id");
    return res.ok ? { status: res.status, traceId, ok: true, body: parsed } : { status: res.status, traceId, ok: false, body: parsed };
  }

  private path = (walletId: string, suffix = "") => `/v2/wallet/credits/${encodeURIComponent(walletId)}/authorizations${suffix}`;

  /** authorizeCredit: 201 for an approval and for a decline; `idempotencyKey` goes in `Idempotency-Key`. */
  authorize(walletId: string, body: AuthorizeBody, idempotencyKey?: string): Promise<Answer<AuthorizationEnvelope>> {
    return this.send("POST", this.path(walletId), body, idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {});
  }

  /** captureCreditAuthorization: the whole amount without `body`, else `body.amount`. */
  capture(walletId: string, authorizationId: string, body?: CaptureBody): Promise<Answer<AuthorizationEnvelope>> {
    return this.send("POST", this.path(walletId, `/${encodeURIComponent(authorizationId)}/capture`), body);
  }

  /** voidCreditAuthorization. */
  void(walletId: string, authorizationId: string): Promise<Answer<AuthorizationEnvelope>> {
    return this.send("POST", this.path(walletId, `/${encodeURIComponent(authorizationId)}/void`));
  }

  /** authorizeCard (docs/decisions/cards.md "Authorize on a card"): 201 for an approval and for a decline. */
  authorizeCard(cardId: string, body: AuthorizeCardBody): Promise<Answer<AuthorizationEnvelope>> {
    return this.send("POST", `/v2/cards/${encodeURIComponent(cardId)}/authorizations`, body);
  }

  /** refundCreditAuthorization (docs/decisions/cards.md "Refunds"): 201 with the refund. */
  refund(walletId: string, authorizationId: string, body: RefundBody): Promise<Answer<RefundEnvelope>> {
    return this.send("POST", this.path(walletId, `/${encodeURIComponent(authorizationId)}/refund`), body);
  }

  /** getCreditAuthorization. */
  get(walletId: string, authorizationId: string): Promise<Answer<AuthorizationEnvelope>> {
    return this.send("GET", this.path(walletId, `/${encodeURIComponent(authorizationId)}`));
  }

  /** listCreditAuthorizations, newest first. */
  list(walletId: string, page: { limit: number; offset: number }): Promise<Answer<AuthorizationListEnvelope>> {
    return this.send("GET", this.path(walletId, `?limit=${page.limit}&offset=${page.offset}`));
  }
}

// ── Templates ─────────────────────────────────────────────────────────────────────────────────

export const UUID_PATTERN = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

/**
 * `fromProviderState` with a regex instead of its type match: the consumer side matches `pattern`
 * and uses `example`; the provider side injects `expression` (`${walletId}`, `${authorizationId}`,
 * which the states answer) through a ProviderState generator.
 */
const fromState = (expression: string, pattern: string, example: string) => ({
  ...fromProviderState(expression, example),
  "pact:matcher:type": "regex",
  regex: pattern,
});

/** Path `/v2/wallet/credits/{walletId}/authorizations<suffix>`; the wallet id (and `${authorizationId}` in `suffix`) from the provider state. */
export const authorizationsPath = (suffix = "") => {
  const pattern = suffix.replace("${authorizationId}", UUID_PATTERN);
  const example = suffix.replace("${authorizationId}", EXAMPLE_AUTHORIZATION);
  return fromState(
    `/v2/wallet/credits/\${walletId}/authorizations${suffix}`,
    `^/v2/wallet/credits/${UUID_PATTERN}/authorizations${pattern}$`,
    `/v2/wallet/credits/${EXAMPLE_WALLET}/authorizations${example}`,
  );
};

/** Path `/v2/cards/{cardId}/authorizations`, the card id from the provider state. */
export const cardAuthorizationsPath = () =>
  fromState("/v2/cards/${cardId}/authorizations", `^/v2/cards/${UUID_PATTERN}/authorizations$`, `/v2/cards/${EXAMPLE_CARD}/authorizations`);

/**
 * What an Authorize Card's authorization changes of {@link authorization}: the state's card, the
 * processor reference (also its `idempotencyKey`), no `reference`, and `isDuplicate` as given.
 */
export const onCard = (processorReference: string, duplicate = false) => ({
  cardId: fromState("${cardId}", `^${UUID_PATTERN}$`, EXAMPLE_CARD),
  processorReference: equal(processorReference),
  idempotencyKey: equal(processorReference),
  reference: null,
  isDuplicate: equal(duplicate),
});

export const timestamp = (example = "2026-01-16T10:00:00.000Z") => iso8601DateTimeWithMillis(example);
const traceId = () => uuid("8c1d2e3f-4a5b-4c6d-9e7f-0a1b2c3d4e60");
export const meta = () => ({ timestamp: timestamp(), version: equal("v2"), traceId: traceId() });
/** Every credit core answer carries its trace id in `x-trace-id` (the same as `meta.traceId`). */
export const traceHeader = () => ({ "x-trace-id": traceId() });
export const ok = (data: unknown) => ({ success: equal(true), data, meta: meta() });
/** The error envelope with exactly one error of `code`. */
export const failure = (code: string, message: string, field?: string) => ({
  success: equal(false),
  errors: [{ code: equal(code), message: like(message), ...(field === undefined ? {} : { field: equal(field) }) }],
  meta: meta(),
});
export const ownerKey = { "x-api-key": regex(/^sk_[A-Za-z0-9_-]+$/, EXAMPLE_OWNER_KEY) };

/** What differs between the states of an authorization; the rest is shape. */
interface Lifecycle {
  status: "approved" | "declined" | "captured" | "voided";
  declineReason?: string;
  amount: number;
  capturedAmount?: number;
  releasedAmount?: number;
  /** The authorization id is the state's (capture, void, read) rather than any UUID. */
  fromState?: boolean;
}

/**
 * A `CreditAuthorization`: `status` and `declineReason` pinned by `equal`, the amounts integers
 * (cents), `expiresAt` an instant for an approval and null for a decline, `closedAt` null while
 * open and an instant once captured or voided, the merchant's code and country by their patterns.
 */
export const authorization = (l: Lifecycle) => ({
  authorizationId: l.fromState ? fromState("${authorizationId}", `^${UUID_PATTERN}$`, EXAMPLE_AUTHORIZATION) : uuid(EXAMPLE_AUTHORIZATION),
  walletId: fromState("${walletId}", `^${UUID_PATTERN}$`, EXAMPLE_WALLET),
  status: equal(l.status),
  declineReason: l.declineReason === undefined ? null : equal(l.declineReason),
  amount: integer(l.amount),
  capturedAmount: integer(l.capturedAmount ?? 0),
  releasedAmount: integer(l.releasedAmount ?? 0),
  merchant: { name: like(MERCHANT.name), mcc: regex(/^[0-9]{4}$/, MERCHANT.mcc), country: regex(/^[A-Z]{2}$/, MERCHANT.country) },
  reference: like(REFERENCE),
  idempotencyKey: like("auth-2026-01-16-0002"),
  isDuplicate: equal(false),
  expiresAt: l.status === "declined" ? null : timestamp("2026-01-24T00:00:00.000Z"),
  closedAt: l.status === "captured" || l.status === "voided" ? timestamp("2026-01-17T15:30:00.000Z") : null,
  createdAt: timestamp(),
});

/** A `CreditRefund` of `amount` cents of the state's authorization, all of it applied to the debt. */
export const refundOf = (amount: number) => ({
  refundId: uuid("4d5e6f70-8192-4ca3-9d4e-5f6071829304"),
  authorizationId: fromState("${authorizationId}", `^${UUID_PATTERN}$`, EXAMPLE_AUTHORIZATION),
  amount: integer(amount),
  appliedAmount: integer(amount),
  unappliedAmount: integer(0),
  createdAt: timestamp("2026-01-20T09:00:00.000Z"),
});

/** A page of authorizations: at least one item of `item`'s shape, `total`, `limit`, `offset` integers. */
export const page = (item: unknown, limit: number, offset: number) => ({
  items: eachLike(item, 1),
  total: integer(1),
  limit: integer(limit),
  offset: integer(offset),
});

// ── Provider states ───────────────────────────────────────────────────────────────────────────

/** The live values of the interaction being verified: the owner key its state created. */
export interface Live {
  ownerKey?: string;
}

/** A provider state's set-up: the ids it answers for the provider-state generators. */
export type StateHandler = () => Promise<Record<string, string>>;

/**
 * The provider states on one running test app, through its HTTP API (Walk: operator session,
 * customer, owner key, an active user; then the golden credit product, NotificationsEnlist with
 * `hookUrl`, a wallet, authorizations). Every set-up makes its own tenant, so a state set up again
 * (one per interaction) never meets an Idempotency-Key of an earlier one; the owner key goes to `live`.
 */
export function creditAuthorizationStates(t: TestApp, live: Live, hookUrl: string): Record<string, StateHandler> {
  let tenants = 0;
  const wallet = async (): Promise<{ key: string; walletId: string }> => {
    const walk = new Walk(t.express);
    const { customerId, key } = await walk.tenant(`pact-auth-${++tenants}-${Date.now().toString(36)}`);
    const { userId } = await walk.activeUserWithToken(key);
    const api = () => apiOf(t);
    const product = await api().post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send({ customerId, creditProductCode: "001", ...GOLDEN_PRODUCT });
    expect(product.status, JSON.stringify(product.body)).toBe(201);
    expect((await api().put("/v2/notifications").set("x-api-key", key).send({ creditNotificationsURL: hookUrl })).status).toBe(200);
    const created = await api().post("/v2/wallet/credits").set("x-api-key", key).send({ userId, currency: "USD", limit: LIMIT, creditProductCode: "001" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    live.ownerKey = key;
    return { key, walletId: created.body.data.walletId as string };
  };
  const withAuthorization = async (idempotencyKey?: string): Promise<Record<string, string>> => {
    const { key, walletId } = await wallet();
    const req = apiOf(t).post(`/v2/wallet/credits/${walletId}/authorizations`).set("x-api-key", key);
    if (idempotencyKey) req.set("Idempotency-Key", idempotencyKey);
    const res = await req.send({ amount: HELD, merchant: MERCHANT, reference: REFERENCE });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.status).toBe("approved");
    return { walletId, authorizationId: res.body.data.authorizationId as string };
  };
  return {
    [STATE.wallet]: async () => ({ walletId: (await wallet()).walletId }),
    [STATE.approved]: () => withAuthorization(),
    [STATE.keyUsed]: () => withAuthorization(USED_KEY),
    [STATE.card]: async () => {
      const { key, walletId } = await wallet();
      const card = await apiOf(t).post(`/v2/wallet/credits/${walletId}/cards`).set("x-api-key", key).send({ cardholderName: "Pact Holder" });
      expect(card.status, JSON.stringify(card.body)).toBe(201);
      return { walletId, cardId: card.body.data.cardId as string };
    },
    [STATE.cardReferenceUsed]: async () => {
      const { key, walletId } = await wallet();
      const card = await apiOf(t).post(`/v2/wallet/credits/${walletId}/cards`).set("x-api-key", key).send({ cardholderName: "Pact Holder" });
      expect(card.status, JSON.stringify(card.body)).toBe(201);
      const cardId = card.body.data.cardId as string;
      const res = await apiOf(t).post(`/v2/cards/${cardId}/authorizations`).set("x-api-key", key).send({ amount: HELD, merchant: MERCHANT, processorReference: USED_PROCESSOR_REFERENCE });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return { walletId, cardId, authorizationId: res.body.data.authorizationId as string };
    },
    [STATE.captured]: async () => {
      const ids = await withAuthorization();
      const res = await apiOf(t).post(`/v2/wallet/credits/${ids.walletId!}/authorizations/${ids.authorizationId!}/capture`).set("x-api-key", live.ownerKey!);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return ids;
    },
  };
}
