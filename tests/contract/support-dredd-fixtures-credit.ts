/**
 * The records the credit Dredd runs need (tests/contract/dredd-credit.test.ts), seeded over HTTP
 * before them: the credit document's example tenant, product, user, wallets and card
 * authorizations ({@link seedCreditFixtures}). The hooks (dredd-credit-hooks.cjs) read them from
 * `hooks.configuration.custom.contract.fixtures`.
 */
import { TEST_MASTER_KEY } from "../support/app.js";
import { userBody } from "../support/fixtures.js";
import type { ContractOperation, JsonObject } from "./support-dredd-document.js";
import { client } from "./support-dredd-fixtures.js";

/** Ids and keys the credit seeding creates; the credit hooks put them into requests. */
export interface CreditFixtures {
  /** The master key, sent in `x-api-key` to the operator operations (credit products). */
  masterKey: string;
  /** The document's example tenant (`acme-bank`) and an owner key of it. */
  customerId: string;
  ownerKey: string;
  /** Another tenant with the example product and a VERIFIED user but no notification URL (Create Credit Wallet answers 409, Get Notifications Settings 404). */
  otherOwnerKey: string;
  otherUserId: string;
  /** The document's example user of Create Credit Wallet (created with its `userId`), VERIFIED. */
  userId: string;
  /** The real HTTP receiver on 127.0.0.1 the example tenant enlisted (NotificationsEnlist). */
  hookUrl: string;
  /** The example tenant's sandbox clock after seeding (set to {@link clockStart} before the first wallet, then advanced past the first cut). */
  clockStart: string;
  clockNow: string;
  /**
   * Wallets of the example user, each created from the Create Credit Wallet example (wallet ids are
   * generated, the hooks put them into paths), by the role the cases need.
   */
  wallets: {
    /** Active, charged and cut once: it has a statement and events. */
    main: string;
    /** Active: Block Credit Wallet blocks it. */
    toBlock: string;
    /** Blocked while seeding: blocking it again is a 409, Unblock Credit Wallet unblocks it. */
    blocked: string;
    /** Active: Dissolve Credit Wallet dissolves it. */
    toDissolve: string;
    /** Dissolved while seeding: every change of it is a 409. */
    dissolved: string;
    /** Active, with the card authorizations of {@link CreditFixtures.authorizations} (none of the other cases touch it). */
    cards: string;
  };
  /** The `Idempotency-Key` and body of a charge and of a payment seeded on `wallets.main`, with other amounts than the examples'. */
  seededCharge: { idempotencyKey: string; body: JsonObject };
  seededPayment: { idempotencyKey: string; body: JsonObject };
  /**
   * Card authorizations on `wallets.cards`, seeded after the clock's last advance (so none expires
   * during the runs: docs/decisions/credit.md "Authorizations"), 15000 cents each, by the role the
   * cases need; their ids are generated, the hooks put them into paths (the document's example
   * `authorizationId` is the unknown authorization of the 404s).
   */
  authorizations: {
    /** Approved and left open: Get Credit Authorization reads it, a capture above its amount is a 409. Seeded with {@link seededAuthorization}. */
    open: string;
    /** Approved: Capture Credit Authorization captures it (the example's 12000 of 15000). */
    toCapture: string;
    /** Approved: Void Credit Authorization voids it. */
    toVoid: string;
    /** Voided while seeding: capturing or voiding it again is a 409. */
    closed: string;
    /** Captured whole (15000) while seeding: Refund Credit Authorization refunds part of it, a refund above 15000 is a 409 (docs/decisions/cards.md "Refunds"). */
    captured: string;
  };
  /** The `Idempotency-Key` and body that seeded `authorizations.open`: a repeat is a duplicate, another body a 409. */
  seededAuthorization: { idempotencyKey: string; body: JsonObject };
  /** Cards issued on `wallets.cards` (docs/decisions/cards.md); their ids are generated (the document's example `cardId` is the unknown card of the 404s). */
  issuedCards: {
    /** `ACTIVE`: Get Card reads it, Update Card pauses it. */
    open: string;
    /** `CLOSED` while seeding: any Update Card of it is a 409. */
    closed: string;
  };
}

/**
 * Seeds, over the platform API (`platformUrl`) and the credit API (`creditUrl`), the records the
 * credit document's examples name: tenant `acme-bank` with an owner key, its product `001` (the
 * Create Credit Product example, with the master key), the example user `6f1d2c3b-…` (activated:
 * VERIFIED), NotificationsEnlist to `hookUrl`, the sandbox clock set to 2026-01-01 before the first
 * wallet, the wallets of {@link CreditFixtures.wallets} from the Create Credit Wallet example, a
 * charge and the clock advanced past the example's first cut (2026-01-31), so statements and events exist;
 * then, on the tenant's clock after that advance, the wallet of the card authorizations and its
 * authorizations ({@link CreditFixtures.authorizations}), and two cards on it ({@link CreditFixtures.issuedCards}).
 */
