/**
 * Pure rules of the outgoing notifications (reference: "Webhook configuration", "Customer webhook";
 * docs/security.md "Outgoing notifications and their targets"): what a valid target URL and
 * webhook configuration are, and the Standard Webhooks signature. The retry schedule, the lease and
 * the verdict of an answer are the outbox's, for every channel (src/domain/outbox.ts,
 * docs/outbox.md). No I/O; randomness and time are passed in.
 */
import { createHmac, randomBytes } from "node:crypto";
import { DomainError, quote } from "./errors.js";

/** A configured header as sent on Create and Update Webhook. */
export interface WebhookHeaderInput {
  key: string;
  value: string;
}

/** Longest target URL, characters: as sent (the schemas' `maxLength`) and once normalised (the stored column). */
export const MAX_TARGET_URL_LENGTH = 2048;

/** Header names the reference allows: letters, digits, hyphen and underscore. */
const HEADER_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * Header names (lower case, `_` written `-`) that cannot be configured: the hop-by-hop and framing
 * headers (HTTP/1.1 sets them for the connection and the body it sends; a configured one would
 * break the request or could never be sent) and the headers the service sets on every
 * notification. Every `webhook-*` name is refused too (the Standard Webhooks headers). The rule is
 * in docs/security.md "Outgoing notifications and their targets".
 */
export const RESERVED_HEADERS: readonly string[] = [
  "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "expect", "host",
  "content-length", "content-type", "user-agent",
];

/** What a configured header value may hold: visible ASCII characters and spaces (0x20–0x7E). */
const HEADER_VALUE = /^[\x20-\x7e]*$/;

/** Characters a target URL may not hold anywhere: C0 controls, DEL, C1 controls, line and paragraph separators. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const URL_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** `U+XXXX` of the first code point of `s` at `index`, for messages that must not repeat a value. */
function codePointAt(s: string, index: number): string {
  return `U+${(s.codePointAt(index) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * The one syntax rule of an outgoing notification target URL, shared by the platform webhook
 * (Create and Update Webhook) and the credit notifications (NotificationsEnlist); the address
 * rule (SSRF guard) is `checkTarget` of src/modules/net/targets.ts, which calls this first.
 * Stated in docs/security.md "Outgoing notifications and their targets".
 * @param url the URL as sent, not trimmed.
 * @param field the request field named by the error (`url`, `creditNotificationsURL`).
 * @returns the URL parsed by the WHATWG parser (`href` is what is stored).
 * @throws DomainError BAD_REQUEST (400) on `field` for a URL that holds a control character
 *   (C0, DEL, C1, U+2028, U+2029) anywhere, starts or ends with white space, is not absolute
 *   `http://` or `https://`, carries a user name or password, names port 0 (refused whatever
 *   `ALLOW_PRIVATE_NETWORK_TARGETS` says), or is longer than {@link MAX_TARGET_URL_LENGTH}
 *   characters once normalised. Messages begin with `field` and quote at most 32 characters.
 */
export function checkTargetUrl(url: string, field = "url"): URL {
  const control = URL_CONTROL.exec(url);
  if (control) {
    throw new DomainError("BAD_REQUEST", `${field} must not hold control characters or line breaks (${codePointAt(url, control.index)} at position ${control.index}).`, field);
  }
  if (url !== url.trim()) throw new DomainError("BAD_REQUEST", `${field} must not start or end with spaces.`, field);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DomainError("BAD_REQUEST", `${field} ${quote(url)} is not an absolute URL.`, field);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new DomainError("BAD_REQUEST", `${field} must be an http:// or https:// URL, got ${quote(parsed.protocol)}.`, field);
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new DomainError("BAD_REQUEST", `${field} must not carry a user name or password; send credentials as a configured header.`, field);
  }
  if (parsed.port === "0") throw new DomainError("BAD_REQUEST", `${field} must not name port 0: nothing can be sent there.`, field);
  if (parsed.href.length > MAX_TARGET_URL_LENGTH) {
    throw new DomainError("BAD_REQUEST", `${field} must be at most ${MAX_TARGET_URL_LENGTH} characters once normalised (${parsed.href.length}).`, field);
  }
  return parsed;
}

