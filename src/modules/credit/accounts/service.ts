/**
 * Credit wallets and their day-to-day operations (docs/decisions/credit.md "Wallets"; reference "Credit wallet (credit core)",
 * "Credit core" endpoints, "States and transitions › Credit wallet"; docs/decisions/credit.md "Operations and who calls them";
 * spec/credit/wallets.tsp, charges.tsp, payments.tsp, statements.tsp, events.tsp).
 *
 * Every change is one transaction on the wallet's own row, at the tenant's instant, running the pure
 * engine and persisting what it returns (./changes.ts); charges and payments run under their
 * Idempotency-Key (./idempotency.ts). Refusals map to the credit error table (./refusals.ts): 422
 * `VALIDATION_ERROR` on the field, 409 `CONFLICT` for the state conflicts. Reads return the stored
 * state (as of the last step run by an operation, a batch or the sandbox clock) and write nothing.
 *
 * Money: integer cents; rates: percent; instants: ISO 8601 UTC. The service takes validated plain
 * values: the HTTP handlers hand over the rates as the client wrote them (src/domain/credit/rates.ts
 * `ExactRate`).
 *
 * Money stays exact (docs/security.md "Money stays exact"): a set-aside wallet refuses every change
 * with 409 `CONFLICT` naming the reason (./changes.ts).
 */
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { components } from "../../../../generated/types/credit.js";
import {
  blockWallet,
  changeLimit,
  charge,
  createWallet,
  dissolveWallet,
  nextCutDate,
  overrideSpecs,
  pay,
  unblockWallet,
  type Outcome,
  type SpecsOverride,
  type StepResult,
} from "../../../domain/credit/index.js";
import { rateProblems, type WithExactRates } from "../../../domain/credit/rates.js";
import { DomainError, ValidationFailed, quote, type FieldProblem } from "../../../domain/errors.js";
import type { PageRequest } from "../../../domain/paging.js";
import { User } from "../../users/entities.js";
import { tenantNow } from "../clock/repository.js";
import { CreditNotificationTarget } from "../notifications/entities.js";
import { CreditProduct } from "../products/entities.js";
import type { SetAsideLogger } from "../set-aside.js";
import { WalletChanges, walletNotFound } from "./changes.js";
import { CreditCharge, CreditEvent, CreditPayment, CreditStatement, CreditWallet } from "./entities.js";
import { keyCaller, type KeyCaller } from "../../idempotency/service.js";
import { requestHash, withKey } from "./idempotency.js";
import { productRules, walletColumns } from "./mapping.js";
import { refusalError } from "./refusals.js";
import type { Db, Tx } from "../../../db/sql.js";
import { closeWalletCards } from "../cards/repository.js";
import { isWalletId, type LockedWallet } from "./repository/lock.js";
import { insertWallet } from "./repository/wallets.js";
import { persistStep } from "./repository/write.js";
import {
  creditEventView,
  creditStatementView,
  creditWalletView,
  type CreditChargeView,
  type CreditInterestOverrideView,
  type CreditPaymentView,
  type CreditStatementView,
  type CreditWalletEventView,
  type CreditWalletView,
} from "./views.js";

type Schemas = components["schemas"];
/** Schema `CreateCreditWalletRequest`. */
export type CreateCreditWalletInput = Schemas["CreateCreditWalletRequest"];

/** Fields of ChangeInterestCreditCapital (spec `ChangeInterestCreditCapitalRequest`); any other key is ignored. */
const OVERRIDE_FIELDS = ["interestRateNominal", "interestRateMoroso", "fixedInterestNominal", "fixedInterestMoroso", "minimumPaymentRate", "fixedMinimumPayment"] as const;

/** Percent fields of ChangeInterestCreditCapital: at most 4 decimal places, like the product's (stored `numeric(9,4)`). */
export const OVERRIDE_RATE_FIELDS = ["interestRateNominal", "interestRateMoroso", "minimumPaymentRate"] as const;

