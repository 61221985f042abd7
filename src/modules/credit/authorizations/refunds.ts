/**
 * Refund Credit Authorization (docs/decisions/cards.md "Refunds"; spec/credit/refunds.tsp): a
 * merchant gives back part or all of a captured authorization. The rules of the balances are the
 * pure engine's (src/domain/credit/refunds.ts: principal first, then interest, the applied amount
 * back to the available amount, the rest above the debt `unappliedAmount`, `Reembolso`); this
 * module checks the authorization and books the refund like every wallet change
 * (../accounts/changes.ts): one transaction that locks only the wallet's row, at the tenant's instant.
 *
 * - Under its Idempotency-Key (scope `credit`, ../accounts/idempotency.ts `withKey`): a repeat with
 *   the same key and body answers the first refund; the key is claimed before anything else.
 * - The authorization's status and its captured and refunded amounts are read inside that
 *   transaction (./repository.ts `refundableOf`), under the wallet's lock: a capture of the same
 *   authorization, or another refund of it, runs before or after, never in between.
 * - 404 `NOT_FOUND` for an authorization unknown on the wallet (another wallet's, another tenant's);
 *   409 `CONFLICT` for one that is not `captured` (`AUTHORIZATION_NOT_CAPTURED`) or a refund above
 *   its captured amount less earlier refunds (`REFUND_EXCEEDS_CAPTURED`). Nothing here looks at the
 *   card: a paused or closed card's purchases stay refundable.
 * - The refund's row (`credit_refund`), the authorization's `refunded_amount`, the wallet and the
 *   `Reembolso` event are written in the one write statement (../accounts/repository/write.ts).
 * Amounts in integer cents; instants UTC (the tenant's sandbox clock while it is active).
 */
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { components } from "../../../../generated/types/credit.js";
import { refund, refuse, type Outcome } from "../../../domain/credit/index.js";
import { DomainError, quote } from "../../../domain/errors.js";
import { keyCaller, type KeyCaller } from "../../idempotency/service.js";
import type { WalletChanges } from "../accounts/changes.js";
import { requestHash, withKey } from "../accounts/idempotency.js";
import { isWalletId } from "../accounts/repository/lock.js";
import { persistStep } from "../accounts/repository/write.js";
import { CreditRefund } from "./entities.js";
import { refundableOf } from "./repository.js";

type Schemas = components["schemas"];
/** Schema `CreditRefund`. */
export type CreditRefundView = Schemas["CreditRefund"];
/** Schema `RefundCreditAuthorizationRequest`: `amount` in cents. */
export type RefundInput = Schemas["RefundCreditAuthorizationRequest"];

/** A refund row as the API returns it (spec `CreditRefund`). */
export function creditRefundView(row: CreditRefund): CreditRefundView {
  return {
    refundId: row.refundId,
    authorizationId: row.authorizationId,
    amount: row.amount,
    appliedAmount: row.appliedAmount,
    unappliedAmount: row.unappliedAmount,
    createdAt: row.createdAt.toISOString(),
  };
}

/** DomainError NOT_FOUND (404) for authorization `authorizationId` of a wallet. */
function authorizationNotFound(authorizationId: string): DomainError {
  return new DomainError("NOT_FOUND", `Authorization ${quote(authorizationId)} not found on this credit wallet.`);
}

/**
 * Refund `body.amount` cents of authorization `authorizationId` on wallet `walletId` of tenant
 * `customerId` (module note), under `idempotencyKey` of caller `by` (a key is generated when none is sent).
 * @param changes the credit wallets' changes (their transaction, set-aside guard and delivery start).
 * @returns `CreditRefund` (answered 201), the first refund on a repeat.
 * @throws DomainError NOT_FOUND (404: wallet or authorization); RESOURCE_CONFLICT (409: not captured,
 *   above the captured amount less earlier refunds, key reused with another request, wallet set aside).
 */
export async function refundAuthorization(
  changes: WalletChanges,
  em: EntityManager,
  customerId: string,
  walletId: string,
  authorizationId: string,
  body: RefundInput,
  idempotencyKey?: string,
  by?: KeyCaller | null,
): Promise<CreditRefundView> {
  const key = idempotencyKey ?? randomUUID();
  const id = authorizationId.toLowerCase();
  const hash = requestHash(["refund", walletId.toLowerCase(), id, body.amount]);
  const outcome = await withKey(changes, customerId, keyCaller(by), walletId, key, hash, async (tx, locked, now, resultId): Promise<Outcome<CreditRefundView>> => {
    const authorization = isWalletId(id) ? await refundableOf(tx, id, locked.row.walletId) : null;
    if (!authorization) throw authorizationNotFound(authorizationId);
    if (authorization.status !== "captured") {
      return refuse("AUTHORIZATION_NOT_CAPTURED", `The authorization is ${authorization.status}: only a captured authorization can be refunded.`);
    }
    const left = authorization.capturedAmount - authorization.refundedAmount;
    if (body.amount > left) {
      return refuse("REFUND_EXCEEDS_CAPTURED", `The refund (${body.amount}) is larger than what is left of the capture (${left} of ${authorization.capturedAmount} captured).`);
    }
    const done = refund(locked.state, locked.product, now, { amount: body.amount, ...(authorization.cardId ? { cardId: authorization.cardId } : {}) });
    if (!done.ok) return done;
    const row: CreditRefund = {
      refundId: resultId,
      walletId: locked.row.walletId,
      customerId,
      authorizationId: id,
      amount: body.amount,
      appliedAmount: done.value.appliedAmount,
      unappliedAmount: done.value.unappliedAmount,
      idempotencyKey: key,
      createdAt: now,
    };
    await persistStep(tx, locked, done.value, now, undefined, { refund: row });
    return { ok: true, value: creditRefundView(row) };
  });
  if (outcome.value !== undefined) return outcome.value;
  return creditRefundView(await em.fork().findOneOrFail(CreditRefund, { refundId: outcome.resultId }));
}
