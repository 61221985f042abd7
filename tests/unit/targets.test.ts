/**
 * The SSRF guard's address rule (src/modules/net/targets.ts; docs/security.md "Outgoing
 * notifications and their targets"): only public unicast
 * addresses are allowed as webhook and IMAP targets unless private targets are allowed.
 */
import { describe, expect, it } from "vitest";
import { TargetRefused, isPublicAddress, resolvePublicHost } from "../../src/modules/net/targets.js";

describe("isPublicAddress", () => {
  it.each(["93.184.215.14", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2001:4860:4860::8888"])("%s is public", (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  it.each([
    ["loopback", "127.0.0.1"], ["loopback /8", "127.255.0.9"], ["IPv6 loopback", "::1"],
    ["private 10/8", "10.0.0.1"], ["private 172.16/12", "172.20.1.1"], ["private 192.168/16", "192.168.1.1"],
    ["link-local / cloud metadata", "169.254.169.254"], ["IPv6 link-local", "fe80::1"], ["IPv6 unique local", "fd00::1"],
    ["unspecified", "0.0.0.0"], ["IPv6 unspecified", "::"], ["carrier-grade NAT", "100.64.0.1"],
    ["broadcast", "255.255.255.255"], ["multicast", "224.0.0.1"], ["IPv4-mapped loopback", "::ffff:127.0.0.1"],
    ["IPv4-mapped private", "::ffff:10.0.0.1"], ["documentation range", "192.0.2.1"], ["not an address", "example.com"],
  ])("%s (%s) is not", (_what, ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it("an IPv6 form of a public IPv4 address is refused too (request-filtering-agent refuses it at connect time)", () => {
    expect(isPublicAddress("::ffff:8.8.8.8")).toBe(false);
    expect(isPublicAddress("::8.8.8.8")).toBe(false);
  });

  it("names the IPv4 address an IPv6 form embeds when it refuses it", async () => {
    await expect(resolvePublicHost("[::127.0.0.1]", false)).rejects.toThrow(/::127\.0\.0\.1 \(an IPv6 form of 127\.0\.0\.1\)/);
    expect(await resolvePublicHost("[::127.0.0.1]", true)).toBe("::127.0.0.1");
  });
});

describe("resolvePublicHost", () => {
  it("returns an IP literal without a lookup, and refuses a private one unless allowed", async () => {
    expect(await resolvePublicHost("93.184.215.14", false)).toBe("93.184.215.14");
    expect(await resolvePublicHost("[::1]", true)).toBe("::1");
    await expect(resolvePublicHost("127.0.0.1", false)).rejects.toBeInstanceOf(TargetRefused);
    await expect(resolvePublicHost("[::1]", false)).rejects.toThrow(/::1/);
  });

  it("checks what a name resolves to: localhost is refused, or returned when private targets are allowed", async () => {
    await expect(resolvePublicHost("localhost", false)).rejects.toThrow(/resolves to/);
    expect(["127.0.0.1", "::1"]).toContain(await resolvePublicHost("localhost", true));
  });

  it("a name that does not resolve is refused with its reason", async () => {
    await expect(resolvePublicHost("no-such-host.invalid", true)).rejects.toThrow(/does not resolve/);
  });
});
