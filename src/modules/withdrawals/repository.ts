/**
 * The withdrawals module's repository (docs/performance.md "Withdrawals"): the statements of
 * Initiate, Confirm, Resend Code, Cancel and the mailbox PIN, the caps' use and the count by status,
 * and the typed functions that run them on the pool or in the caller's transaction (src/db/sql.ts),
 * a withdrawal read or written as its entity's record. The bench's withdrawal baseline
 * (scripts/bench/baseline-sql.ts) runs these same texts.
 *
 * Beyond the module's own `withdrawal` table they read the users module's `app_user` (with its rule
 * of a user in good standing, src/modules/users/repository.ts), the wallets
 * module's `wallet` and `wallet_address` and the ledger's balance cache (`ledger_account`, as
 * `LedgerService.walletBalances` reads it), and write the wallets module's `wallet_transaction`
 * and the mail module's outbox (`outbox_email`, the row `MailService.enqueue` writes): one round
 * trip each instead of ORM entity reads and a flush. The checks on what they read stay in
 * src/modules/withdrawals/service.ts, in the order of the users', wallets' and ledger's own services.
 */
import type { PreparedStatement, Sql } from "../../db/sql.js";
import { money } from "../../domain/money.js";
import { currencyBalances, type BalanceCacheRow, type WalletCurrencyBalance } from "../ledger/service.js";
import type { UserStanding } from "../users/repository.js";
import type { WalletNetworkEntry } from "../wallets/entities.js";
import type { Withdrawal } from "./entities.js";
import type { Usage, UsageReader, Windows } from "../../domain/limits.js";
import { OUTBOX_EMAIL_COLUMNS } from "../mail/repository.js";
import { goodStandingSql, userOfCustomerSql } from "../users/repository.js";
import { insertTransactionsSql } from "../wallets/repository.js";
import { toRecord, type WithdrawalRow } from "./rows.js";

/** `$from…` placeholders, `n` of them, comma-separated. */
const params = (from: number, n: number): string => Array.from({ length: n }, (_, i) => `$${from + i}`).join(", ");

/**
 * The user `$1` of customer `$2` as the checks of a withdrawal need it: its standing by the users
 * module's rule (a user in good standing: src/modules/users/repository.ts) and what its code's email
 * needs. No row when no such user.
 */
export const WITHDRAWAL_USER: PreparedStatement = {
  name: "withdrawal_user",
  text: `select u.user_id, u.email, u.first_name, u.deleted_at is not null as deleted, ${goodStandingSql("u")} as good_standing
           from app_user u where ${userOfCustomerSql("u", "$1", "$2")}`,
};

/**
 * The `ACTIVE` wallets of user `$1` of customer `$2` (a withdrawal without `wallet_id` picks no
 * other: docs/decisions/customers-users-and-wallets.md "Wallet states"), oldest first (created, then id), each with its
 * balance-cache rows of currency `$3` (one row per bucket; one row of null bucket and balance when
 * it has no account of the currency).
 */
export const USER_WALLET_BALANCES: PreparedStatement = {
  name: "withdrawal_user_wallet_balances",
  text: `select w.wallet_id, w.networks, a.bucket, a.balance
           from wallet w left join ledger_account a on a.wallet_id = w.wallet_id and a.currency = $3
          where w.user_id = $1 and w.customer_id = $2 and w.status = 'ACTIVE'
          order by w.created_at asc, w.wallet_id asc`,
};

/** The columns of a withdrawal row, in the order of {@link INSERT_WITHDRAWAL}'s values. */
export const WITHDRAWAL_COLUMNS = [
  "id", "customer_id", "user_id", "wallet_id", "network", "currency", "amount", "address", "memo", "status", "code_hash", "code_expires_at",
  "code_attempts", "code_failures_total", "code_resends", "code_issued_at", "cancel_reason", "idempotency_key", "tx_hash", "completed_at",
  "cancelled_at", "created_at", "updated_at",
] as const;

