/**
 * Dredd hooks of the credit contract (run by tests/contract/dredd-credit.test.ts, which passes the
 * operations, their response schemas and the seeded fixtures in `hooks.configuration.custom.contract`;
 * see support-dredd-fixtures-credit.ts `seedCreditFixtures`). The machinery is dredd-hooks-core.cjs, shared with the
 * platform hooks: this file declares the credit cases, credentials and skips.
 *
 * Credit wallet ids are generated, so the document's example walletId (`c7e2a9d4-…`) cannot exist:
 * success and conflict cases put a seeded wallet of the right state into the path, and the example
 * id itself is the unknown wallet of the 404s. Dredd runs the transactions in document order (products,
 * notifications, sandbox clock, wallets, then the wallet operations by path), which the cases rely on:
 * Block Credit Wallet blocks `wallets.toBlock` before Unblock Credit Wallet unblocks `wallets.blocked`.
 * The card authorizations work the same way on `wallets.cards`: each success that closes an
 * authorization gets its own open one (`authorizations.toCapture`, `authorizations.toVoid`), the
 * 409s name one voided while seeding (`authorizations.closed`) or capture more than the one left open
 * (`authorizations.open`), and the document's example authorizationId is the unknown one of the 404s.
 * Refund Credit Authorization refunds `authorizations.captured` (captured whole while seeding); its
 * 409s refund the open one, or more than was captured.
 * Cards (docs/decisions/cards.md) are issued on `wallets.cards` too: `issuedCards.open` is read and
 * paused, `issuedCards.closed` (closed while seeding) answers 409 and declines Authorize Card
 * (`CARD_CLOSED`), the example cardId is the unknown one.
 */
const hooks = require("hooks");
const { installCaseHooks } = require("./dredd-hooks-core.cjs");

const CREDENTIAL_HEADERS = ["authorization", "x-api-key", "x-master-api-key"];
/** An owner key no tenant has. */
const UNKNOWN_KEY = "sk_dredd-not-a-real-key-0123456789abcdef";
/** A product code no tenant uses. */
const UNKNOWN_PRODUCT_CODE = "999";

/** Statuses the test cannot provoke, skipped for every credit operation. */
const SKIPPED_EVERYWHERE = {
  500: "an internal error cannot be provoked from outside",
  429: "Dredd's server runs with the rate limits off; tests/integration/rate-limits.test.ts trips each bucket",
  503: "the database cannot be stopped under a Dredd run; tests/process/database-outage.test.ts stops it and checks the 503",
  413: "answered by the body middleware before routing, alike for every operation (Dredd sends each example body as is); tests/integration/http.test.ts sends oversized bodies and the contract check of tests validates the envelope against the document",
  415: "answered by the body middleware before routing, alike for every operation (Dredd sends JSON); tests/integration/http.test.ts sends non-JSON bodies and the contract check of tests validates the envelope against the document",
};

/** The sandbox clock answers 404 only when the provider is not the sandbox; Dredd's server runs the sandbox. */
const CLOCK_404 = "the sandbox clock answers 404 only while the provider is not the sandbox, and Dredd's server runs the sandbox";
/** A wallet id longer than the 64 characters the document allows. */
const LONG_WALLET_ID = "w".repeat(65);
/** The 422 of an operation whose only input is the wallet id: one past its `maxLength`. */
const longWalletId = (suffix) => (c) => walletPath(c, LONG_WALLET_ID, suffix).error("VALIDATION_ERROR").expect(fieldError("walletId"));
/** The 422 of an operation without path, query or body fields: an `x-trace-id` that is not a UUID. */
const BAD_TRACE_ID = (c) => c.header("x-trace-id", "not-a-uuid").error("VALIDATION_ERROR");

