/**
 * The SQL of the Idempotency-Key mechanism (table `idempotency_key`, src/modules/idempotency/entities.ts;
 * docs/idempotency.md). Each statement runs on the EntityManager it is given: the transaction of
 * the change for {@link insertKey} and {@link deleteKey}.
 */
import type { EntityManager } from "@mikro-orm/postgresql";

/** Where a key lives: tenant, scope, key. */
export interface KeyAddress {
  customerId: string;
  scope: string;
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
 * `insert … on conflict do nothing` of the key row. When another transaction has inserted the same
 * key and not yet ended, PostgreSQL makes this statement wait on the primary key's index until it
 * commits (then nothing is inserted) or rolls back (then this row is).
 * @returns whether this call inserted the row.
 */
export async function insertKey(tx: EntityManager, at: KeyAddress, stored: StoredKey): Promise<boolean> {
  const rows = await tx.execute<{ key: string }[]>(
    `insert into idempotency_key (customer_id, scope, key, request_fingerprint, result_id, created_at)
       values (?, ?, ?, ?, ?, now()) on conflict (customer_id, scope, key) do nothing returning key`,
    [at.customerId, at.scope, at.key, stored.requestFingerprint, stored.resultId],
  );
  return rows.length > 0;
}

/** The stored key at `at`, as committed (or written by `em`'s own transaction); undefined when there is none. */
export async function selectKey(em: EntityManager, at: KeyAddress): Promise<StoredKey | undefined> {
  const [row] = await em.execute<{ request_fingerprint: string; result_id: string }[]>(
    `select request_fingerprint, result_id from idempotency_key where customer_id = ? and scope = ? and key = ?`,
    [at.customerId, at.scope, at.key],
  );
  return row ? { requestFingerprint: row.request_fingerprint, resultId: row.result_id } : undefined;
}

/** Deletes the key row at `at` (in the transaction that inserted it). */
export async function deleteKey(tx: EntityManager, at: KeyAddress): Promise<void> {
  await tx.execute(`delete from idempotency_key where customer_id = ? and scope = ? and key = ?`, [at.customerId, at.scope, at.key]);
}
