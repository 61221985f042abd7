/**
 * Who is calling (docs/decisions/credentials-and-tokens.md, reference: "Authentication"). A
 * credential is resolved against the database, or against the process's cache of credentials the
 * database admitted less than {@link CREDENTIAL_CACHE_TTL_MS} ago (./credential-cache.ts): a
 * deleted customer, a revoked credential or a deactivated user is dropped from every process's
 * cache by the revoking transaction's NOTIFY (docs/decisions/credentials-and-tokens.md "The
 * credential cache"), and the cache is unused while this process does not listen.
 *
 * Hot path (docs/performance.md "What an authenticated read costs"): a cached credential costs no
 * database round trip; otherwise one prepared statement re-checks credential, customer and (for a
 * user token) user together, with the API key's hash as a bound parameter (./repository.ts);
 * no ORM entity is loaded, and an API key is hashed once. A token's signature and expiry are
 * checked on every request, cached or not.
 */
import type { Db } from "../../db/sql.js";
import { isUuid } from "../../domain/ids.js";
import type { SecretBox } from "./secrets.js";
import { credentialByHash, credentialById, userTokenStatus, type CredentialRow } from "./repository.js";
import { CREDENTIAL_CACHE_TTL_MS, CredentialCache, type Revocation, type RevocationFeed } from "./credential-cache.js";

/** A resolved caller. */
export type Principal =
  | { kind: "master" }
  | { kind: "operator-session" }
  | { kind: "customer-session"; customerId: string; credentialId: string }
  | { kind: "owner"; customerId: string; credentialId: string }
  | { kind: "user"; userId: string; customerId: string; credentialId: string };

/** The kinds of {@link Principal}. */
export type PrincipalKind = Principal["kind"];

/**
 * Outcome of {@link Authenticator.authenticate}: the caller, or the 401 reason. `missing` when the
 * request carried no credential at all; `guess` when it presented a secret that matches none (an
 * unknown API key, a wrong master key, a token whose signature does not verify): only those count
 * toward the address's `auth-failures` bucket (docs/security.md "Failed authentications"). An
 * expired token, a revoked credential or an inactive user's token are not guesses: only the holder
 * of a real credential can present them.
 */
export type AuthOutcome = { ok: true; principal: Principal } | { ok: false; reason: string; missing?: true; guess?: true };

/** Request headers as node delivers them (lower-case names). */
export type Headers = Record<string, string | string[] | undefined>;

