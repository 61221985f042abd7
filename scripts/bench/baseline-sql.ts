/**
 * The service's statements that the baseline's write routes run (scripts/bench/baseline.ts,
 * scripts/bench/baseline-transfers.ts): the two authentication statements as main prepares them
 * (same names and texts) and the repositories' statements the routes run (same texts, bound as the
 * service binds them). `npx tsx scripts/bench/capture-sql.ts` compares them with what the service runs.
 */
import { CREDENTIAL_BY_HASH, USER_TOKEN } from "../../src/modules/identity/repository.js";
import { SANDBOX_MAIL_TO } from "../../src/modules/mail/repository.js";
import { INSERT_KEY, SELECT_KEY } from "../../src/modules/idempotency/repository.js";
import { INSERT_TRANSFER, TRANSFER_CAPS_USE, TRANSFER_PARTIES } from "../../src/modules/transfers/repository.js";
import { LOCK_MOVEMENT, SELECT_LIMITS } from "../../src/modules/limits/repository.js";
import { ENQUEUE_DELIVERY } from "../../src/modules/webhooks/repository.js";
import { LOCK_ACCOUNTS, LOCK_AND_READ_ACCOUNTS, WRITE_ENTRY } from "../../src/modules/ledger/repository.js";
import { SHARE_WALLET_STATES } from "../../src/modules/wallets/repository.js";
import {
  COMPLETE_WITHDRAWAL,
  INSERT_WITHDRAWAL,
  LOCK_OWN_WITHDRAWAL,
  USER_WALLET_BALANCES,
  WITHDRAWAL_CAPS_USE,
  WITHDRAWAL_USER,
} from "../../src/modules/withdrawals/repository.js";
import type { Decimal } from "decimal.js";
import { Refusal } from "./baseline-http.js";

/**
 * The Idempotency-Key caller the baselines store their keys under: any text does (the service's is
 * `user:<id>` or `credential:<id>`, docs/idempotency.md "Whose key it is"); the statements are the same.
 */
export const KEY_CALLER = "bench";

/** The withdrawal routes' statements, and the ledger and limits statements the transfer route shares. */
export const SQL = {
  /** The service's own prepared statements (same names and texts). */
  authUserToken: USER_TOKEN,
  authCredentialByHash: CREDENTIAL_BY_HASH,
  /** The withdrawals module's read of the user (`$1` user, `$2` customer). */
  user: WITHDRAWAL_USER.text,
  keyByAddress: SELECT_KEY.text,
  insertKey: INSERT_KEY.text,
  /** The limits service's customer row (read before the transaction for the allowlist policy, and again under the lock for the caps). */
  customerLimits: SELECT_LIMITS.text,
  /** The limits service's lock of `<kind>:<user>:<currency>`. */
  userLock: LOCK_MOVEMENT.text,
  /** The caps' use (`$1` day start, `$2` user, `$3` currency, `$4` month start). */
  caps: WITHDRAWAL_CAPS_USE.text,
  /** The user's wallets, oldest first, with their balance-cache rows of the currency (`$1` user, `$2` customer, `$3` currency). */
  walletBalances: USER_WALLET_BALANCES.text,
  /** The movement guard: the wallets' states, share-locked (`$1` wallet ids; src/modules/wallets/states.ts). */
  walletStates: SHARE_WALLET_STATES.text,
  /** The withdrawal (23 columns) and its code's email (12), in one statement. */
  insertWithdrawal: INSERT_WITHDRAWAL.text,
  /**
   * src/modules/ledger/repository.ts `lockAndReadAccounts`: wallet accounts `$1` locked in id order,
   * other accounts `$2` (the external account of a debit, the wallets' other buckets) read without
   * a lock ({@link accountsValues}); `read` is how many there are (0: the lock alone).
   */
  accountsOfPost: (read: number): string => (read === 0 ? LOCK_ACCOUNTS : LOCK_AND_READ_ACCOUNTS),
  /** src/modules/ledger/repository.ts `writeEntry`: the entry, its postings and cached balances in one statement ({@link entryValues}). */
  postEntry: WRITE_ENTRY,
  /** The code's `withdrawal.pin`, inserted only when the customer has an enabled webhook (src/modules/webhooks/repository.ts). */
  webhook: ENQUEUE_DELIVERY.text,
  sandboxMail: SANDBOX_MAIL_TO,
  /** The withdrawal FOR UPDATE with its wallet's vault and address (`$1` id, `$2` customer, `$3` user). */
  withdrawalForUpdate: LOCK_OWN_WITHDRAWAL.text,
  /** The withdrawal's change (12 columns, then its id) and its wallet transaction (20 columns), in one statement. */
  completeWithdrawal: COMPLETE_WITHDRAWAL.text,
} as const;