export async function seedCreditFixtures(
  platformUrl: string,
  creditUrl: string,
  operations: Record<string, ContractOperation>,
  hookUrl: string,
): Promise<CreditFixtures> {
  const platform = client(platformUrl);
  const credit = client(creditUrl);
  const example = (key: string): JsonObject => {
    const value = operations[key]?.requestExample;
    if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error(`The document has no request example for ${key}`);
    return value;
  };
  const operator = { authorization: `Bearer ${String((await platform("POST", "/sessions", 201, { headers: { "x-master-api-key": TEST_MASTER_KEY } })).data.token)}` };
  const productExample = example("POST /v2/credit-products");
  const walletExample = example("POST /v2/wallet/credits");
  const asMaster = { "x-api-key": TEST_MASTER_KEY };

  /** A tenant with the example product and a VERIFIED user (`userId` when given); returns its owner key. */
  const tenant = async (customerId: string, userId?: string) => {
    await platform("POST", "/customers", 201, { headers: operator, body: { customer_id: customerId, email: `ops@${customerId}.example`, entity_name: `Dredd ${customerId}` } });
    const key = String((await platform("POST", `/customers/${customerId}/credentials`, 201, { headers: operator })).data.customer_secret);
    await credit("POST", "/v2/credit-products", 201, { headers: asMaster, body: { ...productExample, customerId } });
    const user = (await platform("POST", "/users", 201, { headers: { "x-api-key": key }, body: userBody(userId ? { user_id: userId } : {}) as JsonObject })).data;
    await platform("POST", `/users/${String(user.user_id)}/activate`, 200, { headers: { "x-api-key": key } });
    return { key, userId: String(user.user_id) };
  };
  const customerId = String(productExample.customerId);
  const { key: ownerKey, userId } = await tenant(customerId, String(walletExample.userId));
  const { key: otherOwnerKey, userId: otherUserId } = await tenant("dredd-other-bank");
  const asOwner = { "x-api-key": ownerKey };
  await credit("PUT", "/v2/notifications", 200, { headers: asOwner, body: { creditNotificationsURL: hookUrl } });
  const clockStart = "2026-01-01T00:00:00.000Z";
  await credit("PUT", "/v2/sandbox/clock", 200, { headers: asOwner, body: { now: clockStart } });

  const wallet = async () => String((await credit("POST", "/v2/wallet/credits", 201, { headers: asOwner, body: walletExample })).data.walletId);
  const [main, toBlock, blocked, toDissolve, dissolved] = [await wallet(), await wallet(), await wallet(), await wallet(), await wallet()] as [string, string, string, string, string];
  const seededCharge = { idempotencyKey: "dredd-fixture-charge", body: { amount: 30000, description: "Dredd fixture" } };
  const seededPayment = { idempotencyKey: "dredd-fixture-payment", body: { amount: 1000 } };
  const charge = { headers: { ...asOwner, "Idempotency-Key": seededCharge.idempotencyKey }, body: seededCharge.body };
  await credit("POST", `/v2/wallet/credits/${main}/charges`, 201, charge);
  await credit("POST", `/v2/wallet/credits/${blocked}/block`, 200, { headers: asOwner });
  await credit("POST", `/v2/wallet/credits/${dissolved}/dissolve`, 200, { headers: asOwner });
  await credit("POST", "/v2/sandbox/clock/advance", 200, { headers: asOwner, body: { to: "2026-02-01T00:00:00Z" } });
  await credit("POST", `/v2/wallet/credits/${main}/payments`, 201, { headers: { ...asOwner, "Idempotency-Key": seededPayment.idempotencyKey }, body: seededPayment.body });
  const clockNow = String((await credit("GET", "/v2/sandbox/clock", 200, { headers: asOwner })).data.now);
  // Created after the example's first cut (2026-01-31): a later one.
  const cards = String((await credit("POST", "/v2/wallet/credits", 201, { headers: asOwner, body: { ...walletExample, firstCutDate: "2026-02-28T00:00:00Z" } })).data.walletId);
  const seededAuthorization = {
    idempotencyKey: "dredd-fixture-authorization",
    body: { amount: 15000, merchant: { name: "Dredd fixture store", mcc: "5411", country: "US" }, reference: "dredd-fixture-0001" },
  };
  const authorize = async (idempotencyKey: string, body: JsonObject = { ...seededAuthorization.body, reference: idempotencyKey }) => {
    const created = (await credit("POST", `/v2/wallet/credits/${cards}/authorizations`, 201, { headers: { ...asOwner, "Idempotency-Key": idempotencyKey }, body })).data;
    if (created.status !== "approved") throw new Error(`Seeding: authorization ${idempotencyKey} was ${String(created.status)}, not approved`);
    return String(created.authorizationId);
  };
  const authorizations = {
    open: await authorize(seededAuthorization.idempotencyKey, seededAuthorization.body),
    toCapture: await authorize("dredd-fixture-authorization-to-capture"),
    toVoid: await authorize("dredd-fixture-authorization-to-void"),
    closed: await authorize("dredd-fixture-authorization-closed"),
    captured: await authorize("dredd-fixture-authorization-captured"),
  };
  await credit("POST", `/v2/wallet/credits/${cards}/authorizations/${authorizations.closed}/void`, 200, { headers: asOwner });
  await credit("POST", `/v2/wallet/credits/${cards}/authorizations/${authorizations.captured}/capture`, 200, { headers: asOwner });
  const issueCard = async (cardholderName: string) => String((await credit("POST", `/v2/wallet/credits/${cards}/cards`, 201, { headers: asOwner, body: { cardholderName } })).data.cardId);
  const issuedCards = { open: await issueCard("Dredd Open"), closed: await issueCard("Dredd Closed") };
  await credit("PATCH", `/v2/cards/${issuedCards.closed}`, 200, { headers: asOwner, body: { state: "CLOSED" } });
  return {
    masterKey: TEST_MASTER_KEY,
    customerId,
    ownerKey,
    otherOwnerKey,
    otherUserId,
    userId,
    hookUrl,
    clockStart,
    clockNow,
    wallets: { main, toBlock, blocked, toDissolve, dissolved, cards },
    seededCharge,
    seededPayment,
    authorizations,
    seededAuthorization,
    issuedCards,
  };
}
