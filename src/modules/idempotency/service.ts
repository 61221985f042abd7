/**
 * The one Idempotency-Key mechanism of the service (docs/idempotency.md). A key is unique per
 * tenant, scope and caller (the user of a user token, the credential of an owner key or a customer
 * session, or the operator: {@link keyCaller}); it remembers the fingerprint (SHA-256 of the
 * canonical request) it was first used with and a reference to that request's result. Everywhere:
 *
 * - the same key with the same request → the first result, marked duplicate (the caller renders
 *   the resource from its id, as it is now);
 * - the same key with another request → the caller's conflict error (`IdempotentRequest.reused`:
 *   each surface keeps its own code and envelope);
 * - concurrent identical requests → exactly one effect: the key row is inserted first in the
 *   change's transaction (`insert … on conflict do nothing`), so a concurrent twin waits on the
 *   key's unique index until the first transaction ends, then reads its result (committed) or takes
 *   the key itself (rolled back);
 * - a refused request does not use its key up: a refusal that throws rolls the key row back with
 *   the rest of the transaction; one that commits other work calls {@link releaseKey}.
 *
 * This needs READ COMMITTED (PostgreSQL's default, the service's): each statement sees what was
 * committed before it began, so the select after a conflicting insert sees the winner's row.
 */
import { createHash, randomUUID } from "node:crypto";
import type { Db, Sql, Tx } from "../../db/sql.js";
import { ANY_CALLER, deleteKey, insertKey, selectKey, type KeyAddress } from "./repository.js";

/**
 * The key spaces. A scope is one operation, or a family of operations whose keys must not collide:
 * `withdrawal` (Initiate Withdrawal), `credit` (ReportPayCredit and PayOutCredit together: a key of
 * a payment reused for a charge is a reuse), `transfer` (Create Transfer), `order` (Create Order),
 * `sandbox_deposit` (Create Sandbox Deposit). A new operation adds its scope here (at most 32 characters).
 */
export type IdempotencyScope = "withdrawal" | "credit" | "transfer" | "order" | "sandbox_deposit";

/** Longest key, characters (spec `IdempotencyKeyHeader`, `CreditIdempotencyKeyHeader`; the column's length). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/**
 * Who sent a request that carries an Idempotency-Key, as far as it decides whose key it is: the
 * authenticated caller (src/modules/identity/auth.ts `Principal` is one, and is passed as it is).
 */
export type KeyCaller =
  | { kind: "user"; userId: string }
  | { kind: "owner" | "customer-session"; credentialId: string }
  | { kind: "master" | "operator-session" };

/**
 * The caller of a request whose service was not told who sent it (a caller passing no
 * {@link KeyCaller}): one key space for all such requests of the tenant, apart from every named caller's.
 */
export const UNNAMED_CALLER = "tenant";

/**
 * Whose a key is within its tenant (docs/idempotency.md "Whose key it is"), as stored in
 * `idempotency_key.caller` (at most 64 characters): `user:<userId>` for a user token (every token of
 * that user), `credential:<credentialId>` for the owner API key and for a customer session (the
 * credential it was opened with), `operator` for the master key and operator sessions, and
 * {@link UNNAMED_CALLER} when `caller` is absent. Ids are lower-cased.
 */
export function keyCaller(caller: KeyCaller | null | undefined): string {
  switch (caller?.kind) {
    case "user":
      return `user:${caller.userId.toLowerCase()}`;
    case "owner":
    case "customer-session":
      return `credential:${caller.credentialId.toLowerCase()}`;
    case "master":
    case "operator-session":
      return "operator";
    default:
      return UNNAMED_CALLER;
  }
}

/** One request that carries an Idempotency-Key. */
export interface IdempotentRequest {
  /** The tenant: the platform's customer id or the credit core's tenant id (at most 48 characters). */
  customerId: string;
  scope: IdempotencyScope;
  /** Whose key it is within the tenant: {@link keyCaller} of the request's caller. */
  caller: string;
  /** The client's key as sent (1–255 characters; case-sensitive), or one generated for the request. */
  key: string;
  /** {@link requestFingerprint} of the canonical request: what makes a repeat a repeat. */
  fingerprint: string;
  /**
   * The surface's error for the key reused with another request, thrown as it is returned
   * (platform: DomainError IDEMPOTENCY_KEY_REUSED, 409; credit: DomainError RESOURCE_CONFLICT, 409).
   */
  reused: () => Error;
}

/** How a key was claimed: `resultId` is the new result's id, or the first request's when `duplicate`. */
export interface IdempotencyClaim {
  resultId: string;
  duplicate: boolean;
}

/** What {@link runOnce} did: ran the change (its `value`), or found the first request's result. */
export type OnceOutcome<T> = { duplicate: false; resultId: string; value: T } | { duplicate: true; resultId: string };

/** How often {@link claimKey} tries again when a conflicting key row vanished before it could be read. */
const CLAIM_ATTEMPTS = 3;

