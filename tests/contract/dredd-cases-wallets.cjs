/**
 * Dredd cases of wallets, currencies, the sandbox helpers and withdrawals, merged into the platform
 * hookfile's CASES (tests/contract/dredd-hooks.cjs, which documents what a case is; the seeding is
 * tests/contract/support-dredd-fixtures.ts).
 */

/** The `Idempotency-Key` example of Initiate Withdrawal, which Dredd sends with every initiate (the seeding never uses it). */
const EXAMPLE_IDEMPOTENCY_KEY = "wd-2026-01-15-0001";

/** The `Idempotency-Key` example of Create Sandbox Deposit, which Dredd sends with every sandbox deposit (the seeding never uses it). */
const EXAMPLE_DEPOSIT_KEY = "dep-2026-01-15-0001";
/** The Create Sandbox Deposit example on the seeded wallet, with no Idempotency-Key unless the case is about it. */
const deposit = (c, body = {}) => c.header("Idempotency-Key", undefined).body({ ...c.example(), wallet_id: c.f.walletId, ...body });
/** `data` of a Create Sandbox Deposit answer must match `props`. */
const deposited = (props) => ({ properties: { data: { properties: props } } });

/** Path of a withdrawal of `userId` (the example user unless given); ids are generated, the fixtures hold them. */
const withdrawalPath = (c, withdrawalId, suffix = "", userId = c.f.userId) =>
  c.path(`/users/${userId}/accounts/crypto/withdrawals/${withdrawalId}${suffix}`);
/** The Initiate Withdrawal example on the seeded wallet (the example's `wallet_id` cannot exist). */
const initiateBody = (c) => ({ ...c.example(), wallet_id: c.f.walletId });
/** `data.withdraw` of an Initiate Withdrawal answer must match `withdraw`. */
const initiated = (withdraw) => ({ properties: { data: { properties: { withdraw: { properties: withdraw } } } } });

/**
 * The cases of the wallet, currency, sandbox and withdrawal operations. `ids` holds the hookfile's unknown user.
 * @param {{ unknownUserId: string }} ids
 */
function walletCases({ unknownUserId: UNKNOWN_USER_ID }) {
  return {
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
      400: (c) => c.path(`/wallets/not-a-uuid/balance`).error("INVALID_WALLET_ID"),
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
      400: [
        (c) => c.path(`/wallets/${c.f.walletId}/transactions?filter[limit]=101`).error("BAD_REQUEST"),
        (c) => c.path(`/wallets/not-a-uuid/transactions`).error("INVALID_WALLET_ID"),
      ],
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
    // A request whose case is not about idempotency sends no Idempotency-Key (the example's key is
    // taken once the first success case ran, and the key is answered before the other checks).
    createSandboxDeposit: {
      // The example as sent (its Idempotency-Key included), first time on this database (the
      // repeat and the generated key: tests/integration/sandbox-deposit-idempotency.test.ts).
      201: (c) => c.body({ ...c.example(), wallet_id: c.f.walletId }).expect(deposited({ is_duplicate: { const: false }, idempotency_key: { const: EXAMPLE_DEPOSIT_KEY } })),
      400: [
        (c) => deposit(c, { amount: 0 }).error("AMOUNT_MUST_BE_POSITIVE"),
        (c) => deposit(c, { wallet_id: "not-a-uuid" }).error("INVALID_WALLET_ID"),
      ],
      401: (c) => deposit(c).as("none").error("UNAUTHORIZED"),
      403: (c) => deposit(c).as("user").error("FORBIDDEN"),
      404: [
        // The seeded wallet holds usdt on ethereum and btc on bitcoin, not usdc on polygon.
        (c) => deposit(c, { network: "networks/polygon", currency: "usdc", amount: 1 }).error("ADDRESS_NOT_FOUND"),
        (c) => c.header("Idempotency-Key", undefined).error("WALLET_NOT_FOUND"), // the example id
        (c) => deposit(c).as("otherOwner").error("WALLET_NOT_FOUND"), // another customer's wallet
      ],
      // The example's key (taken by the first success case) with another amount.
      409: (c) => c.body({ ...c.example(), wallet_id: c.f.walletId, amount: 7 }).error("IDEMPOTENCY_KEY_REUSED"),
      // (a key longer than 255 characters: tests/integration/sandbox-deposit-idempotency.test.ts)
      422: (c) => c.header("Idempotency-Key", undefined).body({ wallet_id: "", network: "networks/ethereum", currency: "usdt", amount: "lots" }).error("UNPROCESSABLE_ENTITY"),
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
        (c) => c.ensureActive(c.f.userId).header("Idempotency-Key", undefined).body({ ...initiateBody(c), wallet_id: "not-a-uuid" }).error("INVALID_WALLET_ID"),
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
}

module.exports = { walletCases };
