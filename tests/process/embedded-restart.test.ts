/**
 * The embedded PostgreSQL after a crash (docs/operations.md "Start and memory", start failures; before the fix,
 * after kill -9 of the service the embedded PostgreSQL kept running and the next start printed
 * `Failed to start: undefined`): the real
 * service, without `DATABASE_URL`, is killed with SIGKILL; its postgres outlives it; the next start
 * finds that server through the data directory's `postmaster.pid`, stops it and starts normally,
 * with the data kept; SIGTERM then stops both.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY } from "../support/app.js";
import { alive, startService, type ServiceProcess } from "../support/service-process.js";

const dataDir = mkdtempSync(join(tmpdir(), "embedded-restart-"));
chmodSync(dataDir, 0o755);
const lockFile = join(dataDir, "pg", "postmaster.pid");
const running: ServiceProcess[] = [];

const postmasterPid = (): number => Number(readFileSync(lockFile, "utf8").split("\n")[0]);

afterAll(async () => {
  for (const s of running) await s.stop("SIGTERM");
  if (existsSync(lockFile) && alive(postmasterPid())) process.kill(postmasterPid(), "SIGINT");
  rmSync(dataDir, { recursive: true, force: true });
});

describe("embedded PostgreSQL left running by a killed service", () => {
  it("is stopped by the next start, which then serves with the data kept; SIGTERM stops both", async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: "", LOG_LEVEL: "info" };
    const first = await startService(env);
    running.push(first);
    const created = await fetch(`${first.base}/api/v1/sessions`, { method: "POST", headers: { "x-master-api-key": TEST_MASTER_KEY } });
    expect(created.status).toBe(201);
    const orphan = postmasterPid();
    await first.stop("SIGKILL");
    expect(alive(orphan), "the killed service's postgres is still running").toBe(true);

    const second = await startService(env);
    running.push(second);
    expect(second.output()).toContain("a PostgreSQL left running by a killed process was stopped first");
    expect(second.output()).not.toContain("Failed to start");
    expect(alive(orphan)).toBe(false);
    expect(postmasterPid()).not.toBe(orphan);
    // the master key set on the first start is still the one (the data was kept)
    const again = await fetch(`${second.base}/api/v1/sessions`, { method: "POST", headers: { "x-master-api-key": TEST_MASTER_KEY } });
    expect(again.status).toBe(201);

    const serving = postmasterPid();
    const { code } = await second.stop("SIGTERM");
    expect(code).toBe(0);
    expect(alive(serving)).toBe(false);
  }, 120_000);
});
