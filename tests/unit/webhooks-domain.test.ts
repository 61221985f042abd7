/**
 * Pure rules of the customer webhook (src/domain/webhooks.ts; reference: "Webhook configuration";
 * docs/decisions/notifications.md "The PIN webhook"): configuration checks, the Standard Webhooks signature (checked against the
 * `standardwebhooks` reference library); and the sealing of secrets at rest
 * (src/modules/identity/secrets.ts). The retry schedule and the verdict of an answer are the
 * outbox's (tests/unit/outbox-policy.test.ts).
 */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { checkWebhookConfig, newMessageId, newSigningSecret, signatureHeader } from "../../src/domain/webhooks.js";
import { SecretBox } from "../../src/modules/identity/secrets.js";
import { expectDomainError } from "../support/assertions.js";

describe("checkWebhookConfig", () => {
  it.each(["https://hooks.example.com/pins", "http://hooks.example.com:8080/a?b=c", "https://[2001:db8::1]/x"])("accepts %s", (url) => {
    expect(checkWebhookConfig(url, [{ key: "X-Token_1", value: "v" }]).href).toBe(new URL(url).href);
  });

  it.each([
    ["not a URL", "hooks.example.com", [], "url"],
    ["a relative path", "/pins", [], "url"],
    ["another scheme", "ftp://hooks.example.com", [], "url"],
    ["javascript:", "javascript:alert(1)", [], "url"],
    ["user info", "https://a:b@hooks.example.com", [], "url"],
    ["a key with a space", "https://h.example", [{ key: "X Token", value: "v" }], "headers.0.key"],
    ["a key with a non-ASCII letter", "https://h.example", [{ key: "X-Tökén", value: "v" }], "headers.0.key"],
    ["an empty key", "https://h.example", [{ key: "", value: "v" }], "headers.0.key"],
    ["a reserved key", "https://h.example", [{ key: "webhook-id", value: "v" }], "headers.0.key"],
    ["Content-Type", "https://h.example", [{ key: "Content-Type", value: "text/plain" }], "headers.0.key"],
    ["a duplicate key", "https://h.example", [{ key: "X-A", value: "1" }, { key: "x-A", value: "2" }], "headers.1.key"],
    ["a value with CR LF", "https://h.example", [{ key: "X-A", value: "a\r\nb" }], "headers.0.value"],
    ["a value with NUL", "https://h.example", [{ key: "X-A", value: "a\0b" }], "headers.0.value"],
  ])("refuses %s with 400 BAD_REQUEST", (_what, url, headers, field) => {
    expectDomainError(() => checkWebhookConfig(url, headers), "BAD_REQUEST", field);
  });

  it("echoes at most a short prefix of a long invalid value", () => {
    const error = expectDomainError(() => checkWebhookConfig("x".repeat(5000), []), "BAD_REQUEST", "url");
    expect(error.message.length).toBeLessThan(200);
  });
});

describe("Standard Webhooks signature", () => {
  const body = JSON.stringify({ type: "withdrawal.pin", data: { code: "123456" } });

  it("matches the standardwebhooks library for the same secret, id and timestamp", () => {
    const secret = newSigningSecret();
    const timestamp = 1_767_000_000;
    const ours = signatureHeader([secret], "msg_abc", timestamp, body);
    expect(ours).toBe(new Webhook(secret).sign("msg_abc", new Date(timestamp * 1000), body));
  });

  it("signs with every secret given, space-separated; each verifies on its own", () => {
    const [a, b] = [newSigningSecret(), newSigningSecret()];
    const timestamp = Math.floor(Date.now() / 1000);
    const header = signatureHeader([a, b], "msg_two", timestamp, body);
    expect(header.split(" ")).toHaveLength(2);
    const headers = { "webhook-id": "msg_two", "webhook-timestamp": String(timestamp), "webhook-signature": header };
    expect(new Webhook(a).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(b).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(a).verify(`${body} `, headers)).toThrow();
  });

  it("secrets are whsec_ + 32 random bytes; message ids msg_ + 128 random bits", () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
    expect(newMessageId()).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
  });
});

describe("SecretBox.seal / open (AES-256-GCM)", () => {
  const box = new SecretBox("unit-test-secrets-key-0123456789abcdefghij");

  it("round-trips and uses a fresh nonce every time", () => {
    const a = box.seal("hunter2", "imap-password:p1");
    const b = box.seal("hunter2", "imap-password:p1");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(a).not.toContain("hunter2");
    expect(box.open(a, "imap-password:p1")).toBe("hunter2");
    expect(box.open(box.seal("", "c"), "c")).toBe("");
    expect(box.open(box.seal("ünïcødé ✓", "c"), "c")).toBe("ünïcødé ✓");
  });

  it("refuses another context, another key, and any change of the sealed value", () => {
    const sealed = box.seal("whsec_secret", "webhook-secret:acme");
    expect(() => box.open(sealed, "webhook-secret:other")).toThrow();
    expect(() => new SecretBox("another-secrets-key-0123456789abcdefghijk").open(sealed, "webhook-secret:acme")).toThrow();
    const parts = sealed.split(".");
    const body = Buffer.from(parts[3]!, "base64url");
    body[0] = body[0]! ^ 1;
    expect(() => box.open([parts[0], parts[1], parts[2], body.toString("base64url")].join("."), "webhook-secret:acme")).toThrow();
    expect(() => box.open("plain text", "webhook-secret:acme")).toThrow();
  });
});