/** Longest caller (the column's length). */
const CALLER_MAX_LENGTH = 64;

/**
 * SHA-256, hex (64 characters), of `JSON.stringify(parts)`: the fingerprint of a canonical request.
 * `parts` lists what makes two requests the same, normalised (lower-cased ids, amounts as exact
 * decimal text, absent values as `null`) and in a fixed order; the scope and the tenant need not be
 * in it. The form is the one withdrawals and the credit core always used, so stored keys still match.
 */
export function requestFingerprint(parts: readonly unknown[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

/**
 * The result of an earlier request with `request`'s key, read outside any transaction of the
 * change: lets a repeat be answered before the request's other checks (docs/idempotency.md).
 * @returns the first result's id when the key was used with the same fingerprint; null when unused.
 * @throws `request.reused()` when the key was used with another fingerprint.
 */
export async function priorResult(sql: Sql, request: IdempotentRequest): Promise<string | null> {
  const stored = await selectKey(sql, address(request));
  if (!stored) return null;
  if (stored.requestFingerprint !== request.fingerprint) throw request.reused();
  return stored.resultId;
}

/**
 * Claims `request`'s key for a new result `resultId`. Must be the first statement on the key in the
 * transaction `tx` (src/db/sql.ts `Tx`) that makes the change (and before the change's own locks), so that the key row
 * commits or rolls back with the change. While another transaction holds the same key uncommitted,
 * this waits for it to end. A conflicting row that vanished before it could be read (deleted by its
 * own transaction after the insert saw it: not done by this module) is tried again, at most
 * {@link CLAIM_ATTEMPTS} times in all; READ COMMITTED makes no other retry necessary.
 * @returns `{ resultId, duplicate: false }` when the key is now this transaction's: make the change
 *   with `resultId` as the new resource's id; `{ resultId: first, duplicate: true }` for a repeat:
 *   make no change.
 * @throws `request.reused()` when the key was used with another fingerprint; RangeError for a key
 *   outside 1–255 characters (the surface validates the header first) or a caller not made by
 *   {@link keyCaller}; Error when the key row kept vanishing.
 */
export async function claimKey(tx: Sql, request: IdempotentRequest, resultId: string): Promise<IdempotencyClaim> {
  if (request.key.length === 0 || request.key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    throw new RangeError(`an Idempotency-Key has 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters, not ${request.key.length}`);
  }
  if (request.caller.length === 0 || request.caller.length > CALLER_MAX_LENGTH || request.caller === ANY_CALLER) {
    throw new RangeError(`not a key's caller: ${JSON.stringify(request.caller)}`);
  }
  const at = address(request);
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    if (await insertKey(tx, at, { requestFingerprint: request.fingerprint, resultId })) return { resultId, duplicate: false };
    const stored = await selectKey(tx, at);
    if (!stored) continue;
    if (stored.requestFingerprint !== request.fingerprint) throw request.reused();
    return { resultId: stored.resultId, duplicate: true };
  }
  throw new Error(`the ${request.scope} Idempotency-Key row kept vanishing between its insert and its read`);
}

/**
 * Gives back the key claimed by {@link claimKey} in the same transaction `tx`, for a refusal that
 * still commits other work (e.g. the credit core's catch-up steps): the key stays unused. A
 * refusal that throws out of the transaction needs no release (the key row rolls back).
 */
export async function releaseKey(tx: Sql, request: IdempotentRequest): Promise<void> {
  await deleteKey(tx, address(request));
}

/**
 * Runs `change` once per key, in one transaction of `db` (src/db/sql.ts `Db.transaction`) that
 * first claims the key ({@link claimKey}): a new key runs `change(tx, resultId)` and commits the key
 * with it; a repeat (concurrent or later) runs nothing and gets the first `resultId`. Whatever
 * `change` throws rolls the key back with the transaction and is thrown as it is.
 * @param resultId the id of the result a new key produces (default: a random UUID).
 * @throws `request.reused()` when the key was used with another fingerprint; what `change` throws.
 */
export async function runOnce<T>(db: Db, request: IdempotentRequest, change: (tx: Tx, resultId: string) => Promise<T>, resultId: string = randomUUID()): Promise<OnceOutcome<T>> {
  return db.transaction((tx) => claimThenChange(tx, request, resultId, change));
}

/** In `tx`: the key claimed, then `change` when the key is new ({@link runOnce}). */
async function claimThenChange<Tx extends Sql, T>(tx: Tx, request: IdempotentRequest, resultId: string, change: (tx: Tx, resultId: string) => Promise<T>): Promise<OnceOutcome<T>> {
  const claim = await claimKey(tx, request, resultId);
  if (claim.duplicate) return { duplicate: true, resultId: claim.resultId };
  return { duplicate: false, resultId, value: await change(tx, resultId) };
}

function address(request: IdempotentRequest): KeyAddress {
  return { customerId: request.customerId, scope: request.scope, caller: request.caller, key: request.key };
}
