/**
 * Dredd cases of the customer's SEPA payout file (docs/decisions/fiat.md "The SEPA payout file"),
 * merged into the platform hookfile's CASES (tests/contract/dredd-hooks.cjs, which documents what a
 * case is). The 200 is an XML document: Dredd checks its status and media type
 * (tests/contract/dredd-hooks-core.cjs), tests/integration/sepa-payout-file.test.ts its content.
 */

/**
 * The cases of Get SEPA Payout File. `ids` holds the hookfile's unknown customer.
 * @param {{ unknownCustomerId: string }} ids
 */
function payoutCases({ unknownCustomerId }) {
  const filePath = (c, customerId = c.f.customerId, query = "date=2026-11-29") => c.path(`/customers/${customerId}/payouts/sepa?${query}`);
  return {
    getSepaPayoutFile: {
      200: [(c) => filePath(c), (c) => filePath(c).as("ownSession")],
      401: (c) => filePath(c).as("none").error("UNAUTHORIZED"),
      403: [(c) => filePath(c).as("customerSession").error("FORBIDDEN"), (c) => filePath(c).as("owner").error("FORBIDDEN")],
      404: (c) => filePath(c, unknownCustomerId).error("CUSTOMER_NOT_FOUND"),
      422: [
        (c) => filePath(c, c.f.customerId, "date=2026-02-30").error("UNPROCESSABLE_ENTITY"), // no such day
        (c) => filePath(c, c.f.customerId, "date=29-11-2026").error("UNPROCESSABLE_ENTITY"),
      ],
    },
  };
}

module.exports = { payoutCases };
