/**
 * The Idempotency-Key of PayOutCredit and ReportPayCredit (spec `CreditIdempotencyKeyHeader`) on the
 * service's one mechanism (src/modules/idempotency/, docs/idempotency.md): scope `credit`, shared by
 * both operations, so a key is unique per tenant and caller (the owner credential that sends it)
 * across charges and payments. A repeat with the same operation, wallet and request returns the
 * first result; any other use of the key by the same caller answers 409 `RESOURCE_CONFLICT` in the
 * credit envelope.
 */
import { randomUUID } from "node:crypto";
import type { Tx } from "../../../db/sql.js";
import type { Outcome } from "../../../domain/credit/index.js";
import { DomainError } from "../../../domain/errors.js";
import { claimKey, releaseKey, requestFingerprint, type IdempotentRequest } from "../../idempotency/service.js";
import { commitCatchUp, nowOf, walletNotFound, type WalletChanges } from "./changes.js";
import { refusalError, setAsideRefusal } from "./refusals.js";
import { eventsOf } from "./events-written.js";
import { isWalletId, lockWallet, type LockedWallet } from "./repository/lock.js";

/**
 * The fingerprint of a credit request: SHA-256 (hex) of the canonical JSON of `parts`, which start
 * with the operation (`"charge"` or `"payment"`) and the lower-cased wallet id, so the same key on
 * another operation or wallet is a reuse.
 */
export function requestHash(parts: unknown[]): string {
  return requestFingerprint(parts);
}

/** The credit surface's answer to a key reused with another request: 409 `RESOURCE_CONFLICT`. */
function keyReused(): DomainError {
  return new DomainError("RESOURCE_CONFLICT", "This Idempotency-Key was already used with a different request.");
}

/**
 * Runs a charge, payment or authorization under its Idempotency-Key (`changes` runs the wallet's transaction and
 * its set-aside guard). In one transaction: claims the key first (a concurrent repeat waits on it
 * until the first commits, then gets its result, `duplicate: true`), then locks the wallet and runs
 * `op` with the new result's id; what `op` accepted with is returned as `value` (absent on a
 * duplicate, whose result the caller reads by `resultId`). On a refusal the key is released (a refused request does not use
 * its key up) and the catch-up steps are committed; the refusal is then thrown in the credit envelope.
 * @param caller whose key it is within the tenant: `keyCaller` of the request's caller
 *   (src/modules/idempotency/service.ts; docs/idempotency.md "Whose key it is").
 * @throws DomainError `NOT_FOUND` for an unknown wallet; `RESOURCE_CONFLICT` (409) for a reused key;
 *   the refusal's error (see ./refusals.ts) for a refused operation or a set-aside wallet.
 */
export async function withKey<T = undefined>(
  changes: WalletChanges,
  customerId: string,
  caller: string,
  walletId: string,
  key: string,
  hash: string,
  op: (tx: Tx, locked: LockedWallet, now: Date, resultId: string) => Promise<Outcome<T>>,
): Promise<{ resultId: string; walletId: string; duplicate: boolean; value?: T }> {
  if (!isWalletId(walletId)) throw walletNotFound(walletId);
  const wallet = walletId.toLowerCase();
  const request: IdempotentRequest = { customerId, scope: "credit", caller, key, fingerprint: hash, reused: keyReused };
  let written = 0;
  const outcome = await changes.exact(customerId, wallet, () => changes.db.transaction(async (tx): Promise<Outcome<{ resultId: string; duplicate: boolean; value?: T }>> => {
    const claim = await claimKey(tx, request, randomUUID());
    if (claim.duplicate) return { ok: true, value: claim };
    const locked = await lockWallet(tx, customerId, wallet);
    if (!locked) throw walletNotFound(walletId);
    if (locked.row.setAsideAt) {
      await releaseKey(tx, request);
      return setAsideRefusal(locked.row.setAsideReason ?? "");
    }
    const now = nowOf(locked);
    const done = await op(tx, locked, now, claim.resultId);
    if (!done.ok) {
      await releaseKey(tx, request);
      await commitCatchUp(tx, locked, now);
    }
    written = eventsOf(tx);
    return done.ok ? { ok: true, value: { ...claim, value: done.value } } : done;
  }));
  if (written > 0) changes.onEventsWritten(written);
  if (!outcome.ok) throw refusalError(outcome);
  return { ...outcome.value, walletId: wallet };
}
