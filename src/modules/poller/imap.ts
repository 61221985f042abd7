/**
 * One IMAP session of the email poller (docs/decisions/withdrawals.md "The email poller",
 * docs/decisions/notifications.md "The SSRF guard"), on imapflow: the host is resolved and
 * checked by the SSRF guard, and the session connects to the very address that was checked (the
 * host name is kept as TLS server name, so certificates are verified against it). TLS from the
 * first byte when `tls` is true (port 993 style); otherwise STARTTLS whenever the server offers it.
 * Connection, greeting and socket timeouts bound every step. imapflow is imported with the first
 * session, so a process that never polls a mailbox does not load it (docs/operations.md "Start and memory").
 */
import type { ImapFlow } from "imapflow";
import { resolvePublicHost } from "../net/targets.js";

/** Where and how to log in. */
export interface ImapSettings {
  host: string;
  port: number;
  tls: boolean;
  user: string;
  password: string;
  /** Bound of the connection, the greeting and each socket read, milliseconds (`IMAP_TIMEOUT_S`). */
  timeoutMs: number;
  /** `ALLOW_PRIVATE_NETWORK_TARGETS`. */
  allowPrivate: boolean;
}

/** A failed session: `message` says why, without the password. */
export class ImapFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImapFailure";
  }
}

/** A human reason for an imapflow or network error. */
function reason(error: unknown, settings: ImapSettings): string {
  const e = error as { authenticationFailed?: boolean; code?: string; message?: string; responseText?: string };
  if (e.authenticationFailed) return `login refused for '${settings.user}': ${e.responseText ?? "authentication failed"}`;
  if (e.code === "ETIMEDOUT" || e.code === "CONNECT_TIMEOUT" || e.code === "GREETING_TIMEOUT" || /timeout/i.test(e.message ?? "")) {
    return `no answer from ${settings.host}:${settings.port} within ${settings.timeoutMs / 1000} s`;
  }
  if (e.code === "ECONNREFUSED") return `connection refused by ${settings.host}:${settings.port}`;
  return `${e.message ?? String(error)}${e.code ? ` (${e.code})` : ""}`.slice(0, 500);
}

/**
 * Opens a logged-in session and runs `work` with it, then logs out (or closes the connection).
 * @throws ImapFailure when the host is refused, the connection or TLS fails, the login is refused
 *   or a step times out; errors thrown by `work` itself pass through unchanged.
 */
export async function withMailbox<T>(settings: ImapSettings, work: (client: ImapFlow) => Promise<T>): Promise<T> {
  let address: string;
  try {
    address = await resolvePublicHost(settings.host, settings.allowPrivate);
  } catch (error) {
    throw new ImapFailure((error as Error).message);
  }
  const { ImapFlow } = await import("imapflow");
  const client = new ImapFlow({
    host: address,
    servername: settings.host,
    port: settings.port,
    secure: settings.tls,
    auth: { user: settings.user, pass: settings.password },
    connectionTimeout: settings.timeoutMs,
    greetingTimeout: settings.timeoutMs,
    socketTimeout: settings.timeoutMs * 4,
    logger: false,
    disableAutoIdle: true,
  });
  client.on("error", () => {}); // a socket error after the session ended must not crash the process
  try {
    await client.connect();
  } catch (error) {
    client.close();
    throw new ImapFailure(reason(error, settings));
  }
  try {
    return await work(client);
  } finally {
    await client.logout().catch(() => client.close());
  }
}

/** Logs in and out (Verify Email Poller). @throws ImapFailure with the reason. */
export async function verifyLogin(settings: ImapSettings): Promise<void> {
  await withMailbox(settings, async () => {});
}
