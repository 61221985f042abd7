/**
 * Users' bank accounts (docs/decisions/fiat.md "Bank accounts"): Add, List and Delete Bank
 * Account, and {@link BankAccountService.usableBankAccount}, the check a fiat withdrawal makes of
 * the account it names. The numbers are sealed at rest under the secrets key and bound to the
 * row; answers carry only the mask; a keyed fingerprint of the account, unique per user among the
 * accounts not deleted, refuses the same account twice even under concurrent adds.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { randomUUID } from "node:crypto";
import { accountIdentity, accountMask, assertBankAccount, type BankAccountNumbers } from "../../domain/bank-accounts.js";
import { assertNoProblems, DomainError, quote } from "../../domain/errors.js";
import { isUuid } from "../../domain/ids.js";
import type { PageRequest } from "../../domain/paging.js";
import { unsafeNameProblems } from "../../domain/text.js";
import type { Db, Sql } from "../../db/sql.js";
import type { SecretBox } from "../identity/secrets.js";
import type { UserService } from "../users/service.js";
import type { BankAccount } from "./entities.js";
import { bankAccountPage, insertBankAccount, softDeleteBankAccount, usableBankAccountRow } from "./repository.js";
import { bankAccountView, type AddBankAccountInput, type BankAccountView } from "./views.js";

export type { AddBankAccountInput, BankAccountView } from "./views.js";

/**
 * A bank account a fiat withdrawal may pay out to, its numbers opened: for `eur` the normalised
 * IBAN and the BIC (or null), for `usd` the routing and account numbers (src/domain/bank-accounts.ts
 * `BankAccountNumbers`), with the holder's name and label as stored.
 */
export type UsableBankAccount = BankAccountNumbers & {
  bankAccountId: string;
  customerId: string;
  userId: string;
  holderName: string;
  label: string | null;
  /** `****` and the last four characters of the IBAN or account number. */
  accountMask: string;
  /** When it was added (UTC). */
  createdAt: Date;
};

/** What a fiat withdrawal asks of {@link BankAccountService.usableBankAccount}. */
export interface UsableBankAccountRequest {
  /** The caller's customer. */
  customerId: string;
  /** The user, lower case, already found in good standing by the caller. */
  userId: string;
  /** `bank_account_id` as sent: undefined, null or empty when none was given. */
  bankAccountId: string | null | undefined;
  /** The withdrawal's currency, lower case (`usd` or `eur`). */
  currency: string;
}

/** The context a sealed account's numbers are bound to: the row's id, so numbers copied to another row do not open. */
const sealContext = (id: string): string => `bank-account:${id}`;

/** Users' bank accounts. */
export class BankAccountService {
  constructor(
    /** Where the accounts are written and read (src/db/sql.ts). */
    private readonly db: Db,
    /** The service's secrets (src/modules/identity/secrets.ts): sealing the numbers, the keyed fingerprint. */
    private readonly box: Pick<SecretBox, "seal" | "open" | "hash">,
    private readonly users: Pick<UserService, "find" | "findLive">,
  ) {}

  /**
   * Add Bank Account: checks the account (src/domain/bank-accounts.ts `assertBankAccount`), then
   * inserts it with its numbers sealed, its mask and its fingerprint. The same IBAN, or the same
   * routing and account number, twice for a user among accounts not deleted is refused by a
   * partial unique index, so of concurrent adds one succeeds.
   * @throws DomainError USER_NOT_FOUND (404), RESOURCE_NOT_FOUND (404, a deleted user);
   *   INVALID_BANK_ACCOUNT (400, the field named in `field`); RESOURCE_CONFLICT (409, a duplicate).
   * @throws ValidationFailed (422) for a label with invisible characters or mixed scripts
   *   (docs/security.md "Names people compare").
   */
  async add(em: EntityManager, customerId: string, userId: string, input: AddBankAccountInput): Promise<BankAccountView> {
    const user = await this.users.findLive(em, customerId, userId);
    const { holderName, numbers } = assertBankAccount(input);
    assertNoProblems(unsafeNameProblems({ label: input.label }));
    const id = randomUUID();
    const account: BankAccount = {
      id,
      customerId,
      userId: user.userId,
      currency: numbers.currency,
      holderName,
      label: input.label ?? null,
      accountMask: accountMask(numbers),
      numbersSealed: this.box.seal(JSON.stringify(numbers), sealContext(id)),
      fingerprint: this.fingerprint(user.userId, numbers),
      createdAt: new Date(),
      deletedAt: null,
    };
    if (!(await insertBankAccount(this.db, account))) {
      const what = numbers.currency === "eur" ? "IBAN" : "routing and account number";
      throw new DomainError("RESOURCE_CONFLICT", `The user already has a bank account with this ${what} (${account.accountMask}).`, numbers.currency === "eur" ? "iban" : "account_number");
    }
    return bankAccountView(account);
  }

