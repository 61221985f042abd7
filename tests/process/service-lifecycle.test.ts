/**
 * Start and stop of the real service process (src/main.ts; docs/operations.md "Start and memory" and "Shutdown"): a busy port
 * stops the start with a clear cause; SIGTERM under load lets accepted requests finish and exits
 * 0; `ROLE=worker` serves no HTTP and stops cleanly.
 */
import { once } from "node:events";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, createTestDatabase } from "../support/app.js";
import { freePort, startService } from "../support/service-process.js";
import { waitFor } from "../support/wait.js";

let db: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe("service lifecycle", () => {
  it("a busy port stops the start: non-zero exit, the address named, never 'listening'", async () => {
    const port = await freePort();
    const squatter = createServer().listen(port, "127.0.0.1");
    await once(squatter, "listening");
    try {
      const service = await startService({ DATABASE_URL: db.url, PORT: String(port) }, "none");
      const { code } = await service.exited;
      expect(code).toBe(1);
      expect(service.output()).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\)`));
      expect(service.output()).not.toContain("listening:");
    } finally {
      squatter.close();
    }
  }, 60_000);

  it("SIGTERM under load: every accepted request completes with its normal status, then exit 0", async () => {
    // the shutdown is under test here, not the limits (their own tests: hardening-http, rate-limits):
    // 40 clients reconnecting as keep-alive sockets close must not meet a connection or rate limit
    const service = await startService({
      DATABASE_URL: db.url,
      SHUTDOWN_TIMEOUT_S: "10",
      MAX_CONNECTIONS_PER_ADDRESS: "0",
      RATE_LIMIT_IP: "off",
      RATE_LIMIT_CREDENTIAL: "off",
    });
    const outcomes: { status?: number; error?: string; text?: string }[] = [];
    let signalled = false;
    const client = async () => {
      // each client keeps issuing real, database-backed requests until the server refuses new ones
      for (;;) {
        try {
          const res = await fetch(`${service.base}/api/v1/sessions`, { method: "POST", headers: { "x-master-api-key": TEST_MASTER_KEY } });
          const text = await res.text();
          outcomes.push({ status: res.status, ...(res.status === 201 ? {} : { text: text.slice(0, 200) }) });
        } catch (error) {
          const cause = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
          outcomes.push({ error: cause });
          if (signalled) return;
        }
      }
    };
    const clients = Array.from({ length: 40 }, () => client());
    // under load first: wait for enough answers (not a fixed time, so a busy machine cannot starve the check)
    await waitFor("answers before the signal", () => (outcomes.length > 40 ? true : undefined), 30_000);
    const before = outcomes.length;
    signalled = true;
    const started = Date.now();
    service.child.kill("SIGTERM");
    await Promise.all(clients);
    const { code } = await service.exited;
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(before, "requests served before the signal").toBeGreaterThan(40);
    const statuses = outcomes.filter((o) => o.status !== undefined).map((o) => o.status);
    const odd = outcomes.filter((o) => o.status !== undefined && o.status !== 201).map((o) => `${o.status} ${o.text}`);
    expect(statuses.every((s) => s === 201), `statuses: ${[...new Set(statuses)].join(", ")}; ${odd.slice(0, 3).join(" | ")}`).toBe(true);
    // After the signal, new connections are refused (or closed before a request was accepted); no
    // accepted request got a 5xx, and the process did not die under the requests.
    const errors = [...new Set(outcomes.filter((o) => o.error).map((o) => o.error))];
    for (const e of errors) expect(["ECONNREFUSED", "ECONNRESET", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]).toContain(e);
    expect(service.output()).toContain('"msg":"stopped"');
  }, 60_000);

  it("ROLE=worker listens on no port, runs the jobs, and exits 0 on SIGTERM", async () => {
    const service = await startService({ DATABASE_URL: db.url, ROLE: "worker" }, "worker");
    const refused = await fetch(`${service.base}/healthz`).then(() => "answered", (e: { cause?: { code?: string } }) => e.cause?.code);
    expect(refused).toBe("ECONNREFUSED");
    expect(service.output()).toContain("worker started: no HTTP listener");
    const { code } = await service.stop("SIGTERM");
    expect(code).toBe(0);
  }, 60_000);
});
