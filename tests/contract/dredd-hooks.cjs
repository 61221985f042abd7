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
const { movementCases } = require("./dredd-cases-movements.cjs");
const { walletCases } = require("./dredd-cases-wallets.cjs");
const { walletStateCases } = require("./dredd-cases-wallet-states.cjs");
const { tradingCases } = require("./dredd-cases-trading.cjs");
const { bankAccountCases } = require("./dredd-cases-bank-accounts.cjs");
const { inboundCases } = require("./dredd-cases-inbound.cjs");
const { fiatWithdrawalCases } = require("./dredd-cases-fiat-withdrawals.cjs");
const { payoutCases } = require("./dredd-cases-payouts.cjs");
const { chainCases } = require("./dredd-cases-chains.cjs");

const UNKNOWN_USER_ID = "00000000-0000-4000-8000-000000000000";
const UNKNOWN_CUSTOMER_ID = "no-such-customer";
const CREDENTIAL_HEADERS = ["authorization", "x-api-key", "x-master-api-key"];

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
  recoverWebhookDeliveries: {
    // `since` relative to now: the example's instant leaves the 30-day window as time passes.
    200: (c) => c.path(`/customers/${c.f.customerId}/webhooks/deliveries/recover`).body({ since: new Date(Date.now() - 3_600_000).toISOString() }),
    400: "needs a webhook disabled by HTTP 410 (tests/integration/notifications-recover.test.ts covers it)",
    401: (c) => c.as("none").error("UNAUTHORIZED"),
    403: (c) => c.as("owner").error("FORBIDDEN"),
    404: (c) => c.path(`/customers/${c.f.otherCustomerId}/webhooks/deliveries/recover`).body({ since: new Date(Date.now() - 3_600_000).toISOString() }).error("WEBHOOK_NOT_FOUND"),
    422: (c) => c.body({ since: new Date(Date.now() + 3_600_000).toISOString() }).error("UNPROCESSABLE_ENTITY"), // in the future
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
  // Wallets, currencies, the sandbox and withdrawals: tests/contract/dredd-cases-wallets.cjs.
  ...walletCases({ unknownUserId: UNKNOWN_USER_ID }),
  // Wallet states and the currency switches: tests/contract/dredd-cases-wallet-states.cjs.
  ...walletStateCases(),
  // The operators' view of the live networks: tests/contract/dredd-cases-chains.cjs.
  ...chainCases(),
  // Transfers, limits and the allowlist: tests/contract/dredd-cases-movements.cjs.
  ...movementCases({ unknownUserId: UNKNOWN_USER_ID, unknownCustomerId: UNKNOWN_CUSTOMER_ID }),
  // Quotes, orders and Set Sandbox Price: tests/contract/dredd-cases-trading.cjs.
  ...tradingCases({ unknownUserId: UNKNOWN_USER_ID }),
  // Users' bank accounts: tests/contract/dredd-cases-bank-accounts.cjs.
  ...bankAccountCases({ unknownUserId: UNKNOWN_USER_ID }),
  // The inbound webhook and pushed PINs: tests/contract/dredd-cases-inbound.cjs.
  ...inboundCases({ unknownCustomerId: UNKNOWN_CUSTOMER_ID }),
  // Fiat withdrawals: tests/contract/dredd-cases-fiat-withdrawals.cjs.
  ...fiatWithdrawalCases({ unknownUserId: UNKNOWN_USER_ID }),
  // The SEPA payout file: tests/contract/dredd-cases-payouts.cjs.
  ...payoutCases({ unknownCustomerId: UNKNOWN_CUSTOMER_ID }),
};

/** The credential an access rule asks for by default. */
function defaultCredential(access) {
  if (access === "anyone" || access === "signature") return "none";
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
    case "ownSession":
      return { Authorization: `Bearer ${f.customerSession}` };
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
