/**
 * Who is calling (decisions.md §2, reference: "Authentication"). Every request resolves its
 * credential afresh against the database, so a deleted customer, a revoked credential or a
 * deactivated user loses access at once.
 *
 * Hot path (issue 10): one prepared statement per request re-checks credential, customer and (for a
 * user token) user together, with the API key's hash as a bound parameter (src/db/statements.ts);
 * no ORM entity is loaded, and an API key is hashed once.
 */
import type { Statements, PreparedStatement } from "../../db/statements.js";
import { isUuid } from "../../domain/ids.js";
import type { SecretBox } from "./secrets.js";

/** A resolved caller. */
export type Principal =
  | { kind: "master" }
  | { kind: "operator-session" }
  | { kind: "customer-session"; customerId: string; credentialId: string }
  | { kind: "owner"; customerId: string; credentialId: string }
  | { kind: "user"; userId: string; customerId: string; credentialId: string };

/** The kinds of {@link Principal}. */
export type PrincipalKind = Principal["kind"];

/** Outcome of {@link Authenticator.authenticate}: a principal, or the 401 reason. */
/** The caller, or why not; `missing` when the request carried no credential at all (not a failed one). */
export type AuthOutcome = { ok: true; principal: Principal } | { ok: false; reason: string; missing?: true };

/** Request headers as node delivers them (lower-case names). */
export type Headers = Record<string, string | string[] | undefined>;

