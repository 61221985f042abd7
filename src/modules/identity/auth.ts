/**
 * Who is calling (decisions.md §2, reference: "Authentication"). Every request resolves its
 * credential afresh against the database, so a deleted customer, a revoked credential or a
 * deactivated user loses access at once.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { Credential, Customer } from "./entities.js";
import { User } from "../users/entities.js";
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
export type AuthOutcome = { ok: true; principal: Principal } | { ok: false; reason: string };

/** Request headers as node delivers them (lower-case names). */
export type Headers = Record<string, string | string[] | undefined>;

/** The first value of header `name` (lower-case). */
export const header = (headers: Headers, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** Resolves credentials from headers. Construct with the master key's keyed hash. */
export class Authenticator {
  constructor(
    private readonly box: SecretBox,
    private readonly masterHash: string,
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
   * Resolves the caller from `x-master-api-key`, `Authorization: Bearer` or `x-api-key`, in that
   * order. Never throws for a bad credential: it answers `{ok: false, reason}` (→ 401 `UNAUTHORIZED`).
   */
  async authenticate(em: EntityManager, headers: Headers): Promise<AuthOutcome> {
    const master = header(headers, "x-master-api-key");
    if (master !== undefined) {
      return this.isMasterKey(master) ? { ok: true, principal: { kind: "master" } } : { ok: false, reason: "Invalid master API key." };
    }
    const authorization = header(headers, "authorization");
    if (authorization !== undefined) return this.fromBearer(em, authorization);
    const apiKey = header(headers, "x-api-key");
    if (apiKey !== undefined) return this.fromApiKey(em, apiKey);
    return { ok: false, reason: "Missing credentials: send x-api-key or Authorization: Bearer <token>." };
  }

  /** Resolves an owner credential's secret to its active credential and customer. */
  async activeCredential(em: EntityManager, secret: string): Promise<{ credential: Credential } | { reason: string }> {
    const credential = await em.findOne(Credential, { secretHash: this.box.hash(secret) });
    if (!credential) return { reason: "Invalid API key." };
    if (!credential.isActive) return { reason: "API key has been revoked." };
    const customer = await em.findOne(Customer, { customerId: credential.customerId });
    if (!customer || !customer.isActive) return { reason: "Inactive client: the customer has been deleted." };
    return { credential };
  }

  private async fromApiKey(em: EntityManager, apiKey: string): Promise<AuthOutcome> {
    if (this.isMasterKey(apiKey)) return { ok: true, principal: { kind: "master" } };
    const found = await this.activeCredential(em, apiKey);
    if ("reason" in found) return { ok: false, reason: found.reason };
    const { credential } = found;
    return { ok: true, principal: { kind: "owner", customerId: credential.customerId, credentialId: credential.credentialId } };
  }

  private async fromBearer(em: EntityManager, authorization: string): Promise<AuthOutcome> {
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
      if (!claims.customerId || !claims.credentialId) return { ok: false, reason: "Invalid token." };
      const problem = await this.credentialProblem(em, claims.credentialId, claims.customerId);
      if (problem) return { ok: false, reason: problem };
      return { ok: true, principal: { kind: "customer-session", customerId: claims.customerId, credentialId: claims.credentialId } };
    }
    const problem = await this.credentialProblem(em, claims.credentialId, claims.customerId);
    if (problem) return { ok: false, reason: problem };
    const user = await em.findOne(User, { userId: claims.userId, customerId: claims.customerId });
    if (!user || user.deletedAt) return { ok: false, reason: "The token's user no longer exists." };
    if (!user.isActive || user.status !== "VERIFIED") return { ok: false, reason: "The token's user is inactive." };
    // Whole seconds: a token issued in the second of a deactivation is refused too (safe side).
    if (user.tokensRevokedAt && verified.issuedAt <= Math.floor(user.tokensRevokedAt.getTime() / 1000)) {
      return { ok: false, reason: "The token was revoked when its user was deactivated; issue a new one." };
    }
    return { ok: true, principal: { kind: "user", userId: user.userId, customerId: user.customerId, credentialId: claims.credentialId } };
  }

  private async credentialProblem(em: EntityManager, credentialId: string, customerId: string): Promise<string | null> {
    const credential = await em.findOne(Credential, { credentialId });
    if (!credential || credential.customerId !== customerId) return "Invalid token.";
    if (!credential.isActive) return "The credential behind this token has been revoked.";
    const customer = await em.findOne(Customer, { customerId });
    if (!customer || !customer.isActive) return "Inactive client: the customer has been deleted.";
    return null;
  }
}
