/**
 * Credit products (reference: "Credit product (credit core)"; docs/decisions/credit.md "Operations and who
 * calls them", "Products"): the
 * operator creates and updates a tenant's products (master key), a tenant lists and reads its own
 * (owner API key). The schema (spec/credit/products.tsp) enforces each field's type and range; this
 * service adds the rules a schema cannot state: at most 4 decimal places on the percentages, the
 * tenant must exist, the code is unique per tenant, and both spellings of the accrual method map to
 * the short one.
 *
 * The percentages arrive as the client wrote them ({@link ExactRate}: the HTTP handlers,
 * src/http/credit/exact-rates.ts, hand over the source text of a number a double could not hold), so
 * the decimal places are counted and the rates stored exactly.
 */
import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Db } from "../../../db/sql.js";
import type { components } from "../../../../generated/types/credit.js";
import { exactRateText, rateProblems, type ExactRate, type WithExactRates } from "../../../domain/credit/rates.js";
import { DomainError, ValidationFailed, quote } from "../../../domain/errors.js";
import type { PageRequest } from "../../../domain/paging.js";
import { Customer } from "../../identity/entities.js";
import { rescheduleWallets } from "../cycles/repository/schedule.js";
import { CreditProduct } from "./entities.js";
import { PRODUCT_SETTINGS, lockProduct, productCount, productPage, updateProduct } from "./repository.js";

type Schemas = components["schemas"];
/** Schema `CreditProduct`: a product as the API returns it. */
export type CreditProductView = Schemas["CreditProduct"];
/** Schema `InterestAccrualMethodInput`: either spelling of the accrual method. */
export type AccrualMethodInput = Schemas["InterestAccrualMethodInput"];

/** Percent fields of a product: at most 4 decimal places (src/domain/credit/rates.ts `RATE_DECIMALS`), stored `numeric(9,4)`. */
export const RATE_FIELDS = ["baseInterestRate", "baseMinimumPaymentRate", "capitalInterestSplit", "morosidadRate"] as const;
/** A percent field of a product. */
export type ProductRateField = (typeof RATE_FIELDS)[number];

/** Schema `CreateCreditProductRequest`, its percentages as the client wrote them ({@link ExactRate}). */
export type CreateCreditProductInput = WithExactRates<Schemas["CreateCreditProductRequest"], ProductRateField>;
/** Schema `UpdateCreditProductSettingsRequest`, its percentages as the client wrote them ({@link ExactRate}). */
export type UpdateCreditProductInput = WithExactRates<Schemas["UpdateCreditProductSettingsRequest"], ProductRateField>;

/**
 * The stored (and returned) name of an accrual method: `average_daily_balance` → `ADB`,
 * `balance_at_cut` → `BAC`, the short names unchanged (docs/decisions/credit.md "Products": both
 * spellings accepted, the short one returned).
 */
export function normalizeAccrualMethod(method: AccrualMethodInput): "ADB" | "BAC" {
  return method === "ADB" || method === "average_daily_balance" ? "ADB" : "BAC";
}