/** Schema `ChangeInterestCreditCapitalRequest`, its rates as the client wrote them (src/domain/credit/rates.ts `ExactRate`). */
export type ChangeInterestInput = WithExactRates<Schemas["ChangeInterestCreditCapitalRequest"], (typeof OVERRIDE_RATE_FIELDS)[number]>;

/** Credit wallets of the tenants and their operations. */
export class CreditWalletService {
  /** How each change runs (its transaction, the delivery start of its events, the set-aside guard). */
  private readonly changes: WalletChanges;

  /**
   * @param onEventsWritten called after a commit that wrote `count` > 0 credit_event rows (catch-up
   *   steps included), to start their delivery (src/modules/credit/delivery.ts `notifyCreditEventsWritten`).
   * @param logger where a wallet set aside by a change is reported (one error).
   * @param db where the changes run (src/db/sql.ts).
   */
  constructor(db: Db, onEventsWritten: (count: number) => void = () => {}, logger?: SetAsideLogger) {
    this.changes = new WalletChanges(db, onEventsWritten, logger);
  }

  /**
   * Create Credit Wallet (tenant, owner API key). Checks, in order: the product `creditProductCode`
   * is the tenant's (else 422 on `creditProductCode`) and `userId` is an existing, not deleted,
   * `VERIFIED` user of the tenant (else 422 on `userId`), both reported together; then a
   * notification URL is registered (NotificationsEnlist, else 409 `CONFLICT`); then the engine's
   * `createWallet` at the tenant's instant: `firstCutDate` (default: 00:00 UTC of the creation day
   * plus one `cutFrequency`) must be later than creation (else 422 on `firstCutDate`).
   * The wallet starts `active`, AA = `limit` (cents), the product's specs, `expiresAt` = creation +
   * `time` days.
   * @returns `CreditWallet`.
   * @throws ValidationFailed (422), DomainError RESOURCE_CONFLICT (409).
   */
  async create(em: EntityManager, customerId: string, body: CreateCreditWalletInput): Promise<CreditWalletView> {
    const product = await em.findOne(CreditProduct, { customerId, code: body.creditProductCode });
    const problems: FieldProblem[] = [];
    if (!product) problems.push({ field: "creditProductCode", message: `The tenant has no credit product ${quote(body.creditProductCode)}.` });
    const userId = body.userId.toLowerCase();
    const user = await em.findOne(User, { userId, customerId, deletedAt: null });
    if (!user || user.status !== "VERIFIED") {
      problems.push({ field: "userId", message: `${quote(body.userId)} is not an existing, active (VERIFIED) user of the tenant.` });
    }
    if (problems.length > 0 || !product) throw new ValidationFailed(problems);
    const target = await em.findOne(CreditNotificationTarget, { customerId });
    if (!target) {
      throw new DomainError("RESOURCE_CONFLICT", "Register a credit notification URL first (NotificationsEnlist, PUT /v2/notifications).");
    }
    const rules = productRules(product);
    return this.changes.db.transaction(async (tx) => {
      const now = await tenantNow(tx, customerId);
      const created = createWallet(rules, {
        walletId: randomUUID(),
        createdAt: now,
        limit: body.limit,
        ...(body.firstCutDate === undefined ? {} : { firstCutDate: new Date(body.firstCutDate) }),
        ...(body.time === undefined ? {} : { time: body.time }),
      });
      if (!created.ok) throw refusalError(created);
      const s = created.value;
      const draft = {
        walletId: s.walletId,
        customerId,
        userId,
        productId: product.id,
        currency: body.currency,
        description: body.description ?? null,
        firstCutDate: s.firstCutDate,
        time: body.time ?? null,
        expiresAt: s.expiresAt,
        createdAt: s.createdAt,
      };
      const row = { ...draft, ...walletColumns({ status: "active", pendingSpecs: null } as CreditWallet, s, rules, now), setAsideAt: null, setAsideReason: null } as CreditWallet;
      await insertWallet(tx, row);
      return creditWalletView(row, product.code);
    });
  }

