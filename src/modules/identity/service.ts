/**
 * Use cases of the identity slice: sessions, customers and credentials
 * (reference: "Customer management"; docs/decisions/credentials-and-tokens.md,
 * docs/decisions/provider-and-sandbox.md "Customer registry"). One transaction per change.
 */
import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError, FailedGuess, assertNoProblems, quote, type FieldProblem } from "../../domain/errors.js";
import { parseMobileNumber } from "../../domain/users.js";
import { unsafeNameProblems } from "../../domain/text.js";
import type { CustodyProvider } from "../../providers/provider.js";
import type { PageRequest } from "../../domain/paging.js";
import type { components } from "../../../generated/types/platform.js";
import { Credential, Customer } from "./entities.js";
import type { Authenticator, Principal } from "./auth.js";
import { generateApiSecret, maskSecret, type SecretBox } from "./secrets.js";
import { insertOwnerCredential, revokeCredential, softDeleteCustomer } from "./repository.js";
import { announceRevocation } from "./credential-cache.js";
import type { Db } from "../../db/sql.js";
import { isUuid } from "../../domain/ids.js";

type Schemas = components["schemas"];
/** Customer as the API shows it (reference: "Customer"; schema `Customer`). */
export type CustomerView = Schemas["Customer"];
/** Credential as List Credentials shows it, secret masked (schema `Credential`). */
export type CredentialView = Schemas["Credential"];
/** A session token as Create Session answers it (docs/decisions/credentials-and-tokens.md "The four credentials"; schema `Session`). */
export type SessionView = Schemas["Session"];

/** Body of Update Customer: any subset; `business` merges field by field. */
export type CustomerUpdate = Schemas["UpdateCustomerRequest"];