/** Path of a wallet operation on `walletId` (`suffix` after it). */
const walletPath = (c, walletId, suffix = "") => c.path(`/v2/wallet/credits/${walletId}${suffix}`);
/** Path of an authorization operation on the seeded `wallets.cards` (`suffix` after `/authorizations`). */
const cardsPath = (c, suffix = "") => walletPath(c, c.f.wallets.cards, `/authorizations${suffix}`);
/** Path of an operation on authorization `authorizationId` of `wallets.cards` (`suffix` after it). */
const authorizationPath = (c, authorizationId, suffix = "") => cardsPath(c, `/${authorizationId}${suffix}`);
/** The document's example authorizationId: ids are generated, so it is unknown on every wallet. */
const EXAMPLE_AUTHORIZATION_ID = "2b3c4d5e-6f70-4a81-9b2c-3d4e5f607182";
/** The 404 of an authorization unknown on a seeded wallet. */
const UNKNOWN_AUTHORIZATION = (suffix) => (c) => authorizationPath(c, EXAMPLE_AUTHORIZATION_ID, suffix).error("NOT_FOUND");
/** The 422 of an operation whose only inputs are the ids: an authorizationId one past its `maxLength` (64). */
const longAuthorizationId = (suffix) => (c) => authorizationPath(c, "a".repeat(65), suffix).error("VALIDATION_ERROR").expect(fieldError("authorizationId"));
/**
 * The body of Authorize Credit's "Approved" example (the operation has two named examples, so the
 * body Dredd sends is not that one for sure): 150.00 at a hardware store.
 */
const APPROVED = { amount: 15000, merchant: { name: "Hardware store", mcc: "5251", country: "US" }, reference: "auth-8842-0193" };
/** The largest amount Authorize Credit takes (10¹² cents): above every wallet's available amount. */
const MAX_AMOUNT = 1_000_000_000_000;
/** Path of card `cardId`. */
const cardPath = (c, cardId) => c.path(`/v2/cards/${cardId}`);
/** Path of the cards of the seeded `wallets.cards`. */
const walletCardsPath = (c) => walletPath(c, c.f.wallets.cards, "/cards");
/** `data` of the answer must match `properties`. */
const dataWith = (properties) => ({ properties: { data: { properties } } });

/** The 401, 403 and 404 of a tenant wallet operation. */
const WALLET_ERRORS = {
  401: (c) => c.as("none").error("UNAUTHORIZED"),
  403: (c) => c.as("master").error("FORBIDDEN"), // a valid credential of the other kind
  404: (c) => c.error("NOT_FOUND"), // the example walletId: wallet ids are generated
};

/**
 * Cases of the credit operations, by operationId and declared status (see dredd-hooks-core.cjs). A
 * string is an explicit skip with its reason. Unlisted 400s get the unreadable body.
 */
