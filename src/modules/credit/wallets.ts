/**
 * Credit wallets and their day-to-day operations (issue 9; reference "Credit wallet (credit core)",
 * "Credit core" endpoints, "States and transitions › Credit wallet"; decisions.md §2, §3, §6;
 * spec/credit/wallets.tsp, charges.tsp, payments.tsp, statements.tsp, events.tsp).
 *
 * Every change is one transaction that locks only the wallet's own row (`select … for update`),
 * loads it with its open statements into the engine's `WalletState` (./wallet-store.ts), takes the
 * tenant's instant (`tenantNow`: its sandbox clock, else real time), runs the pure engine operation
 * (src/domain/credit/simulate.ts) — which first runs every daily close, cut and grace end due before
 * that instant that the batches have not run yet — and persists everything it returns: the wallet,
 * the touched statements and every event as a `credit_event` row (the notification outbox).
 *
 * A refused operation (engine `Refusal`, outcome.ts) still commits the catch-up steps due before its
 * instant (so the state a 409 names, e.g. a default, is the one a read shows) and books nothing else.
 * Refusals map to the credit error table: 422 `VALIDATION_ERROR` with the camelCase field
 * (`AMOUNT_NOT_POSITIVE`, `PAYMENT_EXCEEDS_DEBT`, `CHARGE_EXCEEDS_AVAILABLE` on `amount`,
 * `LIMIT_NOT_RAISED` on `limit`, `FIRST_CUT_NOT_AFTER_CREATION` on `firstCutDate`), 409 `CONFLICT`
 * for the state conflicts. Reads return the stored state (as of the last step run by an operation,
 * a batch or the sandbox clock) and write nothing.
 *
 * Money: integer cents; rates: percent; instants: ISO 8601 UTC.
 *
 * Money stays exact (docs/security.md "Money stays exact"): a wallet set aside by the cycle batches
 * (./cycles.ts) refuses every change with 409 `CONFLICT` naming the reason, before any catch-up step
 * runs; a change whose catch-up steps would take an amount beyond ±(2^53 − 1) cents (the engine's
 * RangeError) books nothing, sets the wallet aside and is refused the same way.
 */
