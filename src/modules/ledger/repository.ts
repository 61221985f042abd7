/**
 * The ledger's SQL on its tables (`ledger_account`, `journal_entry`, `ledger_posting`, and
 * `wallet_deficit`: what a wallet owes after a reorg reversal, ./deficits.ts), for
 * src/modules/ledger/service.ts: the statements of a post, the reads of balances, the checks of
 * the invariants and the rebuild of the balance cache. Every function runs where it is given (the
 * pool or a transaction: src/db/sql.ts); amounts are exact decimal strings (numeric as text).
 */
import type { PreparedStatement, Sql } from "../../db/sql.js";

/** A ledger account as a post reads it: its cached balance (numeric as text; null for an external account). */
export interface AccountRow {
  id: string;
  code: string;
  bucket: "available" | "held" | "external" | "liquidity" | "fees";
  balance: string | null;
}

/** SQL: whether account `a` is a wallet bucket, the only accounts with a cached balance (src/domain/ledger.ts `balanceCached`). */
const WALLET_BUCKET = `a.bucket in ('available', 'held')`;

/**
 * SQL: the balance account `a` should cache, given `s.total`, the sum of its postings: that sum for
 * a wallet bucket, null for an external, liquidity or fees account (src/domain/ledger.ts `balanceCached`).
 */
const EXPECTED_CACHE = `case when ${WALLET_BUCKET} then coalesce(s.total, 0) else null end`;

/** SQL: each account's sum of postings, as `s (account_id, total)`. */
const POSTING_SUMS = `(select account_id, sum(amount) as total from ledger_posting group by account_id) s`;

/** {@link lockAndReadAccounts} without accounts to read. */
export const LOCK_ACCOUNTS = `select id, code, bucket, balance from ledger_account where code = any($1::text[]) order by id for update`;

/** {@link lockAndReadAccounts}: the accounts `$1` locked, then the accounts `$2` read. */
export const LOCK_AND_READ_ACCOUNTS = `with locked as (${LOCK_ACCOUNTS})
  select id, code, bucket, balance from locked
  union all
  select id, code, bucket, balance from ledger_account where code = any($2::text[])`;

export const LOCK: PreparedStatement = { name: "ledger_lock_accounts", text: LOCK_ACCOUNTS };
export const LOCK_AND_READ: PreparedStatement = { name: "ledger_lock_read_accounts", text: LOCK_AND_READ_ACCOUNTS };

/**
 * One statement: locks the accounts `lockCodes` (`FOR UPDATE`, in id order, so two posts never
 * deadlock) and reads the accounts `readCodes` without locking them. Accounts that do not exist
 * are absent. In transaction `on`.
 */
export function lockAndReadAccounts(on: Sql, lockCodes: readonly string[], readCodes: readonly string[]): Promise<AccountRow[]> {
  if (readCodes.length === 0) return on.rows<AccountRow>(LOCK, [lockCodes]);
  return on.rows<AccountRow>(LOCK_AND_READ, [lockCodes, readCodes]);
}

/** A journal entry to write: what it records, its postings (account ids) and the wallet accounts' new cached balances. */
export interface EntryWrite {
  kind: string;
  walletId: string;
  network: string;
  currency: string;
  /** Decimal string. */
  amount: string;
  reference: string | null;
  postings: readonly { accountId: string; currency: string; amount: string }[];
  balances: readonly { code: string; balance: string }[];
}

/**
 * {@link writeEntry}'s statement: the entry (`$1`–`$6`), its postings (`$7`–`$9`: account ids,
 * currencies, amounts) and the cached balances (`$10`, `$11`: account codes, balances). The
 * accounts updated are matched by code in the statement itself as well, so the planner looks them
 * up by index whatever it guesses of the arrays' lengths.
 */
export const WRITE_ENTRY = `with entry as (
    insert into journal_entry (kind, wallet_id, network, currency, amount, reference, created_at) values ($1, $2, $3, $4, $5, $6, now()) returning id
  ), postings as (
    insert into ledger_posting (entry_id, account_id, currency, amount)
    select entry.id, v.account_id, v.currency, v.amount from entry cross join unnest($7::bigint[], $8::text[], $9::numeric[]) as v (account_id, currency, amount)
  ), balances as (
    update ledger_account a set balance = v.balance, updated_at = now()
      from unnest($10::text[], $11::numeric[]) as v (code, balance)
     where a.code = v.code and a.code = any($10::text[])
  )
  select id from entry`;

export const WRITE: PreparedStatement = { name: "ledger_write_entry", text: WRITE_ENTRY };

/**
 * One statement (data-modifying CTEs): inserts the entry and its postings and sets the cached
 * balances, in transaction `on`.
 * @returns the new entry's id.
 */
export async function writeEntry(on: Sql, entry: EntryWrite): Promise<number> {
  const [row] = await on.rows<{ id: string }>(WRITE, [
    entry.kind,
    entry.walletId,
    entry.network,
    entry.currency,
    entry.amount,
    entry.reference,
    entry.postings.map((p) => p.accountId),
    entry.postings.map((p) => p.currency),
    entry.postings.map((p) => p.amount),
    entry.balances.map((b) => b.code),
    entry.balances.map((b) => b.balance),
  ]);
  return Number(row?.id);
}

