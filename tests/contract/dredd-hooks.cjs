/**
 * Dredd hooks of the platform contract (run by tests/contract/dredd.test.ts, which passes the
 * operations, their response schemas and the seeded fixtures in `hooks.configuration.custom.contract`;
 * see support-dredd.ts).
 *
 * Dredd compiles one transaction per declared status, all with the same valid request built from the
 * document's examples. For every transaction (machinery in dredd-hooks-core.cjs) this file:
 * - sends the credential the operation's access rule asks for (src/http/platform/access.ts);
 * - turns the request into the case of its status (CASES below): the success case of an implemented
 *   operation, an error case built on purpose (no credential, wrong kind of credential, unknown id,
 *   invalid body…), or the 501 of an operation not built yet; anything else is skipped explicitly;
 * - for a status that arises in several ways (an array of cases), checks the first in the main run
 *   and the k-th in the alternative run k (`contract.alternative`), which skips everything else;
 * - rewrites ids the document's examples cannot name (generated ids) and sets up order-dependent state;
 * - replaces Dredd's key-only comparison with the real response schema of that status (plus the
 *   expected error code and any constraint the case adds with `expect`) and the exact
 *   `Content-Type` express sends.
 */
const hooks = require("hooks");
const { installCaseHooks } = require("./dredd-hooks-core.cjs");

const UNKNOWN_USER_ID = "00000000-0000-4000-8000-000000000000";
const UNKNOWN_CUSTOMER_ID = "no-such-customer";
const CREDENTIAL_HEADERS = ["authorization", "x-api-key", "x-master-api-key"];
/** The `Idempotency-Key` example of Initiate Withdrawal, which Dredd sends with every initiate (the seeding never uses it). */
const EXAMPLE_IDEMPOTENCY_KEY = "wd-2026-01-15-0001";

/** Path of a withdrawal of `userId` (the example user unless given); ids are generated, the fixtures hold them. */
const withdrawalPath = (c, withdrawalId, suffix = "", userId = c.f.userId) =>
  c.path(`/users/${userId}/accounts/crypto/withdrawals/${withdrawalId}${suffix}`);
/** The Initiate Withdrawal example on the seeded wallet (the example's `wallet_id` cannot exist). */
const initiateBody = (c) => ({ ...c.example(), wallet_id: c.f.walletId });
/** `data.withdraw` of an Initiate Withdrawal answer must match `withdraw`. */
const initiated = (withdraw) => ({ properties: { data: { properties: { withdraw: { properties: withdraw } } } } });

/** Statuses of implemented operations that the test cannot provoke, skipped for every operation. */
const SKIPPED_EVERYWHERE = {
  500: "an internal error cannot be provoked from outside",
  429: "Dredd's server runs with the rate limits and the resend spacing raised; tests/integration/rate-limits.test.ts and withdrawals-codes.test.ts trip each one",
  503: "the database cannot be stopped under a Dredd run; the integration tests stop it and check the 503",
  413: "answered by the body middleware before routing, alike for every operation (Dredd sends each example body as is); tests/integration/http.test.ts sends oversized bodies and the contract check of tests validates the envelope against the document",
  415: "answered by the body middleware before routing, alike for every operation (Dredd sends JSON); tests/integration/http.test.ts sends non-JSON bodies and the contract check of tests validates the envelope against the document",
};

/**
 * Cases of the implemented operations, by operationId and declared status. A case receives a
 * context `c` whose request already carries the default credential of the operation and the
 * document's example request; a string is an explicit skip with its reason. An array lists the
 * alternative cases of one status (one Dredd transaction each run): the main run checks the first.
 */
