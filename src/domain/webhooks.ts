/**
 * Pure rules of the customer webhook (reference: "Webhook configuration", "Customer webhook";
 * decisions.md §5): what a valid configuration is, the Standard Webhooks signature, and the retry
 * schedule. No I/O; randomness and time are passed in.
 */
import { createHmac, randomBytes } from "node:crypto";
import { DomainError, quote } from "./errors.js";

/** A configured header as sent on Create and Update Webhook. */
export interface WebhookHeaderInput {
  key: string;
  value: string;
}

/** Header names the reference allows: letters, digits, hyphen and underscore. */
const HEADER_KEY = /^[A-Za-z0-9_-]+$/;

/** Headers the service sets itself on every notification; configuring them answers 400. */
export const RESERVED_HEADERS: readonly string[] = [
  "webhook-id", "webhook-timestamp", "webhook-signature", "content-type", "content-length", "host", "user-agent",
  "connection", "transfer-encoding",
];

/**
 * Checks a webhook configuration beyond its schema (reference: "400 (invalid URL or header key)").
 * @returns the parsed URL.
 * @throws DomainError BAD_REQUEST (400) for a URL that is not absolute `http://` or `https://`
 *   (or carries user info), a header key with characters other than `[A-Za-z0-9_-]`, a reserved
 *   header, a name given twice (ignoring case), or a value with a line break or NUL.
 */
export function checkWebhookConfig(url: string, headers: readonly WebhookHeaderInput[]): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DomainError("BAD_REQUEST", `url ${quote(url)} is not an absolute URL.`, "url");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new DomainError("BAD_REQUEST", `url must be an http:// or https:// URL, got ${quote(parsed.protocol)}.`, "url");
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new DomainError("BAD_REQUEST", "url must not carry a user name or password; send credentials as a configured header.", "url");
  }
  const seen = new Set<string>();
  headers.forEach((h, i) => {
    if (!HEADER_KEY.test(h.key)) {
      throw new DomainError("BAD_REQUEST", `headers[${i}].key ${quote(h.key)} may hold only letters, digits, '-' and '_'.`, `headers.${i}.key`);
    }
    const lower = h.key.toLowerCase();
    if (RESERVED_HEADERS.includes(lower)) {
      throw new DomainError("BAD_REQUEST", `headers[${i}].key ${quote(h.key)} is set by the service and cannot be configured.`, `headers.${i}.key`);
    }
    if (seen.has(lower)) throw new DomainError("BAD_REQUEST", `headers[${i}].key ${quote(h.key)} is given twice.`, `headers.${i}.key`);
    seen.add(lower);
    if (/[\r\n\0]/.test(h.value)) {
      throw new DomainError("BAD_REQUEST", `headers[${i}].value must not contain line breaks or NUL characters.`, `headers.${i}.value`);
    }
  });
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
 * `whsec_`; several signatures are separated by spaces (rotation, decisions.md §5).
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

/** Attempts of a delivery before it is `failed`: with the default base, about three days. */
export const MAX_DELIVERY_ATTEMPTS = 17;
/** Longest wait between two attempts. */
export const MAX_RETRY_DELAY_MS = 8 * 3600_000;

/**
 * Wait before attempt `failedAttempts + 1`, milliseconds: `baseMs` × 3^(failedAttempts − 1), at
 * most 8 h, times a jitter factor in [0.8, 1.2) from `random` (in [0, 1)). With the default base
 * of 5 s: 5 s, 15 s, 45 s, 2¼ min, 7 min, 20 min, 1 h, 3 h, then 8 h; the 17th attempt comes
 * about three days after the first (decisions.md §5).
 */
export function retryDelayMs(failedAttempts: number, baseMs: number, random: number): number {
  const exponential = Math.min(baseMs * 3 ** Math.max(0, failedAttempts - 1), MAX_RETRY_DELAY_MS);
  return Math.round(exponential * (0.8 + 0.4 * random));
}

/**
 * How long a claimed delivery stays leased to the round that sends it, milliseconds: three times
 * the attempt's timeout plus 5 s. A round that dies mid-send (crash, SIGKILL) leaves the lease to
 * expire; the next round then sends the delivery again with the same `webhook-id` (at least once,
 * decisions.md §5). Used by the PIN webhook and the credit notifications.
 * @param timeoutMs bound of one attempt (`WEBHOOK_TIMEOUT_S` × 1000).
 */
export function deliveryLeaseMs(timeoutMs: number): number {
  return timeoutMs * 3 + 5000;
}

/** What an attempt's answer means for the delivery (decisions.md §5). */
export type AttemptVerdict = "succeeded" | "disable" | "retry";

/** 2xx ends the delivery, 410 disables the target, anything else (3xx included: redirects are not followed) is retried. */
export function judgeAttempt(httpStatus: number | null): AttemptVerdict {
  if (httpStatus !== null && httpStatus >= 200 && httpStatus < 300) return "succeeded";
  if (httpStatus === 410) return "disable";
  return "retry";
}