/** A wallet's accounts `$1`: currency, bucket, cached balance, in currency order. */
export const WALLET_ACCOUNTS: PreparedStatement = {
  name: "ledger_wallet_accounts",
  text: `select currency, bucket, balance from ledger_account where wallet_id = $1 order by currency`,
};

/** The external accounts (of network `$1` and currency `$2` when not null), each with the sum of its postings, in code order. */
export const EXTERNAL_BALANCES: PreparedStatement = {
  name: "ledger_external_balances",
  text: `select a.code, a.network, a.currency, coalesce(sum(p.amount), 0)::text as balance
       from ledger_account a left join ledger_posting p on p.account_id = a.id
      where a.bucket = 'external' and ($1::text is null or a.network = $1) and ($2::text is null or a.currency = $2)
      group by a.id order by a.code`,
};

/** Entries whose postings do not sum to zero in some currency. */
export const UNBALANCED_ENTRIES: PreparedStatement = {
  name: "ledger_unbalanced_entries",
  text: `select entry_id, currency, sum(amount)::text as sum from ledger_posting group by entry_id, currency having sum(amount) <> 0`,
};

/** Accounts whose cached balance is not the one their postings give (`cached` is `none` when null). */
export const CACHE_MISMATCHES: PreparedStatement = {
  name: "ledger_cache_mismatches",
  text: `select a.code, coalesce(a.balance::text, 'none') as cached, coalesce(s.total, 0)::text as from_postings
       from ledger_account a left join ${POSTING_SUMS} on s.account_id = a.id
      where a.balance is distinct from ${EXPECTED_CACHE}`,
};

/** Wallet accounts below zero, by their cache or their postings (the lower of the two). */
export const NEGATIVE_ACCOUNTS: PreparedStatement = {
  name: "ledger_negative_accounts",
  text: `select a.code, least(a.balance, coalesce(s.total, 0))::text as balance
       from ledger_account a left join ${POSTING_SUMS} on s.account_id = a.id
      where ${WALLET_BUCKET} and (a.balance < 0 or coalesce(s.total, 0) < 0)`,
};

/** Currencies whose postings, over all accounts, do not sum to zero. */
export const UNBALANCED_CURRENCIES: PreparedStatement = {
  name: "ledger_unbalanced_currencies",
  text: `select currency, sum(amount)::text as sum from ledger_posting group by currency having sum(amount) <> 0`,
};

/** Locks every wallet account, in id order, as posts lock them. */
export const LOCK_WALLET_ACCOUNTS: PreparedStatement = {
  name: "ledger_lock_wallet_accounts",
  text: `select id from ledger_account a where ${WALLET_BUCKET} order by id for update`,
};

/** Sets each account's cache to what its postings give (null on an external, liquidity or fees account). */
export const REBUILD_CACHE: PreparedStatement = {
  name: "ledger_rebuild_cache",
  text: `update ledger_account a set balance = ${EXPECTED_CACHE}, updated_at = now()
       from ledger_account a2 left join ${POSTING_SUMS} on s.account_id = a2.id
      where a.id = a2.id and a.balance is distinct from ${EXPECTED_CACHE}`,
};

/** The balance-cache rows of a wallet's accounts, in currency order. */
export function walletAccountRows(sql: Sql, walletId: string): Promise<{ currency: string; bucket: string; balance: string }[]> {
  return sql.rows<{ currency: string; bucket: string; balance: string }>(WALLET_ACCOUNTS, [walletId]);
}

/** The external accounts (of `network` and `currency` when given), each with the sum of its postings, in code order. */
export function externalBalanceRows(
  sql: Sql,
  filter: { network?: string; currency?: string },
): Promise<{ code: string; network: string; currency: string; balance: string }[]> {
  return sql.rows<{ code: string; network: string; currency: string; balance: string }>(EXTERNAL_BALANCES, [filter.network ?? null, filter.currency ?? null]);
}

/** Entries whose postings do not sum to zero in some currency. */
export function unbalancedEntryRows(sql: Sql): Promise<{ entry_id: string; currency: string; sum: string }[]> {
  return sql.rows<{ entry_id: string; currency: string; sum: string }>(UNBALANCED_ENTRIES);
}

/** Accounts whose cached balance is not the one their postings give (`cached` is `none` when null). */
export function cacheMismatchRows(sql: Sql): Promise<{ code: string; cached: string; from_postings: string }[]> {
  return sql.rows<{ code: string; cached: string; from_postings: string }>(CACHE_MISMATCHES);
}

/** Wallet accounts below zero, by their cache or their postings (the lower of the two). */
export function negativeAccountRows(sql: Sql): Promise<{ code: string; balance: string }[]> {
  return sql.rows<{ code: string; balance: string }>(NEGATIVE_ACCOUNTS);
}

