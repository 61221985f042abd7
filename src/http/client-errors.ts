/**
 * Requests that Node's HTTP parser refuses before express sees them (a request line and headers
 * over `--max-http-header-size`, 16 KiB by default; a malformed request line or header). Node's own
 * answer is a bare status line with no body; this handler answers in the surface's error envelope
 * instead, so a client's mistake looks the same wherever it is caught (issue 8: "bad input gets a
 * clear 4xx in the surface's envelope").
 */
import { randomUUID } from "node:crypto";
import { STATUS_CODES, type Server } from "node:http";
import type { Socket } from "node:net";
import { errorBody } from "./envelope.js";
import { surfaceOf } from "./middleware.js";

/** Node's parser error: `code` such as `HPE_HEADER_OVERFLOW`, `rawPacket` the bytes read so far. */
interface ClientParseError extends Error {
  code?: string;
  rawPacket?: Buffer;
}

/** The request path of a partly read request (`GET /v2/x HTTP/1.1…` → `/v2/x`), or `/` when unreadable. */
export function pathOfRawRequest(raw: Buffer | undefined): string {
  if (!raw) return "/";
  const line = raw.subarray(0, Math.min(raw.length, 2048)).toString("latin1").split("\r\n", 1)[0] ?? "";
  const target = line.split(" ")[1] ?? "/";
  return target.startsWith("/") ? target.split("?", 1)[0]! : "/";
}

/**
 * The status and message of a parser error: 431 for headers over the size limit, 413 for a
 * request entity the parser refuses as too large, 400 for the rest (malformed request line,
 * invalid header characters, a bad chunk…).
 */
export function describeClientError(code: string | undefined): { status: number; message: string } {
  if (code === "HPE_HEADER_OVERFLOW")
    return { status: 431, message: "The request line and headers are larger than the server accepts (16 KiB); shorten the URL or the headers." };
  return { status: 400, message: "The request could not be parsed as HTTP/1.1." };
}

/**
 * Answers parser errors of `server` with the envelope of the surface the request was addressed to
 * (`/v2…` → credit, anything else → platform, code `BAD_REQUEST`, a fresh trace id in the body and
 * in `x-trace-id`), then closes the connection. Sockets already answering or closed are destroyed.
 */
export function answerClientErrors(server: Server): void {
  server.on("clientError", (error: ClientParseError, socket: Socket) => {
    if (error.code === "ECONNRESET" || !socket.writable || socket.writableEnded) {
      socket.destroy();
      return;
    }
    const { status, message } = describeClientError(error.code);
    const traceId = randomUUID();
    const body = JSON.stringify(errorBody(surfaceOf(pathOfRawRequest(error.rawPacket)), traceId, [{ code: "BAD_REQUEST", message }]));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n` +
        "Content-Type: application/json; charset=utf-8\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `x-trace-id: ${traceId}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
    );
  });
}
