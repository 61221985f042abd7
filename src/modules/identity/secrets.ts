/**
 * Secrets at rest and tokens (docs/decisions/credentials-and-tokens.md "How secrets are made and checked",
 * "Secrets at rest").
 *
 * - API keys and the master key are stored only as keyed hashes: HMAC-SHA256 under a hashing key
 *   derived (HKDF) from the service's secrets key; comparisons are constant-time.
 * - Session and user tokens are JWTs (HS256, `jose`) signed with a second derived key.
 * - Generated secrets carry the `sk_` prefix so secret scanners can find them.
 * - Secrets the service must use again (webhook signing secrets and header values, IMAP
 *   passwords, notification bodies) are sealed with AES-256-GCM under a third derived key.
 */
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync, randomBytes, timingSafeEqual, type KeyObject } from "node:crypto";
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
  /**
   * The user's token version at issue (`app_user.token_version`); the token authenticates only
   * while it is still the user's (src/modules/identity/auth.ts). Absent on tokens issued before the
   * version existed: read as 0.
   */
  tokenVersion?: number;
}

/** A token's claims, discriminated by `kind`. */
export type TokenClaims = SessionClaims | UserTokenClaims;

/** Outcome of {@link SecretBox.verifyToken} when the token is not acceptable. */
export type TokenProblem = "expired" | "invalid";

/** Hashing, secret generation and token signing under one secrets key. */
export class SecretBox {
  /** HMAC keys are `KeyObject`s: Node 24 imports a raw `Buffer` key afresh on every HMAC (~13 µs instead of ~2 µs). */
  private readonly hashKey: KeyObject;
  private readonly signKey: KeyObject;
  private readonly sealKey: Buffer;
  /** Tokens that verified, by their text, oldest first ({@link verifyToken}). */
  private readonly verified = new Map<string, VerifiedToken>();

  /** @param secretsKey at least 32 characters (`SECRETS_KEY` or the generated one). */
  constructor(secretsKey: string) {
    const ikm = Buffer.from(secretsKey, "utf8");
    this.hashKey = createSecretKey(Buffer.from(hkdfSync("sha256", ikm, "platform", "keyed-hash/v1", 32)));
    this.signKey = createSecretKey(Buffer.from(hkdfSync("sha256", ikm, "platform", "token-signing/v1", 32)));
    this.sealKey = Buffer.from(hkdfSync("sha256", ikm, "platform", "sealed-at-rest/v1", 32));
  }

  /**
   * Encrypts `plaintext` (AES-256-GCM, random 96-bit nonce) bound to `context` (additional
   * authenticated data, e.g. `webhook-secret:<customer_id>`), so a sealed value copied to another
   * row does not open. Format: `v1.<nonce>.<tag>.<ciphertext>`, each base64url.
   */
  seal(plaintext: string, context: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.sealKey, nonce);
    cipher.setAAD(Buffer.from(context, "utf8"));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return ["v1", nonce.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(".");
  }

  /**
   * Decrypts a value of {@link seal} sealed under the same `context`.
   * @throws Error when the value was altered, sealed under another context or another secrets key.
   */
  open(sealed: string, context: string): string {
    const [version, nonce, tag, body] = sealed.split(".");
    if (version !== "v1" || nonce === undefined || tag === undefined || body === undefined) throw new Error("not a sealed value");
    const decipher = createDecipheriv("aes-256-gcm", this.sealKey, Buffer.from(nonce, "base64url"));
    decipher.setAAD(Buffer.from(context, "utf8"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  }

  /** HMAC-SHA256 of `secret` under the hashing key, hex (64 characters). */
  hash(secret: string): string {
    return createHmac("sha256", this.hashKey).update(secret, "utf8").digest("hex");
  }

  /** Constant-time check that `secret` hashes to `expectedHash` (hex). */
  matches(secret: string, expectedHash: string): boolean {
    return this.hashesEqual(this.hash(secret), expectedHash);
  }

  /** Constant-time comparison of two hashes of {@link hash} (hex), so a secret hashed once can be checked against several. */
  hashesEqual(actualHash: string, expectedHash: string): boolean {
    const actual = Buffer.from(actualHash, "hex");
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
   *
   * A token that verified is remembered (its exact text, up to {@link VERIFIED_TOKENS_KEPT} of the
   * latest) until its `exp`, so its next requests skip jose's HMAC and JSON work, about 0.1 ms of
   * CPU each (docs/decisions/credentials-and-tokens.md "How secrets are made and checked"). Only
   * the signature check is skipped: expiry is checked at every use, and whether the token still
   * authenticates (user, credential, token version) is read from the database by every request.
   * @returns its claims and issue time (`issuedAt`, Unix seconds), or why it is refused.
   */
  async verifyToken(token: string): Promise<{ claims: TokenClaims; issuedAt: number } | { problem: TokenProblem }> {
    const known = this.verified.get(token);
    if (known) {
      if (known.expiresAtS === undefined || Date.now() / 1000 < known.expiresAtS) return known.result;
      this.verified.delete(token);
      return { problem: "expired" };
    }
    try {
      const { payload } = await jwtVerify(token, this.signKey, { algorithms: ["HS256"] });
      if ((payload.kind === "session" || payload.kind === "user") && typeof payload.iat === "number") {
        const result = Object.freeze({ claims: Object.freeze(payload) as unknown as TokenClaims, issuedAt: payload.iat });
        this.remember(token, result, payload.exp);
        return result;
      }
      return { problem: "invalid" };
    } catch (error) {
      return { problem: error instanceof joseErrors.JWTExpired ? "expired" : "invalid" };
    }
  }

  /** Keeps a verified token's result until `exp` (Unix seconds), dropping the oldest beyond {@link VERIFIED_TOKENS_KEPT}. */
  private remember(token: string, result: VerifiedToken["result"], exp: number | undefined): void {
    if (this.verified.size >= VERIFIED_TOKENS_KEPT) {
      const oldest = this.verified.keys().next();
      if (!oldest.done) this.verified.delete(oldest.value);
    }
    this.verified.set(token, { result, expiresAtS: exp });
  }
}

/** How many verified tokens a {@link SecretBox} remembers (about 1 KB each at most). */
export const VERIFIED_TOKENS_KEPT = 10_000;

/** A remembered verification: the claims as jose returned them (frozen), and the token's `exp`. */
interface VerifiedToken {
  result: { claims: TokenClaims; issuedAt: number };
  expiresAtS: number | undefined;
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
