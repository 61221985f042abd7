/**
 * The HTTP server of the service and the requests Node refuses before express sees them: a request
 * line and headers over `--max-http-header-size` (16 KiB by default), a malformed request line or
 * header, a request that does not arrive in time, a connection over the per-address bound. Node's
 * own answer is a bare status line with no body; these answer in the surface's error envelope
 * instead, so a client's mistake looks the same wherever it is caught (docs/security.md, "Bodies,
 * connections and time").
 */
import { randomUUID } from "node:crypto";
import { IncomingMessage, STATUS_CODES, ServerResponse, createServer, type RequestListener, type Server } from "node:http";
import type { Express } from "express";
import { Server as NetServer, type Socket } from "node:net";
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
 * The status, code and message of a client error: 431 for headers over the size limit, 408 when
 * the headers or the whole request did not arrive in time (`HEADERS_TIMEOUT_S`,
 * `REQUEST_TIMEOUT_S`), 400 for the rest (malformed request line, invalid header characters, a bad
 * chunk…). The code is `BAD_REQUEST` for all three: the envelopes' code sets are part of the
 * released contract, and the status tells them apart.
 */
export function describeClientError(code: string | undefined): { status: number; code: "BAD_REQUEST"; message: string } {
  if (code === "HPE_HEADER_OVERFLOW")
    return { status: 431, code: "BAD_REQUEST", message: "The request line and headers are larger than the server accepts (16 KiB); shorten the URL or the headers." };
  if (code === "ERR_HTTP_REQUEST_TIMEOUT" || code === "HPE_HEADER_TIMEOUT")
    return { status: 408, code: "BAD_REQUEST", message: "The request did not arrive in time: send the headers and the whole body without pausing." };
  return { status: 400, code: "BAD_REQUEST", message: "The request could not be parsed as HTTP/1.1." };
}

