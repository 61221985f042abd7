/**
 * The drain of keep-alive connections on SIGTERM (docs/operations.md "Shutdown"; src/http/client-errors.ts
 * `drainHttpServer`): 40 clients, each on a keep-alive socket of its own (an `http.Agent` with
 * `keepAlive`), send requests back to back — owner-key `GET /api/v1/currencies` (authenticated
 * in PostgreSQL) and `/healthz` — when the service gets SIGTERM. During the drain every answer says
 * `Connection: close`, so no client writes another request on a socket the service is about to
 * close: every request written to a socket gets its whole answer (no ECONNRESET, no socket hang
 * up), each client's last answer is the drain's `Connection: close`, and a request sent after a
 * client has seen that answer is never answered `keep-alive`. The only refusals are new
 * connections to the closed listener, before anything was written. A keep-alive connection left
 * idle is closed by the service once idle for `DRAIN_IDLE_MS`, so the exit comes long before
 * `SHUTDOWN_TIMEOUT_S`.
 */
import { once } from "node:events";
import { Agent, request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DRAIN_IDLE_MS } from "../../src/http/client-errors.js";
import { createTestDatabase } from "../support/app.js";
import { Walk } from "../support/fixtures.js";
import { startService } from "../support/service-process.js";
import { waitFor } from "../support/wait.js";

/** Concurrent clients, each with one keep-alive socket. */
const CLIENTS = 40;

let db: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** What became of one request. */
interface Outcome {
  client: number;
  /** The answer's status, when a whole answer arrived. */
  status?: number;
  /** The answer's `Connection` header. */
  connection?: string;
  /** The error code, when no whole answer arrived. */
  error?: string;
  /** Whether the request had been written to its socket (the request's `finish`). */
  written: boolean;
  /** Whether it went out on a socket an earlier request had used (`reusedSocket`). */
  reused: boolean;
  /** When it was issued, epoch ms. */
  sentAt: number;
  /** When its answer (or its error) arrived, epoch ms. */
  doneAt: number;
}

/** Sends one GET of `path` through `agent` and reads its whole answer; never rejects. */
function send(agent: Agent, base: string, path: string, headers: Record<string, string>, client: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const sentAt = Date.now();
    let written = false;
    const req = httpRequest(`${base}${path}`, { agent, headers });
    const failed = (error: NodeJS.ErrnoException) => resolve({ client, error: error.code ?? error.message, written, reused: req.reusedSocket, sentAt, doneAt: Date.now() });
    req.on("finish", () => (written = true));
    req.on("error", failed);
    req.on("response", (res) => {
      res.on("error", failed);
      res.on("data", () => {});
      res.on("end", () => resolve({ client, status: res.statusCode, connection: res.headers.connection, written, reused: req.reusedSocket, sentAt, doneAt: Date.now() }));
    });
    req.end();
  });
}

describe("SIGTERM with keep-alive clients", () => {
  it("every request written to a socket is answered in full; answers during the drain say Connection: close", async () => {
    // the drain is under test, not the limits: 40 sockets from one address, no rate limit
    const service = await startService({
      DATABASE_URL: db.url,
      SHUTDOWN_TIMEOUT_S: "15",
      MAX_CONNECTIONS_PER_ADDRESS: "0",
      RATE_LIMIT_IP: "off",
      RATE_LIMIT_CREDENTIAL: "off",
    });
    const { key } = await new Walk(service.base).tenant("keep-alive-corp");
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS, maxFreeSockets: CLIENTS });
    const idleAgent = new Agent({ keepAlive: true });
    const outcomes: Outcome[] = [];
    // each client sends until its socket is closed for it (a `Connection: close` answer) or fails
    const client = async (n: number) => {
      for (;;) {
        const outcome = n % 2 === 0
          ? await send(agent, service.base, "/api/v1/currencies", { "x-api-key": key }, n)
          : await send(agent, service.base, "/healthz", {}, n);
        outcomes.push(outcome);
        if (outcome.error !== undefined || outcome.connection === "close") return;
      }
    };
    try {
      const clients = Array.from({ length: CLIENTS }, (_, n) => client(n));
      // under load first: enough answers on every socket (not a fixed time: a busy machine cannot starve the check)
      await waitFor("answers on every client before the signal", () => (new Set(outcomes.map((o) => o.client)).size === CLIENTS && outcomes.length > 10 * CLIENTS ? true : undefined), 30_000);
      // one more keep-alive connection, left idle after its first answer (just now: well within
      // Node's own keep-alive timeout of 5 s, which would close it otherwise)
      expect((await send(idleAgent, service.base, "/healthz", {}, -1)).connection).toBe("keep-alive");
      const idleSocket = Object.values(idleAgent.freeSockets).flat()[0];
      if (!idleSocket) throw new Error("the idle agent kept no socket");
      const idleClosed = once(idleSocket, "close").then(() => Date.now());
      const before = outcomes.length;
      const signalledAt = Date.now();
      service.child.kill("SIGTERM");
      await Promise.all(clients);
      const { code } = await service.exited;
      const exitedAt = Date.now();
      expect(code, service.output()).toBe(0);
      // the idle connection was closed by the service after its grace, and did not hold the exit
      // until SHUTDOWN_TIMEOUT_S (15 s)
      const idleClosedAt = await idleClosed;
      expect(idleClosedAt - signalledAt).toBeGreaterThanOrEqual(DRAIN_IDLE_MS - 50);
      expect(exitedAt - signalledAt).toBeLessThan(10_000);
      expect(service.output()).toContain('"msg":"stopped"');
      expect(before).toBeGreaterThan(10 * CLIENTS);

      // no request written to a socket was reset or left unanswered
      const lost = outcomes.filter((o) => o.error !== undefined && o.written);
      expect(lost.map((o) => `client ${o.client}: ${o.error} (reused socket: ${o.reused})`), `${outcomes.length} requests`).toEqual([]);
      // what failed had not been written: a new connection to the closed listener
      for (const o of outcomes.filter((o) => o.error !== undefined)) expect(o.error).toBe("ECONNREFUSED");
      // every answer is the normal one
      const statuses = new Set(outcomes.filter((o) => o.status !== undefined).map((o) => o.status));
      expect([...statuses]).toEqual([200]);
      // the drain told every client to close: each one's last outcome is a `Connection: close` answer
      const last = new Map(outcomes.map((o) => [o.client, o] as const));
      const closedFor = [...last.values()].filter((o) => o.connection === "close").length;
      expect(closedFor, [...last.values()].filter((o) => o.connection !== "close").map((o) => JSON.stringify(o)).join("\n")).toBe(CLIENTS);
      // a request sent after some client saw the drain's first `Connection: close` reached a
      // draining service: its answer says close too
      const firstClose = Math.min(...outcomes.filter((o) => o.connection === "close").map((o) => o.doneAt));
      const keptAliveLater = outcomes.filter((o) => o.status !== undefined && o.sentAt > firstClose && o.connection !== "close");
      expect(keptAliveLater.length, JSON.stringify(keptAliveLater.slice(0, 3))).toBe(0);
    } finally {
      agent.destroy();
      idleAgent.destroy();
      await service.stop("SIGKILL");
    }
  }, 90_000);
});