/** Create Transfer's own statements (src/modules/transfers), beside {@link SQL}'s shared ones. */
export const TRANSFER_SQL = {
  keyByAddress: SELECT_KEY.text,
  insertKey: INSERT_KEY.text,
  /** The service's own prepared statement (same name and text): both wallets, their owners' standing and their addresses of the currency. */
  parties: TRANSFER_PARTIES,
  /** src/modules/transfers/repository.ts `transferUsage`: what the sender sent today and this month. */
  usage: TRANSFER_CAPS_USE.text,
  /** The transfer (13 columns) and both sides' wallet transactions (20 each), in one statement. */
  insertTransfer: INSERT_TRANSFER.text,
  /** The movement guard: both wallets' states, share-locked (src/modules/wallets/states.ts). */
  walletStates: SHARE_WALLET_STATES.text,
} as const;

/** Caps of one kind and currency, decimal strings (src/domain/limits.ts `CapSet`). */
export interface CapSet {
  perTransaction: string;
  daily: string;
  monthly: string;
}

/** A row of {@link SQL.customerLimits}: the customer's own caps per kind and currency, and its policy. */
export interface LimitsRow {
  allowlist_required: boolean;
  withdrawal_caps: Record<string, CapSet>;
  transfer_caps: Record<string, CapSet>;
}

/**
 * src/domain/limits.ts `assertWithinCaps` on what the statements read: `amount` against the
 * per-transaction cap, and added to the day's and the month's sums.
 * @throws Refusal 400 WITHDRAWAL_LIMIT_EXCEEDED or TRANSFER_LIMIT_EXCEEDED, DAILY_LIMIT_EXCEEDED, MONTHLY_LIMIT_EXCEEDED.
 */
export function assertCaps(kind: "withdrawal" | "transfer", caps: CapSet, amount: Decimal, sums: { today: string; month: string } | undefined): void {
  if (amount.gt(caps.perTransaction)) throw new Refusal(400, `${kind.toUpperCase()}_LIMIT_EXCEEDED`, `Over the per-transaction ${kind} cap.`);
  if (amount.plus(sums?.today ?? 0).gt(caps.daily)) throw new Refusal(400, "DAILY_LIMIT_EXCEEDED", `Over the daily ${kind} cap.`);
  if (amount.plus(sums?.month ?? 0).gt(caps.monthly)) throw new Refusal(400, "MONTHLY_LIMIT_EXCEEDED", `Over the monthly ${kind} cap.`);
}

/** The values of {@link SQL}`.accountsOfPost`: the accounts to lock, and those to read when any. */
export const accountsValues = (lock: readonly string[], read: readonly string[]): unknown[] => (read.length === 0 ? [lock] : [lock, read]);

/**
 * The values of {@link SQL}`.postEntry`: the entry's kind, wallet, network, currency, amount and
 * reference, its postings (account id, currency, amount) and the new cached balances (code, balance).
 */
export const entryValues = (
  entry: readonly [string, string, string, string, string, string | null],
  postings: readonly (readonly [string, string, string])[],
  balances: readonly (readonly [string, string])[],
): unknown[] => [
  ...entry,
  postings.map((p) => p[0]),
  postings.map((p) => p[1]),
  postings.map((p) => p[2]),
  balances.map((b) => b[0]),
  balances.map((b) => b[1]),
];
