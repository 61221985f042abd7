/**
 * Use cases of end users (reference: "Users", "User", "States and transitions › User"). A caller
 * sees only the users of its own customer: another customer's user id answers 404.
 */
import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException, type FilterQuery } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError, assertNoProblems, clip, quote, type FieldProblem } from "../../domain/errors.js";
import {
  INITIAL_USER_STATE,
  USER_ACCOUNT_TYPES,
  activate,
  assertAdult,
  assertDeletable,
  assertUserEnums,
  deactivate,
  parseMobileNumber,
  sanitisationProblem,
  type LifecycleState,
} from "../../domain/users.js";
import type { PageRequest } from "../../domain/paging.js";
import type { SecretBox } from "../identity/secrets.js";
import type { components } from "../../../generated/types/platform.js";
import { User, type UserStatus, type VerificationStatus } from "./entities.js";
import { isUuidV4 } from "../../domain/ids.js";
import { deactivateUser, userDeleted, userNotFound } from "./repository.js";
import type { Db } from "../../db/sql.js";
import { announceRevocation, type LocalRevocations } from "../identity/credential-cache.js";
import { unsafeNameProblem } from "../../domain/text.js";

/** User as the API shows it (reference: "User"; schema `User`). */
export type UserView = components["schemas"]["User"];

/** Body of Create User (schema `CreateUserRequest`). */
export type CreateUserInput = components["schemas"]["CreateUserRequest"];

/** The flat `individual` fields Update User accepts. */
const INDIVIDUAL_FIELDS = [
  "dob", "residential_country_code", "residential_address", "residential_city", "residential_state",
  "residential_postal_code", "id_type", "id_number", "id_country_code",
] as const;

/** Body of Update User: any subset of its fields (reference: Users › PUT; schema `UpdateUserRequest`). */
export type UpdateUserInput = components["schemas"]["UpdateUserRequest"];

/** Fields Update User accepts (reference: Users › PUT); any other field answers 422. */
export const UPDATABLE_USER_FIELDS: ReadonlySet<string> = new Set([
  "first_name", "last_name", "email", "phone_country_code", "phone_number", "account_purpose", ...INDIVIDUAL_FIELDS,
]);

/** Filters of List Users. */
export interface UserListFilter {
  status?: UserStatus;
  user_type?: string;
  verification_status?: VerificationStatus;
  is_active?: boolean;
  search?: string;
}


/** Renders a user. */
export function userView(u: User): UserView {
  return {
    user_id: u.userId,
    customer_id: u.customerId,
    account_type: u.accountType,
    account_role: u.accountRole,
    account_purpose: u.accountPurpose,
    first_name: u.firstName,
    last_name: u.lastName,
    email: u.email,
    phone_country_code: u.phoneCountryCode,
    phone_number: u.phoneNumber,
    status: u.status,
    verification_status: u.verificationStatus,
    is_active: u.isActive,
    individual: u.individual,
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  };
}

/**
 * Sanitisation problems of the free-text fields present in `input` (reference: User); names also
 * refuse zero-width and bidirectional-control characters and words mixing Latin, Cyrillic or Greek
 * letters (src/domain/text.ts; docs/security.md "Names people compare").
 */
function textProblems(input: Partial<Record<string, unknown>>, prefix: string): FieldProblem[] {
  const checks: [string, "name" | "place" | "address"][] = [
    ["first_name", "name"], ["last_name", "name"], ["residential_city", "place"], ["residential_state", "place"],
    ["residential_address", "address"],
  ];
  const problems: FieldProblem[] = [];
  for (const [field, kind] of checks) {
    const value = input[field];
    if (typeof value !== "string") continue;
    const path = field.startsWith("residential_") ? `${prefix}${field}` : field;
    // zero-width and bidirectional controls and mixed scripts first (src/domain/text.ts): the same rule as every name
    const problem = (kind === "name" ? unsafeNameProblem(path, value) : null) ?? sanitisationProblem(path, value, kind);
    if (problem) problems.push(problem);
  }
  return problems;
}

const lifecycleOf = (u: User): LifecycleState => ({ status: u.status, isActive: u.isActive, verificationStatus: u.verificationStatus });

