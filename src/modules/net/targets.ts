/**
 * Outgoing connections to customer-chosen targets (webhook URLs, IMAP hosts) and the SSRF guard
 * (docs/security.md "Outgoing notifications and their targets"): a target that resolves to a
 * private, loopback, link-local, unspecified or otherwise non-public address (cloud metadata
 * 169.254.169.254, and IPv6 forms embedding an IPv4 address such as `[::127.0.0.1]`, included) is
 * refused unless `ALLOW_PRIVATE_NETWORK_TARGETS=true`. Checked at registration ({@link checkTarget},
 * {@link assertPublicHost}) and again at connect time, on the address actually connected to, so a
 * DNS answer that changes after registration (DNS rebinding) is refused too: HTTP through
 * `request-filtering-agent` plus the service's own check ({@link filteringAgent}), IMAP by
 * connecting to the address {@link resolvePublicHost} checked.
 */
import dns, { type LookupAddress, type LookupOptions } from "node:dns";
import { lookup } from "node:dns/promises";
import type { Agent } from "node:http";
import net, { type TcpNetConnectOpts } from "node:net";
import type { Duplex } from "node:stream";
import ipaddr from "ipaddr.js";
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent, useAgent } from "request-filtering-agent";
import { DomainError, quote } from "../../domain/errors.js";
import { checkTargetUrl } from "../../domain/webhooks.js";

/** A target refused by the guard, or a host that does not resolve. `message` says which and why. */
export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TargetRefused";
  }
}

/** IANA's global unicast block: every public IPv6 address lies in it. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/**
 * The IPv4 address an IPv6 address embeds, when it is one of the forms that carry one:
 * IPv4-compatible `::a.b.c.d` (deprecated, ::/96), IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated
 * `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::` and Teredo (the client
 * address, stored inverted in the last 32 bits). Undefined for any other address, `::` and `::1`.
 */
export function embeddedIPv4(ip: ipaddr.IPv6): string | undefined {
  const p = ip.parts;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const range = ip.range();
  if (range === "ipv4Mapped" || range === "rfc6145" || range === "rfc6052") return v4(p[6]!, p[7]!);
  if (range === "6to4") return v4(p[1]!, p[2]!);
  if (range === "teredo") return v4(~p[6]! & 0xffff, ~p[7]! & 0xffff);
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1)) return v4(p[6]!, p[7]!);
  return undefined;
}

/**
 * Whether `ip` is a public unicast address: an IPv4 address that ipaddr.js calls `unicast`, or an
 * IPv6 address in 2000::/3 that ipaddr.js calls `unicast`. Every IPv6 form that embeds an IPv4
 * address ({@link embeddedIPv4}: IPv4-compatible `[::127.0.0.1]`, IPv4-mapped, IPv4-translated,
 * NAT64, 6to4, Teredo) is refused whatever it embeds, as request-filtering-agent refuses them at
 * connect time (docs/security.md "Outgoing notifications and their targets").
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const parsed = ipaddr.parse(ip);
  if (parsed.kind() === "ipv4") return parsed.range() === "unicast";
  const v6 = parsed as ipaddr.IPv6;
  return v6.match(GLOBAL_UNICAST_V6) && v6.range() === "unicast" && embeddedIPv4(v6) === undefined;
}

/** `ip` as a refusal message names it: with the IPv4 address it embeds, if any. */
function describeAddress(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.parse(ip);
  const embedded = parsed.kind() === "ipv6" ? embeddedIPv4(parsed as ipaddr.IPv6) : undefined;
  return embedded === undefined ? ip : `${ip} (an IPv6 form of ${embedded})`;
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
      throw new TargetRefused(`Host ${quote(host)} resolves to ${describeAddress(blocked.address)}, a private, loopback, link-local or reserved address; such targets are refused.`);
    }
  }
  return (addresses[0] as { address: string }).address;
}

/** {@link resolvePublicHost} for its check only. @throws TargetRefused. */
export async function assertPublicHost(host: string, allowPrivate: boolean): Promise<void> {
  await resolvePublicHost(host, allowPrivate);
}

/**
 * The shared check of a notification target (platform webhook and credit notifications, docs/security.md
 * "Outgoing notifications and their targets"): the syntax rule {@link checkTargetUrl}, then the
 * address rule on the host ({@link assertPublicHost}).
 * @param url the URL as sent.
 * @param field the request field errors name (`url`, `creditNotificationsURL`).
 * @returns the parsed URL (its `href` is what is stored).
 * @throws DomainError BAD_REQUEST (400) on `field`: see {@link checkTargetUrl}; a host that does
 *   not resolve; or (unless `allowPrivate`) one that resolves to a non-public address.
 */
