/**
 * Card authorizations on credit wallets: Authorize, Capture, Void, Refund, Read and List
 * (docs/decisions/credit.md "Authorizations"; spec/credit/authorizations.tsp). A card processor
 * asks the credit core in real time; the rules are the pure engine's (src/domain/credit/
 * authorizations.ts), run like every wallet change (../accounts/changes.ts): one transaction that
 * locks only the wallet's row, at the tenant's instant, catching up the steps due before it.
 *
 * - Authorize runs under its Idempotency-Key (scope `credit`, shared with charges and payments;
 *   ../accounts/idempotency.ts). A decline is a 201 with its `declineReason`, never an error, and it
 *   uses its key up like an approval. The authorization row, the wallet and the notification are
 *   written in the one transaction.
 * - Capture and Void name an authorization of the wallet: another wallet's or an unknown id is 404,
 *   one that is not open (declined, captured, voided, expired; an expiry due before the request is
 *   run first) is 409 `CONFLICT`, and so is a capture above the authorized amount.
 * - Refund (./refunds.ts; docs/decisions/cards.md "Refunds") gives back part of a captured
 *   authorization, under its Idempotency-Key like Authorize.
 * Amounts in integer cents; instants UTC (the tenant's sandbox clock while it is active).
 */
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { components } from "../../../../generated/types/credit.js";
import type { CardDeclineDetail } from "../../../domain/cards.js";
import { authorize, capture, voidAuthorization, type AuthorizationDecision, type Outcome, type StepResult } from "../../../domain/credit/index.js";
import { DomainError, quote } from "../../../domain/errors.js";
import type { PageRequest } from "../../../domain/paging.js";
import type { SetAsideLogger } from "../set-aside.js";
import { WalletChanges, walletNotFound } from "../accounts/changes.js";
import { CreditWallet } from "../accounts/entities.js";
import { keyCaller, type KeyCaller } from "../../idempotency/service.js";
import { requestHash, withKey } from "../accounts/idempotency.js";
import type { Db } from "../../../db/sql.js";
import { isWalletId, type LockedWallet } from "../accounts/repository/lock.js";
import { persistStep } from "../accounts/repository/write.js";
import { CreditAuthorization } from "./entities.js";
import { isAuthorizationOf } from "./repository.js";
import { refundAuthorization, type CreditRefundView, type RefundInput } from "./refunds.js";

type Schemas = components["schemas"];
/** Schema `CreditAuthorization`. */
export type CreditAuthorizationView = Schemas["CreditAuthorization"];
/** Schema `AuthorizeCreditRequest`: amount in cents, the merchant, the processor's reference. */
export type AuthorizeInput = Schemas["AuthorizeCreditRequest"];

/** Default of `AUTHORIZATION_TTL_DAYS`: days an approved hold lasts before it expires at the next daily close. */
export const DEFAULT_AUTHORIZATION_TTL_DAYS = 7;

