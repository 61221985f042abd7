/**
 * Cards on credit wallets: Issue, Read, List, Update and Authorize Card (docs/decisions/cards.md;
 * spec spec/credit/cards.tsp).
 *
 * - Issue runs as a change of the wallet (../accounts/changes.ts): one transaction that locks the
 *   wallet's row at the tenant's instant and first runs the cycle steps due before it, so a wallet
 *   that has just fallen in default is seen in default. A dissolved or in-default wallet, or one
 *   with `CARDS_PER_WALLET` open cards already (counted under the lock: concurrent issues on one
 *   wallet wait for each other), answers 409 `CONFLICT`. The number is sealed under the secrets key
 *   bound to the card id, with a keyed fingerprint unique per tenant; the security code is not kept.
 * - Update locks the card's row: a `CLOSED` card refuses every update (409), the state it already
 *   has changes nothing, `spendControls` is replaced whole (`null` removes it).
 * - Authorize Card runs as a change of the card's wallet: under the wallet's lock it reads the card,
 *   the first authorization of the `processorReference` (answered again, nothing held) and the
 *   card's spend in its windows; the card decides first (src/domain/cards.ts `cardDecline`), then
 *   the engine's wallet checks (src/domain/credit/authorizations.ts `authorize`), and the
 *   authorization, the wallet and the notification are written in the one transaction. Every
 *   authorization of one card is on one wallet, so the wallet's lock serializes them: two never
 *   pass a control together, and no other row is locked.
 * - Another tenant's card or wallet is 404 `NOT_FOUND`, as an unknown one.
 * Amounts in integer cents; instants UTC (the tenant's sandbox clock while it is active).
 */
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { components } from "../../../../generated/types/credit.js";
import { cardDecline, expiryOf, newCvv, newPan, normalizedControls, spendControlProblems, spendWindows, DEFAULT_CARDS_PER_WALLET, type SpendControls } from "../../../domain/cards.js";
import { advance, authorize, refuse, type Outcome } from "../../../domain/credit/index.js";
import { DomainError, ValidationFailed, quote } from "../../../domain/errors.js";
import type { PageRequest } from "../../../domain/paging.js";
import type { Db } from "../../../db/sql.js";
import type { SecretBox } from "../../identity/secrets.js";
import type { SetAsideLogger } from "../set-aside.js";
import { WalletChanges, commitCatchUp, walletNotFound } from "../accounts/changes.js";
import { CreditWallet } from "../accounts/entities.js";
import { isWalletId } from "../accounts/repository/lock.js";
import { tenantNow } from "../clock/repository.js";
import { CreditCard } from "./entities.js";
import { authorizationRow, creditAuthorizationView, DEFAULT_AUTHORIZATION_TTL_DAYS, type CreditAuthorizationView } from "../authorizations/service.js";
import { persistStep } from "../accounts/repository/write.js";
import { cardDecisionRead, cardWallet, countOpenCards, insertCard, lockCard, updateCard } from "./repository.js";
import { cardView, issuedCardView, type CardView, type IssuedCardView } from "./views.js";

type Schemas = components["schemas"];
/** Schema `IssueCardRequest`: `cardholderName` 1–100, `memo` ≤ 255, optional `spendControls`. */
export type IssueCardInput = Schemas["IssueCardRequest"];
/** Schema `UpdateCardRequest`: optional `state`, `spendControls` (null removes), `memo` (null removes). */
export type UpdateCardInput = Schemas["UpdateCardRequest"];
/** Schema `AuthorizeCardRequest`: amount in cents, the merchant, `reference`, `processorReference` (1–64). */
export type AuthorizeCardInput = Schemas["AuthorizeCardRequest"];

/** The unique index of the processor references of a tenant's authorizations (the migration of card authorizations). */
const PROCESSOR_REFERENCE_UNIQUE = "credit_authorization_processor_reference_unique";

/** Whether `error` is the driver's unique violation (SQLSTATE 23505) of {@link PROCESSOR_REFERENCE_UNIQUE}. */
function isProcessorReferenceTaken(error: unknown): boolean {
  return (error as { code?: string }).code === "23505" && (error as { constraint?: string }).constraint === PROCESSOR_REFERENCE_UNIQUE;
}

/** Draws of a new card number before giving up (a collision within a tenant is rare: 10⁹ numbers). */
const PAN_DRAWS = 8;

/** The context a card number is sealed under: the card's id, so a number copied to another row does not open. */
const sealContext = (cardId: string): string => `credit-card:${cardId}`;

/** DomainError NOT_FOUND (404) for card `cardId` (also another tenant's). */
function cardNotFound(cardId: string): DomainError {
  return new DomainError("NOT_FOUND", `Card ${quote(cardId)} not found.`);
}

