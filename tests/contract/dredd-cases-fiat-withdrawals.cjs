/**
 * Dredd cases of fiat withdrawals (docs/decisions/fiat.md "Fiat withdrawals"), merged into the
 * platform hookfile's CASES (tests/contract/dredd-hooks.cjs, which documents what a case is). The
 * seeding (tests/contract/support-dredd-fixtures-fiat.ts) gave the example user an eur wallet, an
 * eur bank account and fiat withdrawals in each state (`c.f.fiat`); the document's example
 * withdrawal id exists nowhere, so it is the unknown withdrawal, and a crypto withdrawal's id on the
 * fiat path is not found either. As for the crypto initiate, a case that is not about idempotency
 * sends no `Idempotency-Key`: the example's key is taken once the success case ran.
 */

/** The `Idempotency-Key` of Initiate Fiat Withdrawal's example (sent explicitly: the header parameter is shared, and Dredd sends the crypto example's key, which the crypto 201 takes). */
const EXAMPLE_IDEMPOTENCY_KEY = "fwd-2026-01-15-0001";

/** Path of a fiat withdrawal of `userId` (the example user unless given). */
const fiatPath = (c, withdrawalId, suffix = "", userId = c.f.userId) => c.path(`/users/${userId}/accounts/fiat/withdrawals/${withdrawalId}${suffix}`);
/** The Initiate Fiat Withdrawal example to the seeded bank account (the example's `bank_account_id` cannot exist). */
const initiateBody = (c) => ({ ...c.example(), bank_account_id: c.f.fiat.bankAccountId });
/** `data` of an answer must match `properties`. */
const dataOf = (properties) => ({ properties: { data: { properties } } });
/** The example initiate without the example's key (a case that is not about idempotency). */
const keyless = (c) => c.ensureActive(c.f.userId).header("Idempotency-Key", undefined);

/**
 * The cases of the six fiat withdrawal operations. `ids` holds the unknown user of the hookfile.
 * @param {{ unknownUserId: string }} ids
 */
