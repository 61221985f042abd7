/**
 * Credit products (reference: "Credit product (credit core)"; decisions.md §2, §6; issue 9): the
 * operator creates and updates a tenant's products (master key), a tenant lists and reads its own
 * (owner API key). The schema (spec/credit/products.tsp) enforces each field's type and range; this
 * service adds the rules a schema cannot state: at most 4 decimal places on the percentages, the
 * tenant must exist, the code is unique per tenant, and both spellings of the accrual method map to
 * the short one.
 */
import { randomUUID } from "node:crypto";
import { LockMode, UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { PreparedStatement, Statements } from "../../db/statements.js";
import { Decimal } from "decimal.js";
import type { components } from "../../../generated/types/credit.js";
import { DomainError, ValidationFailed, quote, type FieldProblem } from "../../domain/errors.js";
import type { PageRequest } from "../../http/envelope.js";
import { exactNumber } from "../../http/json-numbers.js";
import { Customer } from "../identity/entities.js";
import { CreditProduct } from "./entities.js";
import { rescheduleWallets } from "./cycles.js";

type Schemas = components["schemas"];
/** Schema `CreditProduct`: a product as the API returns it. */
export type CreditProductView = Schemas["CreditProduct"];
/** Schema `CreateCreditProductRequest`. */
export type CreateCreditProductInput = Schemas["CreateCreditProductRequest"];
/** Schema `UpdateCreditProductSettingsRequest`. */
export type UpdateCreditProductInput = Schemas["UpdateCreditProductSettingsRequest"];
/** Schema `InterestAccrualMethodInput`: either spelling of the accrual method. */
export type AccrualMethodInput = Schemas["InterestAccrualMethodInput"];

/** Percent fields of a product: at most {@link RATE_DECIMALS} decimal places, stored `numeric(9,4)`. */
export const RATE_FIELDS = ["baseInterestRate", "baseMinimumPaymentRate", "capitalInterestSplit", "morosidadRate"] as const;
/** Decimal places a percentage may carry (spec/credit/products.tsp, "Bounds"). */
export const RATE_DECIMALS = 4;

/**
 * The stored (and returned) name of an accrual method: `average_daily_balance` → `ADB`,
 * `balance_at_cut` → `BAC`, the short names unchanged (issue 9: both spellings accepted, the short
 * one returned).
 */
export function normalizeAccrualMethod(method: AccrualMethodInput): "ADB" | "BAC" {
  return method === "ADB" || method === "average_daily_balance" ? "ADB" : "BAC";
}

/**
 * Field problems of the percentages of `body` beyond the schema: more than {@link RATE_DECIMALS}
 * decimal places (read from the JSON source text, so digits a double drops count too).
 * @returns one problem per offending field, named in camelCase; empty when all are fine.
 */
export function rateProblems(body: object): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const field of RATE_FIELDS) {
    if (!(field in body)) continue;
    const value = exactNumber(body, field);
    let decimals: number;
    try {
      decimals = new Decimal(value).decimalPlaces();
    } catch {
      decimals = Infinity;
    }
    if (decimals > RATE_DECIMALS) problems.push({ field, message: `${field} must have at most ${RATE_DECIMALS} decimal places.` });
  }
  return problems;
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

/** A percentage as stored: its exact decimal text (the JSON source when a double lost digits). */
const rateText = (body: object, field: (typeof RATE_FIELDS)[number]): string => new Decimal(exactNumber(body, field)).toFixed();

/** ISO 8601 UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/**
 * One page of a tenant's products in code order (`$1` customer id, `$2` limit, `$3` offset), each
 * row a `CreditProduct` as the API shows it (the columns named as {@link creditProductView} names
 * them) plus the tenant's product count `total`: the List Credit Products read in one statement
 * (issue 10, hot path). Cents and rates come as numbers (`float8`: cents ≤ 1e9 and 4-decimal rates
 * are exact in a double).
 */