/** The columns a change of a withdrawal writes, in the order of {@link UPDATE}'s values (`$1…$12`; `$13` its id). */
export const WITHDRAWAL_CHANGES = [
  "status", "code_hash", "code_expires_at", "code_attempts", "code_failures_total", "code_resends", "code_issued_at", "cancel_reason",
  "tx_hash", "completed_at", "cancelled_at", "updated_at",
] as const;

/** The columns a fiat withdrawal adds to {@link WITHDRAWAL_COLUMNS} when inserted (a crypto one keeps their defaults: `crypto`, null). */
export const FIAT_COLUMNS = ["withdrawal_type", "bank_account_id"] as const;

/** The payout columns a change of a fiat withdrawal writes after {@link WITHDRAWAL_CHANGES} (docs/decisions/fiat.md "Fiat withdrawals"). */
export const PAYOUT_CHANGES = ["payout_rail", "payout_reference", "payout_state", "payout_due_at"] as const;

/** The changes of a fiat withdrawal: {@link WITHDRAWAL_CHANGES} then {@link PAYOUT_CHANGES}. */
const FIAT_CHANGES = [...WITHDRAWAL_CHANGES, ...PAYOUT_CHANGES] as const;

const quoted = (columns: readonly string[]): string => columns.map((c) => `"${c}"`).join(", ");
const updateOf = (changes: readonly string[]): string => `update withdrawal set ${changes.map((c, i) => `"${c}" = $${i + 1}`).join(", ")} where id = $${changes.length + 1}`;
const UPDATE = updateOf(WITHDRAWAL_CHANGES);
const UPDATE_FIAT = updateOf(FIAT_CHANGES);
const EMAIL = (from: number): string => `insert into outbox_email (${quoted(OUTBOX_EMAIL_COLUMNS)}) values (${params(from, OUTBOX_EMAIL_COLUMNS.length)})`;
const insertOf = (columns: readonly string[]): string => `with withdrawal as (insert into withdrawal (${quoted(columns)}) values (${params(1, columns.length)})),
          email as (${EMAIL(columns.length + 1)})
          select 1 as done`;

/** A new withdrawal (its {@link WITHDRAWAL_COLUMNS}, `$1…$23`) and its code's email (its {@link OUTBOX_EMAIL_COLUMNS}, `$24…$35`), in one statement. */
export const INSERT_WITHDRAWAL: PreparedStatement = { name: "withdrawal_insert", text: insertOf(WITHDRAWAL_COLUMNS) };

/** A new fiat withdrawal (its {@link WITHDRAWAL_COLUMNS} then {@link FIAT_COLUMNS}, `$1…$25`) and its code's email (`$26…$37`), in one statement. */
export const INSERT_FIAT_WITHDRAWAL: PreparedStatement = { name: "withdrawal_insert_fiat", text: insertOf([...WITHDRAWAL_COLUMNS, ...FIAT_COLUMNS]) };

/** A change of withdrawal `$13` ({@link WITHDRAWAL_CHANGES}, `$1…$12`). */
export const UPDATE_WITHDRAWAL: PreparedStatement = { name: "withdrawal_update", text: UPDATE };

/** A change of withdrawal `$13` (as {@link UPDATE_WITHDRAWAL}) and its new code's email ({@link OUTBOX_EMAIL_COLUMNS}, `$14…$25`), in one statement. */
export const UPDATE_WITHDRAWAL_EMAIL: PreparedStatement = {
  name: "withdrawal_update_email",
  text: `with withdrawal as (${UPDATE}), email as (${EMAIL(WITHDRAWAL_CHANGES.length + 2)}) select 1 as done`,
};

/** A completed withdrawal's change (as {@link UPDATE_WITHDRAWAL}) and its wallet transaction (src/modules/wallets/repository.ts `TRANSACTION_COLUMNS`, `$14…$33`), in one statement. */
export const COMPLETE_WITHDRAWAL: PreparedStatement = {
  name: "withdrawal_complete",
  text: `with withdrawal as (${UPDATE}),
          tx as (${insertTransactionsSql(WITHDRAWAL_CHANGES.length + 2)})
          select 1 as done`,
};

