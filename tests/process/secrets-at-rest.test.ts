/**
 * Secrets at rest (docs/decisions/credentials-and-tokens.md "Secrets at rest"): with `SECRETS_KEY` unset, the generated secrets key (token signing and
 * the keyed hashes of API keys and withdrawal codes) lives in `DATA_DIR/secrets.key` (0600), never
 * in the database; a restart reads it back; the `secrets_key` row of an earlier version moves to the
 * file; `DATABASE_URL` without `SECRETS_KEY` refuses to start. The embedded cases run the real
 * service (src/main.ts) as a child process, the rest call the bootstrap on the run's PostgreSQL.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { initORM } from "../../src/db/orm.js";
import { Db } from "../../src/db/sql.js";
import { ENTITIES } from "../../src/modules/entities.js";
import { bootstrapIdentitySecrets } from "../../src/modules/identity/bootstrap.js";
import { SecretFileError } from "../../src/db/secret-file.js";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY, createTestDatabase } from "../support/app.js";
import { startService, type ServiceProcess } from "../support/service-process.js";

const dirs: string[] = [];
const running: ServiceProcess[] = [];

/** A fresh data directory (0755: initdb runs as the unprivileged postgres user under root). */
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "secrets-at-rest-"));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const s of running) await s.stop("SIGTERM");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The real service on the embedded PostgreSQL of `dir`, with no SECRETS_KEY. */
async function embeddedService(dir: string): Promise<ServiceProcess> {
  const service = await startService({ DATA_DIR: dir, DATABASE_URL: "", SECRETS_KEY: "" });
  running.push(service);
  return service;
}

/** A client on the running embedded server of `dir` (port from `postmaster.pid`, password from `pg-password`). */
async function embeddedClient(dir: string): Promise<pg.Client> {
  const port = Number(readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n")[3]);
  const password = readFileSync(join(dir, "pg-password"), "utf8").trim();
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password, database: "platform" });
  await client.connect();
  return client;
}

/** Every row of every table of the public schema, as text. */
async function everyRow(client: pg.Client): Promise<string[]> {
  const tables = await client.query<{ table_name: string }>(`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`);
  expect(tables.rows.map((t) => t.table_name)).toContain("service_setting");
  const rows: string[] = [];
  for (const { table_name } of tables.rows) {
    const result = await client.query<{ row: string }>(`select t::text as row from "${table_name.replace(/"/g, '""')}" t`);
    rows.push(...result.rows.map((r) => r.row));
  }
  return rows;
}

const session = async (base: string): Promise<string> => {
  const res = await fetch(`${base}/api/v1/sessions`, { method: "POST", headers: { "x-master-api-key": TEST_MASTER_KEY } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { token: string } }).data.token;
};
/** Status of Get Customer on an unknown id: 404 once the session token is accepted, 401 when it is not. */
const customersWith = (base: string, token: string): Promise<number> =>
  fetch(`${base}/api/v1/customers/nobody-here`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

describe("the generated secrets key (embedded PostgreSQL, SECRETS_KEY unset)", () => {
  it("lives in DATA_DIR/secrets.key (0600), in no table; a restart reads it, so earlier tokens still work", async () => {
    const dir = dataDir();
    const first = await embeddedService(dir);
    const file = join(dir, "secrets.key");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const key = readFileSync(file, "utf8").trim();
    expect(key.length).toBeGreaterThanOrEqual(32);
    const token = await session(first.base);
    expect(await customersWith(first.base, token)).toBe(404);

    const client = await embeddedClient(dir);
    try {
      const settings = await client.query<{ key: string; value: string }>("select key, value from service_setting");
      expect(settings.rows.map((r) => r.key)).toEqual(["master_key_hash"]);
      const rows = await everyRow(client);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.filter((r) => r.includes(key))).toEqual([]);
    } finally {
      await client.end();
    }
    expect((await first.stop("SIGTERM")).code).toBe(0);

    const second = await embeddedService(dir);
    expect(readFileSync(file, "utf8").trim()).toBe(key);
    expect(await customersWith(second.base, token), "a token issued before the restart").toBe(404);
    expect(await customersWith(second.base, `${token.slice(0, -4)}AAAA`)).toBe(401);
    expect((await second.stop("SIGTERM")).code).toBe(0);
  }, 180_000);

  it("moves the secrets_key row of an earlier version into the file and deletes it; its tokens keep working", async () => {
    const dir = dataDir();
    const file = join(dir, "secrets.key");
    const first = await embeddedService(dir);
    const token = await session(first.base);
    const key = readFileSync(file, "utf8").trim();
    // what an earlier version left: the key in service_setting and no file
    const client = await embeddedClient(dir);
    try {
      await client.query(`insert into service_setting (key, value, created_at) values ('secrets_key', $1, now())`, [key]);
    } finally {
      await client.end();
    }
    expect((await first.stop("SIGTERM")).code).toBe(0);
    unlinkSync(file);

    const second = await embeddedService(dir);
    expect(second.output()).toContain("moved the secrets key of an earlier version out of the database into its file");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8").trim()).toBe(key);
    expect(await customersWith(second.base, token)).toBe(404);
    const after = await embeddedClient(dir);
    try {
      const settings = await after.query<{ key: string }>("select key from service_setting");
      expect(settings.rows.map((r) => r.key)).toEqual(["master_key_hash"]);
    } finally {
      await after.end();
    }
    expect((await second.stop("SIGTERM")).code).toBe(0);
  }, 180_000);

  it("refuses to start when the file is readable by others, naming the file and the fix", async () => {
    const dir = dataDir();
    const file = join(dir, "secrets.key");
    writeFileSync(file, `${"k".repeat(48)}\n`, { mode: 0o600 });
    chmodSync(file, 0o644);
    const service = await startService({ DATA_DIR: dir, DATABASE_URL: "", SECRETS_KEY: "" }, "none");
    running.push(service);
    const { code } = await service.exited;
    expect(code).toBe(1);
    expect(service.output()).toContain(`${file} has mode 0644`);
    expect(service.output()).toContain(`chmod 600 ${file}`);
  }, 120_000);
});

