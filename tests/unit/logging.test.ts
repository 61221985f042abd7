/** What the logs keep out (src/logging.ts; docs/operations.md "Observability": logs carry no email addresses at info level). */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, redactEmails, redactUrl } from "../../src/logging.js";

describe("redactUrl", () => {
  it.each([
    ["/api/v1/sandbox/mail?to=jane@example.com", "/api/v1/sandbox/mail?to=[redacted]"],
    ["/api/v1/sandbox/mail?to=jane%40example.com", "/api/v1/sandbox/mail?to=[redacted]"],
    ["/api/v1/users?filter[where][email]=a@b.io&filter[limit]=5", "/api/v1/users?filter[where][email]=[redacted]&filter[limit]=[redacted]"],
    ["/api/v1/users?jane@example.com", "/api/v1/users?[redacted]"],
    ["/api/v1/users?flag", "/api/v1/users?flag"],
    ["/api/v1/users?a=1&&b=", "/api/v1/users?a=[redacted]&&b=[redacted]"],
    ["/api/v1/users", "/api/v1/users"],
    ["/healthz?", "/healthz?"],
  ])("%s → %s", (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});

describe("redactEmails", () => {
  it("replaces addresses, percent-encoded ones too, and leaves connection strings and other text", () => {
    expect(redactEmails('{"msg":"to Jane.Doe+tag@mail.example.co.uk and x%40y.org"}')).toBe('{"msg":"to [email] and [email]"}');
    expect(redactEmails("postgresql://postgres:secret@127.0.0.1:5432/platform")).toBe("postgresql://postgres:secret@127.0.0.1:5432/platform");
    expect(redactEmails("no address here @ all")).toBe("no address here @ all");
  });
});

describe("createLogger", () => {
  it("writes no email address from any field, message or error, at any level; censors credential headers", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger("info", sink);
    logger.info({ user: { email: "jane@example.com" } }, "created user jane@example.com");
    logger.warn({ reason: "login failed for ops@acme.example" }, "email poll failed");
    logger.error({ err: new Error('duplicate key value violates unique constraint: Key (email)=(bob@example.org) already exists') }, "unhandled error");
    logger.info({ req: { headers: { authorization: "Bearer abc", "x-api-key": "sk_live" } } }, "request");
    logger.debug({ email: "hidden@example.com" }, "below the level");
    const out = lines.join("");
    expect(lines).toHaveLength(4);
    for (const email of ["jane@example.com", "ops@acme.example", "bob@example.org", "hidden@example.com"]) expect(out).not.toContain(email);
    expect(out).toContain("[email]");
    expect(out).not.toContain("Bearer abc");
    expect(out).not.toContain("sk_live");
    // every line is still JSON
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
  });
});