const LIST_PRODUCTS: PreparedStatement = {
  name: "credit_products_page",
  text: `select code as "creditProductCode", customer_id as "customerId", revolving, compound, cut_frequency as "cutFrequency",
                fixed_interest_amount::float8 as "fixedInterestAmount", base_interest_rate::float8 as "baseInterestRate",
                base_minimum_payment_rate::float8 as "baseMinimumPaymentRate",
                fixed_minimum_payment_amount::float8 as "fixedMinimumPaymentAmount",
                capital_interest_split::float8 as "capitalInterestSplit", grace_period as "gracePeriod", variable_specs as "variableSpecs",
                morosidad_rate::float8 as "morosidadRate", base_interest_morosidad::float8 as "baseInterestMorosidad",
                interest_accrual_method as "interestAccrualMethod", daily_rate_divisor as "dailyRateDivisor",
                to_char(created_at at time zone 'UTC', ${ISO}) as "createdAt", to_char(updated_at at time zone 'UTC', ${ISO}) as "updatedAt",
                (count(*) over ())::int as total
           from credit_product where customer_id = $1 order by code limit $2 offset $3`,
};

/** The tenant's product count (`$1` customer id), for a page past the end. */
const COUNT_PRODUCTS: PreparedStatement = {
  name: "credit_products_count",
  text: `select count(*)::int as total from credit_product where customer_id = $1`,
};

/** Credit products of the tenants. */
export class CreditProductService {
  /** @param statements prepared statements of the hot reads ({@link list}). */
  constructor(private readonly statements: Statements) {}

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
    const problems = rateProblems(body);
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
      baseInterestRate: rateText(body, "baseInterestRate"),
      baseMinimumPaymentRate: rateText(body, "baseMinimumPaymentRate"),
      fixedMinimumPaymentAmount: body.fixedMinimumPaymentAmount,
      capitalInterestSplit: rateText(body, "capitalInterestSplit"),
      gracePeriod: body.gracePeriod,
      variableSpecs: body.variableSpecs,
      morosidadRate: rateText(body, "morosidadRate"),
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
   * cut (spec/credit/products.tsp, issue 9): this stores the product's settings; the cycle engine
   * reads them at each cut.
   * @returns the whole product after the change (`CreditProduct`).
   * @throws ValidationFailed (422) on `customerId` (unknown or deleted customer) and on each
   *   percentage with more than 4 decimal places; DomainError NOT_FOUND (404) when the tenant has
   *   no product with that code.
   */
  async update(em: EntityManager, code: string, body: UpdateCreditProductInput): Promise<CreditProductView> {
    const problems = rateProblems(body);
    if (!(await this.isActiveCustomer(em, body.customerId))) {
      problems.unshift({ field: "customerId", message: `Customer ${quote(body.customerId)} does not exist or is deleted.` });
    }
    if (problems.length > 0) throw new ValidationFailed(problems);
    return em.transactional(async (tx) => {
      const row = await tx.findOne(CreditProduct, { customerId: body.customerId, code }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!row) throw this.notFound(code);
      const { customerId: _tenant, interestAccrualMethod, ...rest } = body;
      const changes: Partial<CreditProduct> = {};
      for (const [key, value] of Object.entries(rest) as [string, unknown][]) {
        if (value === undefined) continue;
        (changes as Record<string, unknown>)[key] = (RATE_FIELDS as readonly string[]).includes(key) ? rateText(body, key as (typeof RATE_FIELDS)[number]) : value;
      }
      if (interestAccrualMethod !== undefined) changes.interestAccrualMethod = normalizeAccrualMethod(interestAccrualMethod);
      if (Object.keys(changes).length > 0) {
        tx.assign(row, { ...changes, updatedAt: new Date() });
        await tx.flush();
        // the wallets' stored next cut follows the new schedule from their next cut (cycles.ts)
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
    const rows = await this.statements.rows<CreditProductView & { total: number }>(LIST_PRODUCTS, [customerId, page.limit, page.skip]);
    // A page past the end has no row to carry the total: count apart (rare).
    const total = rows[0]?.total ?? (page.skip > 0 ? (await this.statements.rows<{ total: number }>(COUNT_PRODUCTS, [customerId]))[0]?.total ?? 0 : 0);
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