import { createHash, randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { Decimal } from "decimal.js";
import type { components } from "../../../generated/types/credit.js";
import {
  advance,
  amountOverdraft,
  blockWallet,
  changeLimit,
  charge,
  createWallet,
  dissolveWallet,
  nextCutDate,
  overrideSpecs,
  pay,
  totalDebt,
  unblockWallet,
  type Outcome,
  type Refusal,
  type SpecsOverride,
  type StepResult,
} from "../../domain/credit/index.js";
import { DomainError, ValidationFailed, quote, type FieldProblem } from "../../domain/errors.js";
import type { PageRequest } from "../../http/envelope.js";
import { exactNumber } from "../../http/json-numbers.js";
import { User } from "../users/entities.js";
import { tenantNow } from "./clock.js";
import { MAX_CENTS, type SetAsideLogger } from "./cycles.js";
import { CreditNotificationTarget, CreditProduct } from "./entities.js";
import { CreditCharge, CreditEvent, CreditPayment, CreditStatement, CreditWallet } from "./wallet-entities.js";
import { eventsWrittenIn, isWalletId, lockWallet, persistStep, statementOf, productRules, rateNumber, walletColumns, type LockedWallet } from "./wallet-store.js";

type Schemas = components["schemas"];
/** Schema `CreditWallet`. */
export type CreditWalletView = Schemas["CreditWallet"];
/** Schema `CreateCreditWalletRequest`. */
export type CreateCreditWalletInput = Schemas["CreateCreditWalletRequest"];
/** Schema `CreditCharge`. */
export type CreditChargeView = Schemas["CreditCharge"];
/** Schema `CreditPayment`. */
export type CreditPaymentView = Schemas["CreditPayment"];
/** Schema `CreditInterestOverride`. */
export type CreditInterestOverrideView = Schemas["CreditInterestOverride"];
/** Schema `ChangeInterestCreditCapitalRequest`. */
export type ChangeInterestInput = Schemas["ChangeInterestCreditCapitalRequest"];
/** Schema `CreditStatement`. */
export type CreditStatementView = Schemas["CreditStatement"];
/** Schema `CreditWalletEvent`. */
export type CreditWalletEventView = Schemas["CreditWalletEvent"];

/** Fields of ChangeInterestCreditCapital (spec `ChangeInterestCreditCapitalRequest`); any other key is ignored. */
const OVERRIDE_FIELDS = ["interestRateNominal", "interestRateMoroso", "fixedInterestNominal", "fixedInterestMoroso", "minimumPaymentRate", "fixedMinimumPayment"] as const;

/** Percent fields of ChangeInterestCreditCapital: at most 4 decimal places, like the product's (stored `numeric(9,4)`). */
const OVERRIDE_RATE_FIELDS = ["interestRateNominal", "interestRateMoroso", "minimumPaymentRate"] as const;

/** The HTTP error of an engine refusal (outcome.ts `RefusalCode` mapping). */
export function refusalError(refusal: Refusal): Error {
  switch (refusal.code) {
    case "AMOUNT_NOT_POSITIVE":
    case "PAYMENT_EXCEEDS_DEBT":
    case "CHARGE_EXCEEDS_AVAILABLE":
    case "LIMIT_NOT_RAISED":
    case "FIRST_CUT_NOT_AFTER_CREATION":
      return new ValidationFailed([{ field: refusal.field ?? "amount", message: refusal.message }]);
    default:
      return new DomainError("RESOURCE_CONFLICT", refusal.message);
  }
}

/** Longest `set_aside_reason` the API returns (spec `CreditWalletSetAside.reason`). */
const REASON_MAX = 500;

/** The refusal of every change on a set-aside wallet (409 `CONFLICT`), naming the reason (docs/security.md "Money stays exact"). */
export function setAsideRefusal(reason: string): Refusal {
  return { ok: false, code: "WALLET_SET_ASIDE", message: `The wallet is set aside and accepts no change: ${reason}` };
}

/**
 * The wallet as the API returns it (spec `CreditWallet`): counters in cents, rates in percent,
 * instants ISO 8601 UTC; `setAside` only when the wallet is set aside.
 */
export function creditWalletView(row: CreditWallet, creditProductCode: string): CreditWalletView {
  const balances = { limit: row.limit, availableAmount: row.availableAmount, principalOutstanding: row.principalOutstanding, interestOutstanding: row.interestOutstanding };
  const aside = row.setAsideAt ? { setAside: { at: row.setAsideAt.toISOString(), reason: (row.setAsideReason ?? "").slice(0, REASON_MAX) } } : {};
  return {
    walletId: row.walletId,
    userId: row.userId,
    currency: row.currency,
    description: row.description ?? null,
    creditProductCode,
    status: row.status,
    limit: row.limit,
    availableAmount: row.availableAmount,
    principalOutstanding: row.principalOutstanding,
    interestOutstanding: row.interestOutstanding,
    totalDebt: totalDebt(balances),
    amountOverdraft: amountOverdraft(balances),
    sumOfDailyBalance: row.sumOfDailyBalance,
    firstCutDate: row.firstCutDate.toISOString(),
    nextCutDate: row.status === "dissolved" || !row.nextCutAt ? null : row.nextCutAt.toISOString(),
    time: row.time ?? null,
    expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
    interestSpecs: {
      interestRateNominal: rateNumber(row.interestRateNominal),
      interestRateMoroso: rateNumber(row.interestRateMoroso),
      fixedInterestNominal: row.fixedInterestNominal,
      fixedInterestMoroso: row.fixedInterestMoroso,
    },
    minimumPaymentSpecs: { minimumPaymentRate: rateNumber(row.minimumPaymentRate), fixedMinimumPayment: row.fixedMinimumPayment },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...aside,
  };
}

/** A statement as the API returns it (spec `CreditStatement`): the engine's statement of the row, instants as ISO 8601 UTC. */
export function creditStatementView(row: CreditStatement): CreditStatementView {
  const { index: _index, ...st } = statementOf(row, 0);
  return {
    walletId: row.walletId,
    ...st,
    cutDate: st.cutDate.toISOString(),
    cycleStart: st.cycleStart.toISOString(),
    cycleEnd: st.cycleEnd.toISOString(),
    paymentDueDate: st.paymentDueDate.toISOString(),
    interestAppliedAt: st.interestAppliedAt ? st.interestAppliedAt.toISOString() : null,
    curedAt: st.curedAt ? st.curedAt.toISOString() : null,
  };
}

/** An event as the API returns it (spec `CreditWalletEvent`: the notification payload plus `id` and `createdAt`). */
export function creditEventView(row: CreditEvent): CreditWalletEventView {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    walletId: row.walletId,
    type: row.type as CreditWalletEventView["type"],
    amount: row.amount,
    direction: row.direction,
    affectsBalance: row.affectsBalance,
    walletDetails_after: row.walletDetailsAfter as unknown as CreditWalletEventView["walletDetails_after"],
    sequence: row.sequence,
  };
}