function fiatWithdrawalCases({ unknownUserId }) {
  return {
    initiateFiatWithdrawal: {
      201: [
        (c) =>
          c.ensureActive(c.f.userId).header("Idempotency-Key", EXAMPLE_IDEMPOTENCY_KEY).body(initiateBody(c)).expect(dataOf({
            withdrawal_type: { const: "fiat" },
            bank_account_id: { const: c.f.fiat.bankAccountId },
            payout: { type: "null" },
            address: { const: "****2606" },
            withdraw: { properties: { is_duplicate: { const: false }, status: { const: "PENDING" }, idempotency_key: { const: EXAMPLE_IDEMPOTENCY_KEY } } },
          })),
        // A repeat of a seeded request (same key, same body): the first withdrawal, already COMPLETED.
        (c) =>
          c.ensureActive(c.f.userId).header("Idempotency-Key", c.f.fiat.seededInitiate.idempotencyKey).body(c.f.fiat.seededInitiate.body)
            .expect(dataOf({ id: { const: c.f.fiat.withdrawals.completed }, withdraw: { properties: { is_duplicate: { const: true }, status: { const: "COMPLETED" } } } })),
      ],
      400: [
        (c) => {
          const { bank_account_id: _account, ...body } = initiateBody(c);
          return keyless(c).body(body).error("BANK_ACCOUNT_REQUIRED");
        },
        (c) => keyless(c).body({ ...initiateBody(c), currency: "btc", amount: 0.5 }).error("INVALID_CURRENCY"),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: (c) => c.as("customerSession").error("FORBIDDEN"),
      404: (c) => c.path(`/users/${unknownUserId}/accounts/fiat/withdrawals`).header("Idempotency-Key", undefined).error("USER_NOT_FOUND"),
      // A seeded withdrawal's key with the example's body.
      409: (c) => c.ensureActive(c.f.userId).header("Idempotency-Key", c.f.fiat.seededInitiate.idempotencyKey).body(initiateBody(c)).error("IDEMPOTENCY_KEY_REUSED"),
      422: (c) => c.header("Idempotency-Key", undefined).body({ currency: "eur", amount: "lots" }).error("UNPROCESSABLE_ENTITY"),
    },
    confirmFiatWithdrawal: {
      200: (c) => fiatPath(c, c.f.fiat.withdrawals.toConfirm, "/confirm").body({ code: c.f.fiat.confirmationCode }),
      400: [
        // The sandbox rail refuses 13.13 at every confirm: nothing debited, the code still good.
        (c) => fiatPath(c, c.f.fiat.withdrawals.refused, "/confirm").body({ code: c.f.fiat.refusedCode }).error("FIAT_WITHDRAWAL_FAILED"),
        (c) => fiatPath(c, c.f.fiat.withdrawals.wrongCode, "/confirm").body({ code: c.f.fiat.wrongCode }).error("CONFIRMATION_CODE_INVALID"),
        (c) => fiatPath(c, c.f.fiat.withdrawals.completed, "/confirm").error("ALREADY_CONFIRMED"),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => fiatPath(c, c.f.fiat.withdrawals.blocked, "/confirm").error("WITHDRAWAL_BLOCKED"), (c) => c.as("customerSession").error("FORBIDDEN")],
      404: [
        (c) => c.error("WITHDRAWAL_NOT_FOUND"), // the example id
        (c) => fiatPath(c, c.f.withdrawals.toResend, "/confirm").error("WITHDRAWAL_NOT_FOUND"), // a crypto withdrawal
      ],
      422: (c) => c.body({ code: "" }).error("UNPROCESSABLE_ENTITY"),
    },
    resendFiatWithdrawalCode: {
      200: (c) => fiatPath(c, c.f.fiat.withdrawals.toResend, "/verification/codes"),
      400: (c) => fiatPath(c, c.f.fiat.withdrawals.completed, "/verification/codes").error("ALREADY_CONFIRMED"),
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: (c) => c.as("customerSession").error("FORBIDDEN"),
      404: (c) => c.error("WITHDRAWAL_NOT_FOUND"), // the example id
    },
    cancelFiatWithdrawal: {
      204: (c) => fiatPath(c, c.f.fiat.withdrawals.toCancel),
      400: [(c) => fiatPath(c, c.f.fiat.withdrawals.completed).error("ALREADY_CONFIRMED"), (c) => fiatPath(c, c.f.fiat.withdrawals.cancelled).error("BAD_REQUEST")],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: (c) => c.as("customerSession").error("FORBIDDEN"),
      404: (c) => c.error("WITHDRAWAL_NOT_FOUND"), // the example id
    },
    getFiatWithdrawal: {
      200: (c) =>
        fiatPath(c, c.f.fiat.withdrawals.completed).expect(dataOf({
          id: { const: c.f.fiat.withdrawals.completed },
          withdrawal_type: { const: "fiat" },
          status: { const: "COMPLETED" },
          payout: { required: ["rail"], properties: { rail: { const: "networks/sepa" } } },
        })),
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: (c) => c.as("customerSession").error("FORBIDDEN"),
      404: [
        (c) => c.error("WITHDRAWAL_NOT_FOUND"), // the example id
        (c) => fiatPath(c, c.f.withdrawals.completed).error("WITHDRAWAL_NOT_FOUND"), // a crypto withdrawal
      ],
    },
    listFiatWithdrawals: {
      200: (c) =>
        c.query("filter[limit]=5&filter[skip]=0&filter[sort]=ASC&filter[where][status]=COMPLETED&filter[where][currency]=EUR")
          .expect({ properties: { data: { minItems: 1, items: { properties: { withdrawal_type: { const: "fiat" }, status: { const: "COMPLETED" }, currency: { const: "eur" } } } } } }),
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: (c) => c.as("customerSession").error("FORBIDDEN"),
      404: (c) => c.path(`/users/${unknownUserId}/accounts/fiat/withdrawals`).error("USER_NOT_FOUND"),
      422: (c) => c.query("filter[where][status]=DONE").error("UNPROCESSABLE_ENTITY"),
    },
  };
}

module.exports = { fiatWithdrawalCases };
