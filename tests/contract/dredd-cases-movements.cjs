/**
 * Dredd cases of transfers, limits and the withdrawal allowlist (docs/decisions/limits-and-allowlist.md),
 * merged into the platform hookfile's CASES (tests/contract/dredd-hooks.cjs, which documents what a
 * case is). The seeding (tests/contract/support-dredd-fixtures-movements.ts) gave the example
 * customer a session of its own, the example user's wallet (f.walletId) 1 btc, a recipient with a
 * wallet holding btc and usdt, a wallet whose owner is deactivated, a transfer with its own
 * `Idempotency-Key`, and two allowlist entries of the example user (one kept, one to delete).
 *
 * Order matters in one way only: Set Limits runs before Create Transfer and Initiate Withdrawal, so
 * its cases keep `allowlist_required` false for the example customer and touch btc caps only
 * (Initiate Withdrawal sends usdt; the btc transfers stay under the example's 0.5 per transfer).
 */

/** The `Idempotency-Key` example of Create Transfer, which Dredd sends with every create (the seeding never uses it). */
const EXAMPLE_TRANSFER_KEY = "tr-2026-01-15-0001";
/** A path value of 37 characters: one past the `maxLength` of the transfer and address ids. */
const TOO_LONG_ID = "0".repeat(37);

/** The Create Transfer example between the seeded wallets (the example's wallet ids cannot exist). */
const transferBody = (c, changes = {}) => ({ ...c.example(), from_wallet_id: c.f.walletId, to_wallet_id: c.f.recipientWalletId, ...changes });
/** The Create Transfer example without an `Idempotency-Key`: the service answers a known key first. */
const transfer = (c, changes) => c.header("Idempotency-Key", undefined).body(transferBody(c, changes));
/** `data` of an answer must match `properties`. */
const dataOf = (properties) => ({ properties: { data: { properties } } });
/** A list answer with at least one item. */
const someItems = { properties: { data: { minItems: 1 } } };
/** Path of an allowlist entry of `userId` (the example user unless given). */
const addressPath = (c, addressId, userId = c.f.userId) => c.path(`/users/${userId}/addresses/${addressId}`);
/** Caps out of order: `per_transaction` above `daily`. */
const CAPS_OUT_OF_ORDER = { btc: { per_transaction: "3", daily: "2", monthly: "10" } };

/**
 * The cases of the nine operations. `ids` holds the unknown user and customer of the hookfile.
 * @param {{ unknownUserId: string, unknownCustomerId: string }} ids
 */