const CASES = {
  createSession: {
    201: (c) => c.as("none").body({ customer_id: c.f.customerId, customer_secret: c.f.ownerKey }),
    400: (c) => c.as("none").rawBody("{").error("BAD_REQUEST"),
    401: (c) => c.as("none").body({ customer_id: c.f.customerId, customer_secret: "sk_not-a-real-secret" }).error("UNAUTHORIZED"),
    403: (c) => c.as("owner").noBody().error("FORBIDDEN"), // a valid credential that cannot open sessions
    422: (c) => c.as("none").body({ customer_id: { id: c.f.customerId } }).error("UNPROCESSABLE_ENTITY"),
  },
  createCustomer: {
    201: (c) => c.body({ ...c.example(), customer_id: c.f.newCustomerId }),
    400: (c) => c.rawBody("{").error("BAD_REQUEST"),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("customerSession").error("FORBIDDEN"),
    404: (c) => c.body({ ...c.example(), customer_id: "unknown-upstream-co" }).error("CUSTOMER_NOT_FOUND"),
    409: (c) => c.error("CUSTOMER_ALREADY_EXISTS"), // the example's acme-corp is seeded
    422: (c) => c.body({ customer_id: "not valid!", email: "not-an-email", entity_name: "" }).error("UNPROCESSABLE_ENTITY"),
  },
  listCustomers: {
    200: (c) => c.query("filter[limit]=2&filter[skip]=0"),
    401: (c) => c.as("badMaster").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"), // a valid credential, not the master key
    422: (c) => c.query("filter[limit]=101").error("UNPROCESSABLE_ENTITY"),
  },
  getCustomer: {
    200: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("customerSession").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${UNKNOWN_CUSTOMER_ID}`).error("CUSTOMER_NOT_FOUND"),
  },
  updateCustomer: {
    200: () => {},
    400: (c) => c.rawBody("{").error("BAD_REQUEST"),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${UNKNOWN_CUSTOMER_ID}`).error("CUSTOMER_NOT_FOUND"),
    409: "Update Customer has no conflicting field: no request answers 409",
    422: (c) => c.body({ account_type: "alien" }).error("UNPROCESSABLE_ENTITY"),
  },
  deleteCustomer: {
    204: (c) => c.path(`/customers/${c.f.doomedCustomerId}`),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${UNKNOWN_CUSTOMER_ID}`).error("CUSTOMER_NOT_FOUND"),
  },
  generateCredentials: {
    201: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${UNKNOWN_CUSTOMER_ID}/credentials`).error("CUSTOMER_NOT_FOUND"),
  },
  listCredentials: {
    200: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("customerSession").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${UNKNOWN_CUSTOMER_ID}/credentials`).error("CUSTOMER_NOT_FOUND"),
  },
  deleteCredential: {
    // Credential ids are generated: the example id cannot exist, so the success case revokes a seeded one…
    204: (c) => c.path(`/customers/${c.f.customerId}/credentials/${c.f.revocableCredentialId}`),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    // …and the example id itself is the unknown credential.
    404: (c) => c.error("CREDENTIAL_NOT_FOUND"),
  },
  createEmailPoller: {
    201: (c) => c.path(`/customers/${c.f.pollerNewCustomerId}/email/poller`).body({ imap: c.f.imap, description: "Dredd" }),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${UNKNOWN_CUSTOMER_ID}/email/poller`).body({ imap: c.f.imap }).error("CUSTOMER_NOT_FOUND"),
    409: (c) => c.body({ imap: c.f.imap }).error("POLLER_ALREADY_EXISTS"), // the example customer's poller is seeded
    422: (c) => c.body({ imap: { host: c.f.imap.host, port: 70000, password: "x" } }).error("UNPROCESSABLE_ENTITY"),
  },
  getEmailPoller: {
    200: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${c.f.otherCustomerId}/email/poller`).error("POLLER_NOT_FOUND"),
  },
  updateEmailPoller: {
    200: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${c.f.otherCustomerId}/email/poller`).error("POLLER_NOT_FOUND"),
    422: (c) => c.body({ description: "d".repeat(256) }).error("UNPROCESSABLE_ENTITY"),
  },
  deleteEmailPoller: {
    204: (c) => c.path(`/customers/${c.f.pollerDoomedCustomerId}/email/poller`),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${c.f.otherCustomerId}/email/poller`).error("POLLER_NOT_FOUND"),
  },
  verifyEmailPoller: {
    200: () => {}, // a live login to the test Dovecot
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${c.f.otherCustomerId}/email/poller/verify`).error("POLLER_NOT_FOUND"),
  },
  enableEmailPoller: {
    200: (c) => c.path(`/customers/${c.f.customerId}/email/poller/${c.f.pollerId}/enable`),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.error("POLLER_NOT_FOUND"), // the example id is not the seeded poller's
  },
  disableEmailPoller: {
    200: (c) => c.path(`/customers/${c.f.customerId}/email/poller/${c.f.pollerId}/disable`),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.error("POLLER_NOT_FOUND"),
  },
  createWebhook: {
    201: (c) => c.body({ url: c.f.hookUrl, headers: [{ key: "X-Acme-Source", value: "dredd" }] }),
    400: (c) => c.body({ url: c.f.hookUrl, headers: [{ key: "X Acme Source", value: "dredd" }] }).error("BAD_REQUEST"),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${UNKNOWN_CUSTOMER_ID}/webhooks`).body({ url: c.f.hookUrl }).error("CUSTOMER_NOT_FOUND"),
    422: (c) => c.body({ headers: [] }).error("UNPROCESSABLE_ENTITY"),
  },
  getWebhook: {
    200: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${c.f.otherCustomerId}/webhooks`).error("WEBHOOK_NOT_FOUND"),
  },
  updateWebhook: {
    200: (c) => c.body({ url: c.f.hookUrl }),
    400: (c) => c.body({ url: "ftp://hooks.acme-corp.example/pins" }).error("BAD_REQUEST"),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${c.f.otherCustomerId}/webhooks`).body({ url: c.f.hookUrl }).error("WEBHOOK_NOT_FOUND"),
    422: (c) => c.body({ headers: [] }).error("UNPROCESSABLE_ENTITY"),
  },
  deleteWebhook: {
    204: (c) => c.path(`/customers/${c.f.hookDoomedCustomerId}/webhooks`),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${c.f.otherCustomerId}/webhooks`).error("WEBHOOK_NOT_FOUND"),
  },
  verifyWebhook: {
    200: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${c.f.otherCustomerId}/webhooks/verify`).error("WEBHOOK_NOT_FOUND"),
  },
  rotateWebhookSecret: {
    200: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${c.f.otherCustomerId}/webhooks/secret`).error("WEBHOOK_NOT_FOUND"),
  },
  listWebhookDeliveries: {
    200: (c) => c.query("filter[limit]=2&filter[skip]=0"),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${UNKNOWN_CUSTOMER_ID}/webhooks/deliveries`).error("CUSTOMER_NOT_FOUND"),
    422: (c) => c.query("filter[limit]=101").error("UNPROCESSABLE_ENTITY"),
  },
  retryWebhookDelivery: {
    200: (c) => c.path(`/customers/${c.f.customerId}/webhooks/deliveries/${c.f.deliveryId}/retry`),
    400: "needs a webhook disabled by HTTP 410 (tests/integration/webhooks.test.ts covers it)",
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.error("NOT_FOUND"), // the example delivery id
  },
  createUser: {
    201: (c) => c.body(c.freshUser()),
    400: (c) => c.body({ ...c.freshUser(), account_type: "alien" }).error("INVALID_ACCOUNT_TYPE"),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("operator").error("FORBIDDEN"),
    409: (c) => c.error("RESOURCE_CONFLICT"), // the example's user_id is seeded
    422: (c) => c.body({ ...c.freshUser(), email: "not-an-email", individual: {} }).error("UNPROCESSABLE_ENTITY"),
  },
  listUsers: {
    200: () => {},
    400: (c) => c.query("user_type=alien").error("INVALID_USER_TYPE"),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("user").error("FORBIDDEN"),
    422: (c) => c.query("limit=0").error("UNPROCESSABLE_ENTITY"),
  },
  getUser: {
    200: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("user").error("FORBIDDEN"),
    404: (c) => c.path(`/users/${UNKNOWN_USER_ID}`).error("USER_NOT_FOUND"),
  },
  updateUser: {
    200: () => {},
    400: (c) => c.body({ account_purpose: "gambling" }).error("INVALID_ACCOUNT_PURPOSE"),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("operator").error("FORBIDDEN"),
    404: (c) => c.path(`/users/${UNKNOWN_USER_ID}`).error("USER_NOT_FOUND"),
    409: (c) => c.body({ email: c.f.activeUserEmail }).error("EMAIL_ALREADY_EXISTS"),
    422: (c) => c.body({ email: "not-an-email" }).error("UNPROCESSABLE_ENTITY"),
  },
  deleteUser: {
    // Only a user that is not active can be deleted, and the example user must live on: a PENDING one.
    204: (c) => c.path(`/users/${c.f.doomedUserId}`),
    400: (c) => c.path(`/users/${c.f.activeUserId}`).error("CANNOT_DELETE_ACTIVE_USER"),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("user").error("FORBIDDEN"),
    404: (c) => c.path(`/users/${UNKNOWN_USER_ID}`).error("USER_NOT_FOUND"),
  },
  activateUser: {
    200: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("operator").error("FORBIDDEN"),
    404: (c) => c.path(`/users/${UNKNOWN_USER_ID}/activate`).error("USER_NOT_FOUND"),
  },
  deactivateUser: {
    // Only an active user can be deactivated: activate first, whatever ran before.
    200: (c) => c.ensureActive(c.f.userId),
    400: (c) => c.path(`/users/${c.f.pendingUserId}/deactivate`).error("BAD_REQUEST"),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("operator").error("FORBIDDEN"),
    404: (c) => c.path(`/users/${UNKNOWN_USER_ID}/deactivate`).error("USER_NOT_FOUND"),
  },
  createUserToken: {
    // Tokens are issued only to active users; Deactivate User ran just before.
    201: (c) => c.ensureActive(c.f.userId),
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("operator").error("FORBIDDEN"),
    404: (c) => c.path(`/users/${UNKNOWN_USER_ID}/token`).error("USER_NOT_FOUND"),
  },
  // Wallets of the example user: the seeding activated it and opened the Create Wallet example's
  // wallet (f.walletId, credited once by the sandbox deposit example).
  createWallet: {
    201: [
      (c) => c.ensureActive(c.f.userId).body({ ...c.example(), name: "Dredd wallet" }),
      (c) => c.asUserOf(c.f.userId).body({ ...c.example(), name: "Dredd wallet of a user token" }),
    ],
    400: [
      // The schema has no minLength on name: an empty one is a rule of the operation, not a 422.
      (c) => c.ensureActive(c.f.userId).body({ ...c.example(), name: "" }).error("WALLET_NAME_REQUIRED"),
      (c) => c.ensureActive(c.f.userId).body({ name: "Dredd usdt on bitcoin", networks: [{ name: "networks/bitcoin", currency: "usdt" }] }).error("UNSUPPORTED_CURRENCY"),
      (c) => c.as("novaultOwner").path(`/users/${c.f.novaultUserId}/wallets`).error("CLIENT_NO_SUPPLIER_ID"),
    ],
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: [
      (c) => c.as("user").error("FORBIDDEN"), // a user token of another user
      (c) => c.as("operator").error("FORBIDDEN"),
    ],
    404: [
      (c) => c.path(`/users/${UNKNOWN_USER_ID}/wallets`).error("USER_NOT_FOUND"),
      (c) => c.path(`/users/${c.f.pendingUserId}/wallets`).error("RESOURCE_NOT_FOUND"), // not active
    ],
    409: (c) => c.ensureActive(c.f.userId).error("RESOURCE_CONFLICT"), // the example's name is the seeded wallet's
    422: (c) => c.body({ name: 5, networks: [] }).error("UNPROCESSABLE_ENTITY"),
  },
  listWallets: {
    200: [(c) => c.query("filter[limit]=2&filter[skip]=0"), (c) => c.asUserOf(c.f.userId)],
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: [
      (c) => c.as("user").error("FORBIDDEN"), // a user token of another user
      (c) => c.as("customerSession").error("FORBIDDEN"),
    ],
    404: [
      (c) => c.path(`/users/${c.f.activeUserId}/wallets`).error("WALLET_NOT_FOUND"), // a user without wallets
      (c) => c.path(`/users/${UNKNOWN_USER_ID}/wallets`).error("USER_NOT_FOUND"),
    ],
    422: (c) => c.query("filter[limit]=101").error("UNPROCESSABLE_ENTITY"),
  },
  getWalletBalance: {
    200: [(c) => c.path(`/wallets/${c.f.walletId}/balance`), (c) => c.asUserOf(c.f.userId).path(`/wallets/${c.f.walletId}/balance`)],
    401: (c) => c.as("none").path(`/wallets/${c.f.walletId}/balance`).error("UNAUTHORIZED"),
    403: (c) => c.as("operator").path(`/wallets/${c.f.walletId}/balance`).error("FORBIDDEN"),
    404: [
      (c) => c.error("WALLET_NOT_FOUND"), // the example id
      (c) => c.as("otherOwner").path(`/wallets/${c.f.walletId}/balance`).error("WALLET_NOT_FOUND"), // another customer's wallet
    ],
  },
  listWalletTransactions: {
    200: [
      (c) => c.path(`/wallets/${c.f.walletId}/transactions?filter[limit]=5&filter[skip]=0&filter[sort]=ASC&filter[where][type]=deposit`),
      (c) => c.asUserOf(c.f.userId).path(`/wallets/${c.f.walletId}/transactions`),
    ],
    400: (c) => c.path(`/wallets/${c.f.walletId}/transactions?filter[limit]=101`).error("BAD_REQUEST"),
    401: (c) => c.as("none").path(`/wallets/${c.f.walletId}/transactions`).error("UNAUTHORIZED"),
    403: (c) => c.as("customerSession").path(`/wallets/${c.f.walletId}/transactions`).error("FORBIDDEN"),
    404: [
      (c) => c.error("WALLET_NOT_FOUND"), // the example id
      (c) => c.as("otherOwner").path(`/wallets/${c.f.walletId}/transactions`).error("WALLET_NOT_FOUND"), // another customer's wallet
    ],
    422: (c) => c.path(`/wallets/${c.f.walletId}/transactions?filter[limit]=0`).error("UNPROCESSABLE_ENTITY"),
  },
  listCurrencies: {
    200: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("user").error("FORBIDDEN"), // owner API key only
  },
  listTradingPairs: {
    200: () => {},
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("user").error("FORBIDDEN"),
  },
  createSandboxDeposit: {
    201: (c) => c.body({ ...c.example(), wallet_id: c.f.walletId }),
    400: (c) => c.body({ ...c.example(), wallet_id: c.f.walletId, amount: 0 }).error("AMOUNT_MUST_BE_POSITIVE"),
    401: (c) => c.as("none").body({ ...c.example(), wallet_id: c.f.walletId }).error("UNAUTHORIZED"),
    403: (c) => c.as("user").body({ ...c.example(), wallet_id: c.f.walletId }).error("FORBIDDEN"),
    404: [
      // The seeded wallet holds usdt on ethereum and btc on bitcoin, not usdc on polygon.
      (c) => c.body({ wallet_id: c.f.walletId, network: "networks/polygon", currency: "usdc", amount: 1 }).error("ADDRESS_NOT_FOUND"),
      (c) => c.error("WALLET_NOT_FOUND"), // the example id
      (c) => c.as("otherOwner").body({ ...c.example(), wallet_id: c.f.walletId }).error("WALLET_NOT_FOUND"), // another customer's wallet
    ],
    422: (c) => c.body({ wallet_id: "", network: "networks/ethereum", currency: "usdt", amount: "lots" }).error("UNPROCESSABLE_ENTITY"),
  },
  listSandboxMail: {
    200: [
      // The seeding's withdrawals sent codes to the example user.
      (c) =>
        c.query(`to=${encodeURIComponent(c.f.userEmail.toUpperCase())}`).expect({
          properties: {
            data: {
              minItems: 1,
              items: { properties: { to: { const: c.f.userEmail }, text: { pattern: "Confirmation code: [0-9]{6}" } } },
            },
          },
        }),
      (c) => c.expect({ properties: { data: { minItems: 1 } } }), // every email of the customer
    ],
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("customerSession").error("FORBIDDEN")],
    404: "NOT_FOUND arises only when the provider is not the sandbox, and the test app runs the sandbox",
  },
  // Withdrawals of the example user (docs/decisions/withdrawals.md). The seeding opened them from f.walletId with
  // their own Idempotency-Keys (f.withdrawals by state, the codes read from the sandbox outbox); the
  // document's example withdrawal id exists nowhere, so it is the unknown withdrawal. A request whose
  // case is not about idempotency sends no Idempotency-Key: the service looks the key up first, and
  // the example's key is taken once the success case ran.
  initiateWithdrawal: {
    201: [
      // The example as sent (its Idempotency-Key included), first time on this database.
      (c) => c.ensureActive(c.f.userId).body(initiateBody(c)).expect(initiated({ is_duplicate: { const: false }, status: { const: "PENDING" }, idempotency_key: { const: EXAMPLE_IDEMPOTENCY_KEY } })),
      // A repeat of a seeded request (same key, same body): the first withdrawal, already COMPLETED.
      (c) =>
        c
          .ensureActive(c.f.userId)
          .header("Idempotency-Key", c.f.seededInitiate.idempotencyKey)
          .body(c.f.seededInitiate.body)
          .expect(initiated({ id: { const: c.f.withdrawals.completed }, is_duplicate: { const: true }, status: { const: "COMPLETED" } })),
      // A user token, no wallet_id (the oldest wallet with enough usdt), no key (one is generated).
      (c) => {
        const { wallet_id: _wallet, ...body } = initiateBody(c);
        return c.asUserOf(c.f.userId).header("Idempotency-Key", undefined).body(body).expect(initiated({ is_duplicate: { const: false } }));
      },
    ],
    400: [
      (c) => c.ensureActive(c.f.userId).header("Idempotency-Key", undefined).body({ ...initiateBody(c), address: "0xnot-an-address" }).error("INVALID_CRYPTO_ADDRESS"),
      (c) => c.ensureActive(c.f.userId).header("Idempotency-Key", undefined).body({ ...initiateBody(c), amount: 90000 }).error("INSUFFICIENT_BALANCE"),
      (c) => c.ensureActive(c.f.userId).header("Idempotency-Key", undefined).body({ ...initiateBody(c), amount: 0.5 }).error("MINIMUM_AMOUNT_NOT_MET"),
    ],
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: [
      (c) => c.as("customerSession").error("FORBIDDEN"),
      (c) => c.as("user").error("FORBIDDEN"), // a user token of another user
    ],
    404: [
      (c) => c.path(`/users/${UNKNOWN_USER_ID}/accounts/crypto/withdrawals`).header("Idempotency-Key", undefined).error("USER_NOT_FOUND"),
      (c) => c.ensureActive(c.f.userId).header("Idempotency-Key", undefined).error("WALLET_NOT_FOUND"), // the example's wallet_id
      (c) => c.path(`/users/${c.f.pendingUserId}/accounts/crypto/withdrawals`).header("Idempotency-Key", undefined).body(initiateBody(c)).error("RESOURCE_NOT_FOUND"), // not active
    ],
    // A seeded withdrawal's key with the example's body.
    409: (c) => c.ensureActive(c.f.userId).header("Idempotency-Key", c.f.seededInitiate.idempotencyKey).body(initiateBody(c)).error("IDEMPOTENCY_KEY_REUSED"),
    422: [
      (c) => c.body({ currency: "", amount: "lots", address: 5 }).error("UNPROCESSABLE_ENTITY"),
      (c) => c.header("Idempotency-Key", "k".repeat(256)).body(initiateBody(c)).error("UNPROCESSABLE_ENTITY"), // longer than 255
    ],
  },
  listWithdrawals: {
    200: [
      (c) =>
        c
          .query("filter[limit]=2&filter[skip]=0&filter[sort]=ASC&filter[where][status]=COMPLETED&filter[where][currency]=USDT")
          .expect({ properties: { data: { minItems: 1, items: { properties: { status: { const: "COMPLETED" }, currency: { const: "usdt" } } } } } }),
      (c) => c.asUserOf(c.f.userId),
    ],
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: [(c) => c.as("customerSession").error("FORBIDDEN"), (c) => c.as("user").error("FORBIDDEN")],
    404: (c) => c.path(`/users/${UNKNOWN_USER_ID}/accounts/crypto/withdrawals`).error("USER_NOT_FOUND"),
    422: [(c) => c.query("filter[limit]=101").error("UNPROCESSABLE_ENTITY"), (c) => c.query("filter[where][status]=DONE").error("UNPROCESSABLE_ENTITY")],
  },
  cancelWithdrawal: {
    204: (c) => withdrawalPath(c, c.f.withdrawals.toCancel),
    400: [
      // The description names only BAD_REQUEST; the service answers ALREADY_CONFIRMED for a completed one.
      (c) => withdrawalPath(c, c.f.withdrawals.completed).error("ALREADY_CONFIRMED"),
      (c) => withdrawalPath(c, c.f.withdrawals.cancelled).error("BAD_REQUEST"),
    ],
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: [(c) => c.as("customerSession").error("FORBIDDEN"), (c) => c.as("user").error("FORBIDDEN")],
    404: [
      (c) => c.error("WITHDRAWAL_NOT_FOUND"), // the example id
      (c) => withdrawalPath(c, c.f.withdrawals.toResend, "", UNKNOWN_USER_ID).error("USER_NOT_FOUND"),
    ],
  },
  getWithdrawal: {
    200: [
      (c) => withdrawalPath(c, c.f.withdrawals.completed).expect({ properties: { data: { properties: { id: { const: c.f.withdrawals.completed }, status: { const: "COMPLETED" } } } } }),
      (c) => withdrawalPath(c, c.f.withdrawals.cancelled).asUserOf(c.f.userId),
    ],
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: [(c) => c.as("customerSession").error("FORBIDDEN"), (c) => c.as("user").error("FORBIDDEN")],
    404: [
      (c) => c.error("WITHDRAWAL_NOT_FOUND"), // the example id
      (c) => withdrawalPath(c, c.f.withdrawals.completed, "", UNKNOWN_USER_ID).error("USER_NOT_FOUND"),
      (c) => withdrawalPath(c, c.f.withdrawals.completed, "", c.f.activeUserId).error("WITHDRAWAL_NOT_FOUND"), // another user's
    ],
  },
  confirmWithdrawal: {
    200: (c) => withdrawalPath(c, c.f.withdrawals.toConfirm, "/confirm").body({ code: c.f.confirmationCode }),
    400: [
      (c) => withdrawalPath(c, c.f.withdrawals.wrongCode, "/confirm").body({ code: c.f.wrongCode }).error("CONFIRMATION_CODE_INVALID"),
      (c) => withdrawalPath(c, c.f.withdrawals.completed, "/confirm").error("ALREADY_CONFIRMED"),
      (c) => withdrawalPath(c, c.f.withdrawals.cancelled, "/confirm").error("BAD_REQUEST"),
    ],
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: [
      (c) => withdrawalPath(c, c.f.withdrawals.blocked, "/confirm").error("WITHDRAWAL_BLOCKED"), // whatever the code
      (c) => c.as("customerSession").error("FORBIDDEN"),
      (c) => c.as("user").error("FORBIDDEN"),
    ],
    404: [
      (c) => c.error("WITHDRAWAL_NOT_FOUND"), // the example id
      (c) => withdrawalPath(c, c.f.withdrawals.toResend, "/confirm", UNKNOWN_USER_ID).error("USER_NOT_FOUND"),
    ],
    422: (c) => c.body({ code: "" }).error("UNPROCESSABLE_ENTITY"),
  },
  resendWithdrawalCode: {
    200: [
      (c) => withdrawalPath(c, c.f.withdrawals.toResend, "/verification/codes"),
      (c) => withdrawalPath(c, c.f.withdrawals.toResend, "/verification/codes").asUserOf(c.f.userId),
    ],
    400: [
      // The description names only BAD_REQUEST; the service answers ALREADY_CONFIRMED for a completed one.
      (c) => withdrawalPath(c, c.f.withdrawals.completed, "/verification/codes").error("ALREADY_CONFIRMED"),
      (c) => withdrawalPath(c, c.f.withdrawals.cancelled, "/verification/codes").error("BAD_REQUEST"),
    ],
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: [(c) => c.as("customerSession").error("FORBIDDEN"), (c) => c.as("user").error("FORBIDDEN")],
    404: [
      (c) => c.error("WITHDRAWAL_NOT_FOUND"), // the example id
      (c) => withdrawalPath(c, c.f.withdrawals.toResend, "/verification/codes", UNKNOWN_USER_ID).error("USER_NOT_FOUND"),
    ],
  },
};

/** The credential an access rule asks for by default. */
function defaultCredential(access) {
  if (access === "anyone") return "none";
  if (access.includes("operator-session")) return "operator";
  if (access.includes("master")) return "master";
  if (access.includes("owner")) return "owner";
  throw new Error(`No default credential for access ${JSON.stringify(access)}`);
}

/** Request headers of each credential kind. */
function credentialHeaders(kind, f) {
  switch (kind) {
    case "none":
      return {};
    case "operator":
      return { Authorization: `Bearer ${f.operatorToken}` };
    case "customerSession":
      return { Authorization: `Bearer ${f.otherCustomerSession}` };
    case "user":
      return { Authorization: `Bearer ${f.userToken}` };
    case "master":
      return { "x-master-api-key": f.masterKey };
    case "badMaster":
      return { "x-master-api-key": "not-the-master-key-0123456789abcdefghijkl" };
    case "owner":
      return { "x-api-key": f.ownerKey };
    case "otherOwner":
      return { "x-api-key": f.otherOwnerKey };
    case "novaultOwner":
      return { "x-api-key": f.novaultOwnerKey };
    default:
      throw new Error(`Unknown credential kind ${kind}`);
  }
}

/** The platform's own context helpers. */
function extendContext(c, request) {
  const contract = c.contract;
  /** The document's Create User example as a new user: no fixed user_id, an unused email and phone. */
  c.freshUser = () => {
    const { user_id: _fixedId, ...rest } = c.example();
    return { ...rest, email: contract.fixtures.freshEmail, phone_number: contract.fixtures.freshPhoneNumber };
  };
  c.ensureActive = (userId) =>
    c.before(async () => {
      const res = await fetch(`${contract.baseUrl}/users/${userId}/activate`, {
        method: "POST",
        headers: { "x-api-key": contract.fixtures.ownerKey },
      });
      if (res.status !== 200) throw new Error(`Activating ${userId} answered ${res.status}: ${await res.text()}`);
    });
  /** Sends a user token of `userId`, issued (to the user, activated first) just before the request. */
  c.asUserOf = (userId) =>
    c.ensureActive(userId).as("none").before(async () => {
      const res = await fetch(`${contract.baseUrl}/users/${userId}/token`, {
        method: "POST",
        headers: { "x-api-key": contract.fixtures.ownerKey },
      });
      const text = await res.text();
      if (res.status !== 201) throw new Error(`A token of ${userId} answered ${res.status}: ${text}`);
      request.headers.Authorization = `Bearer ${JSON.parse(text).data.token}`;
    });
}

installCaseHooks(hooks, {
  cases: CASES,
  skippedEverywhere: SKIPPED_EVERYWHERE,
  defaultCredential,
  credentialHeaders,
  credentialHeaderNames: CREDENTIAL_HEADERS,
  extendContext,
  fallback: (_op, status) =>
    status === "422" ? "a path or query value out of its bounds; tests/integration/fuzz.test.ts sends such values to every operation" : undefined,
});
