/**
 * Token verification remembers a verified token until its expiry (src/modules/identity/secrets.ts;
 * docs/decisions/credentials-and-tokens.md "How secrets are made and checked"): the same answer
 * again, an expired token refused even when remembered, a forged or other-key token never
 * accepted, and at most VERIFIED_TOKENS_KEPT tokens kept.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SecretBox, VERIFIED_TOKENS_KEPT } from "../../src/modules/identity/secrets.js";

const KEY = "unit-secrets-key-0123456789abcdefghijklmnop";
const claims = { kind: "user" as const, userId: "3f1c5a4e-8a47-4d0e-9a8e-0c5b6f1d2e3a", customerId: "acme", credentialId: "9e2f0c1a-6b3d-4c5e-8f7a-1b2c3d4e5f60", tokenVersion: 2 };

afterEach(() => {
  vi.useRealTimers();
});

describe("SecretBox.verifyToken", () => {
  it("answers a remembered token as the first time, and refuses it once expired", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-11-26T10:00:00Z"));
    const box = new SecretBox(KEY);
    const { token } = await box.issueToken(claims, 60);
    const first = await box.verifyToken(token);
    expect(first).toMatchObject({ claims });
    expect(await box.verifyToken(token)).toEqual(first);
    vi.setSystemTime(new Date("2026-11-26T10:00:59.900Z"));
    expect(await box.verifyToken(token)).toEqual(first);
    vi.setSystemTime(new Date("2026-11-26T10:01:00Z"));
    expect(await box.verifyToken(token)).toEqual({ problem: "expired" });
    expect(await box.verifyToken(token)).toEqual({ problem: "expired" });
  });

  it("never accepts a token of another key or with a changed payload, before or after a good one was remembered", async () => {
    const box = new SecretBox(KEY);
    const other = new SecretBox(`${KEY}-other`);
    const { token } = await box.issueToken(claims, 60);
    const { token: foreign } = await other.issueToken(claims, 60);
    expect(await box.verifyToken(foreign)).toEqual({ problem: "invalid" });
    expect(await box.verifyToken(token)).toMatchObject({ claims });
    const [header, payload, signature] = token.split(".");
    const changed = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload as string, "base64url").toString()), tokenVersion: 3 })).toString("base64url");
    expect(await box.verifyToken(`${header}.${changed}.${signature}`)).toEqual({ problem: "invalid" });
    expect(await box.verifyToken(foreign)).toEqual({ problem: "invalid" });
  });

  it("keeps at most VERIFIED_TOKENS_KEPT tokens, dropping the oldest first, and still verifies a dropped one", async () => {
    const box = new SecretBox(KEY);
    const tokens: string[] = [];
    for (let i = 0; i <= VERIFIED_TOKENS_KEPT; i++) tokens.push((await box.issueToken({ ...claims, tokenVersion: i }, 600)).token);
    for (const token of tokens) await box.verifyToken(token);
    const kept = (box as unknown as { verified: Map<string, unknown> }).verified;
    expect(kept.size).toBe(VERIFIED_TOKENS_KEPT);
    expect(kept.has(tokens[0] as string)).toBe(false);
    expect(kept.has(tokens[VERIFIED_TOKENS_KEPT] as string)).toBe(true);
    expect(await box.verifyToken(tokens[0] as string)).toMatchObject({ claims: { tokenVersion: 0 } });
  });
});
