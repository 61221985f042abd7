/**
 * The embedded PostgreSQL's data folder when the service runs as root (docs/operations.md "Start
 * and memory"; src/db/embedded.ts `openDataDirToPostgres`): PostgreSQL refuses to run as root, so
 * its `initdb` and server run as the user `postgres`, which must be able to enter `DATA_DIR`.
 * - `DATA_DIR=$(mktemp -d)` (mode 0700, the service's own folder): the service gives it to the
 *   group `postgres` with search permission only (0710) and starts; the secret files in it stay
 *   0600 and nobody else gains any access.
 * - a `DATA_DIR` inside a folder the `postgres` user cannot enter (a parent the service does not
 *   own, so it leaves it alone): the service refuses to start, exit status 1, with one line that
 *   names that folder and the fix, and starts no PostgreSQL.
 * Run as any other user (CI runs as root), PostgreSQL runs as that user, which owns both folders:
 * both start and nothing is changed.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startService, type ServiceProcess } from "../support/service-process.js";

const asRoot = process.getuid?.() === 0;
const dirs: string[] = [];
const services: ServiceProcess[] = [];

afterAll(async () => {
  for (const s of services) await s.stop("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A new folder made as `mktemp -d` makes it: mode 0700, owned by this process's user. */
function mktempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  return dir;
}

const modeOf = (path: string): number => statSync(path).mode & 0o777;

/** The embedded service on `dataDir` (no `DATABASE_URL`). */
function embeddedOn(dataDir: string, wait: "http" | "none"): Promise<ServiceProcess> {
  return startService({ DATABASE_URL: "", DATA_DIR: dataDir, SHUTDOWN_TIMEOUT_S: "5" }, wait).then((s) => {
    services.push(s);
    return s;
  });
}

describe("the embedded PostgreSQL's data folder", () => {
  it("DATA_DIR made by mktemp -d (0700): the service starts; as root the folder is opened to the group postgres only (0710), the secret files stay 0600", async () => {
    const dir = mktempDir("data-dir-");
    const service = await embeddedOn(dir, "http");
    expect((await fetch(`${service.base}/readyz`)).status).toBe(200);
    expect(existsSync(join(dir, "pg", "PG_VERSION"))).toBe(true);
    if (asRoot) {
      const postgresGid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
      expect(modeOf(dir).toString(8)).toBe("710");
      expect(statSync(dir).gid).toBe(postgresGid);
      expect(statSync(dir).uid).toBe(0);
      expect(service.output()).toContain("DATA_DIR opened to the group postgres");
    } else {
      expect(modeOf(dir).toString(8)).toBe("700");
    }
    expect(modeOf(join(dir, "pg-password")).toString(8)).toBe("600");
    const { code } = await service.stop("SIGTERM");
    expect(code, service.output()).toBe(0);

    // the next start finds the folder as it left it, and changes nothing
    const again = await embeddedOn(dir, "http");
    expect(again.output()).not.toContain("DATA_DIR opened");
    expect(modeOf(dir).toString(8)).toBe(asRoot ? "710" : "700");
    expect((await again.stop("SIGTERM")).code, again.output()).toBe(0);
  }, 120_000);

  it("DATA_DIR inside a folder the postgres user cannot enter: as root, exit 1 with one line naming that folder and the fix, no PostgreSQL started", async () => {
    const outer = mktempDir("data-dir-parent-");
    const dir = join(outer, "data");
    mkdirSync(dir, { mode: 0o755 });
    const service = await embeddedOn(dir, asRoot ? "none" : "http");
    if (asRoot) {
      const { code } = await service.exited;
      expect(code, service.output()).toBe(1);
      const lines = service.output().split("\n").filter((line) => line.includes(outer));
      expect(lines, service.output()).toHaveLength(1);
      expect(lines[0]).toMatch(/^Failed to start: /);
      expect(lines[0]).toContain(`cannot enter ${outer}`);
      expect(lines[0]).toContain(`chmod o+x ${outer}`);
      expect(existsSync(join(dir, "pg", "PG_VERSION"))).toBe(false);
      // the parent folder is not the service's: left as it was
      expect(modeOf(outer).toString(8)).toBe("700");
    } else {
      expect((await fetch(`${service.base}/readyz`)).status).toBe(200);
      expect((await service.stop("SIGTERM")).code, service.output()).toBe(0);
    }
  }, 120_000);
});