/** Checks a request's spend controls (422 on `spendControls.<control>`) and returns them in their stored form. */
function checkedControls(controls: SpendControls): SpendControls {
  const problems = spendControlProblems(controls);
  if (problems.length > 0) throw new ValidationFailed(problems);
  return normalizedControls(controls);
}

/** Cards of the tenants' credit wallets. */
export class CreditCardService {
  private readonly changes: WalletChanges;

  /**
   * @param db where the changes run (src/db/sql.ts).
   * @param box the service's secrets: sealing the card number, its keyed fingerprint.
   * @param options.cardsPerWallet `CARDS_PER_WALLET` (default {@link DEFAULT_CARDS_PER_WALLET}): open cards a wallet may have.
   * @param options.ttlDays `AUTHORIZATION_TTL_DAYS`: days an approved hold lasts (../authorizations/service.ts).
   * @param onEventsWritten called after a commit whose catch-up steps wrote credit_event rows.
   * @param logger where a wallet set aside by a change is reported.
   */
  constructor(
    private readonly db: Db,
    private readonly box: Pick<SecretBox, "seal" | "hash">,
    private readonly options: { cardsPerWallet: number; ttlDays: number } = { cardsPerWallet: DEFAULT_CARDS_PER_WALLET, ttlDays: DEFAULT_AUTHORIZATION_TTL_DAYS },
    onEventsWritten: (count: number) => void = () => {},
    logger?: SetAsideLogger,
  ) {
    this.changes = new WalletChanges(db, onEventsWritten, logger);
  }

  /**
   * Issue a card on wallet `walletId` of tenant `customerId`: `ACTIVE`, expiring three years after
   * the tenant's instant (same month), with a new number (BIN `400000`, Luhn) and security code.
   * @returns `IssuedCard` (201): the card with `pan` and `cvv`, shown this once.
   * @throws DomainError NOT_FOUND (404: unknown wallet, another tenant's); RESOURCE_CONFLICT (409:
   *   wallet dissolved, in default or set aside; `CARDS_PER_WALLET` open cards already);
   *   ValidationFailed (422 on `spendControls.<control>`).
   */
  async issue(customerId: string, walletId: string, body: IssueCardInput): Promise<IssuedCardView> {
    const controls = body.spendControls ? checkedControls(body.spendControls) : null;
    const result = await this.changes.mutate(customerId, walletId, async (tx, locked, now): Promise<Outcome<IssuedCardView | { full: number }>> => {
      const moved = advance(locked.state, locked.product, now);
      if (!moved.ok) return moved;
      const status = moved.value.state.status;
      if (status === "dissolved") return refuse("WALLET_DISSOLVED", "The wallet is dissolved: it cannot issue cards.");
      if (status === "in_default") return refuse("WALLET_IN_DEFAULT", "The wallet is in default: it cannot issue cards.");
      await commitCatchUp(tx, locked, now);
      const open = await countOpenCards(tx, locked.row.walletId);
      if (open >= this.options.cardsPerWallet) return { ok: true, value: { full: open } };
      const cardId = randomUUID();
      const { expMonth, expYear } = expiryOf(now);
      for (let draw = 0; draw < PAN_DRAWS; draw++) {
        const pan = newPan();
        const row = {
          cardId,
          walletId: locked.row.walletId,
          customerId,
          state: "ACTIVE" as const,
          cardholderName: body.cardholderName,
          last4: pan.slice(-4),
          expMonth,
          expYear,
          spendControls: controls,
          memo: body.memo ?? null,
          createdAt: now,
          updatedAt: now,
        };
        const panSealed = this.box.seal(pan, sealContext(cardId));
        const panFingerprint = this.box.hash(`credit-card/v1:${customerId}:${pan}`);
        if (await insertCard(tx, { ...row, panSealed, panFingerprint })) return { ok: true, value: issuedCardView(row, pan, newCvv()) };
      }
      throw new Error(`no free card number after ${PAN_DRAWS} draws`);
    });
    if ("full" in result) {
      throw new DomainError("RESOURCE_CONFLICT", `The wallet already has ${result.full} open cards (ACTIVE or PAUSED), the most CARDS_PER_WALLET allows (${this.options.cardsPerWallet}): close one first.`);
    }
    return result;
  }

  /** Get Card (without its number). @throws DomainError NOT_FOUND (404: unknown card, another tenant's). */
  async get(em: EntityManager, customerId: string, cardId: string): Promise<CardView> {
    const row = isWalletId(cardId) ? await em.findOne(CreditCard, { cardId: cardId.toLowerCase(), customerId }) : null;
    if (!row) throw cardNotFound(cardId);
    return cardView(row);
  }