/**
 * The rule of configured headers (reference: "400 (invalid URL or header key)"), so that a stored
 * configuration can always be sent (docs/security.md "Outgoing notifications and their targets").
 * Values are never repeated in messages (they are write-only); keys are quoted.
 * @throws DomainError BAD_REQUEST (400) on `headers.N.key` for a key with characters other than
 *   `[A-Za-z0-9_-]`, a hop-by-hop, framing or service-set header ({@link RESERVED_HEADERS}, in any
 *   case, `_` standing for `-`), any `webhook-*` name, or a name given twice (ignoring case); on
 *   `headers.N.value` for a value holding anything but visible ASCII and spaces (0x20–0x7E).
 */
export function checkWebhookHeaders(headers: readonly WebhookHeaderInput[]): void {
  const seen = new Set<string>();
  headers.forEach((h, i) => {
    const keyField = `headers.${i}.key`;
    if (!HEADER_KEY.test(h.key)) {
      throw new DomainError("BAD_REQUEST", `headers[${i}].key ${quote(h.key)} may hold only letters, digits, '-' and '_'.`, keyField);
    }
    const canonical = h.key.toLowerCase().replace(/_/g, "-");
    if (RESERVED_HEADERS.includes(canonical)) {
      throw new DomainError("BAD_REQUEST", `headers[${i}].key ${quote(h.key)} names a header the service sets itself (hop-by-hop, framing or identification) and cannot be configured.`, keyField);
    }
    if (canonical.startsWith("webhook-")) {
      throw new DomainError("BAD_REQUEST", `headers[${i}].key ${quote(h.key)}: webhook-* headers are the Standard Webhooks signature headers, set by the service.`, keyField);
    }
    const lower = h.key.toLowerCase();
    if (seen.has(lower)) throw new DomainError("BAD_REQUEST", `headers[${i}].key ${quote(h.key)} is given twice.`, keyField);
    seen.add(lower);
    if (!HEADER_VALUE.test(h.value)) {
      const at = [...h.value].findIndex((c) => !HEADER_VALUE.test(c));
      throw new DomainError(
        "BAD_REQUEST",
        `headers[${i}].value of ${quote(h.key)} may hold only visible ASCII characters and spaces (0x20–0x7E); character ${at + 1} is ${codePointAt([...h.value][at] ?? "", 0)}.`,
        `headers.${i}.value`,
      );
    }
  });
}

/**
 * Checks a webhook configuration beyond its schema (reference: "400 (invalid URL or header key)"):
 * {@link checkTargetUrl} on `url`, then {@link checkWebhookHeaders}.
 * @returns the parsed URL.
 * @throws DomainError BAD_REQUEST (400) on `url`, `headers.N.key` or `headers.N.value`.
 */
export function checkWebhookConfig(url: string, headers: readonly WebhookHeaderInput[]): URL {
  const parsed = checkTargetUrl(url);
  checkWebhookHeaders(headers);
  return parsed;
}

/** A new Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** A new `webhook-id`: `msg_` + 22 base64url characters (128 random bits). */
export function newMessageId(): string {
  return `msg_${randomBytes(16).toString("base64url")}`;
}

/**
 * The `webhook-signature` header value (Standard Webhooks): for each secret, `v1,` + base64
 * HMAC-SHA256 over `${id}.${timestamp}.${body}` keyed with the secret's base64-decoded part after
 * `whsec_`; several signatures are separated by spaces (rotation, docs/decisions/notifications.md "The PIN webhook").
 * @param timestamp Unix seconds, the `webhook-timestamp` header.
 */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
      return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`, "utf8").digest("base64")}`;
    })
    .join(" ");
}