  /** List Bank Accounts: the user's accounts not deleted, newest first, one page. @throws DomainError USER_NOT_FOUND (404). */
  async list(em: EntityManager, customerId: string, userId: string, page: PageRequest): Promise<{ items: BankAccountView[]; total: number }> {
    const user = await this.users.find(em, customerId, userId);
    const { rows, total } = await bankAccountPage(this.db, customerId, user.userId, page);
    return { items: rows.map(bankAccountView), total };
  }

  /**
   * Delete Bank Account: marks account `bankAccountId` of the user deleted (it stays for the fiat
   * withdrawals that name it, and the same account may be added again).
   * @throws DomainError USER_NOT_FOUND (404); RESOURCE_NOT_FOUND (404: not a UUID, not the user's, or already deleted).
   */
  async delete(em: EntityManager, customerId: string, userId: string, bankAccountId: string): Promise<void> {
    const user = await this.users.find(em, customerId, userId);
    const deleted = isUuid(bankAccountId) && (await softDeleteBankAccount(this.db, customerId, user.userId, bankAccountId.toLowerCase(), new Date()));
    if (!deleted) throw new DomainError("RESOURCE_NOT_FOUND", `Bank account ${quote(bankAccountId)} not found.`);
  }

  /**
   * The bank account a fiat withdrawal names, checked and with its numbers opened, read on `sql`
   * (the pool, or the withdrawal's transaction). Checks, in order:
   * no `bankAccountId` given, or the user has no account not deleted → BANK_ACCOUNT_REQUIRED;
   * an id that is not one of the user's accounts (a malformed id included), a deleted account, or
   * an account in another currency than `currency` → INVALID_BANK_ACCOUNT (field `bank_account_id`).
   * The user itself is the caller's to check first. The row is not locked: a withdrawal that needs
   * the numbers later should keep what this returns.
   * @returns the account and its numbers ({@link UsableBankAccount}).
   * @throws DomainError BANK_ACCOUNT_REQUIRED (400), INVALID_BANK_ACCOUNT (400).
   */
  async usableBankAccount(sql: Sql, request: UsableBankAccountRequest): Promise<UsableBankAccount> {
    const given = request.bankAccountId ?? "";
    if (given === "") throw new DomainError("BANK_ACCOUNT_REQUIRED", "A bank account is required: give bank_account_id, one of the user's bank accounts.", "bank_account_id");
    const id = isUuid(given) ? given.toLowerCase() : null;
    const { hasAny, account } = await usableBankAccountRow(sql, request.customerId, request.userId.toLowerCase(), id);
    if (!hasAny) throw new DomainError("BANK_ACCOUNT_REQUIRED", "The user has no bank account: add one first.", "bank_account_id");
    if (!account) throw new DomainError("INVALID_BANK_ACCOUNT", `Bank account ${quote(given)} is not one of the user's bank accounts.`, "bank_account_id");
    if (account.deletedAt) throw new DomainError("INVALID_BANK_ACCOUNT", `Bank account ${quote(given)} has been deleted.`, "bank_account_id");
    if (account.currency !== request.currency.toLowerCase()) {
      throw new DomainError("INVALID_BANK_ACCOUNT", `Bank account ${quote(given)} is a ${account.currency} account, not ${request.currency.toLowerCase()}.`, "bank_account_id");
    }
    const numbers = this.openNumbers(account.id, account.numbersSealed);
    return {
      ...numbers,
      bankAccountId: account.id,
      customerId: account.customerId,
      userId: account.userId,
      holderName: account.holderName,
      label: account.label ?? null,
      accountMask: account.accountMask,
      createdAt: account.createdAt,
    };
  }

  /**
   * The numbers of account `bankAccountId`, opened from their sealed form as stored
   * (`numbers_sealed`; the payouts module reads it with the withdrawals it pays).
   * @throws Error when the seal does not open (another SECRETS_KEY, or numbers of another row).
   */
  openNumbers(bankAccountId: string, sealed: string): BankAccountNumbers {
    return JSON.parse(this.box.open(sealed, sealContext(bankAccountId))) as BankAccountNumbers;
  }

  /**
   * The keyed fingerprint of an account of a user: HMAC-SHA256 under the secrets key's hashing key
   * (`SecretBox.hash`) of `bank-account/v1:<user>:<identity>` (src/domain/bank-accounts.ts
   * `accountIdentity`), hex. Bound to the user, so one account held by two users gives two
   * unrelated fingerprints.
   */
  private fingerprint(userId: string, numbers: BankAccountNumbers): string {
    return this.box.hash(`bank-account/v1:${userId}:${accountIdentity(numbers)}`);
  }
}
