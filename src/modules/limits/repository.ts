/**
 * The limits module's statements (docs/architecture.md "Reaching the database"): its table
 * `customer_limits` (a customer's own caps and allowlist policy) and the movement lock every capped
 * movement takes (docs/decisions/limits-and-allowlist.md "Limits").
 */
import type { CapTable } from "../../domain/limits.js";
import type { PreparedStatement, Sql } from "../../db/sql.js";

/** A customer's stored row: its policy and its own caps per kind (JSON objects keyed by currency). */
export interface LimitsRow {
  allowlist_required: boolean;
  withdrawal_caps: CapTable;
  transfer_caps: CapTable;
}

/** The row of customer `$1`, if it set limits. */
export const SELECT_LIMITS: PreparedStatement = {
  name: "limits_select",
  text: `select allowlist_required, withdrawal_caps, transfer_caps from customer_limits where customer_id = $1`,
};

/**
 * Set Limits in one statement: customer `$1`, policy `$2` (null keeps the stored one, false for a
 * new row), caps `$3` (withdrawal) and `$4` (transfer) as JSON text, `$5` the instant.
 */
export const UPSERT_LIMITS: PreparedStatement = {
  name: "limits_upsert",
  text: `insert into customer_limits (customer_id, allowlist_required, withdrawal_caps, transfer_caps, updated_at)
         values ($1, coalesce($2::boolean, false), $3::jsonb, $4::jsonb, $5)
       on conflict (customer_id) do update set allowlist_required = coalesce($2::boolean, customer_limits.allowlist_required),
         withdrawal_caps = excluded.withdrawal_caps, transfer_caps = excluded.transfer_caps, updated_at = excluded.updated_at`,
};

/** Takes the transaction-scoped advisory lock `$1` (`<kind>:<userId>:<currency>`), held until the transaction ends. */
export const LOCK_MOVEMENT: PreparedStatement = { name: "limits_lock_movement", text: `select pg_advisory_xact_lock(hashtext($1)) as locked` };

/** The stored row of `customerId`, or undefined when it set no limits. */
export async function selectLimits(on: Sql, customerId: string): Promise<LimitsRow | undefined> {
  const [row] = await on.rows<LimitsRow>(SELECT_LIMITS, [customerId]);
  return row;
}

/** Writes the customer's caps (`withdrawal`, `transfer`: whole tables) and, unless null, its policy. */
export async function upsertLimits(sql: Sql, customerId: string, policy: boolean | null, withdrawal: CapTable, transfer: CapTable, at: Date): Promise<void> {
  await sql.run(UPSERT_LIMITS, [customerId, policy, JSON.stringify(withdrawal), JSON.stringify(transfer), at]);
}

/** In transaction `tx`: waits for and takes the movement lock `key` (`<kind>:<userId>:<currency>`, lower case). */
export async function lockMovement(tx: Sql, key: string): Promise<void> {
  await tx.rows(LOCK_MOVEMENT, [key]);
}
