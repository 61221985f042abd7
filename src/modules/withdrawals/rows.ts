/**
 * A withdrawal row as the repository's statements return it (./repository.ts), read into the
 * module's record (the entity's shape, ./entities.ts).
 */
import type { PayoutState, WithdrawalStatus, WithdrawalType } from "../../domain/withdrawals.js";
import type { WithdrawalRecord } from "./repository.js";

/** A row of the `withdrawal` table (and the columns joined to it), by column name. */
export type WithdrawalRow = Record<string, unknown>;

/**
 * A `timestamptz` as the ORM's pool returns it (the text PostgreSQL writes, `2026-11-26 10:16:34.681+00`:
 * MikroORM keeps dates unparsed), as a `Date` (milliseconds); null stays null.
 */
function instant(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  return new Date(String(value).replace(" ", "T").replace(/([+-]\d\d)$/, "$1:00"));
}

/** The record of a withdrawal row (every column of {@link WithdrawalRecord} read; instants as `Date`s). */
export function toRecord(row: WithdrawalRow): WithdrawalRecord {
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
    withdrawalType: row.withdrawal_type as WithdrawalType,
    bankAccountId: row.bank_account_id as string | null,
    payoutRail: row.payout_rail as string | null,
    payoutReference: row.payout_reference as string | null,
    payoutState: row.payout_state as PayoutState | null,
    payoutDueAt: instant(row.payout_due_at),
  };
}
