/**
 * Dredd cases of the operators' view of the live networks (docs/decisions/live-chains.md "The
 * operators' view"), merged into the platform hookfile's CASES (tests/contract/dredd-hooks.cjs,
 * which documents what a case is). The contract run has no live network: the 200 is the empty
 * array; the node's 502 and 504 need a node, which tests/integration/chains-overview.test.ts runs
 * (Anvil behind a pass-through that hangs or answers errors).
 */

/** The cases of List Chains. */
function chainCases() {
  return {
    listChains: {
      200: (c) => c.expect({ properties: { data: { maxItems: 0 } } }), // no live network: an empty array
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("customerSession").error("FORBIDDEN"), (c) => c.as("owner").error("FORBIDDEN")],
      502: "needs a live network's node answering errors (tests/integration/chains-overview.test.ts covers it)",
      504: "needs a live network's node that hangs (tests/integration/chains-overview.test.ts covers it)",
    },
  };
}

module.exports = { chainCases };
