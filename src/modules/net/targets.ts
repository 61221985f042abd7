/**
 * Outgoing connections to customer-chosen targets (webhook URLs, IMAP hosts) and the SSRF guard
 * of decisions.md §5: a target that resolves to a private, loopback, link-local, unspecified or
 * otherwise non-public address (cloud metadata 169.254.169.254 included) is refused unless
 * `ALLOW_PRIVATE_NETWORK_TARGETS=true`. Checked at registration ({@link assertPublicHost}) and
 * again at connect time, on the address actually connected to, so a DNS answer that changes after
 * registration (DNS rebinding) is refused too: HTTP through `request-filtering-agent`
 * ({@link filteringAgent}), IMAP by connecting to the address {@link resolvePublicHost} checked.
 */
import { lookup } from "node:dns/promises";
import type { Agent } from "node:http";
import ipaddr from "ipaddr.js";
import { useAgent } from "request-filtering-agent";
import { quote } from "../../domain/errors.js";

/** A target refused by the guard, or a host that does not resolve. `message` says which and why. */
export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TargetRefused";
  }
}

/** Whether `ip` is a public unicast address (what ipaddr.js calls `unicast`, IPv4-mapped IPv6 unwrapped). */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  let parsed = ipaddr.parse(ip);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === "unicast";
}

/**
 * Resolves `host` (a name or an IP literal) and checks every address it resolves to.
 * @returns the first address, to connect to (so the address checked is the address used).
 * @throws TargetRefused when the host does not resolve, or (unless `allowPrivate`) any of its
 *   addresses is not public.
 */
export async function resolvePublicHost(host: string, allowPrivate: boolean): Promise<string> {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  let addresses: { address: string }[];
  try {
    addresses = ipaddr.isValid(bare) ? [{ address: bare }] : await lookup(bare, { all: true, verbatim: true });
  } catch {
    throw new TargetRefused(`Host ${quote(host)} does not resolve.`);
  }
  if (addresses.length === 0) throw new TargetRefused(`Host ${quote(host)} does not resolve.`);
  if (!allowPrivate) {
    const blocked = addresses.find((a) => !isPublicAddress(a.address));
    if (blocked) {
      throw new TargetRefused(`Host ${quote(host)} resolves to ${blocked.address}, a private, loopback, link-local or reserved address; such targets are refused.`);
    }
  }
  return (addresses[0] as { address: string }).address;
}

/** {@link resolvePublicHost} for its check only. @throws TargetRefused. */
export async function assertPublicHost(host: string, allowPrivate: boolean): Promise<void> {
  await resolvePublicHost(host, allowPrivate);
}

/**
 * The http(s) agent for `url` that refuses, at connect time, addresses the guard refuses (unless
 * `allowPrivate`). No keep-alive: each attempt opens its own connection.
 */
export function filteringAgent(url: string, allowPrivate: boolean): Agent {
  return useAgent(url, { allowPrivateIPAddress: allowPrivate, allowMetaIPAddress: allowPrivate, keepAlive: false });
}