/** An authorization row as the API returns it (spec `CreditAuthorization`); `isDuplicate` as given. */
export function creditAuthorizationView(row: CreditAuthorization, isDuplicate = false): CreditAuthorizationView {
  return {
    authorizationId: row.authorizationId,
    walletId: row.walletId,
    cardId: row.cardId ?? null,
    status: row.status,
    declineReason: (row.declineReason ?? null) as CreditAuthorizationView["declineReason"],
    declineDetail: row.declineDetail ?? null,
    amount: row.amount,
    capturedAmount: row.capturedAmount,
    releasedAmount: row.releasedAmount,
    refundedAmount: row.refundedAmount,
    merchant: {
      name: row.merchantName,
      ...(row.merchantMcc ? { mcc: row.merchantMcc } : {}),
      ...(row.merchantCountry ? { country: row.merchantCountry } : {}),
    },
    reference: row.reference ?? null,
    processorReference: row.processorReference ?? null,
    idempotencyKey: row.idempotencyKey,
    isDuplicate,
    expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
    closedAt: row.closedAt ? row.closedAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** The request of an authorization row: on a wallet (Authorize Credit) or on a card (`cardId`, `processorReference`). */
export interface AuthorizationRequest {
  authorizationId: string;
  walletId: string;
  customerId: string;
  body: Pick<AuthorizeInput, "amount" | "merchant" | "reference">;
  idempotencyKey: string;
  at: Date;
  cardId?: string;
  processorReference?: string;
}

/**
 * The `credit_authorization` row of a decided authorization (written with its step,
 * ../accounts/repository/write.ts): the request, the engine's decision (src/domain/credit/
 * authorizations.ts `authorize`) and, for a card's `SPEND_LIMIT_EXCEEDED`, `declineDetail`.
 */
export function authorizationRow(r: AuthorizationRequest, decision: AuthorizationDecision, declineDetail: CardDeclineDetail | null = null): CreditAuthorization {
  const merchant = r.body.merchant;
  return {
    authorizationId: r.authorizationId,
    walletId: r.walletId,
    cardId: r.cardId ?? null,
    customerId: r.customerId,
    status: decision.status,
    declineReason: decision.status === "declined" ? decision.reason : null,
    declineDetail: decision.status === "declined" && decision.reason === "SPEND_LIMIT_EXCEEDED" ? declineDetail : null,
    amount: r.body.amount,
    capturedAmount: 0,
    releasedAmount: 0,
    refundedAmount: 0,
    merchantName: merchant.name,
    merchantMcc: merchant.mcc ?? null,
    merchantCountry: merchant.country ?? null,
    reference: r.body.reference ?? null,
    processorReference: r.processorReference ?? null,
    idempotencyKey: r.idempotencyKey,
    expiresAt: decision.status === "approved" ? decision.expiresAt : null,
    closedAt: null,
    createdAt: r.at,
  };
}

/** DomainError NOT_FOUND (404) for authorization `authorizationId` of a wallet. */
function authorizationNotFound(authorizationId: string): DomainError {
  return new DomainError("NOT_FOUND", `Authorization ${quote(authorizationId)} not found on this credit wallet.`);
}

/** Card authorizations of the tenants' credit wallets. */
export class CreditAuthorizationService {
  private readonly changes: WalletChanges;

  /**
   * @param options.ttlDays `AUTHORIZATION_TTL_DAYS` (default {@link DEFAULT_AUTHORIZATION_TTL_DAYS}).
   * @param onEventsWritten called after a commit that wrote credit_event rows, to start their delivery.
   * @param logger where a wallet set aside by a change is reported.
   * @param db where the changes run (src/db/sql.ts).
   */
  constructor(
    db: Db,
    private readonly options: { ttlDays: number } = { ttlDays: DEFAULT_AUTHORIZATION_TTL_DAYS },
    onEventsWritten: (count: number) => void = () => {},
    logger?: SetAsideLogger,
  ) {
    this.changes = new WalletChanges(db, onEventsWritten, logger);
  }

  /**
   * Authorize `body.amount` cents on wallet `walletId` of tenant `customerId` at the tenant's instant
   * (engine `authorize`): approved (a hold until `expiresAt`) or declined with its `declineReason`.
   * Idempotent per tenant, caller `by` and `idempotencyKey` (`by` absent: the tenant's key space of
   * callers not named, src/modules/idempotency/service.ts `keyCaller`): a repeat with the same body
   * returns the first authorization (`isDuplicate: true`).
   * @returns `CreditAuthorization` (answered 201 either way).
   * @throws DomainError NOT_FOUND (404); RESOURCE_CONFLICT (409: key reused with another request,
   *   wallet set aside); ValidationFailed (422 on `amount`: not positive).
   */
  async authorize(em: EntityManager, customerId: string, walletId: string, body: AuthorizeInput, idempotencyKey?: string, by?: KeyCaller | null): Promise<CreditAuthorizationView> {
    const key = idempotencyKey ?? randomUUID();
    const merchant = body.merchant;
    const hash = requestHash(["authorize", walletId.toLowerCase(), body.amount, merchant.name, merchant.mcc ?? null, merchant.country ?? null, body.reference ?? null]);
    const outcome = await withKey(this.changes, customerId, keyCaller(by), walletId, key, hash, async (tx, locked, now, resultId): Promise<Outcome<CreditAuthorizationView>> => {
      const done = authorize(locked.state, locked.product, now, { authorizationId: resultId, amount: body.amount, ttlDays: this.options.ttlDays });
      if (!done.ok) return done;
      const row = authorizationRow({ authorizationId: resultId, walletId: locked.row.walletId, customerId, body, idempotencyKey: key, at: now }, done.value.decision);
      await persistStep(tx, locked, done.value, now, undefined, { authorization: row });
      return { ok: true, value: creditAuthorizationView(row) };
    });
    if (outcome.value !== undefined) return outcome.value;
    const row = await em.fork().findOneOrFail(CreditAuthorization, { authorizationId: outcome.resultId });
    return creditAuthorizationView(row, true);
  }

  /**
   * Capture `amount` cents (default: the whole authorized amount) of authorization `authorizationId`
   * on wallet `walletId` (engine `capture`): a charge dated now, the rest of the hold released.
   * @throws DomainError NOT_FOUND (404: wallet or authorization); RESOURCE_CONFLICT (409: not open,
   *   above the authorized amount, wallet set aside); ValidationFailed (422 on `amount`).
   */
  async capture(em: EntityManager, customerId: string, walletId: string, authorizationId: string, amount?: number): Promise<CreditAuthorizationView> {
    return this.close(em, customerId, walletId, authorizationId, (locked, now) => capture(locked.state, locked.product, now, authorizationId.toLowerCase(), amount));
  }

  /**
   * Void authorization `authorizationId` on wallet `walletId` (engine `voidAuthorization`): the whole hold is released.
   * @throws DomainError NOT_FOUND (404: wallet or authorization); RESOURCE_CONFLICT (409: not open, wallet set aside).
   */
  async void(em: EntityManager, customerId: string, walletId: string, authorizationId: string): Promise<CreditAuthorizationView> {
    return this.close(em, customerId, walletId, authorizationId, (locked, now) => voidAuthorization(locked.state, locked.product, now, authorizationId.toLowerCase()));
  }

  /**
   * Refund `body.amount` cents of captured authorization `authorizationId` on wallet `walletId`
   * (./refunds.ts; docs/decisions/cards.md "Refunds"), under `idempotencyKey` of caller `by`.
   * @returns `CreditRefund` (answered 201), the first refund on a repeat.
   * @throws DomainError NOT_FOUND (404: wallet or authorization); RESOURCE_CONFLICT (409: not
   *   captured, above the captured amount less earlier refunds, key reused, wallet set aside).
   */
  async refund(em: EntityManager, customerId: string, walletId: string, authorizationId: string, body: RefundInput, idempotencyKey?: string, by?: KeyCaller | null): Promise<CreditRefundView> {
    return refundAuthorization(this.changes, em, customerId, walletId, authorizationId, body, idempotencyKey, by);
  }

  /** Get Credit Authorization. @throws DomainError NOT_FOUND (404: wallet or authorization, another tenant's included). */
  async get(em: EntityManager, customerId: string, walletId: string, authorizationId: string): Promise<CreditAuthorizationView> {
    if (!isWalletId(walletId)) throw walletNotFound(walletId);
    const row = isWalletId(authorizationId)
      ? await em.findOne(CreditAuthorization, { authorizationId: authorizationId.toLowerCase(), walletId: walletId.toLowerCase(), customerId })
      : null;
    if (row) return creditAuthorizationView(row);
    await this.wallet(em, customerId, walletId);
    throw authorizationNotFound(authorizationId);
  }

  /** List Credit Authorizations of a wallet, newest first (creation, then id); one page and the total. @throws DomainError NOT_FOUND (404). */
  async list(em: EntityManager, customerId: string, walletId: string, page: PageRequest): Promise<{ items: CreditAuthorizationView[]; total: number }> {
    const wallet = await this.wallet(em, customerId, walletId);
    const [rows, total] = await em.findAndCount(CreditAuthorization, { walletId: wallet.walletId }, { orderBy: { createdAt: "desc", authorizationId: "desc" }, limit: page.limit, offset: page.skip });
    return { items: rows.map((r) => creditAuthorizationView(r)), total };
  }

  /** Capture or void: the authorization must be the wallet's (else 404); the engine decides the rest. */
  private async close(
    em: EntityManager,
    customerId: string,
    walletId: string,
    authorizationId: string,
    op: (locked: LockedWallet, now: Date) => Outcome<StepResult>,
  ): Promise<CreditAuthorizationView> {
    if (!isWalletId(authorizationId)) {
      await this.wallet(em, customerId, walletId);
      throw authorizationNotFound(authorizationId);
    }
    const id = authorizationId.toLowerCase();
    return this.changes.mutate(customerId, walletId, async (tx, locked, now) => {
      const open = locked.holds.some((a) => a.authorizationId === id);
      if (!open && !(await isAuthorizationOf(tx, id, locked.row.walletId))) throw authorizationNotFound(authorizationId);
      const done = op(locked, now);
      if (!done.ok) return done;
      await persistStep(tx, locked, done.value, now);
      const row = locked.holds.find((a) => a.authorizationId === id);
      if (!row) throw new Error(`authorization ${id} was closed but not loaded`);
      return { ok: true, value: creditAuthorizationView(row) };
    });
  }

  /** The tenant's wallet row. @throws DomainError NOT_FOUND (404). */
  private async wallet(em: EntityManager, customerId: string, walletId: string): Promise<CreditWallet> {
    if (!isWalletId(walletId)) throw walletNotFound(walletId);
    const row = await em.findOne(CreditWallet, { walletId: walletId.toLowerCase(), customerId });
    if (!row) throw walletNotFound(walletId);
    return row;
  }
}
