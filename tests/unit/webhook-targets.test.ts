/**
 * The shared check of outgoing notification targets (docs/security.md "Outgoing notifications
 * and their targets"): one URL rule for the platform webhook and the credit notifications
 * (src/domain/webhooks.ts `checkTargetUrl`), the configured-header rule of the platform webhook
 * (`checkWebhookConfig`), the address rule of the SSRF guard with the IPv6 forms that embed an
 * IPv4 address (src/modules/net/targets.ts `isPublicAddress`), and the guard at connect time.
 */
import { describe, expect, it } from "vitest";
import { checkTargetUrl, checkWebhookConfig } from "../../src/domain/webhooks.js";
import { guardLookup, isPublicAddress } from "../../src/modules/net/targets.js";
import { postJson } from "../../src/modules/outbox/http-sender.js";
import { expectDomainError } from "../support/assertions.js";

describe("checkTargetUrl: the one URL rule of both surfaces", () => {
  it.each([
    "https://hooks.example.com/pins",
    "http://hooks.example.com:8080/a?b=c#frag",
    "https://[2001:db8::1]/x",
    "http://93.184.215.14:65535/",
    "https://hooks.example.com/a%20b",
  ])("accepts %s, as the WHATWG parser writes it", (url) => {
    expect(checkTargetUrl(url).href).toBe(new URL(url).href);
  });

  it.each([
    ["port 0", "http://93.184.215.14:0/hook"],
    ["port 0 written 000", "https://hooks.example.com:000/hook"],
    ["port 0 of an IPv6 literal", "http://[::1]:0/hook"],
    ["a CR LF inside", "http://93.184.215.14/ho\r\nok"],
    ["a LF at the end", "http://93.184.215.14/hook\n"],
    ["a tab inside", "http://93.184.215.14/ho\tok"],
    ["a NUL", "http://93.184.215.14/ho\0ok"],
    ["a DEL", "http://93.184.215.14/ho\u007fok"],
    ["a C1 control", "http://93.184.215.14/ho\u0085ok"],
    ["a line separator", "http://93.184.215.14/ho\u2028ok"],
    ["a leading space", " http://93.184.215.14/hook"],
    ["a trailing space", "http://93.184.215.14/hook "],
    ["a trailing no-break space", "http://93.184.215.14/hook\u00a0"],
    ["not absolute", "hooks.example.com/pins"],
    ["another scheme", "ftp://hooks.example.com/pins"],
    ["user info", "https://user:pass@hooks.example.com/pins"],
    ["a port out of range", "http://hooks.example.com:65536/"],
    ["longer than 2048 characters once normalised", `https://hooks.example.com/${"é".repeat(400)}`],
  ])("refuses %s with 400 BAD_REQUEST on url", (_what, url) => {
    const error = expectDomainError(() => checkTargetUrl(url), "BAD_REQUEST", "url");
    expect(error.message).toMatch(/^url /);
  });

  it("names the field it is given and says which rule was broken", () => {
    expect(expectDomainError(() => checkTargetUrl("http://h.example:0/", "creditNotificationsURL"), "BAD_REQUEST", "creditNotificationsURL").message).toMatch(/port 0/);
    expect(expectDomainError(() => checkTargetUrl("http://h.example/\r\n"), "BAD_REQUEST", "url").message).toMatch(/U\+000D/);
    expect(expectDomainError(() => checkTargetUrl(" http://h.example/"), "BAD_REQUEST", "url").message).toMatch(/spaces/);
  });
});