/** End users of customers. `today` is injectable for the age rule (UTC). */
export class UserService {
  constructor(
    private readonly box: SecretBox,
    private readonly userTokenTtlS: number,
    /** Where Deactivate User's transaction runs. */
    private readonly statements: Db,
    /** This process's credential cache, dropped at once on a deactivation (src/modules/identity/auth.ts `Authenticator`). */
    private readonly revocations: LocalRevocations,
    private readonly today: () => Date = () => new Date(),
  ) {}

  /**
   * Creates a PENDING user under `customerId`.
   * @throws DomainError INVALID_ACCOUNT_TYPE / INVALID_ACCOUNT_ROLE / INVALID_ACCOUNT_PURPOSE / INVALID_AGE (400),
   *   RESOURCE_CONFLICT (409, user_id taken), EMAIL_ALREADY_EXISTS / PHONE_ALREADY_EXISTS (409);
   *   ValidationFailed (422) for script-like text, a non-mobile phone or a user_id that is not UUID v4.
   */
  async create(em: EntityManager, customerId: string, input: CreateUserInput): Promise<UserView> {
    assertUserEnums(input);
    const problems = textProblems({ ...input, ...input.individual }, "individual.");
    if (input.user_id !== undefined && !isUuidV4(input.user_id)) {
      problems.push({ field: "user_id", message: "user_id must be a UUID v4." });
    }
    const phone = parseMobileNumber(input.phone_number, input.phone_country_code);
    if ("problem" in phone) problems.push(phone.problem);
    assertNoProblems(problems);
    assertAdult(input.individual.dob, this.today());
    const e164 = (phone as { e164: string }).e164;
    const userId = input.user_id?.toLowerCase() ?? randomUUID();
    // Taken by this customer or by another: one answer, so the id tells nothing of other customers.
    if (await em.findOne(User, { userId })) throw userIdTaken();
    await this.assertUnique(em, customerId, { email: input.email, phoneE164: e164 });
    const user = em.create(User, {
      userId,
      customerId,
      accountType: input.account_type,
      accountRole: input.account_role,
      accountPurpose: input.account_purpose,
      firstName: input.first_name,
      lastName: input.last_name,
      email: input.email,
      emailNormalized: input.email.toLowerCase(),
      phoneCountryCode: input.phone_country_code,
      phoneNumber: input.phone_number,
      phoneE164: e164,
      ...INITIAL_USER_STATE,
      individual: { ...input.individual },
      deletedAt: null,
      tokensRevokedAt: null,
      tokenVersion: 0,
    });
    await this.flushUnique(em);
    return userView(user);
  }

  /**
   * Users of `customerId` that are not deleted, newest first, filtered.
   * @throws DomainError INVALID_USER_TYPE (400) for a `user_type` other than individual/business.
   */
  async list(em: EntityManager, customerId: string, page: PageRequest, filter: UserListFilter): Promise<{ items: UserView[]; total: number }> {
    if (filter.user_type !== undefined && !(USER_ACCOUNT_TYPES as readonly string[]).includes(filter.user_type)) {
      throw new DomainError("INVALID_USER_TYPE", `user_type must be one of: ${USER_ACCOUNT_TYPES.join(", ")}.`, "user_type");
    }
    const where: FilterQuery<User> = { customerId, deletedAt: null };
    if (filter.status) where.status = filter.status;
    if (filter.user_type) where.accountType = filter.user_type;
    if (filter.verification_status) where.verificationStatus = filter.verification_status;
    if (filter.is_active !== undefined) where.isActive = filter.is_active;
    if (filter.search) {
      const pattern = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.$or = [{ firstName: { $ilike: pattern } }, { lastName: { $ilike: pattern } }, { email: { $ilike: pattern } }];
    }
    const [rows, total] = await em.findAndCount(User, where, {
      orderBy: { createdAt: "desc", userId: "asc" },
      limit: page.limit,
      offset: page.skip,
    });
    return { items: rows.map(userView), total };
  }

  /**
   * The user `userId` of `customerId`, deleted or not.
   * @throws DomainError USER_NOT_FOUND (404) when absent or another customer's.
   */
  async find(em: EntityManager, customerId: string, userId: string): Promise<User> {
    const user = isUuidV4(userId) ? await em.findOne(User, { userId: userId.toLowerCase(), customerId }) : null;
    if (!user) throw userNotFound(userId);
    return user;
  }