/** The product as the API returns it (rates as numbers, the short accrual name). */
export function creditProductView(row: CreditProduct): CreditProductView {
  return {
    creditProductCode: row.code,
    customerId: row.customerId,
    revolving: row.revolving,
    compound: row.compound,
    cutFrequency: row.cutFrequency,
    fixedInterestAmount: Number(row.fixedInterestAmount),
    baseInterestRate: Number(row.baseInterestRate),
    baseMinimumPaymentRate: Number(row.baseMinimumPaymentRate),
    fixedMinimumPaymentAmount: Number(row.fixedMinimumPaymentAmount),
    capitalInterestSplit: Number(row.capitalInterestSplit),
    gracePeriod: row.gracePeriod,
    variableSpecs: row.variableSpecs,
    morosidadRate: Number(row.morosidadRate),
    baseInterestMorosidad: Number(row.baseInterestMorosidad),
    interestAccrualMethod: row.interestAccrualMethod,
    dailyRateDivisor: row.dailyRateDivisor,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * Credit products of the tenants: creating and reading one product are the ORM's plain CRUD; the
 * list page and the settings update (with the wallets it reschedules) run as statements of
 * ./repository.ts through `db` (src/db/sql.ts).
 */
export class CreditProductService {
  /** @param db where the statements run: the hot reads ({@link list}) and the transaction of {@link update}. */
  constructor(private readonly db: Db) {}

  /**
   * Create Credit Product (operator, master key): a product with code `creditProductCode` for the
   * tenant `customerId`. Shapes: `CreateCreditProductRequest` in, `CreditProduct` out (cents as
   * integers, rates in percent, `interestAccrualMethod` as `ADB`/`BAC`).
   * @throws ValidationFailed (422 `VALIDATION_ERROR`) on `customerId` when the customer does not
   *   exist or is deleted, and on each percentage with more than 4 decimal places;
   *   DomainError RESOURCE_CONFLICT (409 `CONFLICT`) when the tenant already has the code
   *   (unique constraint `credit_product_customer_code_unique`, so concurrent creates yield one).
   */
  async create(em: EntityManager, body: CreateCreditProductInput): Promise<CreditProductView> {
    const problems = rateProblems(body, RATE_FIELDS);
    if (!(await this.isActiveCustomer(em, body.customerId))) {
      problems.unshift({ field: "customerId", message: `Customer ${quote(body.customerId)} does not exist or is deleted.` });
    }
    if (problems.length > 0) throw new ValidationFailed(problems);
    const now = new Date();
    const row = em.create(CreditProduct, {
      id: randomUUID(),
      customerId: body.customerId,
      code: body.creditProductCode,
      revolving: body.revolving,
      compound: body.compound,
      cutFrequency: body.cutFrequency,
      fixedInterestAmount: body.fixedInterestAmount,
      baseInterestRate: exactRateText(body.baseInterestRate),
      baseMinimumPaymentRate: exactRateText(body.baseMinimumPaymentRate),
      fixedMinimumPaymentAmount: body.fixedMinimumPaymentAmount,
      capitalInterestSplit: exactRateText(body.capitalInterestSplit),
      gracePeriod: body.gracePeriod,
      variableSpecs: body.variableSpecs,
      morosidadRate: exactRateText(body.morosidadRate),
      baseInterestMorosidad: body.baseInterestMorosidad,
      interestAccrualMethod: normalizeAccrualMethod(body.interestAccrualMethod),
      dailyRateDivisor: body.dailyRateDivisor,
      createdAt: now,
      updatedAt: now,
    });
    try {
      await em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) {
        throw new DomainError("RESOURCE_CONFLICT", `Customer ${quote(body.customerId)} already has a credit product with code ${quote(body.creditProductCode)}.`, "creditProductCode");
      }
      throw error;
    }
    return creditProductView(row);
  }

  /**
   * Update Credit Product Settings (operator, master key): changes the fields sent of product
   * `code` of tenant `body.customerId`; a body with `customerId` alone changes nothing (and keeps
   * `updatedAt`). The change applies to the tenant's wallets on the product from each wallet's next
   * cut (spec/credit/products.tsp, docs/decisions/credit.md "Products"): this stores the product's settings; the cycle engine
   * reads them at each cut.
   * @returns the whole product after the change (`CreditProduct`).
   * @throws ValidationFailed (422) on `customerId` (unknown or deleted customer) and on each
   *   percentage with more than 4 decimal places; DomainError NOT_FOUND (404) when the tenant has
   *   no product with that code.
   */
  async update(em: EntityManager, code: string, body: UpdateCreditProductInput): Promise<CreditProductView> {
    const problems = rateProblems(body, RATE_FIELDS);
    if (!(await this.isActiveCustomer(em, body.customerId))) {
      problems.unshift({ field: "customerId", message: `Customer ${quote(body.customerId)} does not exist or is deleted.` });
    }
    if (problems.length > 0) throw new ValidationFailed(problems);
    return this.db.transaction(async (tx) => {
      const row = await lockProduct(tx, body.customerId, code);
      if (!row) throw this.notFound(code);
      const { customerId: _tenant, interestAccrualMethod, ...rest } = body;
      const changes: Partial<CreditProduct> = {};
      // only the product's settings: the statement writes those (./repository.ts `PRODUCT_SETTINGS`)
      for (const key of PRODUCT_SETTINGS) {
        const value = (rest as Record<string, unknown>)[key];
        if (key === "interestAccrualMethod" || value === undefined) continue;
        (changes as Record<string, unknown>)[key] = (RATE_FIELDS as readonly string[]).includes(key) ? exactRateText(value as ExactRate) : value;
      }
      if (interestAccrualMethod !== undefined) changes.interestAccrualMethod = normalizeAccrualMethod(interestAccrualMethod);
      if (Object.keys(changes).length > 0) {
        Object.assign(row, changes, { updatedAt: new Date() });
        await updateProduct(tx, row);
        // the wallets' stored next cut follows the new schedule from their next cut (../cycles/repository/schedule.ts)
        if (changes.cutFrequency !== undefined) await rescheduleWallets(tx, row.id);
      }
      return creditProductView(row);
    });
  }

  /**
   * List Credit Products of tenant `customerId` (owner API key), ordered by code.
   * @returns one page (`limit`, `skip`) and the tenant's total count.
   */
  async list(customerId: string, page: PageRequest): Promise<{ items: CreditProductView[]; total: number }> {
    const rows = await productPage<CreditProductView>(this.db, customerId, page.limit, page.skip);
    // A page past the end has no row to carry the total: count apart (rare).
    const total = rows[0]?.total ?? (page.skip > 0 ? await productCount(this.db, customerId) : 0);
    return { items: rows.map(({ total: _total, ...product }) => product), total };
  }

  /**
   * Get Credit Product `code` of tenant `customerId` (owner API key).
   * @throws DomainError NOT_FOUND (404) when the tenant has no product with that code (another
   *   tenant's product included: tenants never see each other's products).
   */
  async get(em: EntityManager, customerId: string, code: string): Promise<CreditProductView> {
    const row = await em.findOne(CreditProduct, { customerId, code });
    if (!row) throw this.notFound(code);
    return creditProductView(row);
  }

  private async isActiveCustomer(em: EntityManager, customerId: string): Promise<boolean> {
    const customer = await em.findOne(Customer, { customerId });
    return customer !== null && customer.isActive;
  }

  private notFound(code: string): DomainError {
    return new DomainError("NOT_FOUND", `Credit product ${quote(code)} not found.`);
  }
}
