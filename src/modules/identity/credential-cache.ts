/**
 * The process's cache of verified credentials (docs/decisions/credentials-and-tokens.md "The
 * credential cache"; docs/performance.md "What an authenticated read costs"). It keeps only what
 * the database admitted: an API key's keyed hash → its credential and customer; a customer
 * session's credential → its status; a user token's (credential, user, customer, token version) →
 * admitted. Refusals are never kept.
 *
 * What keeps it from trusting a revoked credential:
 * - every revoking change (Delete Customer, Delete Credential, Deactivate User) sends a
 *   {@link Revocation} with `pg_notify` in its own transaction, on {@link REVOCATION_CHANNEL}; each
 *   process LISTENs to it and drops the matching entries, and the process that made the change
 *   drops them itself once the transaction commits, before it answers;
 * - an entry is re-verified in the database once it is {@link CREDENTIAL_CACHE_TTL_MS} old, the
 *   bound on staleness when a notification is lost;
 * - while the LISTEN session is down (notifications may be missed) the cache is empty and unused,
 *   and it starts empty again when the session comes back;
 * - a lookup that was in flight when a revocation or a change of the session's state arrived is
 *   not kept (the generation check), so an answer read before a revocation cannot outlive it.
 *
 * Token expiry is not the cache's business: the signature and `exp` are checked on every request
 * (src/modules/identity/secrets.ts `verifyToken`) before the cache is consulted.
 */
import type { Tx } from "../../db/sql.js";
import { notify } from "./repository.js";

/** The LISTEN/NOTIFY channel of revocations. */
export const REVOCATION_CHANNEL = "identity_revocations";

/** How long a cached credential is trusted without a database check: 3 s (the bound on staleness when a notification is lost). */
export const CREDENTIAL_CACHE_TTL_MS = 3000;

/** Most entries one process keeps; the oldest goes first. */
const CACHE_MAX = 10_000;

/** What a revocation names: a credential, a customer (all of its credentials) or a user (all of its tokens). Ids as stored (credential, user: UUIDs). */
export type Revocation = { credential: string } | { customer: string } | { user: string };

/**
 * The narrow port the identity module needs from the LISTEN session (implemented by
 * src/db/listen.ts `NotificationListener`): each payload of a channel, and whether it is listening.
 */
export interface RevocationFeed {
  subscribe(channel: string, subscriber: { onMessage(payload: string): void; onState(up: boolean): void }): void;
}

/** A cached admission: whom it names (for revocations) and when the database admitted it (ms). */
export interface CachedEntry<T> {
  value: T;
  credentialId: string;
  customerId: string;
  userId?: string;
  verifiedAt: number;
}

/** The payload text of `revocation` (JSON). */
export function revocationPayload(revocation: Revocation): string {
  return JSON.stringify(revocation);
}

/** The revocation in `payload`, or null when it is not one (ignored). */
export function parseRevocation(payload: string): Revocation | null {
  try {
    const value = JSON.parse(payload) as Record<string, unknown>;
    for (const key of ["credential", "customer", "user"] as const) {
      if (typeof value[key] === "string") return { [key]: value[key] } as Revocation;
    }
  } catch {
    // not ours
  }
  return null;
}

/** The cache: off (every lookup misses, nothing kept) until {@link follow}ed feed says it listens. */
export class CredentialCache<T> {
  private readonly entries = new Map<string, CachedEntry<T>>();
  private listening = false;
  private epoch = 0;

  constructor(private readonly ttlMs: number = CREDENTIAL_CACHE_TTL_MS) {}

  /** Follows `feed`: revocations drop their entries; the cache is used only while the feed listens. */
  follow(feed: RevocationFeed): void {
    feed.subscribe(REVOCATION_CHANNEL, {
      onMessage: (payload) => {
        const revocation = parseRevocation(payload);
        if (revocation) this.revoke(revocation);
        else this.clear();
      },
      onState: (up) => {
        this.listening = up;
        this.clear();
      },
    });
  }

  /** Whether the cache is in use (its feed listens). */
  get active(): boolean {
    return this.listening;
  }

  /** Entries kept now. */
  get size(): number {
    return this.entries.size;
  }

  /** The generation to hand back to {@link store}: take it before the database lookup. */
  get generation(): number {
    return this.epoch;
  }

  /** The entry of `key` if the cache is in use and it is younger than the bound; else undefined (an old entry is dropped). */
  get(key: string, now = Date.now()): CachedEntry<T> | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (now - entry.verifiedAt >= this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Keeps `entry` under `key` unless the cache is off or anything was revoked since `generation` was taken. */
  store(key: string, entry: CachedEntry<T>, generation: number): void {
    if (!this.listening || generation !== this.epoch) return;
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > CACHE_MAX) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Drops every entry `revocation` names, and makes lookups in flight unkeepable. */
  revoke(revocation: Revocation): void {
    this.epoch += 1;
    for (const [key, entry] of this.entries) {
      if (
        ("credential" in revocation && entry.credentialId === revocation.credential) ||
        ("customer" in revocation && entry.customerId === revocation.customer) ||
        ("user" in revocation && entry.userId === revocation.user)
      ) {
        this.entries.delete(key);
      }
    }
  }

  /** Drops everything. */
  clear(): void {
    this.epoch += 1;
    this.entries.clear();
  }
}

/** Who drops a revocation from this process's cache at once (src/modules/identity/auth.ts `Authenticator.revoked`). */
export interface LocalRevocations {
  revoked(revocation: Revocation): void;
}

/**
 * Announces `revocation` from the revoking transaction `tx`: a NOTIFY on {@link REVOCATION_CHANNEL}
 * (delivered to every process when `tx` commits, never if it rolls back), and this process's own
 * cache dropped right after the commit, before the change answers. @throws the driver's error.
 */
export async function announceRevocation(tx: Tx, local: LocalRevocations, revocation: Revocation): Promise<void> {
  await notify(tx, REVOCATION_CHANNEL, revocationPayload(revocation));
  tx.afterCommit(() => local.revoked(revocation));
}