describe("checkWebhookConfig: configured headers that can always be sent", () => {
  it.each([
    ["X-Acme-Token", "abc 123 !#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"],
    ["x_trace_source", "custody"],
    ["Authorization", "Bearer eyJhbGciOi.x.y"],
    ["X-Empty", ""],
    ["Connection-Id", "v"],
    ["X-Content-Type", "v"],
    ["Webhook", "v"],
    ["Hostname", "v"],
  ])("accepts %s: %s", (key, value) => {
    expect(() => checkWebhookConfig("https://h.example", [{ key, value }])).not.toThrow();
  });

  it.each([
    "Connection", "Keep-Alive", "keep_alive", "Transfer-Encoding", "transfer_encoding", "TE", "te", "Trailer", "TRAILER",
    "Upgrade", "Expect", "Host", "HOST", "Content-Length", "content_length", "Content-Type", "Content_Type", "CONTENT-type",
    "User-Agent", "webhook-id", "Webhook-Timestamp", "webhook_signature", "Webhook-Anything", "WEBHOOK_X",
  ])("refuses the key %s with 400 on headers.0.key", (key) => {
    const error = expectDomainError(() => checkWebhookConfig("https://h.example", [{ key, value: "v" }]), "BAD_REQUEST", "headers.0.key");
    expect(error.message).toContain(key);
  });

  it.each([
    ["a Cyrillic word", "ключ"],
    ["a line separator", "a\u2028b"],
    ["a paragraph separator", "a\u2029b"],
    ["a Latin-1 letter", "café"],
    ["a tab", "a\tb"],
    ["CR LF", "a\r\nX-B: 2"],
    ["NUL", "a\0b"],
    ["DEL", "a\u007fb"],
    ["an emoji", "🔑"],
  ])("refuses a value with %s with 400 on headers.N.value, never repeating the value", (_what, value) => {
    const headers = [{ key: "X-Ok", value: "fine" }, { key: "X-Secret", value }];
    const error = expectDomainError(() => checkWebhookConfig("https://h.example", headers), "BAD_REQUEST", "headers.1.value");
    expect(error.message).toMatch(/visible ASCII/);
    expect(error.message).toContain("X-Secret");
    if (value.length > 1) expect(error.message).not.toContain(value);
  });
});

describe("isPublicAddress: IPv6 forms that embed an IPv4 address", () => {
  it.each([
    ["IPv4-compatible loopback", "::127.0.0.1"],
    ["IPv4-compatible loopback, hex", "::7f00:1"],
    ["IPv4-compatible private", "::10.0.0.1"],
    ["IPv4-compatible metadata", "::169.254.169.254"],
    ["IPv4-compatible public (deprecated form)", "::8.8.8.8"],
    ["IPv4-mapped loopback", "::ffff:127.0.0.1"],
    ["IPv4-mapped public (refused at connect time by the agent too)", "::ffff:8.8.8.8"],
    ["IPv4-translated", "::ffff:0:127.0.0.1"],
    ["NAT64 loopback", "64:ff9b::127.0.0.1"],
    ["NAT64 private", "64:ff9b::10.0.0.1"],
    ["local-use NAT64", "64:ff9b:1::a00:1"],
    ["6to4 of loopback", "2002:7f00:1::1"],
    ["6to4 of a private network", "2002:a00:1::1"],
    ["Teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
    ["outside 2000::/3", "4000::1"],
    ["site-local", "fec0::1"],
  ])("%s (%s) is refused", (_what, ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each(["2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001:80b::200e", "8.8.8.8"])("%s is public", (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });
});

describe("the guard at connect time", () => {
  it("refuses an IPv4-compatible IPv6 literal before connecting: the attempt says why, no connection error", async () => {
    const result = await postJson(new URL("http://[::127.0.0.1]:18940/hook"), {}, "{}", 2000, false);
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/not allowed/);
    expect(result.error).toMatch(/127\.0\.0\.1/);
    expect(result.error).not.toMatch(/EHOSTUNREACH|ECONNREFUSED|ENETUNREACH/);
  });

  it("a name whose lookup answers an embedded private IPv4 is refused (every address of an `all` lookup is checked)", async () => {
    const fake = ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
      if (options.all) cb(null, [{ address: "2606:4700:4700::1111", family: 6 }, { address: "::127.0.0.1", family: 6 }]);
      else cb(null, "::127.0.0.1", 6);
    }) as unknown as Parameters<typeof guardLookup>[0];
    const lookup = guardLookup(fake);
    const one = await new Promise<unknown>((resolve) => lookup("rebind.example", { all: false }, (err) => resolve(err)));
    expect(String(one)).toMatch(/not allowed/);
    const all = await new Promise<unknown>((resolve) => lookup("rebind.example", { all: true }, (err) => resolve(err)));
    expect(String(all)).toMatch(/not allowed/);
  });

  it("a request that cannot be built (a header Node refuses) is an unsendable result, never a rejection", async () => {
    const result = await postJson(new URL("http://127.0.0.1:9/hook"), { "X-Key": "ключ" }, "{}", 2000, true);
    expect(result).toMatchObject({ status: null, unsendable: true });
    expect(result.error).toMatch(/X-Key/);
  });
});