/** Renders a customer. */
export function customerView(c: Customer): CustomerView {
  return {
    customer_id: c.customerId,
    email: c.email,
    account_type: c.accountType,
    account_role: c.accountRole,
    account_purpose: c.accountPurpose,
    first_name: c.firstName,
    last_name: c.lastName,
    phone_country_code: c.phoneCountryCode,
    phone_number: c.phoneNumber,
    business: c.business,
    status: c.status,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}

/** Renders a credential with its secret masked. */
export function credentialView(c: Credential): CredentialView {
  return {
    credential_id: c.credentialId,
    customer_id: c.customerId,
    customer_secret: c.secretPrefix,
    is_owner: c.isOwner,
    user_email: c.userEmail,
    user_name: c.userName,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
    is_active: c.isActive,
  };
}

/**
 * Sessions, customers and credentials. The plain CRUD of customers and credentials runs in the
 * EntityManager of each call; the insert of a credential, which carries a secret's hash, is a
 * statement of ./repository.ts run on `statements` (the pool).
 */
export class IdentityService {
  constructor(
    private readonly box: SecretBox,
    private readonly authenticator: Authenticator,
    private readonly provider: CustodyProvider,
    private readonly sessionTtlS: number,
    private readonly statements: Db,
  ) {}

  /**
   * Opens a session (docs/decisions/credentials-and-tokens.md "The four credentials"). `caller` is the already-resolved principal when the request
   * carried a credential header. Master key → operator session; `{customer_id, customer_secret}` →
   * customer session.
   * @throws DomainError UNAUTHORIZED (no or bad credentials), FORBIDDEN (a valid credential that cannot open sessions).
   */
  async createSession(
    em: EntityManager,
    caller: Principal | null,
    body: { customer_id?: string; customer_secret?: string } | undefined,
  ): Promise<SessionView> {
    if (caller?.kind === "master") {
      const { token, expiresAt } = await this.box.issueToken(
        { kind: "session", scope: "operator", customerId: null, credentialId: null, masterFingerprint: this.authenticator.masterFingerprint },
        this.sessionTtlS,
      );
      return { token, token_type: "Bearer", expires_at: expiresAt.toISOString(), scope: "operator", customer_id: null };
    }
    if (body?.customer_id !== undefined || body?.customer_secret !== undefined) {
      if (!body.customer_id || !body.customer_secret) {
        throw new DomainError("UNAUTHORIZED", "Send both customer_id and customer_secret.");
      }
      const found = await this.authenticator.activeCredential(body.customer_secret);
      if ("reason" in found || found.credential.customerId !== body.customer_id) {
        throw new FailedGuess("Invalid customer credentials.");
      }
      const { token, expiresAt } = await this.box.issueToken(
        { kind: "session", scope: "customer", customerId: body.customer_id, credentialId: found.credential.credentialId, masterFingerprint: null },
        this.sessionTtlS,
      );
      return { token, token_type: "Bearer", expires_at: expiresAt.toISOString(), scope: "customer", customer_id: body.customer_id };
    }
    if (caller) throw new DomainError("FORBIDDEN", "Only the master key or customer credentials can open a session.");
    throw new DomainError("UNAUTHORIZED", "Send the master key (x-master-api-key) or {customer_id, customer_secret}.");
  }

  /**
   * Creates a customer after validating `customer_id` upstream; the profile is filled from the
   * upstream record, `email` and `entity_name` from the request.
   * @throws ValidationFailed (422) for an `entity_name` holding a zero-width or bidirectional-control
   *   character or a word mixing Latin, Cyrillic or Greek letters (src/domain/text.ts); DomainError CUSTOMER_NOT_FOUND (404, unknown upstream), CUSTOMER_ALREADY_EXISTS (409).
   */
  async createCustomer(em: EntityManager, body: { customer_id: string; email: string; entity_name: string }): Promise<CustomerView> {
    assertNoProblems(unsafeNameProblems({ entity_name: body.entity_name }));
    const upstream = await this.provider.lookupCustomer(body.customer_id);
    if (!upstream) throw new DomainError("CUSTOMER_NOT_FOUND", `customer_id ${quote(body.customer_id)} is not known to the custody provider.`);
    if (await em.findOne(Customer, { customerId: body.customer_id })) {
      throw new DomainError("CUSTOMER_ALREADY_EXISTS", `Customer ${quote(body.customer_id)} already exists.`);
    }
    const customer = em.create(Customer, {
      customerId: body.customer_id,
      email: body.email,
      accountType: upstream.accountType,
      accountRole: upstream.accountRole,
      accountPurpose: upstream.accountPurpose,
      firstName: upstream.firstName,
      lastName: upstream.lastName,
      phoneCountryCode: upstream.phoneCountryCode,
      phoneNumber: upstream.phoneNumber,
      business: { ...upstream.business, entity_name: body.entity_name },
      status: "VERIFIED",
      isActive: true,
      deletedAt: null,
    });
    try {
      await em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) {
        throw new DomainError("CUSTOMER_ALREADY_EXISTS", `Customer ${quote(body.customer_id)} already exists.`);
      }
      throw error;
    }
    return customerView(customer);
  }

  /** Active customers, newest first. */
  async listCustomers(em: EntityManager, page: PageRequest): Promise<{ items: CustomerView[]; total: number }> {
    const [rows, total] = await em.findAndCount(
      Customer,
      { isActive: true },
      { orderBy: { createdAt: "desc", customerId: "asc" }, limit: page.limit, offset: page.skip },
    );
    return { items: rows.map(customerView), total };
  }

  /** The customer as the API shows it. @throws DomainError CUSTOMER_NOT_FOUND when absent or deleted. */
  async getCustomerView(em: EntityManager, customerId: string): Promise<CustomerView> {
    return customerView(await this.getActiveCustomer(em, customerId));
  }

  /** @throws DomainError CUSTOMER_NOT_FOUND when absent or deleted. */
  async getActiveCustomer(em: EntityManager, customerId: string): Promise<Customer> {
    const customer = await em.findOne(Customer, { customerId });
    if (!customer || !customer.isActive) throw new DomainError("CUSTOMER_NOT_FOUND", `Customer ${quote(customerId)} not found.`);
    return customer;
  }

  /**
   * Partial update; omitted fields keep their values, `business` merges field by field.
   * `account_type` and `account_role` are enums of the schema (422 on other values). The phone
   * follows the user's rule (src/domain/users.ts `parseMobileNumber`): when `phone_number` or
   * `phone_country_code` is sent, the pair (the stored value standing in for the one not sent)
   * must be a mobile number of that country. Names refuse zero-width and bidirectional-control
   * characters and words mixing Latin, Cyrillic or Greek letters (src/domain/text.ts).
   * @throws DomainError CUSTOMER_NOT_FOUND; ValidationFailed (422) naming each invalid field (the
   *   phone on `phone_number`, as for users, also when only the country was sent).
   */
  async updateCustomer(em: EntityManager, customerId: string, body: CustomerUpdate): Promise<CustomerView> {
    const customer = await this.getActiveCustomer(em, customerId);
    const problems: FieldProblem[] = unsafeNameProblems({
      first_name: body.first_name,
      last_name: body.last_name,
      "business.entity_name": body.business?.entity_name,
    });
    if (body.phone_number !== undefined || body.phone_country_code !== undefined) {
      const phone = parseMobileNumber(body.phone_number ?? customer.phoneNumber, body.phone_country_code ?? customer.phoneCountryCode);
      if ("problem" in phone) problems.push(phone.problem);
    }
    assertNoProblems(problems);
    em.assign(customer, {
      ...(body.account_type !== undefined && { accountType: body.account_type }),
      ...(body.account_role !== undefined && { accountRole: body.account_role }),
      ...(body.account_purpose !== undefined && { accountPurpose: body.account_purpose }),
      ...(body.first_name !== undefined && { firstName: body.first_name }),
      ...(body.last_name !== undefined && { lastName: body.last_name }),
      ...(body.email !== undefined && { email: body.email }),
      ...(body.phone_country_code !== undefined && { phoneCountryCode: body.phone_country_code }),
      ...(body.phone_number !== undefined && { phoneNumber: body.phone_number }),
      ...(body.business !== undefined && { business: { ...customer.business, ...body.business } }),
    });
    await em.flush();
    return customerView(customer);
  }

  /**
   * Soft-deletes a customer and revokes every credential of it in one transaction, which also
   * announces the revocation to every process's credential cache (its NOTIFY; this process's
   * cache is dropped before the call returns: docs/decisions/credentials-and-tokens.md "The
   * credential cache"). `em` is unused: the change runs on `statements`.
   * @throws DomainError CUSTOMER_NOT_FOUND (unknown or already deleted).
   */
  async deleteCustomer(em: EntityManager, customerId: string): Promise<void> {
    const deleted = await this.statements.transaction(async (tx) => {
      if (!(await softDeleteCustomer(tx, customerId))) return false;
      await announceRevocation(tx, this.authenticator, { customer: customerId });
      return true;
    });
    if (!deleted) throw new DomainError("CUSTOMER_NOT_FOUND", `Customer ${quote(customerId)} not found.`);
  }

  /**
   * Generates an owner credential; the clear secret is returned only here.
   * @throws DomainError CUSTOMER_NOT_FOUND.
   */
  async generateCredentials(em: EntityManager, customerId: string): Promise<{ customer_id: string; customer_secret: string; credential_id: string }> {
    const customer = await this.getActiveCustomer(em, customerId);
    const secret = generateApiSecret();
    const credentialId = randomUUID();
    // A statement with bound parameters: the secret's hash never appears in SQL text (MikroORM inlines values).
    await insertOwnerCredential(this.statements, {
      credentialId,
      customerId,
      secretHash: this.box.hash(secret),
      secretPrefix: maskSecret(secret),
      userEmail: customer.email,
      userName: `${customer.firstName} ${customer.lastName}`.trim(),
    });
    return { customer_id: customerId, customer_secret: secret, credential_id: credentialId };
  }

  /** Every credential of the customer (active or revoked), newest first, secrets masked. */
  async listCredentials(em: EntityManager, customerId: string): Promise<CredentialView[]> {
    await this.getActiveCustomer(em, customerId);
    const rows = await em.find(Credential, { customerId }, { orderBy: { createdAt: "desc", credentialId: "asc" } });
    return rows.map(credentialView);
  }

  /**
   * Revokes a credential at once, on every process (its transaction announces the revocation:
   * docs/decisions/credentials-and-tokens.md "The credential cache"); other credentials are
   * unaffected. Revoking twice is a no-op.
   * @throws DomainError CUSTOMER_NOT_FOUND, CREDENTIAL_NOT_FOUND.
   */
  async revokeCredential(em: EntityManager, customerId: string, credentialId: string): Promise<void> {
    await this.getActiveCustomer(em, customerId);
    const credential = isUuid(credentialId) ? await em.findOne(Credential, { credentialId, customerId }) : null;
    if (!credential) throw new DomainError("CREDENTIAL_NOT_FOUND", `Credential ${quote(credentialId)} not found.`);
    if (credential.isActive) {
      // the revocation and its announcement in one transaction (docs/decisions/credentials-and-tokens.md "The credential cache")
      await this.statements.transaction(async (tx) => {
        if (await revokeCredential(tx, credentialId, customerId)) await announceRevocation(tx, this.authenticator, { credential: credentialId });
      });
    }
  }
}