/** A fiat withdrawal's change (as {@link UPDATE_WITHDRAWAL}, then its {@link PAYOUT_CHANGES}: `$1…$16`, `$17` its id): a payout that settled. */
export const UPDATE_FIAT_WITHDRAWAL: PreparedStatement = { name: "withdrawal_update_fiat", text: UPDATE_FIAT };

/**
 * A fiat withdrawal's change (as {@link UPDATE_FIAT_WITHDRAWAL}, `$1…$17`) and its wallet
 * transaction (`$18…$37`), in one statement: the payout submitted at confirm (`withdrawal`), or
 * returned (`withdrawal_reversal`).
 */
export const WRITE_FIAT_WITHDRAWAL: PreparedStatement = {
  name: "withdrawal_write_fiat",
  text: `with withdrawal as (${UPDATE_FIAT}),
          tx as (${insertTransactionsSql(FIAT_CHANGES.length + 2)})
          select 1 as done`,
};

/** The columns a locked withdrawal is read with: all of its record's. */
const READ_COLUMNS = [...WITHDRAWAL_COLUMNS, ...FIAT_COLUMNS, ...PAYOUT_CHANGES].map((c) => `w.${c}`).join(", ");
const SOURCE = `v.vault_wallet_id as source_vault_wallet_id, a.address as source_address
           from withdrawal w
           left join wallet v on v.wallet_id = w.wallet_id
           left join wallet_address a on a.wallet_id = w.wallet_id and a.network = w.network and a.currency = w.currency`;

/**
 * SQL: withdrawal `$1` of customer `$2`, locked (`FOR UPDATE` of the withdrawal row only), with
 * where it would leave from: its wallet's vault and the wallet's address on its network for its
 * currency (null when missing).
 */
const LOCK = `select ${READ_COLUMNS}, ${SOURCE}
          where w.id = $1 and w.customer_id = $2`;

/**
 * The fiat payout most overdue for a look at the rail (`payout_due_at` at or before `$1`), locked
 * (`FOR UPDATE … SKIP LOCKED`: payouts another round holds are passed over), with its source as
 * {@link LOCK}; no row when none is due. On index `withdrawal_payout_due_index`.
 */
export const CLAIM_DUE_PAYOUT: PreparedStatement = {
  name: "withdrawal_claim_due_payout",
  text: `select ${READ_COLUMNS}, ${SOURCE}
          where w.payout_due_at <= $1 and w.withdrawal_type = 'fiat'
          order by w.payout_due_at asc limit 1 for update of w skip locked`,
};

/** Withdrawal `$1` of customer `$2` and user `$3`, locked, with its source (see {@link LOCK}). */
export const LOCK_OWN_WITHDRAWAL: PreparedStatement = { name: "withdrawal_lock_own", text: `${LOCK} and w.user_id = $3 for update of w` };

/** Withdrawal `$1` of customer `$2`, whoever its user, locked, with its source (the mailbox PIN). */
export const LOCK_WITHDRAWAL: PreparedStatement = { name: "withdrawal_lock", text: `${LOCK} for update of w` };

/**
 * The caps' use of user `$2` in currency `$3`: amounts of its PENDING and COMPLETED withdrawals
 * created since `$1` (`today`) and since `$4` (`month`).
 */
export const WITHDRAWAL_CAPS_USE: PreparedStatement = {
  name: "withdrawal_caps_use",
  text: `select coalesce(sum(amount) filter (where created_at >= $1), 0)::text as today, coalesce(sum(amount), 0)::text as month
           from withdrawal where user_id = $2 and currency = $3 and status in ('PENDING', 'COMPLETED') and created_at >= $4`,
};

/**
 * The withdrawal caps' use (docs/decisions/limits-and-allowlist.md "Limits"), the
 * {@link UsageReader} of kind `withdrawal` that src/modules/limits/service.ts reads under its lock
 * `withdrawal:<userId>:<currency>`: amounts of the user's PENDING and COMPLETED withdrawals of
 * `currency` created since `windows.dayStart` (`today`) and since `windows.monthStart` (`month`),
 * UTC instants, as exact decimal text ("0" when none). Cancelled withdrawals are released. One
 * statement on index `withdrawal_user_currency_created_index`, in `em` (the caller's transaction, or the pool).
 */