  /**
   * Get Credit Wallet: wallet `walletId` of tenant `customerId` as stored.
   * @throws DomainError NOT_FOUND (404) when the tenant has no such wallet (another tenant's included).
   */
  async get(em: EntityManager, customerId: string, walletId: string): Promise<CreditWalletView> {
    const row = await this.find(em, customerId, walletId);
    return creditWalletView(row, await this.productCode(em, row.productId));
  }

  /** List Credit Wallets of tenant `customerId`, oldest first (creation, then id); one page and the total. */
  async list(em: EntityManager, customerId: string, page: PageRequest): Promise<{ items: CreditWalletView[]; total: number }> {
    const [rows, total] = await em.findAndCount(CreditWallet, { customerId }, { orderBy: { createdAt: "asc", walletId: "asc" }, limit: page.limit, offset: page.skip });
    const ids = [...new Set(rows.map((r) => r.productId))];
    const products = ids.length === 0 ? [] : await em.find(CreditProduct, { id: { $in: ids } });
    const codes = new Map(products.map((p) => [p.id, p.code]));
    return { items: rows.map((r) => creditWalletView(r, codes.get(r.productId) ?? "000")), total };
  }

  /**
   * PayOutCredit: a charge of `amount` cents on wallet `walletId` at the tenant's instant (engine
   * `charge`: AA − amount, AO + amount; no event). Idempotent per tenant, caller `by` and
   * `idempotencyKey` (`isDuplicate`, see `withKey`; `by` absent: the tenant's key space of callers
   * not named, src/modules/idempotency/service.ts `keyCaller`).
   * @throws DomainError NOT_FOUND (404); RESOURCE_CONFLICT (409: key reused with another request;
   *   wallet blocked, in default, dissolved or expired); ValidationFailed (422 on `amount`: above AA).
   */
  async charge(
    em: EntityManager,
    customerId: string,
    walletId: string,
    body: { amount: number; description: string },
    idempotencyKey?: string,
    by?: KeyCaller | null,
  ): Promise<CreditChargeView> {
    const key = idempotencyKey ?? randomUUID();
    const hash = requestHash(["charge", walletId.toLowerCase(), body.amount, body.description]);
    const outcome = await withKey(this.changes, customerId, keyCaller(by), walletId, key, hash, async (tx, locked, now, resultId) => {
      const done = charge(locked.state, locked.product, now, body.amount);
      if (!done.ok) return done;
      const row: CreditCharge = { id: resultId, walletId: locked.row.walletId, amount: body.amount, description: body.description, idempotencyKey: key, createdAt: now };
      await persistStep(tx, locked, done.value, now, undefined, { charge: row });
      return { ok: true, value: undefined };
    });
    const view = await this.walletOf(em, outcome.walletId);
    const row = await em.fork().findOneOrFail(CreditCharge, { id: outcome.resultId });
    return { id: row.id, walletId: row.walletId, amount: row.amount, description: row.description, idempotencyKey: row.idempotencyKey, isDuplicate: outcome.duplicate, createdAt: row.createdAt.toISOString(), wallet: view };
  }

  /**
   * ReportPayCredit: a payment of `amount` cents at the tenant's instant (engine `pay`: split
   * `capitalInterestSplit` % to interest, the rest to principal; AA restored on revolving products
   * unless in default; `Reporte de Pago`, and on a cure `Interes cancelado` / `Credito Reintegrado`).
   * Accepted in every state. Idempotent like `charge` (per tenant, caller `by` and key).
   * @throws DomainError NOT_FOUND (404); RESOURCE_CONFLICT (409: key reused with another request);
   *   ValidationFailed (422 on `amount`: above the total debt).
   */
  async pay(em: EntityManager, customerId: string, walletId: string, body: { amount: number }, idempotencyKey?: string, by?: KeyCaller | null): Promise<CreditPaymentView> {
    const key = idempotencyKey ?? randomUUID();
    const hash = requestHash(["payment", walletId.toLowerCase(), body.amount]);
    const outcome = await withKey(this.changes, customerId, keyCaller(by), walletId, key, hash, async (tx, locked, now, resultId) => {
      const done = pay(locked.state, locked.product, now, body.amount);
      if (!done.ok) return done;
      const split = done.value.split;
      const row: CreditPayment = {
        id: resultId,
        walletId: locked.row.walletId,
        amount: body.amount,
        appliedToInterest: split.toInterest,
        appliedToPrincipal: split.toPrincipal,
        appliedToOverdraft: split.toOverdraft,
        idempotencyKey: key,
        createdAt: now,
      };
      await persistStep(tx, locked, done.value, now, undefined, { payment: row });
      return { ok: true, value: undefined };
    });
    const view = await this.walletOf(em, outcome.walletId);
    const row = await em.fork().findOneOrFail(CreditPayment, { id: outcome.resultId });
    return {
      id: row.id,
      walletId: row.walletId,
      amount: row.amount,
      appliedToInterest: row.appliedToInterest,
      appliedToPrincipal: row.appliedToPrincipal,
      appliedToOverdraft: row.appliedToOverdraft,
      idempotencyKey: row.idempotencyKey,
      isDuplicate: outcome.duplicate,
      createdAt: row.createdAt.toISOString(),
      wallet: view,
    };
  }

