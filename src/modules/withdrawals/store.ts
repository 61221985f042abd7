/**
 * The withdrawals module's reads and writes as plain records (docs/performance.md "Withdrawals"):
 * the user a withdrawal needs, the user's wallets with their balance of a currency, a withdrawal
 * locked with its source, and the rows a change writes (the withdrawal, its code's email, its
 * wallet transaction), each one statement of src/modules/withdrawals/repository.ts run with bound
 * parameters on the pool or in the caller's transaction (src/db/sql.ts). The ORM entity `Withdrawal` (entities.ts) stays the
 * schema and serves the read-only routes (Get, List, a repeat's answer).
 */
import type { Sql } from "../../db/sql.js";
import type { WithdrawalStatus } from "../../domain/withdrawals.js";
import { currencyBalances, type BalanceCacheRow, type WalletCurrencyBalance } from "../ledger/service.js";
import type { UserStanding } from "../users/repository.js";
import type { WalletNetworkEntry } from "../wallets/entities.js";
import {
  COMPLETE_WITHDRAWAL,
  INSERT_WITHDRAWAL,
  LOCK_OWN_WITHDRAWAL,
  LOCK_WITHDRAWAL,
  UPDATE_WITHDRAWAL,
  UPDATE_WITHDRAWAL_EMAIL,
  USER_WALLET_BALANCES,
  WITHDRAWAL_USER,
} from "./repository.js";

/**
 * A withdrawal as stored (the entity `Withdrawal`'s fields; amounts as decimal text, instants as
 * UTC `Date`s). The entity is one; so is a row read by {@link lockWithdrawal}.
 */
export interface WithdrawalRecord {
  id: string;
  customerId: string;
  userId: string;
  walletId: string;
  network: string;
  currency: string;
  amount: string;
  address: string;
  memo?: string | null;
  status: WithdrawalStatus;
  codeHash?: string | null;
  codeExpiresAt: Date;
  codeAttempts: number;
  codeFailuresTotal: number;
  codeResends: number;
  codeIssuedAt: Date;
  cancelReason?: string | null;
  idempotencyKey: string;
  txHash?: string | null;
  completedAt?: Date | null;
  cancelledAt?: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

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

type WithdrawalRow = Record<string, unknown>;

/**
 * A new PENDING withdrawal of these fields, created, issued and updated now, with no code yet
 * (`WithdrawalCodes.issue` sets it), no attempts, resends or outcome.
 */
export function newWithdrawal(
  fields: Pick<WithdrawalRecord, "id" | "customerId" | "userId" | "walletId" | "network" | "currency" | "amount" | "address" | "memo" | "idempotencyKey">,
): WithdrawalRecord {
  const now = new Date();
  return {
    ...fields,
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
  if (!row) return null;
  const vault = row.source_vault_wallet_id as string | null;
  const address = row.source_address as string | null;
  return { withdrawal: toRecord(row), source: vault !== null && address !== null ? { vaultWalletId: vault, address } : null };
}

/** Inserts new withdrawal `w` and the email of its code, in `tx`. */
export async function insertWithdrawal(tx: Sql, w: WithdrawalRecord, email: OutboxEmailWrite): Promise<void> {
  const values = [
    w.id, w.customerId, w.userId, w.walletId, w.network, w.currency, w.amount, w.address, w.memo ?? null, w.status, w.codeHash ?? null, w.codeExpiresAt,
    w.codeAttempts, w.codeFailuresTotal, w.codeResends, w.codeIssuedAt, w.cancelReason ?? null, w.idempotencyKey, w.txHash ?? null, w.completedAt ?? null,
    w.cancelledAt ?? null, w.createdAt, w.updatedAt,
  ];
  await tx.run(INSERT_WITHDRAWAL, [...values, ...email]);
}

/** Writes the changes of withdrawal `w` (status, code, counters, outcome; `updatedAt` now), in `tx` (its row locked). With `email`, also the email of its new code. */
export async function saveWithdrawal(tx: Sql, w: WithdrawalRecord, email?: OutboxEmailWrite): Promise<void> {
  w.updatedAt = new Date();
  if (email) await tx.run(UPDATE_WITHDRAWAL_EMAIL, [...changeValues(w), ...email]);
  else await tx.run(UPDATE_WITHDRAWAL, changeValues(w));
}

/** Writes completed withdrawal `w`'s changes ({@link saveWithdrawal}) and its wallet transaction (action `withdrawal`, status `done`), in `tx`. */
export async function completeWithdrawal(tx: Sql, w: WithdrawalRecord, t: TransactionWrite): Promise<void> {
  w.updatedAt = new Date();
  const transaction = [
    t.walletId, t.customerId, t.network, t.address, "withdrawal", "done", w.currency, t.amount, "0", t.amount, "0",
    t.balanceAfter, t.hash, t.memo, t.description, t.orderId, "", t.idempotencyId, t.journalEntryId, t.createdAt,
  ];
  await tx.run(COMPLETE_WITHDRAWAL, [...changeValues(w), ...transaction]);
}

/** The values of an `outbox_email` row, as `MailService.outboxValues` gives them (src/modules/mail/service.ts). */
export type OutboxEmailWrite = readonly unknown[];

function changeValues(w: WithdrawalRecord): unknown[] {
  return [
    w.status, w.codeHash ?? null, w.codeExpiresAt, w.codeAttempts, w.codeFailuresTotal, w.codeResends, w.codeIssuedAt, w.cancelReason ?? null,
    w.txHash ?? null, w.completedAt ?? null, w.cancelledAt ?? null, w.updatedAt, w.id,
  ];
}

/**
 * A `timestamptz` as the ORM's pool returns it (the text PostgreSQL writes, `2026-11-26 10:16:34.681+00`:
 * MikroORM keeps dates unparsed), as a `Date` (milliseconds); null stays null.
 */
function instant(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  return new Date(String(value).replace(" ", "T").replace(/([+-]\d\d)$/, "$1:00"));
}

function toRecord(row: WithdrawalRow): WithdrawalRecord {
  return {
    id: row.id as string,
    customerId: row.customer_id as string,
    userId: row.user_id as string,
    walletId: row.wallet_id as string,
    network: row.network as string,
    currency: row.currency as string,
    amount: row.amount as string,
    address: row.address as string,
    memo: row.memo as string | null,
    status: row.status as WithdrawalStatus,
    codeHash: row.code_hash as string | null,
    codeExpiresAt: instant(row.code_expires_at) as Date,
    codeAttempts: row.code_attempts as number,
    codeFailuresTotal: row.code_failures_total as number,
    codeResends: row.code_resends as number,
    codeIssuedAt: instant(row.code_issued_at) as Date,
    cancelReason: row.cancel_reason as string | null,
    idempotencyKey: row.idempotency_key as string,
    txHash: row.tx_hash as string | null,
    completedAt: instant(row.completed_at),
    cancelledAt: instant(row.cancelled_at),
    createdAt: instant(row.created_at) as Date,
    updatedAt: instant(row.updated_at) as Date,
  };
}