  /** @throws DomainError USER_NOT_FOUND, RESOURCE_NOT_FOUND (404, user deleted). */
  async findLive(em: EntityManager, customerId: string, userId: string): Promise<User> {
    const user = await this.find(em, customerId, userId);
    if (user.deletedAt) throw userDeleted(userId);
    return user;
  }

  /** Reads a live user. @throws as {@link findLive}. */
  async get(em: EntityManager, customerId: string, userId: string): Promise<UserView> {
    return userView(await this.findLive(em, customerId, userId));
  }

  /**
   * Partial update; omitted fields keep their values. Same rules as create for what is sent.
   * @throws DomainError USER_NOT_FOUND, CANNOT_UPDATE_DELETED_USER (400), INVALID_ACCOUNT_PURPOSE, INVALID_AGE,
   *   EMAIL_ALREADY_EXISTS / PHONE_ALREADY_EXISTS (409); ValidationFailed (422) for fields Update User
   *   does not accept (status, is_active, account_type, a nested `individual`…), script-like text or an
   *   invalid phone.
   */
  async update(em: EntityManager, customerId: string, userId: string, input: UpdateUserInput & Record<string, unknown>): Promise<UserView> {
    const user = await this.find(em, customerId, userId);
    if (user.deletedAt) throw new DomainError("CANNOT_UPDATE_DELETED_USER", "A deleted user cannot be updated.");
    const problems: FieldProblem[] = Object.keys(input)
      .filter((field) => !UPDATABLE_USER_FIELDS.has(field))
      .map((field) => ({ field: clip(field), message: `${quote(field)} cannot be changed by Update User.` }));
    assertUserEnums({ account_purpose: input.account_purpose });
    problems.push(...textProblems(input, ""));
    const phoneChanged = input.phone_number !== undefined || input.phone_country_code !== undefined;
    let e164 = user.phoneE164;
    if (phoneChanged) {
      const phone = parseMobileNumber(input.phone_number ?? user.phoneNumber, input.phone_country_code ?? user.phoneCountryCode);
      if ("problem" in phone) problems.push(phone.problem);
      else e164 = phone.e164;
    }
    assertNoProblems(problems);
    if (input.dob !== undefined) assertAdult(input.dob, this.today(), "dob");
    const emailChanged = input.email !== undefined && input.email.toLowerCase() !== user.emailNormalized;
    await this.assertUnique(em, customerId, {
      ...(emailChanged && { email: input.email }),
      ...(e164 !== user.phoneE164 && { phoneE164: e164 }),
    });
    const individual = { ...user.individual };
    for (const field of INDIVIDUAL_FIELDS) {
      const value = input[field];
      if (value !== undefined) (individual as Record<string, unknown>)[field] = value;
    }
    em.assign(user, {
      ...(input.first_name !== undefined && { firstName: input.first_name }),
      ...(input.last_name !== undefined && { lastName: input.last_name }),
      ...(input.email !== undefined && { email: input.email, emailNormalized: input.email.toLowerCase() }),
      ...(input.phone_country_code !== undefined && { phoneCountryCode: input.phone_country_code }),
      ...(input.phone_number !== undefined && { phoneNumber: input.phone_number }),
      ...(input.account_purpose !== undefined && { accountPurpose: input.account_purpose }),
      phoneE164: e164,
      individual,
    });
    await this.flushUnique(em);
    return userView(user);
  }

  /** Soft-deletes; the record, wallets and history stay. @throws USER_NOT_FOUND, RESOURCE_NOT_FOUND, CANNOT_DELETE_ACTIVE_USER. */
  async delete(em: EntityManager, customerId: string, userId: string): Promise<void> {
    const user = await this.findLive(em, customerId, userId);
    assertDeletable(lifecycleOf(user));
    user.deletedAt = new Date();
    await em.flush();
  }

  /** Activate User (idempotent for VERIFIED). @throws USER_NOT_FOUND, RESOURCE_NOT_FOUND. */
  async activate(em: EntityManager, customerId: string, userId: string): Promise<{ message: string }> {
    const user = await this.findLive(em, customerId, userId);
    const wasVerified = user.status === "VERIFIED";
    em.assign(user, activate(lifecycleOf(user)));
    await em.flush();
    return { message: wasVerified ? "User is already active." : "User activated." };
  }

