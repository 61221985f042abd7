/**
 * The ledger's SQL on its tables (`ledger_account`, `journal_entry`, `ledger_posting`), for
 * src/modules/ledger/service.ts: the statements of a post, the reads of balances, the checks of
 * the invariants and the rebuild of the balance cache. Every function runs in the transaction of
 * the `em` it is given; amounts are exact decimal strings (numeric as text).
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { runRows, type Runner } from "../../db/statements.js";
import type { PreparedStatement } from "../../db/sql.js";

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

const LOCK: PreparedStatement = { name: "ledger_lock_accounts", text: LOCK_ACCOUNTS };
const LOCK_AND_READ: PreparedStatement = { name: "ledger_lock_read_accounts", text: LOCK_AND_READ_ACCOUNTS };

/**
 * One statement: locks the accounts `lockCodes` (`FOR UPDATE`, in id order, so two posts never
 * deadlock) and reads the accounts `readCodes` without locking them. Accounts that do not exist
 * are absent. Bound parameters, on `on` (a plain-SQL transaction, or an EntityManager's: src/db/statements.ts `runRows`).
 */
export function lockAndReadAccounts(on: Runner, lockCodes: readonly string[], readCodes: readonly string[]): Promise<AccountRow[]> {
  if (readCodes.length === 0) return runRows<AccountRow>(on, LOCK, [lockCodes]);
  return runRows<AccountRow>(on, LOCK_AND_READ, [lockCodes, readCodes]);
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

const WRITE: PreparedStatement = { name: "ledger_write_entry", text: WRITE_ENTRY };

/**
 * One statement (data-modifying CTEs): inserts the entry and its postings and sets the cached
 * balances, with bound parameters, on `on` (src/db/statements.ts `runRows`).
 * @returns the new entry's id.
 */
export async function writeEntry(on: Runner, entry: EntryWrite): Promise<number> {
  const [row] = await runRows<{ id: string }>(on, WRITE, [
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

/** The balance-cache rows of a wallet's accounts, in currency order. */
export function walletAccountRows(em: EntityManager, walletId: string): Promise<{ currency: string; bucket: string; balance: string }[]> {
  return em.execute<{ currency: string; bucket: string; balance: string }[]>(
    `select currency, bucket, balance from ledger_account where wallet_id = ? order by currency`,
    [walletId],
  );
}

/** The external accounts (of `network` and `currency` when given), each with the sum of its postings, in code order. */
export function externalBalanceRows(
  em: EntityManager,
  filter: { network?: string; currency?: string },
): Promise<{ code: string; network: string; currency: string; balance: string }[]> {
  return em.execute<{ code: string; network: string; currency: string; balance: string }[]>(
    `select a.code, a.network, a.currency, coalesce(sum(p.amount), 0)::text as balance
       from ledger_account a left join ledger_posting p on p.account_id = a.id
      where a.bucket = 'external' and (?::text is null or a.network = ?) and (?::text is null or a.currency = ?)
      group by a.id order by a.code`,
    [filter.network ?? null, filter.network ?? null, filter.currency ?? null, filter.currency ?? null],
  );
}

/** Entries whose postings do not sum to zero in some currency. */
export function unbalancedEntryRows(em: EntityManager): Promise<{ entry_id: string; currency: string; sum: string }[]> {
  return em.execute<{ entry_id: string; currency: string; sum: string }[]>(
    `select entry_id, currency, sum(amount)::text as sum from ledger_posting group by entry_id, currency having sum(amount) <> 0`,
  );
}

/** Accounts whose cached balance is not the one their postings give (`cached` is `none` when null). */
export function cacheMismatchRows(em: EntityManager): Promise<{ code: string; cached: string; from_postings: string }[]> {
  return em.execute<{ code: string; cached: string; from_postings: string }[]>(
    `select a.code, coalesce(a.balance::text, 'none') as cached, coalesce(s.total, 0)::text as from_postings
       from ledger_account a left join ${POSTING_SUMS} on s.account_id = a.id
      where a.balance is distinct from ${EXPECTED_CACHE}`,
  );
}

/** Wallet accounts below zero, by their cache or their postings (the lower of the two). */
export function negativeAccountRows(em: EntityManager): Promise<{ code: string; balance: string }[]> {
  return em.execute<{ code: string; balance: string }[]>(
    `select a.code, least(a.balance, coalesce(s.total, 0))::text as balance
       from ledger_account a left join ${POSTING_SUMS} on s.account_id = a.id
      where ${WALLET_BUCKET} and (a.balance < 0 or coalesce(s.total, 0) < 0)`,
  );
}

/** Currencies whose postings, over all accounts, do not sum to zero. */
export function unbalancedCurrencyRows(em: EntityManager): Promise<{ currency: string; sum: string }[]> {
  return em.execute<{ currency: string; sum: string }[]>(
    `select currency, sum(amount)::text as sum from ledger_posting group by currency having sum(amount) <> 0`,
  );
}

/**
 * Locks every wallet account (in id order, as posts lock them), then sets each account's cache to
 * what its postings give (null on an external, liquidity or fees account). Those rows are not locked `FOR UPDATE`:
 * a post holding its wallet locks takes a `FOR KEY SHARE` lock on its external row, and waiting for
 * it here would deadlock. @returns accounts changed.
 */
export async function rebuildCacheRows(em: EntityManager): Promise<number> {
  await em.execute(`select id from ledger_account a where ${WALLET_BUCKET} order by id for update`);
  const result = await em.execute<{ affectedRows?: number; rowCount?: number }>(
    `update ledger_account a set balance = ${EXPECTED_CACHE}, updated_at = now()
       from ledger_account a2 left join ${POSTING_SUMS} on s.account_id = a2.id
      where a.id = a2.id and a.balance is distinct from ${EXPECTED_CACHE}`,
    [],
    "run",
  );
  return Number(result.affectedRows ?? result.rowCount ?? 0);
}

/** The id of the account `code`, or undefined. */
export async function accountId(on: Runner, code: string): Promise<string | undefined> {
  const [found] = await runRows<{ id: string }>(on, ACCOUNT_ID, [code]);
  return found ? String(found.id) : undefined;
}

const ACCOUNT_ID: PreparedStatement = { name: "ledger_account_id", text: `select id from ledger_account where code = $1` };
const INSERT_ACCOUNT: PreparedStatement = {
  name: "ledger_insert_account",
  text: `insert into ledger_account (code, bucket, wallet_id, network, currency, balance, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, now(), now()) on conflict (code) do nothing returning id`,
};

/** Inserts account `code` unless it exists (race-safe). @returns its id, or undefined when another writer inserted it first. */
export async function insertAccount(
  on: Runner,
  account: { code: string; bucket: string; walletId: string | null; network: string | null; currency: string; balance: string | null },
): Promise<string | undefined> {
  const inserted = await runRows<{ id: string }>(on, INSERT_ACCOUNT, [account.code, account.bucket, account.walletId, account.network, account.currency, account.balance]);
  return inserted[0] ? String(inserted[0].id) : undefined;
}