  /**
   * ChangeWalletLimit: raises the limit to `limit` cents (engine `changeLimit`; `Cambio de Limite`
   * with amount = new − old limit).
   * @throws DomainError NOT_FOUND (404), RESOURCE_CONFLICT (409, dissolved); ValidationFailed (422 on
   *   `limit`: not above the current limit).
   */
  async changeLimit(em: EntityManager, customerId: string, walletId: string, limit: number): Promise<CreditWalletView> {
    return this.simple(customerId, walletId, (locked, now) => changeLimit(locked.state, locked.product, now, limit));
  }

  /**
   * ChangeInterestCreditCapital: on a product with `variableSpecs`, stores the override (absent
   * fields keep the wallet's current values; replaces a pending one) as `pending`, activating at
   * the next cut (`Cambio Interest ejecutado` then); otherwise `ignored` and nothing changes
   * (reference). Rates in percent (at most 4 decimal places, counted on the rates as the client
   * wrote them: src/domain/credit/rates.ts `ExactRate`), fixed amounts in cents.
   * @throws ValidationFailed / DomainError UNPROCESSABLE_ENTITY (422: an empty body, a rate with
   *   more than 4 decimal places); NOT_FOUND (404); RESOURCE_CONFLICT (409, dissolved).
   */
  async changeInterest(em: EntityManager, customerId: string, walletId: string, body: ChangeInterestInput): Promise<CreditInterestOverrideView> {
    const override: SpecsOverride = {};
    for (const field of OVERRIDE_FIELDS) {
      const value = body[field];
      // a rate the client wrote with more digits than a double holds arrives as its text: the engine takes the double
      if (typeof value === "number" || typeof value === "string") override[field] = Number(value);
    }
    if (Object.keys(override).length === 0) {
      throw new DomainError("UNPROCESSABLE_ENTITY", "Send at least one interest or minimum payment setting to override.");
    }
    const problems = rateProblems(body, OVERRIDE_RATE_FIELDS);
    if (problems.length > 0) throw new ValidationFailed(problems);
    return this.changes.mutate(customerId, walletId, async (tx, locked, now) => {
      const done = overrideSpecs(locked.state, locked.product, now, override);
      if (!done.ok) return done;
      await persistStep(tx, locked, done.value, now, now);
      const s = done.value.state;
      const pending = done.value.outcome === "pending" && s.pendingSpecs !== null;
      const view: CreditInterestOverrideView = {
        walletId: locked.row.walletId,
        status: done.value.outcome,
        interestSpecs: { ...(pending && s.pendingSpecs ? s.pendingSpecs.interestSpecs : s.interestSpecs) },
        minimumPaymentSpecs: { ...(pending && s.pendingSpecs ? s.pendingSpecs.minimumPaymentSpecs : s.minimumPaymentSpecs) },
        activatesAt: pending ? (nextCutDate(s, locked.product.cutFrequency)?.toISOString() ?? null) : null,
        requestedAt: now.toISOString(),
      };
      return { ok: true, value: view };
    });
  }