/** The first value of header `name` (lower-case). */
export const header = (headers: Headers, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** Largest token version a token may carry (PostgreSQL `integer`). */
const TOKEN_VERSION_MAX = 2_147_483_647;

/** How long an API key that authenticated counts as known valid in this process ({@link Authenticator.knownCredential}): an hour, ms. */
export const KNOWN_KEY_TTL_MS = 3_600_000;

/** Most API keys one process remembers as known valid. */
const KNOWN_KEYS_MAX = 10_000;

/** Resolves credentials from headers. Construct with the master key's keyed hash. */
export class Authenticator {
  /** Keyed hashes of API keys that authenticated in this process, with when (ms), oldest first. */
  private readonly knownKeys = new Map<string, number>();
  /** Principals the database admitted recently, by credential (./credential-cache.ts). */
  private readonly cache: CredentialCache<Principal>;

  /** `cacheTtlMs`: how long an admitted credential is trusted without a database check (default {@link CREDENTIAL_CACHE_TTL_MS}). */
  constructor(
    private readonly box: SecretBox,
    private readonly masterHash: string,
    private readonly statements: Db,
    cacheTtlMs: number = CREDENTIAL_CACHE_TTL_MS,
  ) {
    this.cache = new CredentialCache<Principal>(cacheTtlMs);
  }

  /**
   * Turns the credential cache on, following `feed` (the LISTEN session, src/db/listen.ts): the
   * cache is used only while the feed listens, and revocations it delivers drop their entries.
   * Without a feed every request checks its credential in the database.
   */
  follow(feed: RevocationFeed): void {
    this.cache.follow(feed);
  }

  /** Whether the credential cache is in use now (the feed listens). */
  get cacheActive(): boolean {
    return this.cache.active;
  }

  /**
   * Drops what `revocation` names from this process's cache at once: called by a revoking change
   * after its commit, before it answers (the other processes hear its NOTIFY).
   */
  revoked(revocation: Revocation): void {
    this.cache.revoke(revocation);
  }

  /** First 16 hex characters of the master key's hash: operator sessions carry it, so rotating the key ends them. */
  get masterFingerprint(): string {
    return this.masterHash.slice(0, 16);
  }

  /** Whether `secret` is the master key (constant-time). */
  isMasterKey(secret: string): boolean {
    return this.box.matches(secret, this.masterHash);
  }

  /**
   * Resolves the caller from the one credential of the request: `x-master-api-key`,
   * `Authorization: Bearer` or `x-api-key`. A request carries one credential: an API key
   * (`x-api-key` or `x-master-api-key`) together with an `Authorization` header, or different keys
   * in `x-api-key` and `x-master-api-key`, is refused before any of them is checked (a generated
   * client given one secret for every scheme sends it in each header; the service does not guess
   * which was meant). The same key in both API key headers counts once.
   * Never throws for a bad credential: it answers `{ok: false, reason}` (→ 401 `UNAUTHORIZED`).
   * @throws the driver's error when the database cannot answer (→ 503 `SERVICE_UNAVAILABLE`).
   */
  async authenticate(headers: Headers): Promise<AuthOutcome> {
    const master = header(headers, "x-master-api-key");
    const authorization = header(headers, "authorization");
    const apiKey = header(headers, "x-api-key");
    if (authorization !== undefined && (master !== undefined || apiKey !== undefined)) {
      const keyHeader = master !== undefined ? "x-master-api-key" : "x-api-key";
      return { ok: false, reason: `Send one credential: ${keyHeader} or Authorization, not both.` };
    }
    if (master !== undefined && apiKey !== undefined && master !== apiKey) {
      return { ok: false, reason: "Send one credential: x-master-api-key and x-api-key carry different keys." };
    }
    if (master !== undefined) {
      return this.isMasterKey(master) ? { ok: true, principal: { kind: "master" } } : { ok: false, reason: "Invalid master API key.", guess: true };
    }
    if (authorization !== undefined) return this.fromBearer(authorization);
    if (apiKey !== undefined) return this.fromApiKey(apiKey);
    return { ok: false, reason: "Missing credentials: send x-api-key or Authorization: Bearer <token>.", missing: true };
  }

  /**
   * Whether the request's one credential is known to be valid without being checked against the
   * credentials, so that it may pass while its address is locked out for failed guesses
   * (docs/security.md "Failed authentications"): a bearer token whose signature verifies (expired
   * or not: only the service signs them), or an `x-api-key` that authenticated in this process
   * within {@link KNOWN_KEY_TTL_MS}. Never the master key, which an operator may choose, nor a
   * request without a credential. Such a request is then authenticated as usual, so a revoked
   * credential is still refused at once.
   */
  async knownCredential(headers: Headers): Promise<boolean> {
    const authorization = header(headers, "authorization");
    const apiKey = header(headers, "x-api-key");
    if (header(headers, "x-master-api-key") !== undefined || (authorization === undefined) === (apiKey === undefined)) return false;
    if (apiKey !== undefined) {
      const seen = this.knownKeys.get(this.box.hash(apiKey));
      return seen !== undefined && Date.now() - seen < KNOWN_KEY_TTL_MS;
    }
    const token = bearerToken(authorization ?? "");
    if (token === null) return false;
    const verified = await this.box.verifyToken(token);
    return !("problem" in verified) || verified.problem === "expired";
  }

  /** Notes that the API key of keyed hash `secretHash` authenticated now (refreshed at most once a minute; the oldest of {@link KNOWN_KEYS_MAX} dropped first). */
  private rememberKey(secretHash: string): void {
    const now = Date.now();
    const seen = this.knownKeys.get(secretHash);
    if (seen !== undefined && now - seen < 60_000) return;
    this.knownKeys.delete(secretHash);
    this.knownKeys.set(secretHash, now);
    if (this.knownKeys.size > KNOWN_KEYS_MAX) this.knownKeys.delete(this.knownKeys.keys().next().value as string);
  }

  /**
   * Resolves an owner credential's secret to its active credential (`credentialId`, `customerId`).
   * Reasons: "Invalid API key." (unknown), "API key has been revoked.", "Inactive client: the
   * customer has been deleted.".
   */
  async activeCredential(secret: string): Promise<{ credential: { credentialId: string; customerId: string } } | { reason: string }> {
    return this.credentialByHash(this.box.hash(secret));
  }

  private async credentialByHash(secretHash: string): Promise<{ credential: { credentialId: string; customerId: string } } | { reason: string }> {
    const row = await credentialByHash(this.statements, secretHash);
    if (!row) return { reason: UNKNOWN_API_KEY };
    if (!row.credential_active) return { reason: "API key has been revoked." };
    if (row.customer_active !== true) return { reason: "Inactive client: the customer has been deleted." };
    return { credential: { credentialId: row.credential_id, customerId: row.customer_id } };
  }

  private async fromApiKey(apiKey: string): Promise<AuthOutcome> {
    // One hash serves both checks: the master key's and the credential lookup.
    const secretHash = this.box.hash(apiKey);
    if (this.box.hashesEqual(secretHash, this.masterHash)) return { ok: true, principal: { kind: "master" } };
    const key = `k:${secretHash}`;
    const cached = this.cache.get(key);
    if (cached) {
      this.rememberKey(secretHash);
      return { ok: true, principal: cached.value };
    }
    const generation = this.cache.generation;
    const found = await this.credentialByHash(secretHash);
    if ("reason" in found) return found.reason === UNKNOWN_API_KEY ? { ok: false, reason: found.reason, guess: true } : { ok: false, reason: found.reason };
    const { credential } = found;
    this.rememberKey(secretHash);
    const principal: Principal = { kind: "owner", customerId: credential.customerId, credentialId: credential.credentialId };
    this.cache.store(key, { value: principal, credentialId: credential.credentialId, customerId: credential.customerId, verifiedAt: Date.now() }, generation);
    return { ok: true, principal };
  }

  private async fromBearer(authorization: string): Promise<AuthOutcome> {
    const token = bearerToken(authorization);
    if (token === null) return { ok: false, reason: "Malformed Authorization header: expected 'Bearer <token>'." };
    const verified = await this.box.verifyToken(token);
    if ("problem" in verified) {
      return verified.problem === "expired" ? { ok: false, reason: "Token has expired." } : { ok: false, reason: "Invalid token.", guess: true };
    }
    const claims = verified.claims;
    if (claims.kind === "session") {
      if (claims.scope === "operator") {
        return claims.masterFingerprint === this.masterFingerprint
          ? { ok: true, principal: { kind: "operator-session" } }
          : { ok: false, reason: "Session was opened with a master key that is no longer valid." };
      }
      if (!claims.customerId || !claims.credentialId || !isUuid(claims.credentialId)) return { ok: false, reason: "Invalid token." };
      const key = `s:${claims.credentialId}:${claims.customerId}`;
      const cached = this.cache.get(key);
      if (cached) return { ok: true, principal: cached.value };
      const generation = this.cache.generation;
      const row = await credentialById(this.statements, claims.credentialId);
      const problem = credentialProblem(row, claims.customerId);
      if (problem) return { ok: false, reason: problem };
      const principal: Principal = { kind: "customer-session", customerId: claims.customerId, credentialId: claims.credentialId };
      this.cache.store(key, { value: principal, credentialId: claims.credentialId, customerId: claims.customerId, verifiedAt: Date.now() }, generation);
      return { ok: true, principal };
    }
    // ids in tokens are UUIDs; a malformed one must not reach a `::uuid` cast
    if (!isUuid(claims.credentialId) || !isUuid(claims.userId)) return { ok: false, reason: "Invalid token." };
    const version = claims.tokenVersion ?? 0;
    if (!Number.isSafeInteger(version) || version < 0 || version > TOKEN_VERSION_MAX) return { ok: false, reason: "Invalid token." };
    const key = `u:${claims.credentialId}:${claims.userId}:${claims.customerId}:${version}`;
    const cached = this.cache.get(key);
    if (cached) return { ok: true, principal: cached.value };
    const generation = this.cache.generation;
    const user = await userTokenStatus(this.statements, claims.credentialId, claims.userId, claims.customerId, version);
    const problem = credentialProblem(user, claims.customerId);
    if (problem || !user) return { ok: false, reason: problem ?? "Invalid token." };
    if (!user.user_exists || user.user_deleted) return { ok: false, reason: "The token's user no longer exists." };
    if (!user.user_active || user.user_status !== "VERIFIED") return { ok: false, reason: "The token's user is inactive." };
    if (user.token_revoked) return { ok: false, reason: "The token was revoked when its user was deactivated; issue a new one." };
    const principal: Principal = { kind: "user", userId: claims.userId, customerId: claims.customerId, credentialId: claims.credentialId };
    this.cache.store(key, { value: principal, credentialId: claims.credentialId, customerId: claims.customerId, userId: claims.userId, verifiedAt: Date.now() }, generation);
    return { ok: true, principal };
  }
}

/** The reason of an API key that matches no credential (a guess). */
const UNKNOWN_API_KEY = "Invalid API key.";

/**
 * The token of an `Authorization` value of the `Bearer` scheme, or null. The scheme name is matched
 * without regard to case and may be followed by more than one space (RFC 9110 §11.1, RFC 6750 §2.1).
 */
export function bearerToken(authorization: string): string | null {
  const match = /^bearer +([A-Za-z0-9._~+/=-]+)$/i.exec(authorization);
  return match?.[1] ?? null;
}

/** Why a token's credential (`row`, absent when unknown) no longer admits it for `customerId`; null when it does. */
function credentialProblem(row: CredentialRow | undefined, customerId: string): string | null {
  if (!row || row.customer_id !== customerId) return "Invalid token.";
  if (!row.credential_active) return "The credential behind this token has been revoked.";
  if (row.customer_active !== true) return "Inactive client: the customer has been deleted.";
  return null;
}
