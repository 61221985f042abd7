/**
 * The start-up check of `DATABASE_POOL_MODE` (docs/operations.md "PgBouncer"; src/db/pool-mode.ts
 * `checkNamedStatementsSurvive`), on the real service process: with `DATABASE_URL` through a real
 * PgBouncer in transaction mode (tests/support/pgbouncer.ts) and `DATABASE_POOL_MODE` left at
 * `session`, every write would answer 500 (a named prepared statement missing on the next server
 * connection), so the service refuses to start: exit status 1, one line naming
 * `DATABASE_POOL_MODE=transaction`, never listening. With `DATABASE_POOL_MODE=transaction` the same
 * set-up starts and a write through PgBouncer succeeds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, createTestDatabase } from "../support/app.js";
import { startPgBouncer, type PgBouncer } from "../support/pgbouncer.js";
import { startService, type ServiceProcess } from "../support/service-process.js";
import { waitFor } from "../support/wait.js";

let db: { url: string; drop(): Promise<void> };
let bouncer: PgBouncer;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  bouncer = await startPgBouncer(db.url, { poolMode: "transaction" });
});
afterAll(async () => {
  for (const s of services) await s.stop("SIGKILL");
  await bouncer?.stop();
  await db?.drop();
});

/** The service with `DATABASE_URL` through PgBouncer and a direct `DATABASE_SESSION_URL`, plus `env`. */
async function throughPgBouncer(env: Record<string, string>, wait: "http" | "none"): Promise<ServiceProcess> {
  const service = await startService({ DATABASE_URL: bouncer.url, DATABASE_SESSION_URL: db.url, ...env }, wait);
  services.push(service);
  return service;
}

describe("DATABASE_POOL_MODE against a PgBouncer in transaction mode", () => {
  it("left at session: the start is refused, exit 1, one line naming DATABASE_POOL_MODE=transaction, never listening", async () => {
    const service = await throughPgBouncer({}, "none");
    // the start ends either way: refused (the process exits) or served (it listens, and its writes answer 500)
    await waitFor("the start to end", () => (service.child.exitCode !== null || service.output().includes("listening:") ? true : undefined), 60_000);
    expect(service.output()).not.toContain("listening:");
    const { code } = await service.exited;
    expect(code, service.output()).toBe(1);
    const lines = service.output().split("\n").filter((line) => line.includes("DATABASE_POOL_MODE"));
    expect(lines, service.output()).toHaveLength(1);
    expect(lines[0]).toMatch(/^Failed to start: DATABASE_URL goes through a pooler in transaction mode/);
    expect(lines[0]).toContain("set DATABASE_POOL_MODE=transaction");
    expect(service.output()).not.toContain("listening:");
  }, 90_000);

  it("set to transaction: the service starts and a write through PgBouncer succeeds", async () => {
    const service = await throughPgBouncer({ DATABASE_POOL_MODE: "transaction" }, "http");
    const session = await fetch(`${service.base}/api/v1/sessions`, { method: "POST", headers: { "x-master-api-key": TEST_MASTER_KEY } });
    expect(session.status, await session.clone().text()).toBe(201);
    const stats = (await bouncer.show("STATS")).find((row) => row.database === new URL(db.url).pathname.slice(1));
    expect(Number(stats?.total_xact_count)).toBeGreaterThan(0);
    expect((await service.stop("SIGTERM")).code, service.output()).toBe(0);
  }, 90_000);
});
