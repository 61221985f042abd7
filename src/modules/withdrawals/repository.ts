/**
 * The withdrawals module's SQL (docs/performance.md "Withdrawals"): the statements of Initiate,
 * Confirm, Resend Code, Cancel and the mailbox PIN, run on the pool or in the caller's transaction
 * (src/db/sql.ts), and the caps' use. The bench's
 * withdrawal baseline (scripts/bench/baseline-sql.ts) runs these same texts.
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
import type { Usage, UsageReader, Windows } from "../../domain/limits.js";
import { OUTBOX_EMAIL_COLUMNS } from "../mail/service.js";
import { goodStandingSql, userOfCustomerSql } from "../users/repository.js";
import { insertTransactionsSql } from "../wallets/repository.js";

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
 * The wallets of user `$1` of customer `$2`, oldest first (created, then id), each with its
 * balance-cache rows of currency `$3` (one row per bucket; one row of null bucket and balance when
 * it has no account of the currency).
 */
export const USER_WALLET_BALANCES: PreparedStatement = {
  name: "withdrawal_user_wallet_balances",
  text: `select w.wallet_id, w.networks, a.bucket, a.balance
           from wallet w left join ledger_account a on a.wallet_id = w.wallet_id and a.currency = $3
          where w.user_id = $1 and w.customer_id = $2
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

const quoted = (columns: readonly string[]): string => columns.map((c) => `"${c}"`).join(", ");
const UPDATE = `update withdrawal set ${WITHDRAWAL_CHANGES.map((c, i) => `"${c}" = $${i + 1}`).join(", ")} where id = $${WITHDRAWAL_CHANGES.length + 1}`;
const EMAIL = (from: number): string => `insert into outbox_email (${quoted(OUTBOX_EMAIL_COLUMNS)}) values (${params(from, OUTBOX_EMAIL_COLUMNS.length)})`;

/** A new withdrawal (its {@link WITHDRAWAL_COLUMNS}, `$1…$23`) and its code's email (its {@link OUTBOX_EMAIL_COLUMNS}, `$24…$35`), in one statement. */
export const INSERT_WITHDRAWAL: PreparedStatement = {
  name: "withdrawal_insert",
  text: `with withdrawal as (insert into withdrawal (${quoted(WITHDRAWAL_COLUMNS)}) values (${params(1, WITHDRAWAL_COLUMNS.length)})),
          email as (${EMAIL(WITHDRAWAL_COLUMNS.length + 1)})
          select 1 as done`,
};

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

/**
 * SQL: withdrawal `$1` of customer `$2`, locked (`FOR UPDATE` of the withdrawal row only), with
 * where it would leave from: its wallet's vault and the wallet's address on its network for its
 * currency (null when missing).
 */
const LOCK = `select ${WITHDRAWAL_COLUMNS.map((c) => `w.${c}`).join(", ")}, v.vault_wallet_id as source_vault_wallet_id, a.address as source_address
           from withdrawal w
           left join wallet v on v.wallet_id = w.wallet_id
           left join wallet_address a on a.wallet_id = w.wallet_id and a.network = w.network and a.currency = w.currency
          where w.id = $1 and w.customer_id = $2`;

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
