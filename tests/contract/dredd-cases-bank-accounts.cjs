/**
 * Dredd cases of users' bank accounts (docs/decisions/fiat.md "Bank accounts"), merged into the
 * platform hookfile's CASES (tests/contract/dredd-hooks.cjs, which documents what a case is). The
 * seeding (tests/contract/support-dredd-fixtures-movements.ts) gave the example user two bank
 * accounts: one kept (Add Bank Account with it answers 409) and one that Delete Bank Account deletes.
 *
 * Order: Add Bank Account's 201 adds the document's example (an eur account) for the example user
 * the first time; the user-token alternative adds a usd account once, in its own run.
 */

/** A path value of 37 characters: one past the `maxLength` of the bank account id. */
const TOO_LONG_ID = "0".repeat(37);
/** `data` of an answer must match `properties`. */
const dataOf = (properties) => ({ properties: { data: { properties } } });
/** A list answer with at least one item. */
const someItems = { properties: { data: { minItems: 1 } } };
/** Path of a bank account of `userId` (the example user unless given). */
const bankAccountPath = (c, bankAccountId, userId = c.f.userId) => c.path(`/users/${userId}/bank-accounts/${bankAccountId}`);
/** An INVALID_BANK_ACCOUNT answer naming `field`. */
const invalid = (field) => ({ properties: { errors: { items: { properties: { field: { const: field } } } } } });

/**
 * The cases of the three operations. `ids` holds the unknown user of the hookfile.
 * @param {{ unknownUserId: string }} ids
 */
function bankAccountCases({ unknownUserId }) {
  return {
    addBankAccount: {
      201: [
        (c) => c.ensureActive(c.f.userId).expect(dataOf({ user_id: { const: c.f.userId }, currency: { const: "eur" }, account_mask: { const: "****3000" } })), // the example
        (c) => c.asUserOf(c.f.userId).body({ currency: "usd", holder_name: "Dredd user token", routing_number: "111000025", account_number: "55501234" })
          .expect(dataOf({ currency: { const: "usd" }, account_mask: { const: "****1234" } })),
      ],
      400: [
        (c) => c.body({ ...c.example(), iban: "DE88370400440532013000" }).error("INVALID_BANK_ACCOUNT").expect(invalid("iban")),
        (c) => c.body({ currency: "usd", holder_name: "Dredd", routing_number: "021000022", account_number: "12345678" }).error("INVALID_BANK_ACCOUNT").expect(invalid("routing_number")),
        (c) => c.body({ ...c.example(), holder_name: " " }).error("INVALID_BANK_ACCOUNT").expect(invalid("holder_name")),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("customerSession").error("FORBIDDEN")],
      404: (c) => c.path(`/users/${unknownUserId}/bank-accounts`).error("USER_NOT_FOUND"),
      409: (c) => c.body({ ...c.f.keptBankAccount, label: "Dredd again" }).error("RESOURCE_CONFLICT"),
      422: (c) => c.body({ ...c.example(), iban: 89370400 }).error("UNPROCESSABLE_ENTITY"),
    },
    listBankAccounts: {
      200: [(c) => c.query("filter[limit]=5&filter[skip]=0").expect(someItems), (c) => c.asUserOf(c.f.userId).expect(someItems)],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("customerSession").error("FORBIDDEN")],
      404: (c) => c.path(`/users/${unknownUserId}/bank-accounts`).error("USER_NOT_FOUND"),
      422: (c) => c.query("filter[limit]=101").error("UNPROCESSABLE_ENTITY"),
    },
    deleteBankAccount: {
      204: (c) => bankAccountPath(c, c.f.doomedBankAccountId),
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("customerSession").error("FORBIDDEN")],
      404: [
        (c) => c.error("RESOURCE_NOT_FOUND"), // the example id
        (c) => bankAccountPath(c, c.f.keptBankAccountId, unknownUserId).error("USER_NOT_FOUND"),
      ],
      422: (c) => bankAccountPath(c, TOO_LONG_ID).error("UNPROCESSABLE_ENTITY"),
    },
  };
}

module.exports = { bankAccountCases };