/** The first value of header `name` (lower-case). */
export const header = (headers: Headers, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** Status of a credential and its customer, as {@link CREDENTIAL_BY_HASH} and {@link CREDENTIAL_BY_ID} return it. */
interface CredentialRow {
  credential_id: string;
  customer_id: string;
  credential_active: boolean;
  /** Null when the customer row is missing. */
  customer_active: boolean | null;
}

/** The columns of a {@link CredentialRow}, from `credential c` joined to its customer `cu`. */
const CREDENTIAL_SELECT = `select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active
           from credential c left join customer cu on cu.customer_id = c.customer_id`;

/** A credential by its secret's keyed hash (an owner API key, or a customer secret opening a session). */
export const CREDENTIAL_BY_HASH: PreparedStatement = {
  name: "auth_credential_by_hash",
  text: `${CREDENTIAL_SELECT}
          where c.secret_hash = $1`,
};

/** A credential by id (the credential a customer session or a user token names). */
const CREDENTIAL_BY_ID: PreparedStatement = {
  name: "auth_credential_by_id",
  text: `${CREDENTIAL_SELECT}
          where c.credential_id = $1`,
};

/** {@link CredentialRow} plus the token's user (null columns when the user row is missing). */
interface UserTokenRow extends CredentialRow {
  user_exists: boolean;
  user_deleted: boolean | null;
  user_active: boolean | null;
  user_status: string | null;
  /** Whether the token's version is no longer the user's `token_version` (a deactivation came after its issue). */
  token_revoked: boolean | null;
}

/**
 * A user token's credential, customer and user in one statement. `$1` credential id, `$2` user id,
 * `$3` the token's customer id, `$4` the token's version (an integer; 0 when the token carries
 * none). Revocation compares versions, not instants: a deactivation bumps the user's
 * `token_version`, so a token issued in the same second after a re-activation still works
 * (docs/security.md "Tokens and rate-limit headers").
 */
export const USER_TOKEN: PreparedStatement = {
  name: "auth_user_token",
  text: `select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active,
                u.user_id is not null as user_exists, u.deleted_at is not null as user_deleted, u.is_active as user_active,
                u.status as user_status,
                u.token_version <> $4::integer as token_revoked
           from credential c
           left join customer cu on cu.customer_id = c.customer_id
           left join app_user u on u.user_id = $2::uuid and u.customer_id = $3
          where c.credential_id = $1::uuid`,
};

/** Largest token version a token may carry (PostgreSQL `integer`). */
const TOKEN_VERSION_MAX = 2_147_483_647;

/** Resolves credentials from headers. Construct with the master key's keyed hash. */
export class Authenticator {
  constructor(
    private readonly box: SecretBox,
    private readonly masterHash: string,
    private readonly statements: Statements,
  ) {}

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
      return this.isMasterKey(master) ? { ok: true, principal: { kind: "master" } } : { ok: false, reason: "Invalid master API key." };
    }
    if (authorization !== undefined) return this.fromBearer(authorization);
    if (apiKey !== undefined) return this.fromApiKey(apiKey);
    return { ok: false, reason: "Missing credentials: send x-api-key or Authorization: Bearer <token>.", missing: true };
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
    const [row] = await this.statements.rows<CredentialRow>(CREDENTIAL_BY_HASH, [secretHash]);
    if (!row) return { reason: "Invalid API key." };
    if (!row.credential_active) return { reason: "API key has been revoked." };
    if (row.customer_active !== true) return { reason: "Inactive client: the customer has been deleted." };
    return { credential: { credentialId: row.credential_id, customerId: row.customer_id } };
  }

  private async fromApiKey(apiKey: string): Promise<AuthOutcome> {
    // One hash serves both checks: the master key's and the credential lookup.
    const secretHash = this.box.hash(apiKey);
    if (this.box.hashesEqual(secretHash, this.masterHash)) return { ok: true, principal: { kind: "master" } };
    const found = await this.credentialByHash(secretHash);
    if ("reason" in found) return { ok: false, reason: found.reason };
    const { credential } = found;
    return { ok: true, principal: { kind: "owner", customerId: credential.customerId, credentialId: credential.credentialId } };
  }

  private async fromBearer(authorization: string): Promise<AuthOutcome> {
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(authorization);
    if (!match?.[1]) return { ok: false, reason: "Malformed Authorization header: expected 'Bearer <token>'." };
    const verified = await this.box.verifyToken(match[1]);
    if ("problem" in verified) {
      return { ok: false, reason: verified.problem === "expired" ? "Token has expired." : "Invalid token." };
    }
    const claims = verified.claims;
    if (claims.kind === "session") {
      if (claims.scope === "operator") {
        return claims.masterFingerprint === this.masterFingerprint
          ? { ok: true, principal: { kind: "operator-session" } }
          : { ok: false, reason: "Session was opened with a master key that is no longer valid." };
      }
      if (!claims.customerId || !claims.credentialId || !isUuid(claims.credentialId)) return { ok: false, reason: "Invalid token." };
      const [row] = await this.statements.rows<CredentialRow>(CREDENTIAL_BY_ID, [claims.credentialId]);
      const problem = credentialProblem(row, claims.customerId);
      if (problem) return { ok: false, reason: problem };
      return { ok: true, principal: { kind: "customer-session", customerId: claims.customerId, credentialId: claims.credentialId } };
    }
    // ids in tokens are UUIDs; a malformed one must not reach a `::uuid` cast
    if (!isUuid(claims.credentialId) || !isUuid(claims.userId)) return { ok: false, reason: "Invalid token." };
    const version = claims.tokenVersion ?? 0;
    if (!Number.isSafeInteger(version) || version < 0 || version > TOKEN_VERSION_MAX) return { ok: false, reason: "Invalid token." };
    const [row] = await this.statements.rows<UserTokenRow>(USER_TOKEN, [claims.credentialId, claims.userId, claims.customerId, version]);
    const problem = credentialProblem(row, claims.customerId);
    if (problem) return { ok: false, reason: problem };
    const user = row as UserTokenRow;
    if (!user.user_exists || user.user_deleted) return { ok: false, reason: "The token's user no longer exists." };
    if (!user.user_active || user.user_status !== "VERIFIED") return { ok: false, reason: "The token's user is inactive." };
    if (user.token_revoked) return { ok: false, reason: "The token was revoked when its user was deactivated; issue a new one." };
    return { ok: true, principal: { kind: "user", userId: claims.userId, customerId: claims.customerId, credentialId: claims.credentialId } };
  }
}

/** Why a token's credential (`row`, absent when unknown) no longer admits it for `customerId`; null when it does. */
function credentialProblem(row: CredentialRow | undefined, customerId: string): string | null {
  if (!row || row.customer_id !== customerId) return "Invalid token.";
  if (!row.credential_active) return "The credential behind this token has been revoked.";
  if (row.customer_active !== true) return "Inactive client: the customer has been deleted.";
  return null;
}