const CASES = {
  createCreditProduct: {
    201: (c) => c.body({ ...c.example(), creditProductCode: "002" }).expect(dataWith({ creditProductCode: { const: "002" } })),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"), // the tenant's key is not the master key
    409: (c) => c.error("CONFLICT"), // the example's product 001 of acme-bank is seeded
    422: [
      (c) => c.body({ ...c.example(), creditProductCode: "003", gracePeriod: 0 }).error("VALIDATION_ERROR").expect(fieldError("gracePeriod")),
      (c) => c.body({ ...c.example(), creditProductCode: "003", dailyRateDivisor: 364 }).error("VALIDATION_ERROR").expect(fieldError("dailyRateDivisor")),
    ],
  },
  listCreditProducts: {
    200: (c) => c.query("limit=2&offset=0").expect(dataWith({ items: { minItems: 1 } })),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("master").error("FORBIDDEN"),
    422: (c) => c.query("limit=0").error("VALIDATION_ERROR"),
  },
  getCreditProduct: {
    200: (c) => c.expect(dataWith({ creditProductCode: { const: "001" } })),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("master").error("FORBIDDEN"),
    404: (c) => c.path(`/v2/credit-products/${UNKNOWN_PRODUCT_CODE}`).error("NOT_FOUND"),
    422: (c) => c.path("/v2/credit-products/abc").error("VALIDATION_ERROR"),
  },
  updateCreditProductSettings: {
    200: (c) => c.expect(dataWith({ gracePeriod: { const: c.example().gracePeriod } })),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/v2/credit-products/${UNKNOWN_PRODUCT_CODE}`).error("NOT_FOUND"),
    422: (c) => c.body({ ...c.example(), gracePeriod: 0 }).error("VALIDATION_ERROR").expect(fieldError("gracePeriod")),
  },
  notificationsEnlist: {
    // The example URL is not a loopback receiver: the seeded one (enlisting again replaces the URL).
    200: (c) => c.body({ creditNotificationsURL: c.f.hookUrl }),
    401: (c) => c.as("bad").error("UNAUTHORIZED"),
    403: (c) => c.as("master").error("FORBIDDEN"),
    422: (c) => c.body({ creditNotificationsURL: "not a url" }).error("VALIDATION_ERROR"),
  },
  getNotificationsSettings: {
    200: (c) => c.expect(dataWith({ creditNotificationsURL: { const: c.f.hookUrl } })),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("master").error("FORBIDDEN"),
    404: (c) => c.as("otherOwner").error("NOT_FOUND"), // a tenant that never enlisted
    422: BAD_TRACE_ID,
  },
  recoverCreditNotifications: {
    // `since` counts on the tenant's clock (docs/outbox.md "Recovering missed notifications"): an hour before the seeded clock,
    // which the clock operations move only later in the run; the example's instant is out of the 30-day window.
    200: (c) => c.body({ since: new Date(Date.parse(c.f.clockNow) - 3_600_000).toISOString() }).expect(dataWith({ recovered: { minimum: 0 } })),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("master").error("FORBIDDEN"),
    404: (c) => c.as("otherOwner").body({ since: new Date(Date.now() - 3_600_000).toISOString() }).error("NOT_FOUND"), // a tenant that never enlisted
    // In the future on the tenant's clock (a day after it), though long past on the real one.
    422: (c) => c.body({ since: new Date(Date.parse(c.f.clockNow) + 86_400_000).toISOString() }).error("VALIDATION_ERROR").expect(fieldError("since")),
  },
  listCreditNotificationDeliveries: {
    200: (c) => c.query("limit=2&offset=0").expect(dataWith({ limit: { const: 2 }, offset: { const: 0 } })),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("master").error("FORBIDDEN"),
    422: (c) => c.query("limit=0").error("VALIDATION_ERROR"),
  },
  getSandboxClock: {
    200: (c) => c.expect(dataWith({ now: { const: c.f.clockNow } })),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("master").error("FORBIDDEN"),
    404: CLOCK_404,
    422: BAD_TRACE_ID,
  },
  setSandboxClock: {
    // The tenant has wallets: forward only. A day after the seeded clock.
    200: (c) => c.body({ now: new Date(Date.parse(c.f.clockNow) + 86_400_000).toISOString() }),
    401: (c) => c.as("none").body({ now: c.f.clockNow }).error("UNAUTHORIZED"),
    403: (c) => c.as("master").body({ now: c.f.clockNow }).error("FORBIDDEN"),
    404: CLOCK_404,
    409: (c) => c.body({ now: c.f.clockStart }).error("CONFLICT"), // backwards while the tenant has wallets
    422: (c) => c.body({ now: "yesterday" }).error("VALIDATION_ERROR"),
  },
  advanceSandboxClock: {
    200: (c) => c.body({ days: 1 }),
    401: (c) => c.as("none").body({ days: 1 }).error("UNAUTHORIZED"),
    403: (c) => c.as("master").body({ days: 1 }).error("FORBIDDEN"),
    404: CLOCK_404,
    422: (c) => c.body({ days: 1, to: c.f.clockNow }).error("VALIDATION_ERROR"), // both
  },
  createCreditWallet: {
    // The clock is past the example's firstCutDate (2026-01-31): a later first cut.
    201: (c) => c.body({ ...c.example(), firstCutDate: "2026-04-30T00:00:00Z" }).expect(dataWith({ userId: { const: c.f.userId }, status: { const: "active" } })),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("master").error("FORBIDDEN"),
    // A tenant with the product and a VERIFIED user that never enlisted.
    409: (c) => c.as("otherOwner").body({ ...c.example(), userId: c.f.otherUserId, firstCutDate: "2026-04-30T00:00:00Z" }).error("CONFLICT"),
    422: [
      (c) => c.body({ ...c.example(), creditProductCode: UNKNOWN_PRODUCT_CODE, firstCutDate: "2026-04-30T00:00:00Z" }).error("VALIDATION_ERROR").expect(fieldError("creditProductCode")),
      // A VERIFIED user of another tenant is no user of this one.
      (c) => c.body({ ...c.example(), userId: c.f.otherUserId, firstCutDate: "2026-04-30T00:00:00Z" }).error("VALIDATION_ERROR").expect(fieldError("userId")),
    ],
  },
  listCreditWallets: {
    200: (c) => c.query("limit=100&offset=0").expect(dataWith({ items: { minItems: 5 } })),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("master").error("FORBIDDEN"),
    422: (c) => c.query("limit=101").error("VALIDATION_ERROR"),
  },
  getCreditWallet: {
    200: (c) => walletPath(c, c.f.wallets.main).expect(dataWith({ walletId: { const: c.f.wallets.main } })),
    ...WALLET_ERRORS,
    404: [WALLET_ERRORS[404], (c) => walletPath(c, c.f.wallets.main).as("otherOwner").error("NOT_FOUND")], // another tenant's wallet
    422: longWalletId(""),
  },
  authorizeCredit: {
    201: [
      (c) => cardsPath(c).body(APPROVED).expect(dataWith({ status: { const: "approved" }, declineReason: { const: null }, walletId: { const: c.f.wallets.cards } })),
      // Above any available amount: a decline is a 201 too.
      (c) => cardsPath(c).body({ ...APPROVED, amount: MAX_AMOUNT }).expect(dataWith({ status: { const: "declined" }, declineReason: { const: "INSUFFICIENT_CREDIT" } })),
      // The seeded authorization repeated: its key and body return the first authorization.
      (c) => cardsPath(c).header("Idempotency-Key", c.f.seededAuthorization.idempotencyKey).body(c.f.seededAuthorization.body)
        .expect(dataWith({ isDuplicate: { const: true }, authorizationId: { const: c.f.authorizations.open } })),
    ],
    ...WALLET_ERRORS,
    404: (c) => c.body(APPROVED).error("NOT_FOUND"), // the example walletId: wallet ids are generated
    // The seeded authorization's key with another body.
    409: (c) => cardsPath(c).header("Idempotency-Key", c.f.seededAuthorization.idempotencyKey).body(APPROVED).error("CONFLICT"),
    422: [
      (c) => cardsPath(c).body({ ...APPROVED, amount: 0 }).error("VALIDATION_ERROR").expect(fieldError("amount")),
      (c) => cardsPath(c).body({ amount: 100 }).error("VALIDATION_ERROR").expect(fieldError("merchant")), // no merchant
    ],
  },
  listCreditAuthorizations: {
    200: (c) => cardsPath(c).query("limit=20&offset=0").expect(dataWith({ items: { minItems: 4 } })),
    ...WALLET_ERRORS,
    422: (c) => cardsPath(c).query("limit=0").error("VALIDATION_ERROR"),
  },
  getCreditAuthorization: {
    200: (c) => authorizationPath(c, c.f.authorizations.open).expect(dataWith({ authorizationId: { const: c.f.authorizations.open }, status: { const: "approved" } })),
    ...WALLET_ERRORS,
    404: [
      UNKNOWN_AUTHORIZATION(""),
      (c) => authorizationPath(c, c.f.authorizations.open).as("otherOwner").error("NOT_FOUND"), // another tenant's authorization
    ],
    422: longAuthorizationId(""),
  },
  captureCreditAuthorization: {
    // The example's 12000 of the 15000 held.
    200: (c) => authorizationPath(c, c.f.authorizations.toCapture, "/capture")
      .expect(dataWith({ status: { const: "captured" }, capturedAmount: { const: c.example().amount }, releasedAmount: { const: 15000 - c.example().amount } })),
    ...WALLET_ERRORS,
    404: UNKNOWN_AUTHORIZATION("/capture"),
    409: [
      (c) => authorizationPath(c, c.f.authorizations.closed, "/capture").error("CONFLICT"), // voided
      (c) => authorizationPath(c, c.f.authorizations.open, "/capture").body({ amount: 15001 }).error("CONFLICT"), // above the authorized amount
    ],
    422: (c) => authorizationPath(c, c.f.authorizations.open, "/capture").body({ amount: 0 }).error("VALIDATION_ERROR").expect(fieldError("amount")),
  },
  refundCreditAuthorization: {
    // the seeded capture of 15000 (docs/decisions/cards.md "Refunds"): the example's amount comes back, all of it applied to the debt
    201: (c) => authorizationPath(c, c.f.authorizations.captured, "/refund")
      .expect(dataWith({ authorizationId: { const: c.f.authorizations.captured }, amount: { const: c.example().amount }, appliedAmount: { const: c.example().amount }, unappliedAmount: { const: 0 } })),
    ...WALLET_ERRORS,
    404: UNKNOWN_AUTHORIZATION("/refund"),
    409: [
      (c) => authorizationPath(c, c.f.authorizations.open, "/refund").error("CONFLICT"), // not captured
      (c) => authorizationPath(c, c.f.authorizations.captured, "/refund").body({ amount: 15001 }).error("CONFLICT"), // above the captured amount
    ],
    422: (c) => authorizationPath(c, c.f.authorizations.captured, "/refund").body({ amount: 0 }).error("VALIDATION_ERROR").expect(fieldError("amount")),
  },
  voidCreditAuthorization: {
    200: (c) => authorizationPath(c, c.f.authorizations.toVoid, "/void").expect(dataWith({ status: { const: "voided" }, releasedAmount: { const: 15000 } })),
    ...WALLET_ERRORS,
    404: UNKNOWN_AUTHORIZATION("/void"),
    409: (c) => authorizationPath(c, c.f.authorizations.closed, "/void").error("CONFLICT"), // voided already
    422: longAuthorizationId("/void"),
  },
  issueCard: {
    201: (c) => walletCardsPath(c).expect(dataWith({ state: { const: "ACTIVE" }, walletId: { const: c.f.wallets.cards }, pan: { pattern: "^400000[0-9]{10}$" } })),
    ...WALLET_ERRORS,
    409: (c) => walletPath(c, c.f.wallets.dissolved, "/cards").error("CONFLICT"), // a dissolved wallet cannot issue
    422: (c) => walletCardsPath(c).body({ cardholderName: "" }).error("VALIDATION_ERROR").expect(fieldError("cardholderName")),
  },
  listWalletCards: {
    200: (c) => walletCardsPath(c).query("limit=20&offset=0").expect(dataWith({ items: { minItems: 2 } })),
    ...WALLET_ERRORS,
    422: (c) => walletCardsPath(c).query("limit=0").error("VALIDATION_ERROR"),
  },
  getCard: {
    200: (c) => cardPath(c, c.f.issuedCards.open).expect(dataWith({ cardId: { const: c.f.issuedCards.open }, pan: { not: {} }, cvv: { not: {} } })),
    ...WALLET_ERRORS, // the 404: the example cardId (card ids are generated)
    422: (c) => cardPath(c, "c".repeat(65)).error("VALIDATION_ERROR").expect(fieldError("cardId")),
  },
  updateCard: {
    200: (c) => cardPath(c, c.f.issuedCards.open).expect(dataWith({ state: { const: "PAUSED" }, spendControls: { const: c.example().spendControls } })),
    ...WALLET_ERRORS,
    409: (c) => cardPath(c, c.f.issuedCards.closed).error("CONFLICT"), // CLOSED is final
    422: (c) => cardPath(c, c.f.issuedCards.open).body({ state: "LOST" }).error("VALIDATION_ERROR").expect(fieldError("state")),
  },
  authorizeCard: {
    // the CLOSED card: a decline whatever ran before (a repeated processorReference answers the same first decision)
    201: (c) => cardPath(c, `${c.f.issuedCards.closed}/authorizations`)
      .expect(dataWith({ status: { const: "declined" }, declineReason: { const: "CARD_CLOSED" }, cardId: { const: c.f.issuedCards.closed }, walletId: { const: c.f.wallets.cards } })),
    ...WALLET_ERRORS, // the 404: the example cardId (card ids are generated)
    409: "only a set-aside wallet answers 409 here; tests/integration/credit-card-authorizations.test.ts sets one aside",
    422: (c) => cardPath(c, `${c.f.issuedCards.open}/authorizations`).body({ amount: 100, merchant: { name: "Dredd" } }).error("VALIDATION_ERROR").expect(fieldError("processorReference")),
  },
  blockCreditWallet: {
    200: (c) => walletPath(c, c.f.wallets.toBlock, "/block").expect(dataWith({ status: { const: "blocked" } })),
    ...WALLET_ERRORS,
    409: (c) => walletPath(c, c.f.wallets.blocked, "/block").error("CONFLICT"),
    422: longWalletId("/block"),
  },
  payOutCredit: {
    201: [
      (c) => walletPath(c, c.f.wallets.main, "/charges").expect(dataWith({ isDuplicate: { const: false } })),
      // The seeded charge repeated: its key and body return the first charge.
      (c) => walletPath(c, c.f.wallets.main, "/charges").header("Idempotency-Key", c.f.seededCharge.idempotencyKey).body(c.f.seededCharge.body)
        .expect(dataWith({ isDuplicate: { const: true }, idempotencyKey: { const: c.f.seededCharge.idempotencyKey } })),
    ],
    ...WALLET_ERRORS,
    409: [
      (c) => walletPath(c, c.f.wallets.dissolved, "/charges").error("CONFLICT"), // no new transactions
      (c) => walletPath(c, c.f.wallets.main, "/charges").header("Idempotency-Key", c.f.seededCharge.idempotencyKey).error("CONFLICT"), // the example's other body
    ],
    422: (c) => walletPath(c, c.f.wallets.main, "/charges").body({ amount: 0, description: "zero" }).error("VALIDATION_ERROR"),
  },
  dissolveCreditWallet: {
    200: (c) => walletPath(c, c.f.wallets.toDissolve, "/dissolve").expect(dataWith({ status: { const: "dissolved" } })),
    ...WALLET_ERRORS,
    409: (c) => walletPath(c, c.f.wallets.dissolved, "/dissolve").error("CONFLICT"),
    422: longWalletId("/dissolve"),
  },
  listCreditWalletEvents: {
    200: (c) => walletPath(c, c.f.wallets.main, "/events").expect(dataWith({ items: { minItems: 1 } })),
    ...WALLET_ERRORS,
    422: (c) => walletPath(c, c.f.wallets.main, "/events?limit=0").error("VALIDATION_ERROR"),
  },
  changeInterestCreditCapital: {
    200: (c) => walletPath(c, c.f.wallets.main, "/interest").expect(dataWith({ status: { const: "pending" } })),
    ...WALLET_ERRORS,
    409: (c) => walletPath(c, c.f.wallets.dissolved, "/interest").error("CONFLICT"),
    422: (c) => walletPath(c, c.f.wallets.main, "/interest").body({}).error("VALIDATION_ERROR"),
  },
  changeWalletLimit: {
    200: (c) => walletPath(c, c.f.wallets.main, "/limit").expect(dataWith({ limit: { const: c.example().limit } })),
    ...WALLET_ERRORS,
    409: (c) => walletPath(c, c.f.wallets.dissolved, "/limit").error("CONFLICT"),
    422: (c) => walletPath(c, c.f.wallets.main, "/limit").body({ limit: 1 }).error("VALIDATION_ERROR").expect(fieldError("limit")), // not a raise
  },
  reportPayCredit: {
    201: [
      (c) => walletPath(c, c.f.wallets.main, "/payments").expect(dataWith({ isDuplicate: { const: false } })),
      (c) => walletPath(c, c.f.wallets.main, "/payments").header("Idempotency-Key", c.f.seededPayment.idempotencyKey).body(c.f.seededPayment.body)
        .expect(dataWith({ isDuplicate: { const: true } })),
    ],
    ...WALLET_ERRORS,
    // The seeded payment's key with the example's (other) amount.
    409: (c) => walletPath(c, c.f.wallets.main, "/payments").header("Idempotency-Key", c.f.seededPayment.idempotencyKey).error("CONFLICT"),
    422: (c) => walletPath(c, c.f.wallets.main, "/payments").body({ amount: 0 }).error("VALIDATION_ERROR"),
  },
  listCreditWalletStatements: {
    200: (c) => walletPath(c, c.f.wallets.main, "/statements").expect(dataWith({ items: { minItems: 1 } })),
    ...WALLET_ERRORS,
    422: (c) => walletPath(c, c.f.wallets.main, "/statements?limit=0").error("VALIDATION_ERROR"),
  },
  unblockCreditWallet: {
    200: (c) => walletPath(c, c.f.wallets.blocked, "/unblock").expect(dataWith({ status: { const: "active" } })),
    ...WALLET_ERRORS,
    409: (c) => walletPath(c, c.f.wallets.main, "/unblock").error("CONFLICT"), // active
    422: longWalletId("/unblock"),
  },
};

/** A 422 naming `field` in `errors[]`. */
function fieldError(field) {
  return { properties: { errors: { contains: { required: ["field"], properties: { field: { const: field } } } } } };
}

/** The credential an access rule asks for by default: the master key for operator operations, else the owner key. */
function defaultCredential(access) {
  if (access.includes("master")) return "master";
  if (access.includes("owner")) return "owner";
  throw new Error(`No default credential for access ${JSON.stringify(access)}`);
}

/** Request headers of each credential kind (every credit credential goes in `x-api-key`). */
function credentialHeaders(kind, f) {
  switch (kind) {
    case "none":
      return {};
    case "bad":
      return { "x-api-key": UNKNOWN_KEY };
    case "master":
      return { "x-api-key": f.masterKey };
    case "owner":
      return { "x-api-key": f.ownerKey };
    case "otherOwner":
      return { "x-api-key": f.otherOwnerKey };
    default:
      throw new Error(`Unknown credential kind ${kind}`);
  }
}

installCaseHooks(hooks, {
  cases: CASES,
  skippedEverywhere: SKIPPED_EVERYWHERE,
  defaultCredential,
  credentialHeaders,
  credentialHeaderNames: CREDENTIAL_HEADERS,
});
