/**
 * Secrets at rest and tokens (decisions.md §2).
 *
 * - API keys and the master key are stored only as keyed hashes: HMAC-SHA256 under a hashing key
 *   derived (HKDF) from the service's secrets key; comparisons are constant-time.
 * - Session and user tokens are JWTs (HS256, `jose`) signed with a second derived key.
 * - Generated secrets carry the `sk_` prefix so secret scanners can find them.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { SignJWT, jwtVerify, errors as joseErrors } from "jose";

/** Claims of a session token: an operator session, or a customer session limited to one customer. */
export interface SessionClaims {
  kind: "session";
  scope: "operator" | "customer";
  /** The customer of a customer session; null for operator sessions. */
  customerId: string | null;
  /** The credential a customer session was opened with (re-checked on every request). */
  credentialId: string | null;
  /** Fingerprint of the master key an operator session was opened with (rotation revokes). */
  masterFingerprint: string | null;
}

/** Claims of a user token: the user and the owner credential that issued it. */
export interface UserTokenClaims {
  kind: "user";
  userId: string;
  customerId: string;
  credentialId: string;
}

/** A token's claims, discriminated by `kind`. */
export type TokenClaims = SessionClaims | UserTokenClaims;

/** Outcome of {@link SecretBox.verifyToken} when the token is not acceptable. */
export type TokenProblem = "expired" | "invalid";

/** Hashing, secret generation and token signing under one secrets key. */
export class SecretBox {
  private readonly hashKey: Buffer;
  private readonly signKey: Uint8Array;

  /** @param secretsKey at least 32 characters (`SECRETS_KEY` or the generated one). */
  constructor(secretsKey: string) {
    const ikm = Buffer.from(secretsKey, "utf8");
    this.hashKey = Buffer.from(hkdfSync("sha256", ikm, "platform", "keyed-hash/v1", 32));
    this.signKey = new Uint8Array(hkdfSync("sha256", ikm, "platform", "token-signing/v1", 32));
  }

  /** HMAC-SHA256 of `secret` under the hashing key, hex (64 characters). */
  hash(secret: string): string {
    return createHmac("sha256", this.hashKey).update(secret, "utf8").digest("hex");
  }

  /** Constant-time check that `secret` hashes to `expectedHash` (hex). */
  matches(secret: string, expectedHash: string): boolean {
    const actual = Buffer.from(this.hash(secret), "hex");
    const expected = Buffer.from(expectedHash, "hex");
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }

  /**
   * Issues a JWT carrying `claims`, valid `ttlSeconds` from now.
   * @returns the token and its expiry (UTC).
   */
  async issueToken(claims: TokenClaims, ttlSeconds: number): Promise<{ token: string; expiresAt: Date }> {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + ttlSeconds;
    const token = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .setJti(randomBytes(12).toString("base64url"))
      .sign(this.signKey);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /**
   * Verifies a token's signature and expiry.
   * @returns its claims and issue time (`issuedAt`, Unix seconds), or why it is refused.
   */
  async verifyToken(token: string): Promise<{ claims: TokenClaims; issuedAt: number } | { problem: TokenProblem }> {
    try {
      const { payload } = await jwtVerify(token, this.signKey, { algorithms: ["HS256"] });
      if ((payload.kind === "session" || payload.kind === "user") && typeof payload.iat === "number") {
        return { claims: payload as unknown as TokenClaims, issuedAt: payload.iat };
      }
      return { problem: "invalid" };
    } catch (error) {
      return { problem: error instanceof joseErrors.JWTExpired ? "expired" : "invalid" };
    }
  }
}

/** A new API secret: `sk_` + 32 random bytes, base64url (46 characters). */
export function generateApiSecret(): string {
  return `sk_${randomBytes(32).toString("base64url")}`;
}

/** A new master key: `sk_master_` + 32 random bytes, base64url. */
export function generateMasterKey(): string {
  return `sk_master_${randomBytes(32).toString("base64url")}`;
}

/** The display form of a secret: its first 8 characters followed by `...` (reference: "Credential"). */
export function maskSecret(secret: string): string {
  return `${secret.slice(0, 8)}...`;
}