/** An error answer written straight to a socket, in the envelope of `path`'s surface, closing the connection. */
function rawAnswer(status: number, path: string, code: "BAD_REQUEST" | "RATE_LIMIT_EXCEEDED", message: string, extraHeaders = ""): string {
  const traceId = randomUUID();
  const body = JSON.stringify(errorBody(surfaceOf(path), traceId, [{ code: code as "BAD_REQUEST", message }]));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n` +
    "Content-Type: application/json; charset=utf-8\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `x-trace-id: ${traceId}\r\n` +
    extraHeaders +
    "Connection: close\r\n\r\n" +
    body
  );
}

/**
 * Answers client errors of `server` (parser errors, and the 408 of a request that did not arrive
 * in time) with the envelope of the surface the request was addressed to (`/v2…` → credit, anything
 * else → platform; a fresh trace id in the body and in `x-trace-id`), then closes the connection.
 * A socket whose response has already started, or that is closed, is destroyed without an answer.
 */
export function answerClientErrors(server: Server): void {
  server.on("clientError", (error: ClientParseError, socket: Socket) => {
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === "ECONNRESET" || !socket.writable || socket.writableEnded || inFlight?.headersSent === true) {
      socket.destroy();
      return;
    }
    const { status, code, message } = describeClientError(error.code);
    // A timed-out request that express is already reading has its path in the in-flight response's request.
    const path = (inFlight as { req?: { url?: string } } | undefined)?.req?.url?.split("?", 1)[0] ?? pathOfRawRequest(error.rawPacket);
    socket.end(rawAnswer(status, path, code, message), () => socket.destroy());
  });
}

/** What {@link createHttpServer} bounds (docs/security.md, "Bodies, connections and time"). */
export interface ServerLimits {
  /** Seconds a client has for the request line and headers (`HEADERS_TIMEOUT_S`). */
  headersTimeoutS: number;
  /** Seconds a client has for the whole request, body included (`REQUEST_TIMEOUT_S`, ≥ headersTimeoutS). */
  requestTimeoutS: number;
  /** Open connections per client socket address (`MAX_CONNECTIONS_PER_ADDRESS`); 0 = no limit. */
  maxConnectionsPerAddress: number;
}

/**
 * node:http's request and response classes for the express app `app`: their instances are
 * created with the app's own prototypes (`app.request`, `app.response`), so express's
 * `Object.setPrototypeOf` of every request and response (`app.handle`) changes nothing. Changing an
 * object's prototype after it was built makes V8 treat every later property access on it as
 * unknown; on 2 cores it halved the requests a second of a bare express route
 * (docs/performance.md "What keeps the request path cheap").
 */
export function messageClassesOf(app: Express): { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } {
  function AppRequest(socket: Socket): IncomingMessage {
    return Reflect.construct(IncomingMessage, [socket], AppRequest) as IncomingMessage;
  }
  AppRequest.prototype = app.request;
  function AppResponse(req: IncomingMessage, options?: object): ServerResponse {
    return Reflect.construct(ServerResponse, [req, options], AppResponse) as ServerResponse;
  }
  AppResponse.prototype = app.response;
  return { IncomingMessage: AppRequest as unknown as typeof IncomingMessage, ServerResponse: AppResponse as unknown as typeof ServerResponse };
}

/**
 * The service's HTTP server for `handler` (the express app, whose requests and responses are then
 * built with its prototypes: {@link messageClassesOf}), with its time and connection bounds
 * (docs/security.md, "Bodies, connections and time"):
 * - the request line and headers must arrive within `headersTimeoutS`, and the whole request
 *   within `requestTimeoutS`; a late one is answered 408 (code `BAD_REQUEST`) in the surface's envelope
 *   and its connection closed, so a body that stalls half-way holds its memory for that long at
 *   most (Node's default is 300 s). Node checks the deadlines every second;
 * - one client address holds at most `maxConnectionsPerAddress` open connections: a further one is
 *   answered 429 (platform envelope: nothing of its request has been read) and closed at once;
 * - parser errors answer in the envelope ({@link answerClientErrors});
 * - its connections are tracked for the shutdown's drain ({@link drainHttpServer}).
 */
export function createHttpServer(handler: RequestListener | Express, limits: ServerLimits): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutS * 1000,
      requestTimeout: limits.requestTimeoutS * 1000,
      connectionsCheckingInterval: 1000,
      ...("request" in handler && "response" in handler ? messageClassesOf(handler) : {}),
    },
    handler,
  );
  answerClientErrors(server);
  trackForDrain(server);
  if (limits.maxConnectionsPerAddress > 0) {
    const open = new Map<string, number>();
    server.on("connection", (socket: Socket) => {
      const address = socket.remoteAddress ?? "unknown";
      const count = (open.get(address) ?? 0) + 1;
      if (count > limits.maxConnectionsPerAddress) {
        socket.on("error", () => {});
        socket.end(rawAnswer(429, "/", "RATE_LIMIT_EXCEEDED", `Too many open connections from this address (at most ${limits.maxConnectionsPerAddress}): reuse or close one.`, "Retry-After: 1\r\n"), () => socket.destroy());
        return;
      }
      open.set(address, count);
      socket.once("close", () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left <= 0) open.delete(address);
        else open.set(address, left);
      });
    });
  }
  return server;
}

/**
 * During a drain, how long a keep-alive connection with no request in flight stays open before it
 * is closed, ms, counted from the drain's start or from the connection's last answer, whichever is
 * later (docs/operations.md "Shutdown"). A client busy on the connection sends its next request
 * well within it and gets it answered with `Connection: close`.
 */
export const DRAIN_IDLE_MS = 1_000;

/** How often a drain looks for idle connections to close, ms. */
const DRAIN_SWEEP_MS = 100;

/** What a server's drain knows of one open connection. */
interface DrainedConnection {
  /** Since when (epoch ms) it has had no request in flight, once the drain has started. */
  idleSince: number;
  /** `socket.bytesRead` at that moment: more read since means a request is arriving. */
  bytesRead: number;
}

/** The drain state of a server made by {@link createHttpServer}. */
interface DrainState {
  /** When the drain started (epoch ms); undefined while the server serves normally. */
  startedAt: number | undefined;
  /** The responses not yet finished. */
  readonly inFlight: Set<ServerResponse>;
  /** The open connections. */
  readonly connections: Map<Socket, DrainedConnection>;
}

const drains = new WeakMap<Server, DrainState>();

/**
 * Tracks `server`'s open connections and unfinished responses for {@link drainHttpServer}; once a
 * drain has started, each new response is made the last of its connection (`Connection: close`).
 */
function trackForDrain(server: Server): void {
  const state: DrainState = { startedAt: undefined, inFlight: new Set(), connections: new Map() };
  drains.set(server, state);
  server.on("connection", (socket: Socket) => {
    state.connections.set(socket, { idleSince: Date.now(), bytesRead: 0 });
    socket.once("close", () => state.connections.delete(socket));
  });
  // before the app's listener, which may answer at once: the header is decided when the answer starts
  server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
    if (state.startedAt !== undefined) res.shouldKeepAlive = false;
    state.inFlight.add(res);
    res.once("close", () => {
      state.inFlight.delete(res);
      const connection = state.connections.get(req.socket);
      if (connection && state.startedAt !== undefined) {
        connection.idleSince = Date.now();
        connection.bytesRead = req.socket.bytesRead;
      }
    });
  });
}

/**
 * Closes the drain's idle connections: those with no request in flight, nothing read since their
 * last answer, idle for {@link DRAIN_IDLE_MS}. Run after a poll phase of the event loop, so a
 * request already waiting in a socket's buffer has been read and counts as in flight.
 */
function closeIdle(state: DrainState): void {
  const now = Date.now();
  const busy = new Set<Socket>();
  for (const res of state.inFlight) busy.add(res.req.socket);
  for (const [socket, connection] of state.connections) {
    if (busy.has(socket)) continue;
    if (socket.bytesRead !== connection.bytesRead) {
      connection.bytesRead = socket.bytesRead;
      connection.idleSince = now;
    } else if (now - connection.idleSince >= DRAIN_IDLE_MS) {
      socket.destroy();
    }
  }
}

/**
 * Drains `server` (made by {@link createHttpServer}) for a shutdown (docs/operations.md "Shutdown"):
 * - the listener closes at once: new connections are refused;
 * - every answer from now on, and every answer in flight whose headers have not gone yet, says
 *   `Connection: close`, and its connection is closed once it is sent, so no client writes another
 *   request on a connection that is about to close;
 * - a keep-alive connection with no request in flight is closed once it has been idle for
 *   {@link DRAIN_IDLE_MS} (from now, or from its last answer): a client that wrote a request just
 *   before gets it answered instead of reset.
 *
 * Node's `server.close()` would instead close every connection idle at this instant, cutting
 * requests that are written but not yet read (a client's next request on a keep-alive
 * connection), so only the listener is closed here (`net.Server`'s `close`).
 * A server made otherwise has its idle connections closed at once, as `server.close()` does.
 * @returns a promise that resolves once every connection is closed; the caller cuts what is left
 *   at its deadline with `server.closeAllConnections()`.
 */
export function drainHttpServer(server: Server): Promise<void> {
  const state = drains.get(server);
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  if (!state) {
    server.closeIdleConnections();
    return closed;
  }
  if (state.startedAt === undefined) {
    state.startedAt = Date.now();
    for (const res of state.inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
    for (const [socket, connection] of state.connections) {
      connection.idleSince = state.startedAt;
      connection.bytesRead = socket.bytesRead;
    }
  }
  // the check phase runs after the poll phase: requests already in a socket's buffer are read first
  const sweep = setInterval(() => setImmediate(() => closeIdle(state)), DRAIN_SWEEP_MS);
  return closed.finally(() => clearInterval(sweep));
}
