/**
 * The HTTP transport of the outbox's notification channels (the PIN webhook, the credit
 * notifications; docs/outbox.md): one POST of a notification to a customer's URL
 * (docs/decisions/notifications.md): through the SSRF guard's agent (checked at connect time), a
 * whole-attempt timeout, redirects never followed (node:http does not follow them; a 3xx is just an
 * answer), and at most 64 KiB of the answer read.
 */
import http from "node:http";
import https from "node:https";
import { signatureHeader } from "../../domain/webhooks.js";
import { filteringAgent } from "../net/targets.js";
import type { AttemptResult } from "./channel.js";

/** Settings of the notification channels' HTTP attempts (src/config.ts). */
export interface NotificationSettings {
  /** `WEBHOOK_TIMEOUT_S`: bound of one attempt, seconds. */
  timeoutS: number;
  /** `WEBHOOK_RETRY_BASE_S`: first retry delay, seconds (src/domain/outbox.ts `notificationRetryPolicy`). */
  retryBaseS: number;
  /** `ALLOW_PRIVATE_NETWORK_TARGETS`. */
  allowPrivate: boolean;
}

/** The outcome of one attempt. `status` is null when no HTTP answer came. */
export interface SendResult {
  status: number | null;
  /** The answer's body (at most 64 KiB, UTF-8), empty when none. */
  body: string;
  /** Why the attempt failed without an answer (timeout, refused target, connection error). */
  error: string | null;
  /** Milliseconds from the start of the attempt to the end of the answer (or the failure). */
  durationMs: number;
  /**
   * True when no request could be built from the target's configuration (a header or URL that
   * Node refuses to send): nothing was sent, and retrying cannot help; `error` says why.
   */
  unsendable?: boolean;
}

const MAX_BODY_BYTES = 64 * 1024;

/** Identifies the service to receivers. */
export const USER_AGENT = "custody-platform-webhooks/1";

/**
 * POSTs `body` (JSON text) to `url` with `headers`. Never throws nor rejects: a failure is in the
 * result, a request Node refuses to build as `unsendable` (docs/security.md "Outgoing
 * notifications and their targets").
 * @param timeoutMs bound of the whole attempt, connection included.
 */
export function postJson(url: URL, headers: Record<string, string>, body: string, timeoutMs: number, allowPrivate: boolean): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const client = url.protocol === "https:" ? https : http;
    let req: http.ClientRequest;
    try {
      // Node checks header names and values, and framing headers, here: a request it refuses
      // throws now (ERR_INVALID_CHAR, ERR_HTTP_TRAILER_INVALID…) and is reported, not thrown.
      req = client.request(url, {
        method: "POST",
        agent: filteringAgent(url.href, allowPrivate),
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          "user-agent": USER_AGENT,
        },
      });
    } catch (error) {
      settled = true;
      resolve({ status: null, body: "", error: `the request cannot be sent: ${(error as Error).message}`.slice(0, 500), durationMs: elapsed(), unsendable: true });
      return;
    }
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        if (size >= MAX_BODY_BYTES) return;
        chunks.push(chunk);
        size += chunk.length;
      });
      const done = () => finish({ status: res.statusCode ?? null, body: Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString("utf8"), error: null });
      res.on("end", done);
      res.on("aborted", done);
      res.on("error", done);
    });
    req.on("error", (error) => finish({ status: null, body: "", error: error.message.slice(0, 500) }));
    try {
      req.end(body);
    } catch (error) {
      // Framing headers are checked when the head is written (e.g. ERR_HTTP_TRAILER_INVALID).
      finish({ status: null, body: "", error: `the request cannot be sent: ${(error as Error).message}`.slice(0, 500), unsendable: true });
      req.destroy();
    }
  });
}

/**
 * One signed notification (Standard Webhooks, docs/decisions/notifications.md "One scheme for both kinds"): POSTs `body` to `url` with
 * `headers` (a target's configured ones, may be empty), then `webhook-id` = `messageId`,
 * `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature` (one `v1,` signature
 * per secret, {@link signatureHeader}), set after the configured headers so they cannot be
 * overridden. Used by the PIN webhook and the credit notifications. Never throws (see {@link postJson}).
 * @param secrets `whsec_…` secrets that sign now (several during a rotation).
 * @param timeoutMs bound of the whole attempt, connection included.
 * @param allowPrivate `ALLOW_PRIVATE_NETWORK_TARGETS`: without it the SSRF guard refuses private
 *   addresses at connect time.
 */
export function postSigned(
  url: URL,
  headers: Record<string, string>,
  secrets: readonly string[],
  messageId: string,
  body: string,
  timeoutMs: number,
  allowPrivate: boolean,
): Promise<SendResult> {
  const timestamp = Math.floor(Date.now() / 1000);
  return postJson(
    url,
    {
      ...headers,
      "webhook-id": messageId,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signatureHeader(secrets, messageId, timestamp, body),
    },
    body,
    timeoutMs,
    allowPrivate,
  );
}

/** A {@link SendResult} as the outbox records it (the answer's body kept for callers that show it). */
export function attemptResult(result: SendResult): AttemptResult {
  return { httpStatus: result.status, error: result.error, durationMs: result.durationMs, body: result.body, ...(result.unsendable && { unsendable: true }) };
}