describe("the secrets key with an external database", () => {
  it("DATABASE_URL without SECRETS_KEY: exit status 2 and the message says to set it", async () => {
    const db = await createTestDatabase();
    try {
      const service = await startService({ DATABASE_URL: db.url, SECRETS_KEY: "" }, "none");
      running.push(service);
      const { code } = await service.exited;
      expect(code).toBe(2);
      expect(service.output()).toContain("SECRETS_KEY must be set (at least 32 characters) when DATABASE_URL is set");
      expect(service.output()).not.toContain("listening");
    } finally {
      await db.drop();
    }
  }, 60_000);

  it("with SECRETS_KEY set, a legacy secrets_key row is deleted; the key file rules hold (mode, length, a file that disagrees with the row)", async () => {
    const db = await createTestDatabase();
    const orm = await initORM(db.url, ENTITIES);
    try {
      const em = orm.em.fork();
      const conn = em.getConnection();
      const statements = new Db(await conn.getNativeClient(), { named: true });
      await conn.execute(`insert into service_setting (key, value, created_at) values ('secrets_key', ?, now())`, ["legacy-key-".padEnd(48, "x")]);
      const withEnv = await bootstrapIdentitySecrets(statements, { secretsKey: TEST_SECRETS_KEY, masterApiKey: TEST_MASTER_KEY });
      expect(withEnv.legacyRow).toBe("deleted");
      expect(withEnv.secretsKeySource).toBe("env");
      expect(await conn.execute(`select key from service_setting where key = 'secrets_key'`)).toEqual([]);

      const dir = dataDir();
      const file = join(dir, "secrets.key");
      writeFileSync(file, "too-short\n", { mode: 0o600 });
      await expect(bootstrapIdentitySecrets(statements, { secretsKey: undefined, masterApiKey: TEST_MASTER_KEY, secretsKeyFile: file })).rejects.toThrow(
        new SecretFileError(`${file} holds 9 characters; at least 32 are needed`),
      );
      unlinkSync(file);
      const created = await bootstrapIdentitySecrets(statements, { secretsKey: undefined, masterApiKey: TEST_MASTER_KEY, secretsKeyFile: file });
      expect(created.secretsKeySource).toBe("file-created");
      const again = await bootstrapIdentitySecrets(statements, { secretsKey: undefined, masterApiKey: TEST_MASTER_KEY, secretsKeyFile: file });
      expect(again.secretsKeySource).toBe("file");
      expect(again.box.hash("x")).toBe(created.box.hash("x"));
      // a row that disagrees with an existing file: refused, nothing deleted
      await conn.execute(`insert into service_setting (key, value, created_at) values ('secrets_key', ?, now())`, ["another-key-".padEnd(48, "y")]);
      await expect(bootstrapIdentitySecrets(statements, { secretsKey: undefined, masterApiKey: TEST_MASTER_KEY, secretsKeyFile: file })).rejects.toThrow(/holds another key than the secrets_key row/);
      expect(await conn.execute(`select key from service_setting where key = 'secrets_key'`)).toHaveLength(1);
    } finally {
      await orm.close(true);
      await db.drop();
    }
  }, 60_000);
});
