/**
 * The statements of the card authorizations on their table `credit_authorization` (./service.ts;
 * docs/decisions/credit.md "Authorizations") beyond a change's step: the rows of an authorization
 * are written with its wallet's step (../accounts/repository/write.ts) and released by the cycle
 * batches' expiry (../cycles/repository/expiry.ts); reads of one row or a page are the ORM's.
 * Refunds (./refunds.ts; docs/decisions/cards.md "Refunds"): their `credit_refund` rows and the
 * authorization's `refunded_amount` are written with the wallet's step too; the authorization a
 * refund names is read here, under the wallet's lock.
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

/** Authorization `$1` of wallet `$2`: its status, its captured and refunded cents and its card (Refund Credit Authorization, under the wallet's lock). */
export const AUTHORIZATION_REFUNDABLE: PreparedStatement = {
  name: "credit_authorization_refundable",
  text: `select status, captured_amount, refunded_amount, card_id from credit_authorization where authorization_id = $1 and wallet_id = $2`,
};

/** What a refund may take from an authorization: its status, its captured and refunded amounts in cents, and its card (null: on the wallet). */
export interface Refundable {
  status: string;
  capturedAmount: number;
  refundedAmount: number;
  cardId: string | null;
}

/**
 * Authorization `authorizationId` (lower-case UUID) of wallet `walletId` as a refund reads it, in
 * transaction `tx` (which holds the wallet's lock, so a capture or another refund of it cannot run
 * in between: docs/decisions/cards.md "Refunds"); null when the wallet has no such authorization.
 */
export async function refundableOf(tx: Sql, authorizationId: string, walletId: string): Promise<Refundable | null> {
  const [row] = await tx.rows<{ status: string; captured_amount: string | number; refunded_amount: string | number; card_id: string | null }>(AUTHORIZATION_REFUNDABLE, [authorizationId, walletId]);
  return row ? { status: row.status, capturedAmount: Number(row.captured_amount), refundedAmount: Number(row.refunded_amount), cardId: row.card_id } : null;
}
