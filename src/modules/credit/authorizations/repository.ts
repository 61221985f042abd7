/**
 * The statements of the card authorizations on their table `credit_authorization` (./service.ts;
 * docs/decisions/credit.md "Authorizations") beyond a change's step: the rows of an authorization
 * are written with its wallet's step (../accounts/repository/write.ts) and released by the cycle
 * batches' expiry (../cycles/repository/expiry.ts); reads of one row or a page are the ORM's.
 */
import type { PreparedStatement, Sql } from "../../../db/sql.js";

/** Whether authorization `$1` is wallet `$2`'s (any status). */
export const AUTHORIZATION_OF_WALLET: PreparedStatement = {
  name: "credit_authorization_of_wallet",
  text: `select 1 as found from credit_authorization where authorization_id = $1 and wallet_id = $2`,
};

/** Whether authorization `authorizationId` (lower-case UUID) is wallet `walletId`'s, whatever its status, in transaction `tx`. */
export async function isAuthorizationOf(tx: Sql, authorizationId: string, walletId: string): Promise<boolean> {
  return (await tx.rows(AUTHORIZATION_OF_WALLET, [authorizationId, walletId])).length > 0;
}

