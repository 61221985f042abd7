/**
 * The statements of the Idempotency-Key mechanism on its table `idempotency_key`
 * (src/modules/idempotency/entities.ts; docs/idempotency.md). Each runs where it is given (src/db/sql.ts
 * `Sql`): {@link insertKey} and {@link deleteKey} in the transaction of the change, so every change
 * claims its key with the same statements; {@link selectKey} there or on the pool.
 */
import type { PreparedStatement, Sql } from "../../db/sql.js";

/**
 * The caller of the keys stored before keys were scoped per caller (Migration20261128000000_idempotency_caller):
 * such a key answers every caller of its tenant, as it did when it was stored, and no caller can
 * take it anew. Only that migration writes it; {@link INSERT_KEY} never does.
 */
export const ANY_CALLER = "*";

/**
 * Inserts the key row, `on conflict do nothing`: `$1` tenant, `$2` scope, `$3` caller, `$4` key,
 * `$5` fingerprint, `$6` result id. Inserts nothing either when the tenant's key of that scope
 * was stored for {@link ANY_CALLER} (such rows are never inserted at run time, so the check does
 * not race).
 */
export const INSERT_KEY: PreparedStatement = {
  name: "idempotency_key_insert",
  text: `insert into idempotency_key (customer_id, scope, caller, key, request_fingerprint, result_id, created_at)
       select $1::varchar, $2::varchar, $3::varchar, $4::varchar, $5::varchar, $6::varchar, now()
        where not exists (select 1 from idempotency_key where customer_id = $1 and scope = $2 and caller = '${ANY_CALLER}' and key = $4)
       on conflict (customer_id, scope, caller, key) do nothing returning key`,
};

/** The stored key row: `$1` tenant, `$2` scope, `$3` caller (or {@link ANY_CALLER}'s), `$4` key. At most one row. */
export const SELECT_KEY: PreparedStatement = {
  name: "idempotency_key_select",
  text: `select request_fingerprint, result_id from idempotency_key where customer_id = $1 and scope = $2 and caller in ($3, '${ANY_CALLER}') and key = $4`,
};

/** Deletes the caller's key row: `$1` tenant, `$2` scope, `$3` caller, `$4` key. */
export const DELETE_KEY: PreparedStatement = {
  name: "idempotency_key_delete",
  text: `delete from idempotency_key where customer_id = $1 and scope = $2 and caller = $3 and key = $4`,
};

/** Where a key lives: tenant, scope, caller (src/modules/idempotency/service.ts `keyCaller`), key. */
export interface KeyAddress {
  customerId: string;
  scope: string;
  caller: string;
  key: string;
}

/** What a stored key records. */
export interface StoredKey {
  /** SHA-256 (hex) of the canonical request the key was first used with. */
  requestFingerprint: string;
  /** What that request produced (the resource's id). */
  resultId: string;
}

/**
 * `insert … on conflict do nothing` of the key row (nothing either when the key is stored for
 * {@link ANY_CALLER}). When another transaction has inserted the same key for the same caller and
 * not yet ended, PostgreSQL makes this statement wait on the primary key's index until it commits
 * (then nothing is inserted) or rolls back (then this row is).
 * @returns whether this call inserted the row.
 */
export async function insertKey(tx: Sql, at: KeyAddress, stored: StoredKey): Promise<boolean> {
  const rows = await tx.rows<{ key: string }>(INSERT_KEY, [at.customerId, at.scope, at.caller, at.key, stored.requestFingerprint, stored.resultId]);
  return rows.length > 0;
}

/**
 * The stored key at `at` (the caller's, or the key stored for {@link ANY_CALLER}), as committed (or
 * written by `sql`'s own transaction); undefined when there is none.
 */
export async function selectKey(sql: Sql, at: KeyAddress): Promise<StoredKey | undefined> {
  const [row] = await sql.rows<{ request_fingerprint: string; result_id: string }>(SELECT_KEY, [at.customerId, at.scope, at.caller, at.key]);
  return row ? { requestFingerprint: row.request_fingerprint, resultId: row.result_id } : undefined;
}

/** Deletes the caller's key row at `at` (in the transaction that inserted it). */
export async function deleteKey(tx: Sql, at: KeyAddress): Promise<void> {
  await tx.rows(DELETE_KEY, [at.customerId, at.scope, at.caller, at.key]);
}