export async function checkTarget(url: string, allowPrivate: boolean, field = "url"): Promise<URL> {
  const parsed = checkTargetUrl(url, field);
  try {
    await assertPublicHost(parsed.hostname, allowPrivate);
  } catch (error) {
    if (error instanceof TargetRefused) throw new DomainError("BAD_REQUEST", `${field}: ${error.message}`, field);
    throw error;
  }
  return parsed;
}

/** The refusal of an address at connect time; its message says "not allowed" and names the address. */
function connectRefusal(address: string, host: string | undefined): Error {
  const to = host && host !== address ? ` for host ${quote(host)}` : "";
  return new Error(`Connecting to ${describeAddress(address)}${to} is not allowed: it is a private, loopback, link-local or reserved address.`);
}

/** A `lookup` as `net.connect` calls it: always with an options object. */
type Lookup = (hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => void;

/**
 * Wraps a `lookup` (default `dns.lookup`) so that a name resolving to a non-public address
 * ({@link isPublicAddress}) fails with a "not allowed" error instead of connecting; with
 * `options.all` every address is checked. Used at connect time by {@link filteringAgent}.
 */
export function guardLookup(base?: Lookup): Lookup {
  const lookup = base ?? (dns.lookup as unknown as Lookup);
  return (hostname, options, callback) => {
    lookup(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
      const blocked = addresses.find((a) => !isPublicAddress(a));
      if (blocked !== undefined) return callback(connectRefusal(blocked, hostname), address, family);
      callback(null, address, family);
    });
  };
}

/** A socket that fails at once with `error` (how the agent reports a refused IP literal). */
function refusedSocket(error: Error, listener?: (error: Error | null, socket: Duplex) => void): net.Socket {
  const socket = new net.Socket();
  if (listener) listener(error, socket);
  else socket.destroy(error);
  return socket;
}

/** How the guarded agents connect: the library's createConnection, given the options to use. */
type Connect = (options: TcpNetConnectOpts) => Duplex | net.Socket;

/**
 * request-filtering-agent's checks plus the service's own ({@link isPublicAddress}) at connect
 * time: an IP literal host is checked before connecting (the library lets the IPv4-compatible
 * form `::127.0.0.1` through, as ipaddr.js calls it `unicast`), and every address a name resolves
 * to through {@link guardLookup}; then the library connects, with its own checks.
 */
function guardedConnect(options: TcpNetConnectOpts, listener: ((error: Error | null, socket: Duplex) => void) | undefined, connect: Connect): Duplex | net.Socket {
  const host = options.host;
  if (typeof host === "string" && net.isIP(host) !== 0 && !isPublicAddress(host)) return refusedSocket(connectRefusal(host, undefined), listener);
  return connect({ ...options, lookup: guardLookup(options.lookup as Lookup | undefined) as TcpNetConnectOpts["lookup"] });
}

/** request-filtering-agent's http agent with {@link guardedConnect}. */
class GuardedHttpAgent extends RequestFilteringHttpAgent {
  override createConnection(options: TcpNetConnectOpts, listener?: (error: Error | null, socket: Duplex) => void): Duplex | net.Socket {
    return guardedConnect(options, listener, (o) => super.createConnection(o, listener));
  }
}

/** request-filtering-agent's https agent with {@link guardedConnect}. */
class GuardedHttpsAgent extends RequestFilteringHttpsAgent {
  override createConnection(options: TcpNetConnectOpts, listener?: (error: Error | null, socket: Duplex) => void): Duplex | net.Socket {
    return guardedConnect(options, listener, (o) => super.createConnection(o, listener));
  }
}

/**
 * The http(s) agent for `url` that refuses, at connect time, addresses the guard refuses (unless
 * `allowPrivate`): request-filtering-agent's check and {@link isPublicAddress}, on IP literals and
 * on every address a name resolves to. No keep-alive: each attempt opens its own connection.
 */
export function filteringAgent(url: string, allowPrivate: boolean): Agent {
  const options = { allowPrivateIPAddress: allowPrivate, allowMetaIPAddress: allowPrivate, keepAlive: false };
  if (allowPrivate) return useAgent(url, options);
  return url.startsWith("https:") ? new GuardedHttpsAgent(options) : new GuardedHttpAgent(options);
}