/** Currencies whose postings, over all accounts, do not sum to zero. */
export function unbalancedCurrencyRows(sql: Sql): Promise<{ currency: string; sum: string }[]> {
  return sql.rows<{ currency: string; sum: string }>(UNBALANCED_CURRENCIES);
}

/**
 * In transaction `tx`: locks every wallet account (in id order, as posts lock them), then sets each
 * account's cache to what its postings give (null on an external, liquidity or fees account). Those
 * rows are not locked `FOR UPDATE`: a post holding its wallet locks takes a `FOR KEY SHARE` lock on
 * its external row, and waiting for it here would deadlock. @returns accounts changed.
 */
export async function rebuildCacheRows(tx: Sql): Promise<number> {
  await tx.rows(LOCK_WALLET_ACCOUNTS);
  return tx.run(REBUILD_CACHE);
}

/** The id of the account `code`, or undefined. */
export async function accountId(on: Sql, code: string): Promise<string | undefined> {
  const [found] = await on.rows<{ id: string }>(ACCOUNT_ID, [code]);
  return found ? String(found.id) : undefined;
}

export const ACCOUNT_ID: PreparedStatement = { name: "ledger_account_id", text: `select id from ledger_account where code = $1` };
export const INSERT_ACCOUNT: PreparedStatement = {
  name: "ledger_insert_account",
  text: `insert into ledger_account (code, bucket, wallet_id, network, currency, balance, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, now(), now()) on conflict (code) do nothing returning id`,
};

/** Inserts account `code` unless it exists (race-safe). @returns its id, or undefined when another writer inserted it first. */
export async function insertAccount(
  on: Sql,
  account: { code: string; bucket: string; walletId: string | null; network: string | null; currency: string; balance: string | null },
): Promise<string | undefined> {
  const inserted = await on.rows<{ id: string }>(INSERT_ACCOUNT, [account.code, account.bucket, account.walletId, account.network, account.currency, account.balance]);
  return inserted[0] ? String(inserted[0].id) : undefined;
}

/** Wallet `$1`'s deficits of currency `$2` (`wallet_deficit`), one row per network in network order, locked (`FOR UPDATE`) until the transaction ends. */
export const LOCK_DEFICITS: PreparedStatement = {
  name: "ledger_lock_deficits",
  text: `select network, amount::text from wallet_deficit where wallet_id = $1::uuid and currency = $2 order by network for update`,
};

/** Wallet `$1` owes `$4` more of currency `$2` on network `$3`: the row is created or grows. */
export const ADD_DEFICIT: PreparedStatement = {
  name: "ledger_add_deficit",
  text: `insert into wallet_deficit (wallet_id, currency, network, amount, created_at, updated_at) values ($1::uuid, $2, $3, $4, now(), now())
         on conflict (wallet_id, currency, network) do update set amount = wallet_deficit.amount + excluded.amount, updated_at = now()`,
};

/** Wallet `$1`'s deficit of currency `$2` on network `$3` is now `$4` (positive). */
export const SET_DEFICIT: PreparedStatement = {
  name: "ledger_set_deficit",
  text: `update wallet_deficit set amount = $4, updated_at = now() where wallet_id = $1::uuid and currency = $2 and network = $3`,
};

/** Wallet `$1`'s deficit of currency `$2` on network `$3` is covered: the row goes. */
export const DELETE_DEFICIT: PreparedStatement = {
  name: "ledger_delete_deficit",
  text: `delete from wallet_deficit where wallet_id = $1::uuid and currency = $2 and network = $3`,
};

/** What wallet `$1` owes, per currency (summed over networks), in currency order; no row when nothing. */
export const WALLET_DEFICITS: PreparedStatement = {
  name: "ledger_wallet_deficits",
  text: `select currency, sum(amount)::text as amount from wallet_deficit where wallet_id = $1::uuid group by currency order by currency`,
};

/** Wallet `walletId`'s deficits of `currency`, per network, locked for `tx`. */
export async function lockDeficitRows(tx: Sql, walletId: string, currency: string): Promise<{ network: string; amount: string }[]> {
  return tx.rows<{ network: string; amount: string }>(LOCK_DEFICITS, [walletId, currency]);
}

/** Adds `amount` (decimal text, positive) to what `walletId` owes of `currency` on `network`. */
export async function addDeficit(tx: Sql, walletId: string, currency: string, network: string, amount: string): Promise<void> {
  await tx.run(ADD_DEFICIT, [walletId, currency, network, amount]);
}

/** Sets what `walletId` owes of `currency` on `network` to `amount` (decimal text); zero deletes the row. */
export async function setDeficit(tx: Sql, walletId: string, currency: string, network: string, amount: string, zero: boolean): Promise<void> {
  if (zero) await tx.run(DELETE_DEFICIT, [walletId, currency, network]);
  else await tx.run(SET_DEFICIT, [walletId, currency, network, amount]);
}

/** What `walletId` owes, per currency, in currency order (decimal text). */
export async function walletDeficitRows(sql: Sql, walletId: string): Promise<{ currency: string; amount: string }[]> {
  return sql.rows<{ currency: string; amount: string }>(WALLET_DEFICITS, [walletId]);
}