  /** List Wallet Cards: newest first (creation, then id); one page and the total. @throws DomainError NOT_FOUND (404: unknown wallet, another tenant's). */
  async list(em: EntityManager, customerId: string, walletId: string, page: PageRequest): Promise<{ items: CardView[]; total: number }> {
    const wallet = isWalletId(walletId) ? await em.findOne(CreditWallet, { walletId: walletId.toLowerCase(), customerId }) : null;
    if (!wallet) throw walletNotFound(walletId);
    const [rows, total] = await em.findAndCount(CreditCard, { walletId: wallet.walletId }, { orderBy: { createdAt: "desc", cardId: "desc" }, limit: page.limit, offset: page.skip });
    return { items: rows.map(cardView), total };
  }

  /**
   * Update Card: `state` (`ACTIVE` ↔ `PAUSED`, either to `CLOSED`), `spendControls` (replaced whole,
   * `null` removes), `memo` (`null` removes), at the tenant's instant. The state the card already
   * has changes nothing; a body that changes nothing writes nothing.
   * @returns `Card` (200) as it is after the update.
   * @throws DomainError NOT_FOUND (404); RESOURCE_CONFLICT (409: the card is `CLOSED`);
   *   ValidationFailed (422 on `spendControls.<control>`).
   */
  async update(em: EntityManager, customerId: string, cardId: string, body: UpdateCardInput): Promise<CardView> {
    if (!isWalletId(cardId)) throw cardNotFound(cardId);
    const id = cardId.toLowerCase();
    const controls = body.spendControls ? checkedControls(body.spendControls) : body.spendControls;
    await this.db.transaction(async (tx) => {
      const current = await lockCard(tx, id, customerId);
      if (current === null) throw cardNotFound(cardId);
      if (current.state === "CLOSED") throw new DomainError("RESOURCE_CONFLICT", `Card ${quote(cardId)} is CLOSED: a closed card does not change.`);
      const before = { ...current, spendControls: current.spendControls ? normalizedControls(current.spendControls) : null };
      const next = {
        state: body.state ?? before.state,
        spendControls: controls === undefined ? before.spendControls : controls,
        memo: body.memo === undefined ? before.memo : body.memo,
      };
      if (JSON.stringify(next) !== JSON.stringify(before)) await updateCard(tx, id, next, await tenantNow(tx, customerId));
    });
    return this.get(em.fork(), customerId, id);
  }

  /**
   * Authorize Card: `body.amount` cents on card `cardId` of tenant `customerId`, at the tenant's
   * instant (module note). A repeated `processorReference` answers the tenant's first authorization
   * of it (`isDuplicate: true`) whatever the new body or card, and holds nothing; two arriving at
   * once on different wallets meet at the unique index, and the loser answers the winner's.
   * @returns `CreditAuthorization` (201 for an approval and a decline: `declineReason`, and
   *   `declineDetail` for `SPEND_LIMIT_EXCEEDED`).
   * @throws DomainError NOT_FOUND (404: unknown card, another tenant's); RESOURCE_CONFLICT (409: the
   *   wallet is set aside).
   */
  async authorize(customerId: string, cardId: string, body: AuthorizeCardInput): Promise<CreditAuthorizationView> {
    if (!isWalletId(cardId)) throw cardNotFound(cardId);
    const id = cardId.toLowerCase();
    const walletId = await cardWallet(this.db, id, customerId);
    if (walletId === null) throw cardNotFound(cardId);
    try {
      return await this.decide(customerId, id, walletId, body);
    } catch (error) {
      if (!isProcessorReferenceTaken(error)) throw error;
      return this.decide(customerId, id, walletId, body);
    }
  }

  /** One Authorize Card in the transaction of a change of wallet `walletId` (module note). */
  private decide(customerId: string, cardId: string, walletId: string, body: AuthorizeCardInput): Promise<CreditAuthorizationView> {
    return this.changes.mutate(customerId, walletId, async (tx, locked, now): Promise<Outcome<CreditAuthorizationView>> => {
      const card = await cardDecisionRead(tx, cardId, customerId, body.processorReference, spendWindows(now));
      if (card === null) throw cardNotFound(cardId);
      if (card.prior !== null) return { ok: true, value: creditAuthorizationView(card.prior, true) };
      const decline = cardDecline(card, now, body.amount, body.merchant, card.spend);
      const authorizationId = randomUUID();
      const done = authorize(locked.state, locked.product, now, { authorizationId, amount: body.amount, ttlDays: this.options.ttlDays, cardId, cardDecline: decline?.reason ?? null });
      if (!done.ok) return done;
      const request = { authorizationId, walletId: locked.row.walletId, customerId, body, idempotencyKey: body.processorReference, at: now, cardId, processorReference: body.processorReference };
      const row = authorizationRow(request, done.value.decision, decline?.detail ?? null);
      await persistStep(tx, locked, done.value, now, undefined, { authorization: row });
      return { ok: true, value: creditAuthorizationView(row) };
    });
  }
}
