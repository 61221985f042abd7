/**
 * The allowlist module's statements on its table `allowlist_address` (docs/architecture.md
 * "Reaching the database"; docs/decisions/limits-and-allowlist.md "Destination allowlist").
 */
import type { PreparedStatement, Sql } from "../../db/sql.js";
import type { AllowlistAddress } from "./entities.js";

/**
 * Inserts an entry (`$1` id, `$2` customer, `$3` user, `$4` currency, `$5` address, `$6` its
 * `addressKey`, `$7` label, `$8` created, `$9` activates), unless the user has the same currency
 * and address key already (the unique index): then nothing, and no row returned.
 */
export const INSERT_ADDRESS: PreparedStatement = {
  name: "allowlist_insert_address",
  text: `insert into allowlist_address (id, customer_id, user_id, currency, address, address_key, label, created_at, activates_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9) on conflict (user_id, currency, address_key) do nothing returning id`,
};

/** When the entry of user `$1`, currency `$2` and address key `$3` becomes `ACTIVE` (no row: not on the list). */
export const SELECT_ACTIVATION: PreparedStatement = {
  name: "allowlist_select_activation",
  text: `select activates_at from allowlist_address where user_id = $1 and currency = $2 and address_key = $3`,
};

/** Inserts `entry` in `tx`. @returns false when the user has that currency and address already. */
export async function insertAddress(tx: Sql, entry: AllowlistAddress): Promise<boolean> {
  const inserted = await tx.rows<{ id: string }>(INSERT_ADDRESS, [
    entry.id, entry.customerId, entry.userId, entry.currency, entry.address, entry.addressKey, entry.label, entry.createdAt, entry.activatesAt,
  ]);
  return inserted.length > 0;
}

/** The activation instant of a user's entry (`userId`, `currency` lower case; `key` src/domain/allowlist.ts `addressKey`), or null when absent. */
export async function activationOf(sql: Sql, userId: string, currency: string, key: string): Promise<Date | null> {
  const [row] = await sql.rows<{ activates_at: Date }>(SELECT_ACTIVATION, [userId, currency, key]);
  return row ? new Date(row.activates_at) : null;
}