/** What an Idempotency-Key row records (table `credit_idempotency_key`). */
interface KeyRow {
  operation: "payment" | "charge";
  wallet_id: string;
  request_hash: string;
  result_id: string;
}

/** Credit wallets of the tenants and their operations. */
export class CreditWalletService {
  /**
   * @param onEventsWritten called after a commit that wrote `count` > 0 credit_event rows (catch-up
   *   steps included), to start their delivery (src/modules/credit/delivery.ts `notifyCreditEventsWritten`).
   * @param logger where a wallet set aside by a change is reported (one error).
   */
  constructor(
    private readonly onEventsWritten: (count: number) => void = () => {},
    private readonly logger?: SetAsideLogger,
  ) {}

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
    return em.transactional(async (tx) => {
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
      const row = tx.create(CreditWallet, { ...draft, ...walletColumns({ status: "active", pendingSpecs: null } as CreditWallet, s, rules, now) });
      await tx.flush();
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
   * `charge`: AA − amount, AO + amount; no event). Idempotent per tenant and `idempotencyKey`
   * (`isDuplicate`, see `withKey`).
   * @throws DomainError NOT_FOUND (404); RESOURCE_CONFLICT (409: key reused with another request;
   *   wallet blocked, in default, dissolved or expired); ValidationFailed (422 on `amount`: above AA).
   */
  async charge(em: EntityManager, customerId: string, walletId: string, body: { amount: number; description: string }, idempotencyKey?: string): Promise<CreditChargeView> {
    const key = idempotencyKey ?? randomUUID();
    const hash = requestHash(["charge", walletId.toLowerCase(), body.amount, body.description]);
    const outcome = await this.withKey(em, customerId, walletId, key, "charge", hash, async (tx, locked, now, resultId) => {
      const done = charge(locked.state, locked.product, now, body.amount);
      if (!done.ok) return done;
      await persistStep(tx, locked, done.value, now);
      tx.create(CreditCharge, { id: resultId, walletId: locked.row.walletId, amount: body.amount, description: body.description, idempotencyKey: key, createdAt: now });
      await tx.flush();
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
   * Accepted in every state. Idempotent like `charge`.
   * @throws DomainError NOT_FOUND (404); RESOURCE_CONFLICT (409: key reused with another request);
   *   ValidationFailed (422 on `amount`: above the total debt).
   */
  async pay(em: EntityManager, customerId: string, walletId: string, body: { amount: number }, idempotencyKey?: string): Promise<CreditPaymentView> {
    const key = idempotencyKey ?? randomUUID();
    const hash = requestHash(["payment", walletId.toLowerCase(), body.amount]);
    const outcome = await this.withKey(em, customerId, walletId, key, "payment", hash, async (tx, locked, now, resultId) => {
      const done = pay(locked.state, locked.product, now, body.amount);
      if (!done.ok) return done;
      await persistStep(tx, locked, done.value, now);
      const split = done.value.split;
      tx.create(CreditPayment, {
        id: resultId,
        walletId: locked.row.walletId,
        amount: body.amount,
        appliedToInterest: split.toInterest,
        appliedToPrincipal: split.toPrincipal,
        appliedToOverdraft: split.toOverdraft,
        idempotencyKey: key,
        createdAt: now,
      });
      await tx.flush();
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
    return this.simple(em, customerId, walletId, (locked, now) => changeLimit(locked.state, locked.product, now, limit));
  }

  /**
   * ChangeInterestCreditCapital: on a product with `variableSpecs`, stores the override (absent
   * fields keep the wallet's current values; replaces a pending one) as `pending`, activating at
   * the next cut (`Cambio Interest ejecutado` then); otherwise `ignored` and nothing changes
   * (reference). Rates in percent (at most 4 decimal places), fixed amounts in cents.
   * @throws ValidationFailed / DomainError UNPROCESSABLE_ENTITY (422: an empty body, a rate with
   *   more than 4 decimal places); NOT_FOUND (404); RESOURCE_CONFLICT (409, dissolved).
   */
  async changeInterest(em: EntityManager, customerId: string, walletId: string, body: ChangeInterestInput): Promise<CreditInterestOverrideView> {
    const override: SpecsOverride = {};
    for (const field of OVERRIDE_FIELDS) if (typeof body[field] === "number") override[field] = body[field];
    if (Object.keys(override).length === 0) {
      throw new DomainError("UNPROCESSABLE_ENTITY", "Send at least one interest or minimum payment setting to override.");
    }
    const problems: FieldProblem[] = [];
    for (const field of OVERRIDE_RATE_FIELDS) {
      if (!(field in body)) continue;
      let decimals: number;
      try {
        decimals = new Decimal(exactNumber(body, field)).decimalPlaces();
      } catch {
        decimals = Infinity;
      }
      if (decimals > 4) problems.push({ field, message: `${field} must have at most 4 decimal places.` });
    }
    if (problems.length > 0) throw new ValidationFailed(problems);
    return this.mutate(em, customerId, walletId, async (tx, locked, now) => {
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
    return this.simple(em, customerId, walletId, (locked, now) => blockWallet(locked.state, locked.product, now));
  }

  /** Unblock a `blocked` wallet (engine `unblockWallet`). @throws NOT_FOUND (404), RESOURCE_CONFLICT (409, any other state). */
  async unblock(em: EntityManager, customerId: string, walletId: string): Promise<CreditWalletView> {
    return this.simple(em, customerId, walletId, (locked, now) => unblockWallet(locked.state, locked.product, now));
  }

  /** Dissolve a wallet, final (engine `dissolveWallet`). @throws NOT_FOUND (404), RESOURCE_CONFLICT (409, already dissolved). */
  async dissolve(em: EntityManager, customerId: string, walletId: string): Promise<CreditWalletView> {
    return this.simple(em, customerId, walletId, (locked, now) => dissolveWallet(locked.state, locked.product, now));
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

  /** An operation whose answer is the wallet after it. */
  private async simple(em: EntityManager, customerId: string, walletId: string, op: (locked: LockedWallet, now: Date) => Outcome<StepResult>): Promise<CreditWalletView> {
    return this.mutate(em, customerId, walletId, async (tx, locked, now) => {
      const done = op(locked, now);
      if (!done.ok) return done;
      await persistStep(tx, locked, done.value, now);
      return { ok: true, value: creditWalletView(locked.row, locked.productCode) };
    });
  }

  /**
   * One change of one wallet in one transaction: locks the wallet row, takes the tenant's instant,
   * runs `op`; on a refusal commits the catch-up steps only (`commitCatchUp`) and throws its error.
   */
  private async mutate<T>(em: EntityManager, customerId: string, walletId: string, op: (tx: EntityManager, locked: LockedWallet, now: Date) => Promise<Outcome<T>>): Promise<T> {
    let written = 0;
    const outcome = await this.exact(em, customerId, walletId, () => em.transactional(async (tx) => {
      const locked = await lockWallet(tx, customerId, walletId);
      if (!locked) throw this.notFound(walletId);
      if (locked.row.setAsideAt) return setAsideRefusal(locked.row.setAsideReason ?? "");
      const now = await tenantNow(tx, customerId);
      const done = await op(tx, locked, now);
      if (!done.ok) await this.commitCatchUp(tx, locked, now);
      written = eventsWrittenIn(tx);
      return done;
    }));
    if (written > 0) this.onEventsWritten(written);
    if (!outcome.ok) throw refusalError(outcome);
    return outcome.value;
  }

  /** After a refusal: persists the steps due up to `now` (engine `advance`), if any ran. */
  private async commitCatchUp(tx: EntityManager, locked: LockedWallet, now: Date): Promise<void> {
    const moved = advance(locked.state, locked.product, now);
    if (!moved.ok) return;
    const changed = moved.value.events.length > 0 || moved.value.state.sumOfDailyBalance !== locked.state.sumOfDailyBalance;
    await persistStep(tx, locked, moved.value, changed ? now : locked.row.updatedAt);
  }

  /**
   * The Idempotency-Key protocol of PayOutCredit and ReportPayCredit (spec `CreditIdempotencyKeyHeader`):
   * in one transaction, first inserts the key row (tenant, key) with the operation, wallet, SHA-256 of
   * the canonical request and the new result id (`insert … on conflict do nothing`): a concurrent
   * repeat waits on the key's unique index until the first commits, then finds its row. An existing
   * row with the same operation, wallet and hash returns the first result (`duplicate: true`), any
   * other answers 409. A new key then locks the wallet and runs `op`; on a refusal the key row is
   * deleted again (a refused request does not consume its key) and the catch-up steps are committed.
   */
  private async withKey(
    em: EntityManager,
    customerId: string,
    walletId: string,
    key: string,
    operation: "payment" | "charge",
    hash: string,
    op: (tx: EntityManager, locked: LockedWallet, now: Date, resultId: string) => Promise<Outcome<undefined>>,
  ): Promise<{ resultId: string; walletId: string; duplicate: boolean }> {
    if (!isWalletId(walletId)) throw this.notFound(walletId);
    const wallet = walletId.toLowerCase();
    for (let attempt = 0; attempt < 3; attempt++) {
      let written = 0;
      const outcome = await this.exact(em, customerId, wallet, () => em.transactional(async (tx): Promise<Outcome<{ resultId: string; duplicate: boolean }> | null> => {
        const resultId = randomUUID();
        const inserted = await tx.execute<{ key: string }[]>(
          `insert into credit_idempotency_key (customer_id, key, operation, wallet_id, request_hash, result_id, created_at)
             values (?, ?, ?, ?, ?, ?, now()) on conflict (customer_id, key) do nothing returning key`,
          [customerId, key, operation, wallet, hash, resultId],
        );
        if (inserted.length === 0) {
          const [first] = await tx.execute<KeyRow[]>(
            `select operation, wallet_id, request_hash, result_id from credit_idempotency_key where customer_id = ? and key = ?`,
            [customerId, key],
          );
          if (!first) return null;
          if (first.operation !== operation || first.wallet_id !== wallet || first.request_hash !== hash) {
            throw new DomainError("RESOURCE_CONFLICT", "This Idempotency-Key was already used with a different request.");
          }
          return { ok: true, value: { resultId: first.result_id, duplicate: true } };
        }
        const locked = await lockWallet(tx, customerId, wallet);
        if (!locked) throw this.notFound(walletId);
        if (locked.row.setAsideAt) {
          await tx.execute(`delete from credit_idempotency_key where customer_id = ? and key = ?`, [customerId, key]);
          return setAsideRefusal(locked.row.setAsideReason ?? "");
        }
        const now = await tenantNow(tx, customerId);
        const done = await op(tx, locked, now, resultId);
        if (!done.ok) {
          await tx.execute(`delete from credit_idempotency_key where customer_id = ? and key = ?`, [customerId, key]);
          await this.commitCatchUp(tx, locked, now);
          written = eventsWrittenIn(tx);
          return done;
        }
        written = eventsWrittenIn(tx);
        return { ok: true, value: { resultId, duplicate: false } };
      }));
      if (written > 0) this.onEventsWritten(written);
      if (outcome === null) continue;
      if (!outcome.ok) throw refusalError(outcome);
      return { ...outcome.value, walletId: wallet };
    }
    throw new DomainError("RESOURCE_CONFLICT", "This Idempotency-Key is being used by a concurrent request; retry.");
  }

  /**
   * Runs `change` (one transaction on wallet `walletId`). When the engine raises its RangeError for
   * an amount that is not a safe integer of cents (of the change or of its catch-up steps), the
   * transaction has rolled back; the wallet is then set aside in a transaction of its own (at the
   * tenant's instant, with the reason) and the change is refused (docs/security.md "Money stays exact").
   * @throws DomainError RESOURCE_CONFLICT (409) naming the reason in that case; anything else as thrown.
   */
  private async exact<R>(em: EntityManager, customerId: string, walletId: string, change: () => Promise<R>): Promise<R> {
    try {
      return await change();
    } catch (error) {
      // the engine's `cents` and event checks: "… must be a (non-negative) safe integer …"
      if (!(error instanceof RangeError) || !/safe integer/.test(error.message)) throw error;
      const reason = `The cycle steps or the change would take an amount beyond ${MAX_CENTS} cents (2^53 - 1), the largest amount the service keeps exact (${error.message.slice(0, 200)}): the wallet is set aside and its cycle steps stop.`;
      const wallet = walletId.toLowerCase();
      const { marked, stored } = await em.fork().transactional(async (tx) => {
        const at = await tenantNow(tx, customerId);
        const rows = await tx.execute<{ wallet_id: string }[]>(
          `update credit_wallet set set_aside_at = ?, set_aside_reason = ?, updated_at = now()
           where wallet_id = ? and customer_id = ? and set_aside_at is null returning wallet_id`,
          [at, reason, wallet, customerId],
        );
        const [row] = await tx.execute<{ set_aside_reason: string | null }[]>(`select set_aside_reason from credit_wallet where wallet_id = ?`, [wallet]);
        return { marked: rows.length > 0, stored: row?.set_aside_reason ?? reason };
      });
      if (marked) this.logger?.error({ walletId: wallet, customerId, reason: stored }, "credit wallet set aside: a change would leave the exact range of amounts");
      throw refusalError(setAsideRefusal(stored));
    }
  }

  /** The wallet `walletId` (already known to exist) as it is now. */
  private async walletOf(em: EntityManager, walletId: string): Promise<CreditWalletView> {
    const fresh = em.fork();
    const row = await fresh.findOneOrFail(CreditWallet, { walletId });
    return creditWalletView(row, await this.productCode(fresh, row.productId));
  }

  private async productCode(em: EntityManager, productId: string): Promise<string> {
    return (await em.findOneOrFail(CreditProduct, { id: productId })).code;
  }

  /** The tenant's wallet row. @throws DomainError NOT_FOUND (404). */
  private async find(em: EntityManager, customerId: string, walletId: string): Promise<CreditWallet> {
    if (!isWalletId(walletId)) throw this.notFound(walletId);
    const row = await em.findOne(CreditWallet, { walletId: walletId.toLowerCase(), customerId });
    if (!row) throw this.notFound(walletId);
    return row;
  }

  private notFound(walletId: string): DomainError {
    return new DomainError("NOT_FOUND", `Credit wallet ${quote(walletId)} not found.`);
  }
}

/** SHA-256 (hex) of the canonical JSON of a request: what makes a repeat a repeat. */
function requestHash(parts: unknown[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}
