/**
 * The SQL of the Idempotency-Key mechanism (table `idempotency_key`, src/modules/idempotency/entities.ts;
 * docs/idempotency.md). Each statement runs where it is given ({@link KeyRunner}): an EntityManager
 * (the ORM's transaction of the change, the statements bound in it), or a change's plain-SQL transaction that runs prepared
 * statements (the credit core's: src/modules/credit/accounts/sql.ts), so every change claims its
 * key with the same statements, in the transaction of the change for {@link insertKey} and
 * {@link deleteKey}.
 */
import { runRows, type Runner } from "../../db/statements.js";
import type { PreparedStatement } from "../../db/sql.js";

/** Where a key statement runs: an EntityManager (in its transaction, if any) or a transaction of src/db/sql.ts. */
export type KeyRunner = Runner;

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
export async function insertKey(tx: KeyRunner, at: KeyAddress, stored: StoredKey): Promise<boolean> {
  const rows = await runRows<{ key: string }>(tx, INSERT_KEY, [at.customerId, at.scope, at.caller, at.key, stored.requestFingerprint, stored.resultId]);
  return rows.length > 0;
}

/**
 * The stored key at `at` (the caller's, or the key stored for {@link ANY_CALLER}), as committed (or
 * written by `em`'s own transaction); undefined when there is none.
 */
export async function selectKey(em: KeyRunner, at: KeyAddress): Promise<StoredKey | undefined> {
  const [row] = await runRows<{ request_fingerprint: string; result_id: string }>(em, SELECT_KEY, [at.customerId, at.scope, at.caller, at.key]);
  return row ? { requestFingerprint: row.request_fingerprint, resultId: row.result_id } : undefined;
}

/** Deletes the caller's key row at `at` (in the transaction that inserted it). */
export async function deleteKey(tx: KeyRunner, at: KeyAddress): Promise<void> {
  await runRows(tx, DELETE_KEY, [at.customerId, at.scope, at.caller, at.key]);
}