function movementCases({ unknownUserId, unknownCustomerId }) {
  return {
    createTransfer: {
      201: [
        // The example as sent (its Idempotency-Key included), first time on this database.
        (c) =>
          c
            .header("Idempotency-Key", EXAMPLE_TRANSFER_KEY)
            .body(transferBody(c))
            .expect(dataOf({ is_duplicate: { const: false }, status: { const: "COMPLETED" }, idempotency_key: { const: EXAMPLE_TRANSFER_KEY }, amount: { const: "0.10000000" } })),
        // A repeat of the seeded transfer (same key, same body): the first transfer.
        (c) =>
          c
            .header("Idempotency-Key", c.f.seededTransfer.idempotencyKey)
            .body(c.f.seededTransfer.body)
            .expect(dataOf({ transfer_id: { const: c.f.seededTransfer.transferId }, is_duplicate: { const: true } })),
        // A user token of the sender, no key (one is generated).
        (c) => transfer(c).asUserOf(c.f.userId).expect(dataOf({ from_user_id: { const: c.f.userId }, is_duplicate: { const: false } })),
      ],
      400: [
        (c) => transfer(c, { to_wallet_id: "not-a-uuid" }).error("INVALID_WALLET_ID"),
        (c) => transfer(c, { currency: "usdt", amount: 90000 }).error("INSUFFICIENT_BALANCE"),
        (c) => transfer(c, { to_wallet_id: c.f.walletId }).error("SAME_WALLET_TRANSFER"),
        (c) => transfer(c, { amount: 3 }).error("TRANSFER_LIMIT_EXCEEDED"), // over any btc cap per transfer
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [
        (c) => transfer(c).as("user").error("FORBIDDEN"), // a user token sending from another user's wallet
        (c) => transfer(c).as("customerSession").error("FORBIDDEN"),
      ],
      404: [
        (c) => c.header("Idempotency-Key", undefined).error("WALLET_NOT_FOUND"), // the example's wallet ids
        (c) => transfer(c).as("otherOwner").error("WALLET_NOT_FOUND"), // another customer's wallets
        (c) => transfer(c, { to_wallet_id: c.f.inactiveWalletId }).error("USER_NOT_FOUND"), // its owner was deactivated
      ],
      // The seeded transfer's key with the example's body.
      409: (c) => c.header("Idempotency-Key", c.f.seededTransfer.idempotencyKey).body(transferBody(c)).error("IDEMPOTENCY_KEY_REUSED"),
      422: [
        (c) => c.header("Idempotency-Key", undefined).body({ from_wallet_id: "", to_wallet_id: 5, currency: "btc", amount: "lots" }).error("UNPROCESSABLE_ENTITY"),
        (c) => c.header("Idempotency-Key", "k".repeat(256)).body(transferBody(c)).error("UNPROCESSABLE_ENTITY"), // longer than 255
      ],
    },
    getTransfer: {
      200: [
        (c) =>
          c
            .path(`/transfers/${c.f.seededTransfer.transferId}`)
            .expect(dataOf({ transfer_id: { const: c.f.seededTransfer.transferId }, to_user_id: { const: c.f.recipientUserId }, is_duplicate: { const: false } })),
        (c) => c.path(`/transfers/${c.f.seededTransfer.transferId}`).asUserOf(c.f.userId), // the sender's token
        (c) => c.path(`/transfers/${c.f.seededTransfer.transferId}`).asUserOf(c.f.recipientUserId), // the recipient's token
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: (c) => c.as("customerSession").error("FORBIDDEN"),
      404: [
        (c) => c.error("RESOURCE_NOT_FOUND"), // the example id
        (c) => c.path(`/transfers/${c.f.seededTransfer.transferId}`).as("user").error("RESOURCE_NOT_FOUND"), // a user on neither side
        (c) => c.path(`/transfers/${c.f.seededTransfer.transferId}`).as("otherOwner").error("RESOURCE_NOT_FOUND"), // another customer
      ],
      422: (c) => c.path(`/transfers/${TOO_LONG_ID}`).error("UNPROCESSABLE_ENTITY"),
    },
    listWalletTransfers: {
      200: [
        (c) => c.path(`/wallets/${c.f.walletId}/transfers?filter[limit]=5&filter[skip]=0`).expect(someItems),
        (c) => c.path(`/wallets/${c.f.recipientWalletId}/transfers`).asUserOf(c.f.recipientUserId).expect(someItems),
      ],
      400: (c) => c.path(`/wallets/not-a-uuid/transfers`).error("INVALID_WALLET_ID"),
      401: (c) => c.as("none").path(`/wallets/${c.f.walletId}/transfers`).error("UNAUTHORIZED"),
      403: [
        (c) => c.as("user").path(`/wallets/${c.f.walletId}/transfers`).error("FORBIDDEN"), // another user's wallet
        (c) => c.as("customerSession").path(`/wallets/${c.f.walletId}/transfers`).error("FORBIDDEN"),
      ],
      404: [
        (c) => c.error("WALLET_NOT_FOUND"), // the example id
        (c) => c.as("otherOwner").path(`/wallets/${c.f.walletId}/transfers`).error("WALLET_NOT_FOUND"),
      ],
      422: (c) => c.path(`/wallets/${c.f.walletId}/transfers?filter[limit]=101`).error("UNPROCESSABLE_ENTITY"),
    },
    getLimits: {
      200: [
        (c) => c.expect(dataOf({ customer_id: { const: c.f.customerId }, allowlist_required: { const: false } })), // an operator session
        (c) => c.as("ownSession").expect(dataOf({ customer_id: { const: c.f.customerId } })),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [
        (c) => c.as("customerSession").error("FORBIDDEN"), // a session of another customer
        (c) => c.as("owner").error("FORBIDDEN"),
      ],
      404: (c) => c.path(`/customers/${unknownCustomerId}/limits`).error("CUSTOMER_NOT_FOUND"),
    },
    setLimits: {
      200: [
        (c) =>
          c
            .body({ ...c.example(), allowlist_required: false })
            .expect(dataOf({ allowlist_required: { const: false }, customized: { properties: { withdrawal: { const: ["btc"] }, transfer: { const: ["btc"] } } } })),
        (c) => c.as("ownSession").body({ ...c.example(), allowlist_required: false }).expect(dataOf({ customer_id: { const: c.f.customerId } })),
      ],
      400: [
        (c) => c.body({ allowlist_required: false, transfer: { zzz: c.example().transfer.btc } }).error("INVALID_CURRENCY"),
        (c) => c.body({ allowlist_required: false, withdrawal: CAPS_OUT_OF_ORDER }).error("BAD_REQUEST"),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("customerSession").error("FORBIDDEN"), (c) => c.as("owner").error("FORBIDDEN")],
      404: (c) => c.path(`/customers/${unknownCustomerId}/limits`).error("CUSTOMER_NOT_FOUND"),
      422: (c) => c.body({ withdrawal: { btc: { per_transaction: "lots", daily: "2", monthly: "10" } } }).error("UNPROCESSABLE_ENTITY"),
    },
    getUserLimits: {
      200: [
        (c) => c.ensureActive(c.f.userId).expect(dataOf({ user_id: { const: c.f.userId }, transfer: { required: ["btc"] } })),
        (c) => c.asUserOf(c.f.userId),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("operator").error("FORBIDDEN")],
      404: (c) => c.path(`/users/${unknownUserId}/limits`).error("USER_NOT_FOUND"),
    },
    addAddress: {
      201: [
        (c) => c.ensureActive(c.f.userId).expect(dataOf({ user_id: { const: c.f.userId }, status: { const: "PENDING" } })), // the example
        (c) => c.asUserOf(c.f.userId).body({ currency: "usdt", address: "0x1111111111111111111111111111111111111111", label: "Dredd user token" }),
      ],
      400: [
        (c) => c.body({ ...c.example(), address: "not-an-address" }).error("INVALID_CRYPTO_ADDRESS"),
        (c) => c.body({ ...c.example(), currency: "zzz" }).error("INVALID_CURRENCY"),
        (c) => c.body({ ...c.example(), currency: "usd" }).error("INVALID_CRYPTO_ADDRESS"), // fiat: no address of its bank rail is a crypto destination
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("customerSession").error("FORBIDDEN")],
      404: (c) => c.path(`/users/${unknownUserId}/addresses`).error("USER_NOT_FOUND"),
      409: (c) => c.body({ ...c.f.keptAddress, label: "Dredd again" }).error("ADDRESS_ALREADY_EXISTS"),
      422: (c) => c.body({ ...c.example(), label: "" }).error("UNPROCESSABLE_ENTITY"),
    },
    listAddresses: {
      200: [(c) => c.query("filter[limit]=5&filter[skip]=0").expect(someItems), (c) => c.asUserOf(c.f.userId).expect(someItems)],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("customerSession").error("FORBIDDEN")],
      404: (c) => c.path(`/users/${unknownUserId}/addresses`).error("USER_NOT_FOUND"),
      422: (c) => c.query("filter[limit]=101").error("UNPROCESSABLE_ENTITY"),
    },
    deleteAddress: {
      204: (c) => addressPath(c, c.f.doomedAddressId),
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("customerSession").error("FORBIDDEN")],
      404: [
        (c) => c.error("RESOURCE_NOT_FOUND"), // the example id
        (c) => addressPath(c, c.f.keptAddressId, unknownUserId).error("USER_NOT_FOUND"),
      ],
      422: (c) => addressPath(c, TOO_LONG_ID).error("UNPROCESSABLE_ENTITY"),
    },
  };
}

module.exports = { movementCases };
