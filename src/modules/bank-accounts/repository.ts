/**
 * The bank-accounts module's statements on its table `bank_account` (docs/architecture.md
 * "Reaching the database"; docs/decisions/fiat.md "Bank accounts"). Rows come back in the
 * module's own shape, {@link BankAccount}; the numbers stay sealed here (the service opens them).
 */
import type { PreparedStatement, Sql } from "../../db/sql.js";
import type { BankAccount } from "./entities.js";

const COLUMNS = `id, customer_id, user_id, currency, holder_name, label, account_mask, numbers_sealed, fingerprint, created_at, deleted_at`;

/**
 * Inserts an account (`$1` id, `$2` customer, `$3` user, `$4` currency, `$5` holder name, `$6`
 * label or null, `$7` mask, `$8` sealed numbers, `$9` fingerprint, `$10` created), unless the user
 * has a live account of the same fingerprint (the partial unique index): then nothing, and no row
 * returned. Concurrent inserts of one account: one row, whatever the order.
 */
export const INSERT_BANK_ACCOUNT: PreparedStatement = {
  name: "bank_accounts_insert",
  text: `insert into bank_account (id, customer_id, user_id, currency, holder_name, label, account_mask, numbers_sealed, fingerprint, created_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           on conflict (user_id, fingerprint) where deleted_at is null do nothing returning id`,
};

/** One page of user `$1`'s live accounts of customer `$2`, newest first: at most `$3` after skipping `$4`. */
export const SELECT_BANK_ACCOUNT_PAGE: PreparedStatement = {
  name: "bank_accounts_select_page",
  text: `select ${COLUMNS} from bank_account where user_id = $1 and customer_id = $2 and deleted_at is null
           order by created_at desc, id desc limit $3 offset $4`,
};

/** How many live accounts user `$1` of customer `$2` has. */
export const COUNT_BANK_ACCOUNTS: PreparedStatement = {
  name: "bank_accounts_count",
  text: `select count(*)::int as total from bank_account where user_id = $1 and customer_id = $2 and deleted_at is null`,
};

/** Marks account `$1` of user `$2` and customer `$3` deleted at `$4`, if it is live (one row updated, else none). */
export const DELETE_BANK_ACCOUNT: PreparedStatement = {
  name: "bank_accounts_soft_delete",
  text: `update bank_account set deleted_at = $4 where id = $1 and user_id = $2 and customer_id = $3 and deleted_at is null`,
};

/**
 * What a fiat withdrawal needs to know of user `$1`'s account `$2` (null: none named), customer
 * `$3`: whether the user has any live account (`has_any`), and the named account's row, deleted or
 * not (its columns null when it is not the user's).
 */
export const SELECT_USABLE_BANK_ACCOUNT: PreparedStatement = {
  name: "bank_accounts_select_usable",
  text: `select exists (select 1 from bank_account where user_id = $1 and customer_id = $3 and deleted_at is null) as has_any,
                b.id, b.customer_id, b.user_id, b.currency, b.holder_name, b.label, b.account_mask, b.numbers_sealed, b.fingerprint, b.created_at, b.deleted_at
           from (select 1) as one
           left join bank_account b on b.id = $2::uuid and b.user_id = $1 and b.customer_id = $3`,
};

/** A row of `bank_account` as the statements return it. */
interface BankAccountRow {
  id: string;
  customer_id: string;
  user_id: string;
  currency: BankAccount["currency"];
  holder_name: string;
  label: string | null;
  account_mask: string;
  numbers_sealed: string;
  fingerprint: string;
  created_at: Date;
  deleted_at: Date | null;
}

function accountOf(row: BankAccountRow): BankAccount {
  return {
    id: row.id,
    customerId: row.customer_id,
    userId: row.user_id,
    currency: row.currency,
    holderName: row.holder_name,
    label: row.label,
    accountMask: row.account_mask,
    numbersSealed: row.numbers_sealed,
    fingerprint: row.fingerprint,
    createdAt: new Date(row.created_at),
    deletedAt: row.deleted_at === null ? null : new Date(row.deleted_at),
  };
}

/** Inserts `account` (live). @returns false when the user has a live account of the same fingerprint already. */
export async function insertBankAccount(sql: Sql, account: BankAccount): Promise<boolean> {
  const inserted = await sql.rows<{ id: string }>(INSERT_BANK_ACCOUNT, [
    account.id, account.customerId, account.userId, account.currency, account.holderName, account.label ?? null,
    account.accountMask, account.numbersSealed, account.fingerprint, account.createdAt,
  ]);
  return inserted.length > 0;
}

/** One page of the user's live accounts, newest first, and how many there are. */
export async function bankAccountPage(sql: Sql, customerId: string, userId: string, page: { limit: number; skip: number }): Promise<{ rows: BankAccount[]; total: number }> {
  const rows = await sql.rows<BankAccountRow>(SELECT_BANK_ACCOUNT_PAGE, [userId, customerId, page.limit, page.skip]);
  const [count] = await sql.rows<{ total: number }>(COUNT_BANK_ACCOUNTS, [userId, customerId]);
  return { rows: rows.map(accountOf), total: count?.total ?? 0 };
}

/** Soft-deletes the user's live account `id` at `at`. @returns false when there is no such live account of the user. */
export async function softDeleteBankAccount(sql: Sql, customerId: string, userId: string, id: string, at: Date): Promise<boolean> {
  return (await sql.run(DELETE_BANK_ACCOUNT, [id, userId, customerId, at])) > 0;
}

/**
 * Whether the user has a live account, and the row of account `id` (null: none named, or given
 * as a non-UUID by the caller's choice) when it is the user's, deleted or not.
 */
export async function usableBankAccountRow(sql: Sql, customerId: string, userId: string, id: string | null): Promise<{ hasAny: boolean; account: BankAccount | null }> {
  const [row] = await sql.rows<BankAccountRow & { has_any: boolean }>(SELECT_USABLE_BANK_ACCOUNT, [userId, id, customerId]);
  if (!row) return { hasAny: false, account: null };
  return { hasAny: row.has_any, account: row.id === null ? null : accountOf(row) };
}