  /**
   * Deactivate User: tokens stop working at once and for good, on every process (the transaction
   * announces it to every credential cache: docs/decisions/credentials-and-tokens.md "The
   * credential cache"). The user's `tokenVersion` goes up
   * by one, so every token issued before (carrying the old version) is refused, whatever its issue
   * second, while tokens issued after a re-activation carry the new one (docs/security.md "Tokens
   * and rate-limit headers").
   * @throws USER_NOT_FOUND, RESOURCE_NOT_FOUND, BAD_REQUEST (PENDING).
   */
  async deactivate(em: EntityManager, customerId: string, userId: string): Promise<{ message: string }> {
    const user = await this.findLive(em, customerId, userId);
    if (user.status === "SUSPENDED") return { message: "User is already inactive." };
    const next = deactivate(lifecycleOf(user));
    // the deactivation and its announcement in one transaction (docs/decisions/credentials-and-tokens.md "The credential cache")
    await this.statements.transaction(async (tx) => {
      if (await deactivateUser(tx, customerId, userId, next)) await announceRevocation(tx, this.revocations, { user: userId });
    });
    return { message: "User deactivated." };
  }

  /**
   * Issues a user token (docs/decisions/credentials-and-tokens.md "The four credentials") for a VERIFIED user, lifetime `USER_TOKEN_TTL_S`.
   * @throws DomainError USER_NOT_FOUND, RESOURCE_NOT_FOUND (deleted or not VERIFIED), TOKEN_GENERATION_FAILED (500).
   */
  async issueToken(em: EntityManager, customerId: string, credentialId: string, userId: string) {
    const user = await this.findLive(em, customerId, userId);
    if (user.status !== "VERIFIED" || !user.isActive) {
      throw new DomainError("RESOURCE_NOT_FOUND", `User ${quote(userId)} is not active; activate the user first.`);
    }
    try {
      const { token, expiresAt } = await this.box.issueToken(
        { kind: "user", userId: user.userId, customerId, credentialId, tokenVersion: user.tokenVersion },
        this.userTokenTtlS,
      );
      return { token, token_type: "Bearer" as const, expires_at: expiresAt.toISOString(), user_id: user.userId };
    } catch (error) {
      throw new DomainError("TOKEN_GENERATION_FAILED", `The user token could not be generated: ${(error as Error).message}`);
    }
  }

  /** @throws DomainError EMAIL_ALREADY_EXISTS / PHONE_ALREADY_EXISTS (409) against live users of the customer. */
  private async assertUnique(em: EntityManager, customerId: string, values: { email?: string | undefined; phoneE164?: string }): Promise<void> {
    if (values.email !== undefined && (await em.count(User, { customerId, emailNormalized: values.email.toLowerCase(), deletedAt: null })) > 0) {
      throw new DomainError("EMAIL_ALREADY_EXISTS", "A user with this email already exists.", "email");
    }
    if (values.phoneE164 !== undefined && (await em.count(User, { customerId, phoneE164: values.phoneE164, deletedAt: null })) > 0) {
      throw new DomainError("PHONE_ALREADY_EXISTS", "A user with this phone number already exists.", "phone_number");
    }
  }

  /** Flushes, turning a lost uniqueness race into the same 409 the pre-check gives. */
  private async flushUnique(em: EntityManager): Promise<void> {
    try {
      await em.flush();
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      em.clear();
      // The driver copies PostgreSQL's error fields onto the exception, including the constraint's name.
      const constraint = (error as { constraint?: string }).constraint;
      if (constraint === "app_user_email_per_customer_unique") throw new DomainError("EMAIL_ALREADY_EXISTS", "A user with this email already exists.", "email");
      if (constraint === "app_user_phone_per_customer_unique") throw new DomainError("PHONE_ALREADY_EXISTS", "A user with this phone number already exists.", "phone_number");
      throw userIdTaken();
    }
  }
}

/** 409 `RESOURCE_CONFLICT` on `user_id`: one answer whoever holds the id and however the clash is found (docs/decisions/customers-users-and-wallets.md "Users"). */
function userIdTaken(): DomainError {
  return new DomainError("RESOURCE_CONFLICT", "This user_id already exists.", "user_id");
}
