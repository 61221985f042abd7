/**
 * The service's logger (pino) and what it keeps out of the logs (docs/operations.md
 * "Observability": logs carry no email addresses at info level): credentials in request headers, query values of request
 * URLs, and any email address anywhere in a line, whatever its level.
 */
import { pino, type DestinationStream, type Level, type Logger } from "pino";

/** What replaces a redacted value. */
export const REDACTED = "[redacted]";

/**
 * An email address, also with its `@` percent-encoded (`%40`) as in URLs: a local part of
 * `[A-Za-z0-9._%+-]`, a domain of dot-separated labels ending in a top-level domain of 2+ letters
 * (so `user:password@127.0.0.1` in a connection string is not taken for one).
 */
const EMAIL = /[A-Za-z0-9._%+-]+(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

/** {@link EMAIL} without the global flag, for `test()` (which would otherwise keep state between calls). */
const HAS_EMAIL = new RegExp(EMAIL.source);

/** `text` with every email address replaced by `[email]`. */
export function redactEmails(text: string): string {
  return text.replace(EMAIL, "[email]");
}

/** A query parameter name worth keeping in a log (`to`, `filter[where][type]`…); anything else is redacted too. */
const PARAMETER_NAME = /^[A-Za-z0-9_.[\]%-]{1,64}$/;

/**
 * A request URL for the logs: the path as is, every query value replaced by `[redacted]` (names
 * kept when they look like parameter names), e.g. `/api/v1/sandbox/mail?to=[redacted]`.
 */
export function redactUrl(url: string): string {
  const mark = url.indexOf("?");
  if (mark < 0) return url;
  const query = url
    .slice(mark + 1)
    .split("&")
    .map((part) => {
      if (part === "") return part;
      const eq = part.indexOf("=");
      const name = eq < 0 ? part : part.slice(0, eq);
      if (!PARAMETER_NAME.test(name) || HAS_EMAIL.test(name)) return REDACTED;
      return eq < 0 ? name : `${name}=${REDACTED}`;
    })
    .join("&");
  return `${url.slice(0, mark)}?${query}`;
}

/**
 * Builds the service's logger at `level` (`LOG_LEVEL`), writing to `destination` (default stdout).
 * Credential headers are censored (`authorization`, `x-api-key`, `x-master-api-key`), and every
 * line passes through {@link redactEmails} just before it is written, so no email address reaches
 * the log from any field, message or error.
 */
export function createLogger(level: Level | "silent", destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: ["req.headers.authorization", 'req.headers["x-api-key"]', 'req.headers["x-master-api-key"]'], censor: REDACTED },
    hooks: { streamWrite: redactEmails },
  };
  return destination ? pino(options, destination) : pino(options);
}