  /** Block an `active` wallet (engine `blockWallet`). @throws NOT_FOUND (404), RESOURCE_CONFLICT (409, any other state). */
  async block(em: EntityManager, customerId: string, walletId: string): Promise<CreditWalletView> {
    return this.simple(customerId, walletId, (locked, now) => blockWallet(locked.state, locked.product, now));
  }

  /** Unblock a `blocked` wallet (engine `unblockWallet`). @throws NOT_FOUND (404), RESOURCE_CONFLICT (409, any other state). */
  async unblock(em: EntityManager, customerId: string, walletId: string): Promise<CreditWalletView> {
    return this.simple(customerId, walletId, (locked, now) => unblockWallet(locked.state, locked.product, now));
  }

  /**
   * Dissolve a wallet, final (engine `dissolveWallet`); its open cards are closed in the same
   * transaction (docs/decisions/cards.md). @throws NOT_FOUND (404), RESOURCE_CONFLICT (409, already dissolved).
   */
  async dissolve(em: EntityManager, customerId: string, walletId: string): Promise<CreditWalletView> {
    return this.simple(customerId, walletId, (locked, now) => dissolveWallet(locked.state, locked.product, now), (tx, locked, now) => closeWalletCards(tx, locked.row.walletId, now));
  }

  /** List Credit Wallet Statements: every statement of the wallet, oldest cut first; one page and the total. @throws NOT_FOUND (404). */
  async statements(em: EntityManager, customerId: string, walletId: string, page: PageRequest): Promise<{ items: CreditStatementView[]; total: number }> {
    const row = await this.find(em, customerId, walletId);
    const [rows, total] = await em.findAndCount(CreditStatement, { walletId: row.walletId }, { orderBy: { cutDate: "asc" }, limit: page.limit, offset: page.skip });
    return { items: rows.map(creditStatementView), total };
  }

  /** List Credit Wallet Events: the wallet's notifications in `sequence` order; one page and the total. @throws NOT_FOUND (404). */
  async events(em: EntityManager, customerId: string, walletId: string, page: PageRequest): Promise<{ items: CreditWalletEventView[]; total: number }> {
    const row = await this.find(em, customerId, walletId);
    const [rows, total] = await em.findAndCount(CreditEvent, { walletId: row.walletId }, { orderBy: { sequence: "asc" }, limit: page.limit, offset: page.skip });
    return { items: rows.map(creditEventView), total };
  }

  /** An operation whose answer is the wallet after it; `alongside` writes more in its transaction once the step is persisted. */
  private async simple(
    customerId: string,
    walletId: string,
    op: (locked: LockedWallet, now: Date) => Outcome<StepResult>,
    alongside?: (tx: Tx, locked: LockedWallet, now: Date) => Promise<unknown>,
  ): Promise<CreditWalletView> {
    return this.changes.mutate(customerId, walletId, async (tx, locked, now) => {
      const done = op(locked, now);
      if (!done.ok) return done;
      await persistStep(tx, locked, done.value, now);
      await alongside?.(tx, locked, now);
      return { ok: true, value: creditWalletView(locked.row, locked.productCode) };
    });
  }

  /** The wallet `walletId` (already known to exist) as it is now. */
  private async walletOf(em: EntityManager, walletId: string): Promise<CreditWalletView> {
    const fresh = em.fork();
    const row = await fresh.findOneOrFail(CreditWallet, { walletId });
    return creditWalletView(row, await this.productCode(fresh, row.productId));
  }

  /** The code of product `productId`. */
  private async productCode(em: EntityManager, productId: string): Promise<string> {
    return (await em.findOneOrFail(CreditProduct, { id: productId })).code;
  }

  /** The tenant's wallet row. @throws DomainError NOT_FOUND (404). */
  private async find(em: EntityManager, customerId: string, walletId: string): Promise<CreditWallet> {
    if (!isWalletId(walletId)) throw walletNotFound(walletId);
    const row = await em.findOne(CreditWallet, { walletId: walletId.toLowerCase(), customerId });
    if (!row) throw walletNotFound(walletId);
    return row;
  }
}