export const withdrawalUsage: UsageReader<Sql> = async (em: Sql, userId: string, currency: string, windows: Windows): Promise<Usage> => {
  const [sums] = await em.rows<{ today: string; month: string }>(WITHDRAWAL_CAPS_USE, [windows.dayStart, userId.toLowerCase(), currency.toLowerCase(), windows.monthStart]);
  return { today: sums?.today ?? "0", month: sums?.month ?? "0" };
};

/** Withdrawals counted by status, for `/metrics` (read at scrape time, never on the request path). */
export const WITHDRAWALS_BY_STATUS: PreparedStatement = {
  name: "withdrawal_count_by_status",
  text: `select status, count(*)::int as count from withdrawal group by status`,
};

/** Withdrawals counted by status (`PENDING`, `COMPLETED`, `CANCELLED`…); statuses with none are absent. @throws the driver's error. */
export function withdrawalsByStatus(sql: Sql): Promise<{ status: string; count: number }[]> {
  return sql.rows<{ status: string; count: number }>(WITHDRAWALS_BY_STATUS);
}

/**
 * A withdrawal as stored: the entity `Withdrawal` of ./entities.ts (amounts as decimal text, instants
 * as UTC `Date`s), whether the ORM read it or {@link lockWithdrawal} did.
 */
export type WithdrawalRecord = Withdrawal;

/** A withdrawal locked for its transaction, with where it leaves from (null when its wallet or address is missing). */
export interface LockedWithdrawal {
  withdrawal: WithdrawalRecord;
  source: { vaultWalletId: string; address: string } | null;
}

/** A user as a withdrawal's checks (its standing: src/modules/users/repository.ts) and its code's email need it. */
export interface WithdrawalUser extends UserStanding {
  userId: string;
  customerId: string;
  email: string;
  firstName: string;
}

/** A wallet of the user with its balance of the withdrawal's currency (undefined when it has no account of it). */
export interface CandidateWallet {
  walletId: string;
  networks: WalletNetworkEntry[];
  balance: WalletCurrencyBalance | undefined;
}

/** A wallet transaction to write (the columns of `wallet_transaction` but its id). */
export interface TransactionWrite {
  walletId: string;
  customerId: string;
  network: string;
  address: string;
  amount: string;
  balanceAfter: string;
  hash: string;
  memo: string;
  description: string;
  orderId: string;
  idempotencyId: string;
  journalEntryId: number;
  createdAt: Date;
}

/**
 * The wallet transaction of locked withdrawal `locked`'s ledger entry `entryId` (`withdrawal` at
 * confirm, `withdrawal_reversal` when it failed after: docs/decisions/withdrawals.md): the whole
 * amount (decimal text, in the currency's units), from the wallet's own address on the network (the
 * destination for a fiat payout, which has none), `balanceAfter` the wallet's balance after the
 * entry, `hash` and `description` as the caller says, at `createdAt`.
 */
export function withdrawalTransaction(
  { withdrawal: w, source }: LockedWithdrawal,
  entry: { entryId: number; balanceAfter: string },
  detail: { hash: string; description: string },
  createdAt: Date,
): TransactionWrite {
  return {
    walletId: w.walletId,
    customerId: w.customerId,
    network: w.network,
    address: source?.address ?? w.address,
    amount: money(w.amount).toFixed(),
    balanceAfter: entry.balanceAfter,
    hash: detail.hash,
    memo: w.memo ?? "",
    description: detail.description,
    orderId: w.id,
    idempotencyId: w.idempotencyKey,
    journalEntryId: entry.entryId,
    createdAt,
  };
}

/**
 * A new PENDING withdrawal of these fields, created, issued and updated now, with no code yet
 * (`WithdrawalCodes.issue` sets it), no attempts, resends or outcome.
 */
