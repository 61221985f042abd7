/**
 * Platform handler of the customer's SEPA payout file (docs/decisions/fiat.md "The SEPA payout
 * file"): a session token, the operator's or the customer's own (the path scope check answers 403
 * for another customer's session).
 */
import type { operations } from "../../../generated/types/platform.js";
import type { PayoutFileService } from "../../modules/payouts/service.js";
import type { HandlerMap } from "../types.js";

/** Handler of getSepaPayoutFile: the file's XML as the answer's body. */
export function payoutFileHandlers(files: PayoutFileService): HandlerMap<operations> {
  return {
    getSepaPayoutFile: async ({ em, params, query }) => ({ status: 200, xml: await files.sepaFile(em, params.customer_id, query.date) }),
  };
}