export function newWithdrawal(
  fields: Pick<WithdrawalRecord, "id" | "customerId" | "userId" | "walletId" | "network" | "currency" | "amount" | "address" | "memo" | "idempotencyKey" | "withdrawalType" | "bankAccountId">,
): WithdrawalRecord {
  const now = new Date();
  return {
    ...fields,
    payoutRail: null,
    payoutReference: null,
    payoutState: null,
    payoutDueAt: null,
    status: "PENDING",
    codeHash: null,
    codeExpiresAt: now,
    codeAttempts: 0,
    codeFailuresTotal: 0,
    codeResends: 0,
    codeIssuedAt: now,
    cancelReason: null,
    txHash: null,
    completedAt: null,
    cancelledAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** User `userId` (a lower-case UUID) of `customerId`, or null. */
export async function readUser(sql: Sql, customerId: string, userId: string): Promise<WithdrawalUser | null> {
  const [row] = await sql.rows<{ user_id: string; email: string; first_name: string; deleted: boolean; good_standing: boolean }>(WITHDRAWAL_USER, [userId, customerId]);
  if (!row) return null;
  return { userId: row.user_id, customerId, email: row.email, firstName: row.first_name, deleted: row.deleted, goodStanding: row.good_standing };
}

/** The wallets of user `userId` of `customerId`, oldest first, each with its balance of `currency` (lower-case), in one statement. */
export async function walletsWithBalances(tx: Sql, customerId: string, userId: string, currency: string): Promise<CandidateWallet[]> {
  const rows = await tx.rows<BalanceCacheRow & { wallet_id: string; networks: WalletNetworkEntry[]; bucket: string | null }>(USER_WALLET_BALANCES, [userId, customerId, currency]);
  const wallets = new Map<string, { networks: WalletNetworkEntry[]; rows: BalanceCacheRow[] }>();
  for (const row of rows) {
    const wallet = wallets.get(row.wallet_id) ?? { networks: row.networks, rows: [] };
    wallet.rows.push({ currency: row.bucket === null ? null : currency, bucket: row.bucket, balance: row.balance });
    wallets.set(row.wallet_id, wallet);
  }
  return [...wallets].map(([walletId, w]) => ({ walletId, networks: w.networks, balance: currencyBalances(w.rows)[0] }));
}

/**
 * Withdrawal `id` (a lower-case UUID) of `customerId` (and of `userId` when given), locked
 * (`SELECT … FOR UPDATE` of its row) until `tx` ends, with its source; null when there is none.
 */
export async function lockWithdrawal(tx: Sql, customerId: string, id: string, userId?: string): Promise<LockedWithdrawal | null> {
  const [row] = userId === undefined ? await tx.rows<WithdrawalRow>(LOCK_WITHDRAWAL, [id, customerId]) : await tx.rows<WithdrawalRow>(LOCK_OWN_WITHDRAWAL, [id, customerId, userId]);
  return row ? locked(row) : null;
}

/** Puts off the next look at withdrawal `$1`'s payout to `$2` (a round that failed on it). */
export const DEFER_PAYOUT: PreparedStatement = { name: "withdrawal_defer_payout", text: `update withdrawal set payout_due_at = $2 where id = $1 and payout_due_at is not null` };

/** Puts off the next look at withdrawal `id`'s payout to `until` (UTC), unless nothing more is expected of it. */
export async function deferPayout(sql: Sql, id: string, until: Date): Promise<void> {
  await sql.run(DEFER_PAYOUT, [id, until]);
}

/** The fiat payout most overdue at `now` ({@link CLAIM_DUE_PAYOUT}), locked until `tx` ends; null when none is due. */
export async function claimDuePayout(tx: Sql, now: Date): Promise<LockedWithdrawal | null> {
  const [row] = await tx.rows<WithdrawalRow>(CLAIM_DUE_PAYOUT, [now]);
  return row ? locked(row) : null;
}

function locked(row: WithdrawalRow): LockedWithdrawal {
  const vault = row.source_vault_wallet_id as string | null;
  const address = row.source_address as string | null;
  return { withdrawal: toRecord(row), source: vault !== null && address !== null ? { vaultWalletId: vault, address } : null };
}

/** Inserts new withdrawal `w` and the email of its code, in `tx`. */
export async function insertWithdrawal(tx: Sql, w: WithdrawalRecord, email: OutboxEmailWrite): Promise<void> {
  const values: unknown[] = [
    w.id, w.customerId, w.userId, w.walletId, w.network, w.currency, w.amount, w.address, w.memo ?? null, w.status, w.codeHash ?? null, w.codeExpiresAt,
    w.codeAttempts, w.codeFailuresTotal, w.codeResends, w.codeIssuedAt, w.cancelReason ?? null, w.idempotencyKey, w.txHash ?? null, w.completedAt ?? null,
    w.cancelledAt ?? null, w.createdAt, w.updatedAt,
  ];
  if (w.withdrawalType === "fiat") await tx.run(INSERT_FIAT_WITHDRAWAL, [...values, w.withdrawalType, w.bankAccountId ?? null, ...email]);
  else await tx.run(INSERT_WITHDRAWAL, [...values, ...email]);
}

/** Writes the changes of withdrawal `w` (status, code, counters, outcome; `updatedAt` now), in `tx` (its row locked). With `email`, also the email of its new code. */
export async function saveWithdrawal(tx: Sql, w: WithdrawalRecord, email?: OutboxEmailWrite): Promise<void> {
  w.updatedAt = new Date();
  if (email) await tx.run(UPDATE_WITHDRAWAL_EMAIL, [...changeValues(w), ...email]);
  else await tx.run(UPDATE_WITHDRAWAL, changeValues(w));
}

/**
 * Writes withdrawal `w`'s changes ({@link saveWithdrawal}; a fiat one's payout too) and its wallet
 * transaction of `action` (`withdrawal` at confirm, `withdrawal_reversal` for a returned payout;
 * status `done`), in `tx` (its row locked).
 */
export async function completeWithdrawal(tx: Sql, w: WithdrawalRecord, t: TransactionWrite, action: "withdrawal" | "withdrawal_reversal" = "withdrawal"): Promise<void> {
  w.updatedAt = new Date();
  const transaction = [
    t.walletId, t.customerId, t.network, t.address, action, "done", w.currency, t.amount, "0", t.amount, "0",
    t.balanceAfter, t.hash, t.memo, t.description, t.orderId, "", t.idempotencyId, t.journalEntryId, t.createdAt,
  ];
  if (w.withdrawalType === "fiat") await tx.run(WRITE_FIAT_WITHDRAWAL, [...fiatChangeValues(w), ...transaction]);
  else await tx.run(COMPLETE_WITHDRAWAL, [...changeValues(w), ...transaction]);
}

/** Writes fiat withdrawal `w`'s changes and its payout's ({@link UPDATE_FIAT_WITHDRAWAL}), in `tx` (its row locked). */
export async function savePayout(tx: Sql, w: WithdrawalRecord): Promise<void> {
  w.updatedAt = new Date();
  await tx.run(UPDATE_FIAT_WITHDRAWAL, fiatChangeValues(w));
}

/** The values of an `outbox_email` row, as `MailService.outboxValues` gives them (src/modules/mail/service.ts). */
export type OutboxEmailWrite = readonly unknown[];

function changeValues(w: WithdrawalRecord): unknown[] {
  return [
    w.status, w.codeHash ?? null, w.codeExpiresAt, w.codeAttempts, w.codeFailuresTotal, w.codeResends, w.codeIssuedAt, w.cancelReason ?? null,
    w.txHash ?? null, w.completedAt ?? null, w.cancelledAt ?? null, w.updatedAt, w.id,
  ];
}

/** {@link changeValues} with the payout's ({@link PAYOUT_CHANGES}) before the id. */
function fiatChangeValues(w: WithdrawalRecord): unknown[] {
  const values = changeValues(w);
  return [...values.slice(0, -1), w.payoutRail ?? null, w.payoutReference ?? null, w.payoutState ?? null, w.payoutDueAt ?? null, w.id];
}
